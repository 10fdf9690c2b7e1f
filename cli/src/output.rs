//! Where `convert` writes: a temporary file beside the output, renamed into place only when
//! the conversion succeeded (over the file a symbolic link names, keeping the replaced file's
//! permissions), a named pipe or character device written in place, or standard output
//! ([`avrow::output`] decides which).

use anyhow::{anyhow, bail, Context, Result};
use avrow::output::{output_target, OutputTarget};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tempfile::TempPath;

/// The byte sink every format writer writes into.
pub type Out = CountingWriter<Box<dyn Write + Send>>;

/// A writer that counts the bytes written through it.
pub struct CountingWriter<W> {
    inner: W,
    written: u64,
}

impl<W> CountingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        CountingWriter { inner, written: 0 }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        self.written += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Set once a write to standard output failed because the reading end of the pipe is closed.
static PIPE_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether standard output turned out to be a closed pipe. Some writers (arrow's CSV writer)
/// keep only the text of an I/O error, so the error alone cannot always tell.
pub fn pipe_closed() -> bool {
    PIPE_CLOSED.load(Ordering::Relaxed)
}

/// A writer to standard output that notes a closed pipe (see [`pipe_closed`]).
pub struct WatchPipe<W>(pub W);

impl<W: Write> WatchPipe<W> {
    fn watch<T>(result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            if e.kind() == io::ErrorKind::BrokenPipe {
                PIPE_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        result
    }
}

impl<W: Write> Write for WatchPipe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Self::watch(self.0.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        Self::watch(self.0.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Self::watch(self.0.flush())
    }
}

/// Standard output as an [`Out`].
pub fn stdout() -> Out {
    CountingWriter::new(Box::new(BufWriter::with_capacity(
        1 << 16,
        WatchPipe(io::stdout()),
    )))
}

/// An output file being written. Under a temporary name, dropping it without
/// [`commit`](PendingFile::commit) removes the temporary file and the target is never
/// touched; a named pipe or device is written in place.
#[derive(Debug)]
pub struct PendingFile {
    /// The temporary file, and the permissions to give it; `None` in place.
    temp: Option<(TempPath, Option<std::fs::Permissions>)>,
    handle: File,
    /// The file replaced (a symbolic link's target) or written in place.
    target: PathBuf,
    force: bool,
}

/// How `target` will be written, failing unless it can be: it must not be a directory, and
/// must not exist (unless `force`, or it is a named pipe or character device, written into).
///
/// # Errors
/// The target exists without `force`, is a directory, a block device or a socket.
pub fn check_target(target: &Path, force: bool) -> Result<OutputTarget> {
    let how =
        output_target(target).map_err(|e| anyhow!("cannot write {}: {e}", target.display()))?;
    if !force && matches!(how, OutputTarget::Replace { .. }) && target.symlink_metadata().is_ok() {
        bail!(
            "{} already exists (use --force to replace it)",
            target.display()
        );
    }
    Ok(how)
}

/// Creates a temporary file beside `target` (same directory, so the final rename is atomic;
/// beside the file it names for a symbolic link) and returns the sink to write into and the
/// pending file to commit; a named pipe or character device is opened for writing instead.
///
/// # Errors
/// See [`check_target`]; the directory does not exist or is not writable.
pub fn create_file(target: &Path, force: bool) -> Result<(Out, PendingFile)> {
    let (target, permissions) = match check_target(target, force)? {
        OutputTarget::Replace { path, permissions } => (path, permissions),
        OutputTarget::InPlace(path) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            return pending(file, None, path, force);
        }
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a file name", target.display()))?
        .to_string_lossy();
    let prefix = format!(".{name}.avrow-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        // The umask applies, so outputs get the usual permissions rather than 0600.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let file = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let (file, temp) = file.into_parts();
    pending(file, Some((temp, permissions)), target, force)
}

/// The buffered output into `file` and the [`PendingFile`] that finishes it (`temp`: the
/// temporary file to rename to `target`, and the permissions it takes; `None` when `file` is
/// the target itself).
fn pending(
    file: File,
    temp: Option<(TempPath, Option<std::fs::Permissions>)>,
    target: PathBuf,
    force: bool,
) -> Result<(Out, PendingFile)> {
    let handle = file
        .try_clone()
        .with_context(|| format!("cannot write {}", target.display()))?;
    let out = CountingWriter::new(Box::new(BufWriter::with_capacity(1 << 20, file)) as _);
    Ok((
        out,
        PendingFile {
            temp,
            handle,
            target,
            force,
        },
    ))
}

impl PendingFile {
    /// Renames the finished temporary file to the target, first syncing it to disk if
    /// `fsync` (without, the kernel writes it back in its own time: a power loss soon after
    /// may leave the target empty on file systems that do not order the data before the
    /// rename). Without `force`, fails if the target appeared meanwhile (and removes the
    /// temporary file). The file replaced gives the new one its permissions. Written in place,
    /// there is nothing to do.
    ///
    /// # Errors
    /// Syncing, setting the permissions or renaming fails.
    pub fn commit(self, fsync: bool) -> Result<()> {
        let PendingFile {
            temp,
            handle,
            target,
            force,
        } = self;
        // (A pipe or device written in place holds nothing to sync: `fsync` fails on some.)
        let Some((temp, permissions)) = temp else {
            return Ok(());
        };
        if let Some(permissions) = permissions {
            handle
                .set_permissions(permissions)
                .with_context(|| format!("cannot set the permissions of {}", temp.display()))?;
        }
        // (After the mode: the sync makes both durable.)
        if fsync {
            handle
                .sync_all()
                .with_context(|| format!("cannot write {}", target.display()))?;
        }
        drop(handle);
        let result = if force {
            temp.persist(&target)
        } else {
            temp.persist_noclobber(&target)
        };
        result.map_err(|e| {
            if e.error.kind() == io::ErrorKind::AlreadyExists {
                anyhow!(
                    "{} already exists (use --force to replace it)",
                    target.display()
                )
            } else {
                anyhow!(e.error)
                    .context(format!("cannot rename the output to {}", target.display()))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_pending_files_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let (mut out, pending) = create_file(&target, false).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        drop(pending);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn commit_renames_and_respects_force() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let (mut out, pending) = create_file(&target, false).unwrap();
        out.write_all(b"one").unwrap();
        out.flush().unwrap();
        assert_eq!(out.written(), 3);
        drop(out);
        pending.commit(false).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"one");

        assert!(create_file(&target, false).is_err());
        let (mut out, pending) = create_file(&target, true).unwrap();
        out.write_all(b"two").unwrap();
        out.flush().unwrap();
        drop(out);
        pending.commit(true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_target_created_meanwhile_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let (mut out, pending) = create_file(&target, false).unwrap();
        out.write_all(b"new").unwrap();
        out.flush().unwrap();
        drop(out);
        std::fs::write(&target, b"theirs").unwrap();
        let err = pending.commit(true).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn links_keep_their_target_and_replaced_files_their_permissions() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data.csv");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("latest.csv");
        symlink("data.csv", &link).unwrap();
        assert!(create_file(&link, false).is_err(), "the link's file exists");
        let (mut out, pending) = create_file(&link, true).unwrap();
        out.write_all(b"new").unwrap();
        out.flush().unwrap();
        drop(out);
        pending.commit(false).unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_in_place_without_force() {
        use std::os::unix::fs::FileTypeExt;
        let (mut out, pending) = create_file(Path::new("/dev/null"), false).unwrap();
        out.write_all(b"gone").unwrap();
        out.flush().unwrap();
        drop(out);
        pending.commit(true).unwrap();
        let meta = std::fs::metadata("/dev/null").unwrap();
        assert!(meta.file_type().is_char_device());
    }
}
