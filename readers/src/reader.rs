//! [`Reader`]: an iterator of Arrow `RecordBatch`es over one or more Avro container files.

use crate::container::Header;
use crate::error::Result;
use crate::parallel::Parallel;
use crate::sequential::Sequential;
use crate::source::SkippedBlock;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use avrow_engine::Schema;
use std::sync::Arc;

pub(crate) enum Engine {
    /// Decoding on the caller's thread (one thread, or an input of one work unit).
    Sequential(Box<Sequential>),
    /// Decoding on a rayon pool, batches in file order.
    Parallel(Box<Parallel>),
}

/// Reads Avro container files as Arrow `RecordBatch`es, in file order. Build one with
/// [`ReaderBuilder`](crate::ReaderBuilder).
///
/// `Reader` is an `Iterator<Item = Result<RecordBatch, avrow::Error>>`. Arrow's
/// [`RecordBatchReader`] needs `ArrowError` items, which one type cannot yield at the same time,
/// so [`Reader::into_arrow`] wraps it as a `RecordBatchReader`.
///
/// After an error the reader delivers the rows decoded before it, then the error, then stops.
pub struct Reader {
    pub(crate) header: Arc<Header>,
    pub(crate) schema: SchemaRef,
    /// The reader schema, given or merged (`None`: the first file's writer schema).
    pub(crate) reader_schema: Option<Schema>,
    pub(crate) engine: Engine,
    pub(crate) threads: usize,
    pub(crate) batch_size: usize,
}

impl Reader {
    /// The Arrow schema of the batches (known before the first batch).
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The header of the (first) file: metadata, codec, writer schema, sync marker.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The Avro schema the batches are read as: the reader schema, given
    /// ([`with_reader_schema`](crate::ReaderBuilder::with_reader_schema)) or merged from files
    /// whose writer schemas differ
    /// ([`with_schema_merging`](crate::ReaderBuilder::with_schema_merging)); otherwise the
    /// (first) file's writer schema.
    pub fn avro_schema(&self) -> &Schema {
        self.reader_schema
            .as_ref()
            .unwrap_or_else(|| self.header.schema())
    }

    /// The most rows a batch holds: the builder's batch size, or fewer where that many rows
    /// of this schema could take more than 2 GiB beyond their input (rows of a large `fixed`,
    /// which takes its whole size even when null; see `RecordDecoder::with_batch_size` in
    /// `avrow-engine`).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// How many threads decode: 1 when decoding happens on the caller's thread.
    pub fn threads(&self) -> usize {
        match self.engine {
            Engine::Sequential(_) => 1,
            Engine::Parallel(_) => self.threads,
        }
    }

    /// The blocks skipped since the last call, in file order (with
    /// [`ReaderBuilder::with_skip_bad_blocks`](crate::ReaderBuilder::with_skip_bad_blocks);
    /// always empty without it). A block is reported no later than the first batch that
    /// follows it in the file; call this after the last batch for the rest.
    pub fn take_skipped(&mut self) -> Vec<SkippedBlock> {
        match &mut self.engine {
            Engine::Sequential(s) => s.take_skipped(),
            Engine::Parallel(p) => p.take_skipped(),
        }
    }

    /// This reader as an arrow [`RecordBatchReader`] (errors become [`ArrowError`]).
    pub fn into_arrow(self) -> ArrowReader {
        ArrowReader(self)
    }
}

impl Iterator for Reader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.engine {
            Engine::Sequential(s) => s.next_batch(),
            Engine::Parallel(p) => p.next_batch(),
        }
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("codec", &self.header.codec())
            .field("threads", &self.threads())
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// A [`Reader`] as an arrow [`RecordBatchReader`].
#[derive(Debug)]
pub struct ArrowReader(Reader);

impl Iterator for ArrowReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|r| r.map_err(ArrowError::from))
    }
}

impl RecordBatchReader for ArrowReader {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}
