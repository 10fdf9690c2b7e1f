//! [`StagedLocalFiles`]: the local file system of a session whose written files appear only
//! once the statement that wrote them has succeeded.
//!
//! DataFusion's Parquet, CSV, JSON and Arrow sinks complete every output file they opened
//! even when the query feeding them fails (a division by zero, a bad value at row one
//! million): `COPY ... TO 'out.parquet'` then reports the error and leaves a valid-looking,
//! truncated file at the output path, or a partitioned directory of them. Written through
//! this store, each file is staged under a hidden temporary name beside its target
//! (`.NAME.avrow-staged-PID-N`, in the same directory so the final rename is atomic) and
//! renamed into place by [`StagedLocalFiles::commit`] once the statement has run to the end;
//! [`StagedLocalFiles::discard`] (or dropping the store) removes them; directories created
//! for them (a partitioned output's) stay, empty. Reads, listings and deletions go straight
//! to the file system.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::SessionContext;
use futures::stream::BoxStream;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, UploadPart,
};

/// A completed file waiting for [`StagedLocalFiles::commit`]: where it is, where it goes.
#[derive(Debug)]
struct Staged {
    temp: PathBuf,
    target: PathBuf,
}

type StagedList = Arc<Mutex<Vec<Staged>>>;

fn lock(list: &StagedList) -> MutexGuard<'_, Vec<Staged>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// The local file system with writes staged until a commit (see the module documentation).
///
/// ```no_run
/// # async fn demo() -> datafusion::error::Result<()> {
/// use avrow_datafusion::StagedLocalFiles;
/// use datafusion::prelude::SessionContext;
///
/// let ctx = SessionContext::new();
/// let staged = StagedLocalFiles::install(&ctx);
/// match ctx.sql("COPY (SELECT 1 AS x) TO 'out.parquet'").await?.collect().await {
///     Ok(_) => {
///         staged.commit()?;
///     }
///     Err(e) => {
///         staged.discard();
///         return Err(e);
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub struct StagedLocalFiles {
    inner: Arc<LocalFileSystem>,
    staged: StagedList,
    next: AtomicU64,
}

impl StagedLocalFiles {
    /// A store over the whole local file system, with nothing staged.
    pub fn new() -> Self {
        StagedLocalFiles {
            inner: Arc::new(LocalFileSystem::new()),
            staged: Arc::default(),
            next: AtomicU64::new(0),
        }
    }

    /// Makes a new store the `file://` store of `ctx` (where `COPY` and `INSERT INTO` write
    /// local files, and local tables are read) and returns it, for the caller to commit or
    /// discard each statement's files.
    pub fn install(ctx: &SessionContext) -> Arc<Self> {
        let store = Arc::new(StagedLocalFiles::new());
        ctx.register_object_store(
            ObjectStoreUrl::local_filesystem().as_ref(),
            Arc::clone(&store) as Arc<dyn ObjectStore>,
        );
        store
    }

    /// Renames every file written since the last commit or discard to its target, in the
    /// order they were completed, and returns how many (`place`: a symbolic link's file is
    /// replaced, with the permissions of the file replaced; a named pipe or a device is
    /// written into). Files written to the same target twice end as the later one, as
    /// unstaged writes would.
    ///
    /// # Errors
    /// A rename fails: the files not yet renamed are removed, and the error names the target.
    pub fn commit(&self) -> std::io::Result<usize> {
        let staged = std::mem::take(&mut *lock(&self.staged));
        let count = staged.len();
        let mut files = staged.into_iter();
        while let Some(file) = files.next() {
            if let Err(e) = place(&file.temp, &file.target) {
                let _ = std::fs::remove_file(&file.temp);
                for rest in files {
                    let _ = std::fs::remove_file(&rest.temp);
                }
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot rename the output into {}: {e}",
                        file.target.display()
                    ),
                ));
            }
        }
        Ok(count)
    }

    /// Removes every file written since the last commit or discard; their targets are left
    /// as they were.
    pub fn discard(&self) {
        for file in std::mem::take(&mut *lock(&self.staged)) {
            let _ = std::fs::remove_file(&file.temp);
        }
    }

    /// The hidden name `location` is written under, beside it, and both as file system paths.
    fn stage(&self, location: &Path) -> object_store::Result<(Path, Staged)> {
        let name = location
            .filename()
            .ok_or_else(|| generic("an output has no file name"))?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let hidden = format!(".{name}.avrow-staged-{}-{n}", std::process::id());
        let raw = location.as_ref();
        let temp = match raw.rfind('/') {
            Some(slash) => format!("{}/{hidden}", &raw[..slash]),
            None => hidden,
        };
        let temp = Path::parse(temp).map_err(|e| generic(e.to_string()))?;
        let staged = Staged {
            temp: self.inner.path_to_filesystem(&temp)?,
            target: self.inner.path_to_filesystem(location)?,
        };
        Ok((temp, staged))
    }
}

/// Puts the finished file `temp` at `target` as [`avrow::output::output_target`] says:
/// renamed over the file there (or the file a symbolic link names) with that file's
/// permissions, or copied into a named pipe or character device and removed.
fn place(temp: &std::path::Path, target: &std::path::Path) -> std::io::Result<()> {
    use avrow::output::{output_target, OutputTarget};
    match output_target(target)? {
        OutputTarget::Replace { path, permissions } => {
            if let Some(permissions) = permissions {
                std::fs::set_permissions(temp, permissions)?;
            }
            match std::fs::rename(temp, &path) {
                // A link's file on another file system: copied beside it first, then renamed.
                Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                    let name = path.file_name().unwrap_or_default().to_string_lossy();
                    let beside =
                        path.with_file_name(format!(".{name}.avrow-placed-{}", std::process::id()));
                    let copied =
                        std::fs::copy(temp, &beside).and_then(|_| std::fs::rename(&beside, &path));
                    if copied.is_err() {
                        let _ = std::fs::remove_file(&beside);
                    }
                    copied?;
                    std::fs::remove_file(temp)
                }
                other => other,
            }
        }
        OutputTarget::InPlace(path) => {
            let mut from = std::fs::File::open(temp)?;
            let mut to = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)?;
            std::io::copy(&mut from, &mut to)?;
            std::fs::remove_file(temp)
        }
    }
}

impl Default for StagedLocalFiles {
    fn default() -> Self {
        StagedLocalFiles::new()
    }
}

impl Drop for StagedLocalFiles {
    fn drop(&mut self) {
        self.discard();
    }
}

impl fmt::Debug for StagedLocalFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagedLocalFiles")
            .field("staged", &lock(&self.staged).len())
            .finish()
    }
}

impl fmt::Display for StagedLocalFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StagedLocalFiles({})", self.inner)
    }
}

fn generic(message: impl Into<String>) -> object_store::Error {
    object_store::Error::Generic {
        store: "StagedLocalFiles",
        source: message.into().into(),
    }
}

/// A multipart write to a staged name: recorded for the commit once it is complete.
#[derive(Debug)]
struct StagedUpload {
    upload: Box<dyn MultipartUpload>,
    staged: Option<Staged>,
    list: StagedList,
}

#[async_trait]
impl MultipartUpload for StagedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.upload.put_part(data)
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let result = self.upload.complete().await?;
        if let Some(staged) = self.staged.take() {
            lock(&self.list).push(staged);
        }
        Ok(result)
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.staged = None;
        self.upload.abort().await
    }
}

#[async_trait]
impl ObjectStore for StagedLocalFiles {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        // A conditional write's condition is about the target, checked now: not staged.
        if !matches!(opts.mode, PutMode::Overwrite) {
            return self.inner.put_opts(location, payload, opts).await;
        }
        let (temp, staged) = self.stage(location)?;
        let result = self.inner.put_opts(&temp, payload, opts).await?;
        lock(&self.staged).push(staged);
        Ok(result)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let (temp, staged) = self.stage(location)?;
        let upload = self.inner.put_multipart_opts(&temp, opts).await?;
        Ok(Box::new(StagedUpload {
            upload,
            staged: Some(staged),
            list: Arc::clone(&self.staged),
        }))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn location(dir: &std::path::Path, name: &str) -> Path {
        Path::from_filesystem_path(dir).unwrap().join(name)
    }

    #[tokio::test]
    async fn writes_appear_at_commit_and_vanish_at_discard() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.csv"), b"before").unwrap();
        let store = StagedLocalFiles::new();

        store
            .put(
                &location(dir.path(), "small.csv"),
                b"one put".to_vec().into(),
            )
            .await
            .unwrap();
        let mut upload = store
            .put_multipart(&location(dir.path(), "old.csv"))
            .await
            .unwrap();
        upload.put_part(b"in ".to_vec().into()).await.unwrap();
        upload.put_part(b"parts".to_vec().into()).await.unwrap();
        upload.complete().await.unwrap();
        let mut aborted = store
            .put_multipart(&location(dir.path(), "aborted.csv"))
            .await
            .unwrap();
        aborted.put_part(b"never".to_vec().into()).await.unwrap();
        aborted.abort().await.unwrap();

        // Nothing at the targets yet; the old file untouched; two hidden staged files.
        let before = names(dir.path());
        assert_eq!(before.len(), 3, "{before:?}");
        assert!(before
            .iter()
            .filter(|n| n.starts_with('.'))
            .all(|n| n.contains(".avrow-staged-")));
        assert_eq!(
            std::fs::read(dir.path().join("old.csv")).unwrap(),
            b"before"
        );

        assert_eq!(store.commit().unwrap(), 2);
        assert_eq!(names(dir.path()), ["old.csv", "small.csv"]);
        assert_eq!(
            std::fs::read(dir.path().join("old.csv")).unwrap(),
            b"in parts"
        );
        assert_eq!(
            std::fs::read(dir.path().join("small.csv")).unwrap(),
            b"one put"
        );

        // A discarded statement leaves the targets as they were.
        store
            .put(
                &location(dir.path(), "small.csv"),
                b"replaced".to_vec().into(),
            )
            .await
            .unwrap();
        store
            .put(&location(dir.path(), "new.csv"), b"new".to_vec().into())
            .await
            .unwrap();
        store.discard();
        assert_eq!(names(dir.path()), ["old.csv", "small.csv"]);
        assert_eq!(
            std::fs::read(dir.path().join("small.csv")).unwrap(),
            b"one put"
        );
        assert_eq!(store.commit().unwrap(), 0);

        // Dropping the store discards what it staged.
        store
            .put(&location(dir.path(), "dropped.csv"), b"x".to_vec().into())
            .await
            .unwrap();
        drop(store);
        assert_eq!(names(dir.path()), ["old.csv", "small.csv"]);
    }

    #[tokio::test]
    async fn reads_and_listings_see_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), b"abcdef").unwrap();
        let store = StagedLocalFiles::new();
        let a = location(dir.path(), "a.txt");
        assert_eq!(store.get_range(&a, 1..4).await.unwrap().as_ref(), b"bcd");
        assert_eq!(store.head(&a).await.unwrap().size, 6);
        let listed = store
            .list_with_delimiter(Some(&Path::from_filesystem_path(dir.path()).unwrap()))
            .await
            .unwrap();
        assert_eq!(listed.objects.len(), 1);
        store.delete(&a).await.unwrap();
        assert!(names(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_keeps_its_target_and_a_replaced_file_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data.csv");
        std::fs::write(&target, b"before").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink("data.csv", dir.path().join("latest.csv")).unwrap();
        let store = StagedLocalFiles::new();
        store
            .put(
                &location(dir.path(), "latest.csv"),
                b"after".to_vec().into(),
            )
            .await
            .unwrap();
        assert_eq!(store.commit().unwrap(), 1);
        assert_eq!(names(dir.path()), ["data.csv", "latest.csv"]);
        assert!(std::fs::symlink_metadata(dir.path().join("latest.csv"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"after");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}
