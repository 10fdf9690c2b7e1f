//! Where `convert` writes: a temporary file beside the output, renamed into place only when
//! the conversion succeeded, or standard output.

use anyhow::{anyhow, bail, Context, Result};
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

/// An output file being written under a temporary name. Dropping it without
/// [`commit`](PendingFile::commit) removes the temporary file; the target is never touched.
#[derive(Debug)]
pub struct PendingFile {
    temp: TempPath,
    handle: File,
    target: PathBuf,
    force: bool,
}

/// Fails unless `target` can be written: it must not exist (unless `force`) and must not be a
/// directory.
///
/// # Errors
/// The target exists without `force`, or is a directory.
pub fn check_target(target: &Path, force: bool) -> Result<()> {
    if target.is_dir() {
        bail!("{} is a directory", target.display());
    }
    if !force && target.symlink_metadata().is_ok() {
        bail!(
            "{} already exists (use --force to replace it)",
            target.display()
        );
    }
    Ok(())
}

/// Creates a temporary file beside `target` (same directory, so the final rename is atomic)
/// and returns the sink to write into and the pending file to commit.
///
/// # Errors
/// See [`check_target`]; the directory does not exist or is not writable.
pub fn create_file(target: &Path, force: bool) -> Result<(Out, PendingFile)> {
    check_target(target, force)?;
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
    let handle = file
        .try_clone()
        .with_context(|| format!("cannot create {}", temp.display()))?;
    let out = CountingWriter::new(Box::new(BufWriter::with_capacity(1 << 20, file)) as _);
    Ok((
        out,
        PendingFile {
            temp,
            handle,
            target: target.to_path_buf(),
            force,
        },
    ))
}

impl PendingFile {
    /// Renames the finished temporary file to the target, first syncing it to disk if
    /// `fsync` (without, the kernel writes it back in its own time: a power loss soon after
    /// may leave the target empty on file systems that do not order the data before the
    /// rename). Without `force`, fails if the target appeared meanwhile (and removes the
    /// temporary file).
    ///
    /// # Errors
    /// Syncing or renaming fails.
    pub fn commit(self, fsync: bool) -> Result<()> {
        let PendingFile {
            temp,
            handle,
            target,
            force,
        } = self;
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
}
