//! [`AvrowSink`]: what `COPY ... TO 'out.avro'` and `INSERT INTO` an Avro table run. Each
//! output file DataFusion's demultiplexer opens (one for a file path, several for a
//! directory or `PARTITIONED BY`) is an Avro container file written by avrow's `Writer` as
//! its batches arrive, streamed to the object store in parts of the session's
//! `objectstore_writer_buffer_size` (10 MiB by default). Nothing is visible
//! at the output path until the file is complete: a local file is staged under a temporary
//! name and renamed, a cloud object is a multipart upload completed at the end, and a
//! failed write aborts the upload.

use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::common::runtime::{JoinSet, SpawnedTask};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::write::get_writer_schema;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::ObjectStore;
use tokio::io::AsyncWriteExt;
use tokio::sync::watch;

use crate::options::AvrowWriteOptions;

/// Encoded bytes handed to the object store once this many have gathered.
const FLUSH_BYTES: usize = 1 << 20;

/// Writes query results as Avro container files (see the module documentation).
pub(crate) struct AvrowSink {
    config: FileSinkConfig,
    options: AvrowWriteOptions,
}

impl AvrowSink {
    pub(crate) fn new(config: FileSinkConfig, options: AvrowWriteOptions) -> Self {
        AvrowSink { config, options }
    }
}

impl fmt::Debug for AvrowSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AvrowSink")
            .field("codec", &self.options.codec)
            .finish()
    }
}

impl DisplayAs for AvrowSink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "AvrowSink(codec={}, url={})",
                self.options.codec, self.config.original_url
            ),
            DisplayFormatType::TreeRender => {
                writeln!(f, "format: avro")?;
                write!(f, "file={}", self.config.original_url)
            }
        }
    }
}

/// The encoder's output: bytes the writer task takes out and sends to the store. (The
/// `Writer` owns its output; the task reaches the bytes through this shared handle.)
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<Vec<u8>>>);

impl Pending {
    /// The bytes gathered so far, if at least `at_least`, leaving the buffer empty.
    fn take(&self, at_least: usize) -> Vec<u8> {
        let mut bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if bytes.len() >= at_least {
            std::mem::take(&mut *bytes)
        } else {
            Vec::new()
        }
    }
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An error of one output file, naming it (`name`: [`output_name`]).
fn file_error(name: &str, e: impl fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("writing {name}: {e}"))
}

/// How errors name the output `path` of the store at `store_url`: a local file by its path
/// (the store's paths have no leading `/`), any other by its URL.
fn output_name(store_url: &str, path: &Path) -> String {
    match store_url.strip_prefix("file://") {
        Some(_) => format!("/{path}"),
        None => format!("{}/{path}", store_url.trim_end_matches('/')),
    }
}

/// Writes one output file (its store path, and its name in errors: [`output_name`]) from its
/// batches: the rows written, or `None` where the query failed while producing them
/// (`input`, sent once the input has ended, says whether it succeeded) and the file was
/// abandoned.
async fn write_file(
    (path, name): (Path, String),
    mut batches: tokio::sync::mpsc::Receiver<arrow::array::RecordBatch>,
    schema: SchemaRef,
    options: AvrowWriteOptions,
    store: Arc<dyn ObjectStore>,
    capacity: usize,
    mut input: watch::Receiver<Option<bool>>,
) -> Result<Option<u64>> {
    let pending = Pending::default();
    let mut out = BufWriter::with_capacity(store, path.clone(), capacity);
    let result = async {
        let mut writer = options
            .builder(schema)
            .build(pending.clone())
            .map_err(|e| file_error(&name, e))?;
        while let Some(batch) = batches.recv().await {
            writer.write(&batch).map_err(|e| file_error(&name, e))?;
            let bytes = pending.take(FLUSH_BYTES);
            if !bytes.is_empty() {
                out.write_all(&bytes).await?;
            }
        }
        // The channel also closes when the query fails: the file is completed only once the
        // whole input is known to have been read.
        let succeeded = matches!(
            input.wait_for(Option::is_some).await.map(|v| *v),
            Ok(Some(true))
        );
        if !succeeded {
            return Ok(None);
        }
        let rows = writer.rows();
        writer.finish().map_err(|e| file_error(&name, e))?;
        out.write_all(&pending.take(0)).await?;
        out.shutdown().await?;
        Ok::<_, DataFusionError>(Some(rows))
    }
    .await;
    if !matches!(result, Ok(Some(_))) {
        // Nothing half-written stays behind: the upload (a local staging file) is dropped.
        let _ = out.abort().await;
    }
    result
}

#[async_trait]
impl FileSink for AvrowSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = get_writer_schema(&self.config);
        // The size of an upload's parts (S3 takes no part under 5 MiB but the last), as
        // DataFusion's own formats use it; under it an object is one PUT.
        let capacity = context
            .session_config()
            .options()
            .execution
            .objectstore_writer_buffer_size;
        let (input_done, input) = watch::channel(None);
        let mut tasks: JoinSet<Result<Option<u64>>> = JoinSet::new();
        let store_url = self.config.object_store_url.as_str().to_string();
        while let Some((path, batches)) = file_stream_rx.recv().await {
            let name = output_name(&store_url, &path);
            tasks.spawn(write_file(
                (path, name),
                batches,
                Arc::clone(&schema),
                self.options.clone(),
                Arc::clone(&object_store),
                capacity,
                input.clone(),
            ));
        }
        // The demultiplexer ends once it has sent every batch (or failed): its result tells
        // the writers whether to complete their files or abandon them.
        let demuxed = demux_task
            .join_unwind()
            .await
            .map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))
            .and_then(|r| r);
        input_done.send_replace(Some(demuxed.is_ok()));
        let mut rows = 0;
        let mut first_error = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(n)) => rows += n.unwrap_or(0),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => {
                    first_error.get_or_insert(DataFusionError::ExecutionJoin(Box::new(e)));
                }
            }
        }
        // A writer's own error first: a writer that failed stops reading, and the
        // demultiplexer then fails to send it more rows.
        match (first_error, demuxed) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(())) => Ok(rows),
        }
    }
}

#[async_trait]
impl DataSink for AvrowSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_named_by_their_local_path_or_their_url() {
        let path = Path::from("tmp/x/out.avro");
        assert_eq!(output_name("file:///", &path), "/tmp/x/out.avro");
        assert_eq!(
            output_name("s3://bucket/", &path),
            "s3://bucket/tmp/x/out.avro"
        );
    }
}
