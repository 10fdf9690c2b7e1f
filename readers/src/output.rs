//! Where a finished output file goes. Outputs are written under a temporary name beside
//! their destination and renamed over it once complete, so that a failed write never leaves
//! a half-written file: [`output_target`] says what that rename may replace, and when a
//! rename would be wrong and the destination must be written in place instead. The CLI and
//! the Python package follow it; so can any program that writes with [`crate::Writer`].

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
    /// A named pipe or a character device (`/dev/null`, `/dev/stdout`): written in place, as
    /// opening it for writing would; a rename would put a regular file where it is (and,
    /// for a process that may write `/dev`, destroy the device).
    InPlace(PathBuf),
}

/// At most this many symbolic links are followed to find a destination (Linux's limit).
const MAX_LINKS: usize = 40;

/// How to write an output to `path`: see [`OutputTarget`].
///
/// # Errors
/// `path` is a directory, a block device or a socket (`InvalidInput`), a chain of more than
/// 40 symbolic links, or its metadata cannot be read.
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
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
    }
}
