//! Where a finished output file goes. Outputs are written under a temporary name beside
//! their destination and renamed over it once complete, so that a failed write never leaves
//! a half-written file: [`output_target`] says what that rename may replace, and when a
//! rename would be wrong and the destination must be written in place instead. The CLI, the
//! Python package and SQL's `COPY` to local files follow it; so can any program that writes
//! with [`crate::Writer`].

use std::fs::{self, Permissions};
use std::io;
use std::path::{Path, PathBuf};

/// How to write an output to a path, from [`output_target`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// Write a temporary file in `path`'s directory and rename it to `path` once complete.
    /// `path` is the destination with symbolic links resolved (a link stays a link, and the
    /// file it names is the one replaced); `permissions` are those of the file replaced, for
    /// the new one to keep (`None`: no file there yet).
    Replace {
        /// The file to replace or create.
        path: PathBuf,
        /// The permissions of the file replaced, if there is one.
        permissions: Option<Permissions>,
    },
    /// A named pipe or a character device (`/dev/null`, a terminal, `/dev/stdout` to a pipe),
    /// or a file reached through the kernel's own links (`/dev/stdout` or `/dev/fd/N`
    /// redirected to a file): written in place, opened for writing (and truncated) as `open`
    /// would; a rename would put a regular file where the pipe or device is (and, for a
    /// process that may write `/dev`, destroy it). What a failed write had written stays.
    InPlace(PathBuf),
}

/// At most this many symbolic links are followed to find a destination (Linux's limit).
const MAX_LINKS: usize = 40;

/// How to write an output to `path`: see [`OutputTarget`]. Symbolic links are followed as
/// Linux's `fs.protected_symlinks` lets `open` follow them: a link in a sticky,
/// world-writable directory (`/tmp`) is followed only if it is the writing user's or the
/// directory owner's (a link planted there must not redirect a privileged writer's output).
///
/// # Errors
/// `path` is a directory, a block device or a socket (`InvalidInput`), a chain of more than
/// 40 symbolic links, a link that rule refuses (`PermissionDenied`), or its metadata cannot
/// be read.
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
    let original = path;
    // What `open` would reach, the kernel following the links (its own `/proc/self/fd`
    // links included, which name pipes and sockets by no path).
    let reached = fs::metadata(original).ok();
    if let Some(meta) = &reached {
        if special_in_place(&meta.file_type()) {
            return Ok(OutputTarget::InPlace(original.to_path_buf()));
        }
    }
    let mut path = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(OutputTarget::Replace {
                    path,
                    permissions: None,
                })
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if path.starts_with("/proc") {
                // The kernel's links to a process's open files (`/dev/stdout` →
                // `/proc/self/fd/1`): what they reach is written through them, in place
                // (replacing the file one names would leave the descriptor on the old one).
                return Ok(OutputTarget::InPlace(original.to_path_buf()));
            }
            may_follow(&path, &meta)?;
            // The link's target, relative to the link's own directory (a dangling link names
            // the file to create).
            let to = fs::read_link(&path)?;
            path = match path.parent() {
                Some(dir) if to.is_relative() => dir.join(to),
                _ => to,
            };
            continue;
        }
        if kind.is_file() {
            if let Some(reached) = &reached {
                if !same_file(reached, &meta) {
                    // The kernel reached another file than the links' text names (a link
                    // changed meanwhile, or links of its own): written where it leads.
                    return Ok(OutputTarget::InPlace(original.to_path_buf()));
                }
            }
            return Ok(OutputTarget::Replace {
                path,
                permissions: Some(meta.permissions()),
            });
        }
        if kind.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a directory", path.display()),
            ));
        }
        if special_in_place(&kind) {
            return Ok(OutputTarget::InPlace(path));
        }
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file, a named pipe or a character device",
                path.display()
            ),
        ));
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}: more than {MAX_LINKS} symbolic links to follow",
            path.display()
        ),
    ))
}

/// Fails where Linux's `fs.protected_symlinks` would not let `open` follow the link at
/// `link` (`meta` its own metadata): in a sticky, world-writable directory, a link owned by
/// neither the effective user nor the directory's owner.
#[cfg(unix)]
fn may_follow(link: &Path, meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let dir = match link.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let dir_meta = fs::metadata(dir)?;
    let sticky_and_open = dir_meta.mode() & 0o1002 == 0o1002;
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if sticky_and_open && meta.uid() != euid && meta.uid() != dir_meta.uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symbolic link another user owns in a shared directory: not followed",
                link.display()
            ),
        ));
    }
    Ok(())
}

/// Links are followed everywhere outside Unix.
#[cfg(not(unix))]
fn may_follow(_: &Path, _: &fs::Metadata) -> io::Result<()> {
    Ok(())
}

/// Whether two metadata describe the same file.
#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Whether two metadata describe the same file (assumed outside Unix).
#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    true
}

/// Whether a file of this kind is written in place: named pipes and character devices.
#[cfg(unix)]
fn special_in_place(kind: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_fifo() || kind.is_char_device()
}

/// Whether a file of this kind is written in place (none outside Unix).
#[cfg(not(unix))]
fn special_in_place(_: &fs::FileType) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_existing_files_are_replaced_with_their_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.avro");
        assert_eq!(
            output_target(&new).unwrap(),
            OutputTarget::Replace {
                path: new.clone(),
                permissions: None
            }
        );
        fs::write(&new, b"x").unwrap();
        let perms = fs::metadata(&new).unwrap().permissions();
        assert_eq!(
            output_target(&new).unwrap(),
            OutputTarget::Replace {
                path: new,
                permissions: Some(perms)
            }
        );
        assert_eq!(
            output_target(dir.path()).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_resolve_to_the_file_they_name_and_devices_are_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.avro");
        fs::write(&target, b"x").unwrap();
        let link = dir.path().join("link.avro");
        std::os::unix::fs::symlink("target.avro", &link).unwrap();
        let chained = dir.path().join("chained.avro");
        std::os::unix::fs::symlink(&link, &chained).unwrap();
        for p in [&link, &chained] {
            assert!(
                matches!(output_target(p).unwrap(), OutputTarget::Replace { path, permissions: Some(_) } if path == target)
            );
        }
        let dangling = dir.path().join("dangling.avro");
        std::os::unix::fs::symlink("missing.avro", &dangling).unwrap();
        assert_eq!(
            output_target(&dangling).unwrap(),
            OutputTarget::Replace {
                path: dir.path().join("missing.avro"),
                permissions: None
            }
        );
        let looped = dir.path().join("loop.avro");
        std::os::unix::fs::symlink("loop.avro", &looped).unwrap();
        assert!(output_target(&looped).is_err());
        assert_eq!(
            output_target(Path::new("/dev/null")).unwrap(),
            OutputTarget::InPlace(PathBuf::from("/dev/null"))
        );
        // Standard output, whatever it is here (a pipe, a file, a terminal): through it.
        assert_eq!(
            output_target(Path::new("/dev/stdout")).unwrap(),
            OutputTarget::InPlace(PathBuf::from("/dev/stdout"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn another_users_link_in_a_shared_directory_is_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return; // (Giving a link to another user takes root.)
        }
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
        let link = shared.join("out.avro");
        std::os::unix::fs::symlink(dir.path().join("precious"), &link).unwrap();
        assert!(output_target(&link).is_ok(), "the writer's own link");
        std::os::unix::fs::lchown(&link, Some(12345), None).unwrap();
        let err = output_target(&link).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        // Outside a sticky directory the kernel follows it, and so does this.
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(output_target(&link).is_ok());
    }
}
