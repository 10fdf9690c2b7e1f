//! Parquet output, with the leaf columns (and consecutive row groups) encoded and compressed
//! in parallel while the next batches are decoded.
//!
//! parquet's `ArrowWriter` encodes the columns of a row group one after the other on the
//! caller's thread. The crate's lower-level API (`ArrowWriter::into_serialized_writer`, one
//! `ArrowColumnWriter` per leaf column, `compute_leaves`, `ArrowColumnChunk::append_to_row_group`)
//! allows more, and this writer uses it:
//!
//! - batches are gathered into chunks of about [`CHUNK_BYTES`] (never across a row group) and
//!   split into their leaf columns;
//! - every leaf column of a row group has its own queue of chunks and its own column writer,
//!   which encodes the queued chunks in order on a rayon pool (`--threads`); columns do not
//!   wait for each other, so an expensive column keeps one thread busy while the others move
//!   on;
//! - when a row group has all its rows, the next one starts at once, with new column writers,
//!   while the previous ones finish encoding: up to one row group per thread is encoded at the
//!   same time (at least two, within [`GROUP_BYTES_IN_FLIGHT`] of Arrow data), so even a file
//!   dominated by one column (one long array) uses several threads when it has several row
//!   groups;
//! - meanwhile the caller goes on reading and decoding; chunks not yet encoded by every column
//!   are held up to [`CHUNKS_IN_FLIGHT_PER_THREAD`] per thread and [`CHUNK_BYTES_IN_FLIGHT`]
//!   bytes, which bounds memory with the encoded row groups in flight (`ArrowWriter` holds one);
//! - finished row groups are closed (their columns in parallel) and appended to the file in
//!   order, on the caller's thread.
//!
//! The file is started once the first [`SAMPLE_ROWS`] rows are in: the encoding of every leaf
//! column is chosen from them (`encoding.rs`). Batches are re-cut at multiples of the batch
//! size ([`Rebatch`]) and one column chunk is always encoded by one writer, in row order: the
//! file is byte for byte the same whatever the thread count (page boundaries follow the
//! `--batch-size`), and the same as `ArrowWriter` writes with these properties and batches
//! (same schema conversion, embedded Arrow schema).

use super::compat::{self, Mapping};
use super::encoding::{Plan, SAMPLE_ROWS};
use super::{BatchWriter, WriterOptions};
use crate::format::Compression;
use crate::output::Out;
use anyhow::{anyhow, bail, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
    ArrowRowGroupWriterFactory,
};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{BrotliLevel, GzipLevel, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::SchemaDescriptor;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Arrow bytes gathered before a chunk is handed to the column encoders.
pub const CHUNK_BYTES: usize = 16 << 20;

/// Chunks of leaf columns held at most (queued or being encoded), per encoding thread.
/// Chunks are held until every column has encoded them; more chunks in flight let more
/// columns and row groups be encoded at the same time. Memory is bounded by
/// [`CHUNK_BYTES_IN_FLIGHT`].
pub const CHUNKS_IN_FLIGHT_PER_THREAD: usize = 2;

/// Arrow bytes of the chunks in flight at most (at least one chunk is always allowed).
pub const CHUNK_BYTES_IN_FLIGHT: usize = 256 << 20;

/// Arrow bytes of the row groups being encoded (received but not appended) above which no
/// new row group starts before the oldest one is appended. At least two row groups are always
/// allowed (the one finishing and the one receiving rows), at most one per thread.
pub const GROUP_BYTES_IN_FLIGHT: usize = 512 << 20;

/// The leaf columns of a chunk of batches: `leaves[b][c]` is leaf column `c` of batch `b`.
struct Chunk {
    leaves: Vec<Vec<ArrowLeafColumn>>,
}

/// One leaf column of a row group being encoded.
struct Column {
    /// The writer; `None` while a task is encoding with it.
    writer: Option<ArrowColumnWriter>,
    /// Chunks still to encode, oldest first.
    queue: VecDeque<Arc<Chunk>>,
    /// Whether a task is draining the queue.
    running: bool,
}

/// A row group being encoded.
struct Group {
    /// Its position in the file.
    index: usize,
    columns: Vec<Column>,
    /// (column, chunk) pairs not encoded yet.
    outstanding: usize,
    /// Whether all its rows were handed over.
    complete: bool,
    /// Arrow bytes of the rows handed over.
    bytes: usize,
}

impl Group {
    /// Complete and encoded: ready to be closed and appended.
    fn done(&self) -> bool {
        self.complete && self.outstanding == 0 && self.columns.iter().all(|c| !c.running)
    }
}

/// What the caller and the encoding tasks share.
struct State {
    /// Row groups not appended yet, in file order.
    groups: VecDeque<Group>,
    /// The first encoding error.
    error: Option<String>,
}

impl State {
    fn group(&mut self, index: usize) -> Option<&mut Group> {
        self.groups.iter_mut().find(|g| g.index == index)
    }
}

struct Shared {
    state: Mutex<State>,
    /// Signalled whenever a task finished a (column, chunk) pair or went idle.
    progress: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Encoding runs outside the lock, so no task panics while holding it; but be safe.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Encodes the queued chunks of column `c` of row group `g` until its queue is empty.
fn drain(shared: Arc<Shared>, g: usize, c: usize) {
    loop {
        let (chunk, mut writer) = {
            let mut state = shared.lock();
            let failed = state.error.is_some();
            let Some(group) = state.group(g) else {
                return;
            };
            let column = &mut group.columns[c];
            match column.queue.pop_front() {
                Some(chunk) if !failed => (chunk, column.writer.take()),
                popped => {
                    // Idle, or failed (then nothing more is encoded: drop the queue).
                    let dropped = usize::from(popped.is_some()) + column.queue.len();
                    column.queue.clear();
                    column.running = false;
                    group.outstanding -= dropped;
                    shared.progress.notify_all();
                    return;
                }
            }
        };
        let result = match writer.as_mut() {
            Some(writer) => catch_unwind(AssertUnwindSafe(|| {
                chunk
                    .leaves
                    .iter()
                    .try_for_each(|batch| writer.write(&batch[c]))
            }))
            .unwrap_or_else(|_| {
                Err(ParquetError::General(
                    "a Parquet column writer panicked".into(),
                ))
            }),
            None => Err(ParquetError::General("a column writer went missing".into())),
        };
        drop(chunk);
        let mut state = shared.lock();
        if let Err(e) = result {
            state.error.get_or_insert_with(|| e.to_string());
        }
        if let Some(group) = state.group(g) {
            group.columns[c].writer = writer;
            group.outstanding -= 1;
        }
        shared.progress.notify_all();
    }
}

/// Parquet output: gathers the first rows, chooses the encodings from them, then encodes.
pub struct ParquetWriter {
    /// Unions, durations and empty records rewritten for Parquet.
    mapping: Mapping,
    rebatch: Rebatch,
    stage: Stage,
    /// Arrow bytes that make a chunk ([`CHUNK_BYTES`]; smaller in tests).
    chunk_limit: usize,
    /// The data page size limit, when not the `parquet` crate's default (tests).
    page_limit: Option<usize>,
}

enum Stage {
    /// Gathering the first rows; the file is not started.
    Sampling(Box<Sampling>),
    Encoding(Box<Encoder>),
    /// Between the two, or after a failure to start.
    Poisoned,
}

/// Re-cuts a stream of batches at multiples of `size` rows from its start, as one thread
/// reads them. A column writer checks its page size at the end of every write, so the file
/// depends on where batches end, and batches read on several threads end short at work-unit
/// boundaries. Batches already cut right pass through; only the pieces around a short one are
/// joined (a copy of at most `size` rows).
struct Rebatch {
    size: usize,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
}

impl Rebatch {
    fn new(size: usize) -> Rebatch {
        Rebatch {
            size: size.max(1),
            pending: Vec::new(),
            pending_rows: 0,
        }
    }

    /// Appends to `out` the batches of `size` rows that `batch` completes.
    fn push(&mut self, batch: &RecordBatch, out: &mut Vec<RecordBatch>) -> Result<()> {
        let rows = batch.num_rows();
        let mut offset = 0;
        if self.pending_rows > 0 {
            offset = (self.size - self.pending_rows).min(rows);
            self.pending.push(batch.slice(0, offset));
            self.pending_rows += offset;
            if self.pending_rows == self.size {
                out.extend(self.flush()?);
            }
        }
        while rows - offset >= self.size {
            out.push(if offset == 0 && rows == self.size {
                batch.clone()
            } else {
                batch.slice(offset, self.size)
            });
            offset += self.size;
        }
        if offset < rows {
            self.pending.push(batch.slice(offset, rows - offset));
            self.pending_rows += rows - offset;
        }
        Ok(())
    }

    /// The rows held back, joined.
    fn flush(&mut self) -> Result<Option<RecordBatch>> {
        self.pending_rows = 0;
        let pending = std::mem::take(&mut self.pending);
        Ok(match pending.len() {
            0 => None,
            1 => pending.into_iter().next(),
            _ => Some(arrow::compute::concat_batches(
                &pending[0].schema(),
                &pending,
            )?),
        })
    }
}

/// What starting the file needs, and the first rows (mapped for Parquet).
struct Sampling {
    out: Out,
    options: WriterOptions,
    /// The Parquet schema, when it differs from the one the converter gives (durations).
    custom: Option<SchemaDescriptor>,
    descriptor: SchemaDescriptor,
    batches: Vec<RecordBatch>,
    rows: usize,
}

/// The started file, encoding row groups.
struct Encoder {
    file: SerializedFileWriter<Out>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    row_group_size: usize,
    /// The row group receiving rows, if started, and its rows so far.
    current: Option<usize>,
    group_rows: usize,
    /// The position of the next row group to start.
    next_group: usize,
    /// Batches gathered for the next chunk, their size, and the size that makes a chunk.
    chunk: Vec<RecordBatch>,
    chunk_bytes: usize,
    chunk_limit: usize,
    /// Chunks handed over and maybe not encoded yet, oldest first.
    in_flight: VecDeque<(Arc<Chunk>, usize)>,
    in_flight_bytes: usize,
    /// Chunks in flight at most.
    max_chunks: usize,
    shared: Arc<Shared>,
    /// Where columns are encoded: `None` on the caller's thread, as batches come.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Row groups encoded at the same time at most: one per thread (at least 2).
    max_groups: usize,
    /// The sampled batches, until they are written.
    sample: Vec<RecordBatch>,
}

/// The writer properties for `options`, with the encoding of every leaf column of
/// `descriptor` as `plan` says.
fn properties(
    options: &WriterOptions,
    descriptor: &SchemaDescriptor,
    plan: &Plan,
    rows_per_group: usize,
    page_limit: Option<usize>,
) -> WriterProperties {
    use parquet::basic::Compression as Codec;
    // Levels were checked with the arguments; an invalid one falls back to the default.
    let level = options.level;
    let unsigned = level.and_then(|l| u32::try_from(l).ok());
    let compression = match options.compression {
        Compression::None => Codec::UNCOMPRESSED,
        Compression::Zstd => Codec::ZSTD(
            level
                .and_then(|l| ZstdLevel::try_new(l).ok())
                .unwrap_or_default(),
        ),
        Compression::Snappy => Codec::SNAPPY,
        Compression::Gzip => Codec::GZIP(
            unsigned
                .and_then(|l| GzipLevel::try_new(l).ok())
                .unwrap_or_default(),
        ),
        Compression::Lz4 => Codec::LZ4_RAW,
        Compression::Brotli => Codec::BROTLI(
            unsigned
                .and_then(|l| BrotliLevel::try_new(l).ok())
                .unwrap_or_default(),
        ),
        // Refused for Parquet when the arguments are checked.
        Compression::Deflate | Compression::Bzip2 | Compression::Xz => Codec::UNCOMPRESSED,
    };
    let builder = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(rows_per_group))
        .set_created_by(format!("avrow version {}", env!("CARGO_PKG_VERSION")));
    let builder = match page_limit {
        Some(limit) => builder.set_data_page_size_limit(limit),
        None => builder,
    };
    plan.apply(builder, descriptor).build()
}

impl ParquetWriter {
    /// A Parquet writer for batches of `schema`; the file is started once the first rows are
    /// in (or at the end).
    ///
    /// # Errors
    /// The schema has a type Parquet cannot store.
    pub fn new(out: Out, schema: SchemaRef, options: &WriterOptions) -> Result<Self> {
        let mapping = Mapping::new(&schema)?;
        // The Parquet schema: as the writer would convert it, with durations annotated.
        let custom = compat::parquet_schema(&mapping, ArrowSchemaConverter::new())?;
        let descriptor = match &custom {
            Some(descriptor) => descriptor.clone(),
            None => ArrowSchemaConverter::new().convert(&mapping.schema)?,
        };
        Ok(ParquetWriter {
            mapping,
            rebatch: Rebatch::new(options.batch_size),
            stage: Stage::Sampling(Box::new(Sampling {
                out,
                options: *options,
                custom,
                descriptor,
                batches: Vec::new(),
                rows: 0,
            })),
            chunk_limit: CHUNK_BYTES,
            page_limit: None,
        })
    }

    /// Chooses the encodings from the rows gathered, starts the file and encodes those rows.
    fn start(&mut self) -> Result<&mut Encoder> {
        if let Stage::Sampling(_) = self.stage {
            let Stage::Sampling(sampling) = std::mem::replace(&mut self.stage, Stage::Poisoned)
            else {
                unreachable!("checked above")
            };
            let mut encoder = Encoder::new(
                *sampling,
                self.mapping.schema.clone(),
                self.chunk_limit,
                self.page_limit,
            )?;
            for batch in std::mem::take(&mut encoder.sample) {
                encoder.write(batch)?;
            }
            self.stage = Stage::Encoding(Box::new(encoder));
        }
        match &mut self.stage {
            Stage::Encoding(encoder) => Ok(encoder),
            _ => bail!("the Parquet file could not be started"),
        }
    }
}

impl Encoder {
    /// Starts the file with the encodings chosen from the sample; the sampled batches are left
    /// in `sample` for the caller to write.
    fn new(
        sampling: Sampling,
        schema: SchemaRef,
        chunk_limit: usize,
        page_limit: Option<usize>,
    ) -> Result<Self> {
        let Sampling {
            out,
            options,
            custom,
            descriptor,
            batches,
            rows: _,
        } = sampling;
        let compressed = !matches!(options.compression, Compression::None);
        let plan = Plan::new(&descriptor, schema.fields(), &batches, compressed);
        let row_group_size = plan.rows_per_group(options.row_group_bytes, options.row_group_size);
        let props = properties(&options, &descriptor, &plan, row_group_size, page_limit);
        let mut writer_options = ArrowWriterOptions::new().with_properties(props);
        if let Some(descriptor) = custom {
            writer_options = writer_options.with_parquet_schema(descriptor);
        }
        let writer = ArrowWriter::try_new_with_options(out, schema.clone(), writer_options)?;
        let (file, factory) = writer.into_serialized_writer()?;
        let threads = match options.threads {
            0 => rayon::current_num_threads(),
            n => n,
        };
        let pool = if threads > 1 {
            Some(Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("avrow-parquet-{i}"))
                    .build()
                    .context("cannot start the Parquet encoding threads")?,
            ))
        } else {
            None
        };
        Ok(Encoder {
            file,
            factory,
            schema,
            row_group_size,
            current: None,
            group_rows: 0,
            next_group: 0,
            chunk: Vec::new(),
            chunk_bytes: 0,
            chunk_limit,
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            max_chunks: CHUNKS_IN_FLIGHT_PER_THREAD * threads,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    groups: VecDeque::new(),
                    error: None,
                }),
                progress: Condvar::new(),
            }),
            pool,
            max_groups: threads.max(2),
            sample: batches,
        })
    }

    /// Waits until `done` holds (or an encoding error happened).
    fn wait_until(&self, mut done: impl FnMut(&State) -> bool) -> Result<MutexGuard<'_, State>> {
        let mut state = self.shared.lock();
        loop {
            if let Some(e) = &state.error {
                bail!("{e}");
            }
            if done(&state) {
                return Ok(state);
            }
            state = self
                .shared
                .progress
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Closes and appends the finished row groups at the head of the file order; with `all`,
    /// waits for every row group.
    fn write_finished(&mut self, all: bool) -> Result<()> {
        loop {
            let group = {
                let mut state =
                    self.wait_until(|s| !all || s.groups.front().is_none_or(Group::done))?;
                match state.groups.front() {
                    Some(group) if group.done() => state.groups.pop_front(),
                    _ => None,
                }
            };
            let Some(group) = group else {
                return Ok(());
            };
            let writers = group
                .columns
                .into_iter()
                .map(|c| {
                    c.writer
                        .ok_or_else(|| anyhow!("a Parquet column writer went missing"))
                })
                .collect::<Result<Vec<_>>>()?;
            let chunks = match &self.pool {
                Some(pool) => pool.install(|| {
                    writers
                        .into_par_iter()
                        .map(ArrowColumnWriter::close)
                        .collect::<parquet::errors::Result<Vec<ArrowColumnChunk>>>()
                })?,
                None => writers
                    .into_iter()
                    .map(ArrowColumnWriter::close)
                    .collect::<parquet::errors::Result<Vec<_>>>()?,
            };
            let mut row_group = self.file.next_row_group()?;
            for chunk in chunks {
                chunk.append_to_row_group(&mut row_group)?;
            }
            row_group.close()?;
        }
    }

    /// The row group receiving rows, started if needed (after the oldest one is written, if
    /// too many are in flight).
    fn current_group(&mut self) -> Result<usize> {
        if let Some(index) = self.current {
            return Ok(index);
        }
        let max_groups = self.max_groups;
        let too_many = |s: &State| {
            s.groups.len() >= max_groups
                || (s.groups.len() >= 2
                    && s.groups.iter().map(|g| g.bytes).sum::<usize>() >= GROUP_BYTES_IN_FLIGHT)
        };
        while too_many(&self.shared.lock()) {
            drop(self.wait_until(|s| s.groups.front().is_none_or(Group::done))?);
            self.write_finished(false)?;
        }
        let index = self.next_group;
        let columns = self
            .factory
            .create_column_writers(index)?
            .into_iter()
            .map(|writer| Column {
                writer: Some(writer),
                queue: VecDeque::new(),
                running: false,
            })
            .collect();
        self.shared.lock().groups.push_back(Group {
            index,
            columns,
            outstanding: 0,
            complete: false,
            bytes: 0,
        });
        self.next_group += 1;
        self.current = Some(index);
        Ok(index)
    }

    /// Splits the gathered batches into leaf columns and queues them on every column of the
    /// current row group (or, on one thread, encodes them right away).
    fn submit_chunk(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let g = self.current_group()?;
        let batches = std::mem::take(&mut self.chunk);
        let bytes = std::mem::take(&mut self.chunk_bytes);
        let leaves = batches
            .iter()
            .map(|batch| {
                let mut leaves = Vec::new();
                for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
                    leaves.extend(compute_leaves(field, column)?);
                }
                Ok(leaves)
            })
            .collect::<parquet::errors::Result<Vec<_>>>()?;
        let chunk = Arc::new(Chunk { leaves });
        let Some(pool) = self.pool.clone() else {
            let mut state = self.shared.lock();
            let group = state
                .group(g)
                .ok_or_else(|| anyhow!("row group {g} went missing"))?;
            for (c, column) in group.columns.iter_mut().enumerate() {
                if let Some(writer) = column.writer.as_mut() {
                    for batch in &chunk.leaves {
                        writer.write(&batch[c])?;
                    }
                }
            }
            return Ok(());
        };
        // Release the chunks every column is done with, then bound memory: wait for the
        // oldest chunk once enough are in flight.
        while self
            .in_flight
            .front()
            .is_some_and(|(oldest, _)| Arc::strong_count(oldest) == 1)
        {
            let (_, done_bytes) = self.in_flight.pop_front().expect("in flight");
            self.in_flight_bytes -= done_bytes;
        }
        while !self.in_flight.is_empty()
            && (self.in_flight.len() >= self.max_chunks
                || self.in_flight_bytes + bytes > CHUNK_BYTES_IN_FLIGHT)
        {
            let (oldest, oldest_bytes) = self.in_flight.pop_front().expect("in flight");
            self.in_flight_bytes -= oldest_bytes;
            drop(self.wait_until(|_| Arc::strong_count(&oldest) == 1)?);
        }
        self.in_flight.push_back((chunk.clone(), bytes));
        self.in_flight_bytes += bytes;
        let mut state = self.shared.lock();
        let group = state
            .group(g)
            .ok_or_else(|| anyhow!("row group {g} went missing"))?;
        group.outstanding += group.columns.len();
        group.bytes += bytes;
        for (c, column) in group.columns.iter_mut().enumerate() {
            column.queue.push_back(chunk.clone());
            if !column.running {
                column.running = true;
                let shared = self.shared.clone();
                pool.spawn(move || drain(shared, g, c));
            }
        }
        Ok(())
    }

    /// Hands over what is gathered and marks the current row group complete; appends the row
    /// groups that are done.
    fn end_row_group(&mut self) -> Result<()> {
        self.submit_chunk()?;
        if let Some(g) = self.current.take() {
            if let Some(group) = self.shared.lock().group(g) {
                group.complete = true;
            }
            self.shared.progress.notify_all();
        }
        self.group_rows = 0;
        self.write_finished(false)
    }

    /// Gathers `batch` (which fits in the row group in progress).
    fn gather(&mut self, batch: RecordBatch) -> Result<()> {
        self.group_rows += batch.num_rows();
        self.chunk_bytes += batch.get_array_memory_size();
        self.chunk.push(batch);
        if self.pool.is_none() || self.chunk_bytes >= self.chunk_limit {
            self.submit_chunk()?;
        }
        if self.group_rows >= self.row_group_size {
            self.end_row_group()?;
        }
        Ok(())
    }
}

impl Encoder {
    /// Writes a batch already mapped for Parquet, split at row group boundaries.
    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let mut offset = 0;
        while offset < batch.num_rows() {
            let take = (self.row_group_size - self.group_rows).min(batch.num_rows() - offset);
            if offset == 0 && take == batch.num_rows() {
                self.gather(batch.clone())?;
            } else {
                self.gather(batch.slice(offset, take))?;
            }
            offset += take;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Out> {
        self.end_row_group()?;
        self.write_finished(true)?;
        let mut out = self.file.into_inner()?;
        out.flush()?;
        Ok(out)
    }
}

impl ParquetWriter {
    /// Writes a batch already mapped and cut for Parquet.
    fn write_cut(&mut self, batch: RecordBatch) -> Result<()> {
        match &mut self.stage {
            Stage::Sampling(sampling) => {
                sampling.rows += batch.num_rows();
                sampling.batches.push(batch);
                if sampling.rows >= SAMPLE_ROWS {
                    self.start()?;
                }
                Ok(())
            }
            Stage::Encoding(encoder) => encoder.write(batch),
            Stage::Poisoned => bail!("the Parquet file could not be started"),
        }
    }
}

impl BatchWriter for ParquetWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = self.mapping.apply(batch)?;
        let mut cut = Vec::new();
        self.rebatch.push(&batch, &mut cut)?;
        for batch in cut {
            self.write_cut(batch)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        if let Some(batch) = self.rebatch.flush()? {
            self.write_cut(batch)?;
        }
        self.start()?;
        match std::mem::replace(&mut self.stage, Stage::Poisoned) {
            Stage::Encoding(encoder) => encoder.finish(),
            _ => bail!("the Parquet file could not be started"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::CountingWriter;
    use arrow::array::{ArrayRef, Int64Array, ListArray, StringArray};
    use arrow::datatypes::{DataType, Field, Int64Type, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::sync::Mutex as StdMutex;

    /// A `Write` into a shared buffer, so the bytes can be read after `finish`.
    #[derive(Clone, Default)]
    struct Shared(Arc<StdMutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn batches() -> (SchemaRef, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new(
                "values",
                DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
                true,
            ),
        ]));
        let batches = (0..40i64)
            .map(|b| {
                let rows = 97 + b as usize;
                let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(
                    (0..rows as i64).map(|i| b * 1000 + i),
                ));
                let names: ArrayRef = Arc::new(StringArray::from_iter(
                    (0..rows).map(|i| (i % 7 != 0).then(|| format!("n{b}-{i}"))),
                ));
                let values: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
                    (0..rows as i64).map(|i| (i % 5 != 0).then(|| (0..i % 9).map(Some))),
                ));
                RecordBatch::try_new(schema.clone(), vec![ids, names, values]).unwrap()
            })
            .collect();
        (schema, batches)
    }

    /// The rows of [`batches`] cut into batches of `cut` rows (the last one shorter), or as
    /// they are.
    fn cut(cut: Option<usize>) -> Vec<RecordBatch> {
        let (schema, batches) = batches();
        let Some(cut) = cut else {
            return batches;
        };
        let all = arrow::compute::concat_batches(&schema, &batches).unwrap();
        (0..all.num_rows())
            .step_by(cut)
            .map(|start| all.slice(start, cut.min(all.num_rows() - start)))
            .collect()
    }

    fn write(
        threads: usize,
        chunk_limit: usize,
        row_group_size: usize,
        batch_size: usize,
        batches: &[RecordBatch],
    ) -> Vec<u8> {
        let sink = Shared::default();
        let out: Out = CountingWriter::new(Box::new(sink.clone()));
        let options = WriterOptions {
            compression: Compression::Zstd,
            level: None,
            row_group_size,
            row_group_bytes: usize::MAX,
            batch_size,
            threads,
            block_size: 1 << 20,
        };
        let mut writer = Box::new(ParquetWriter::new(out, batches[0].schema(), &options).unwrap());
        writer.chunk_limit = chunk_limit;
        // Small pages: many page boundaries, which depend on where writes end.
        writer.page_limit = Some(2048);
        for batch in batches {
            writer.write(batch).unwrap();
        }
        writer.finish().unwrap();
        let bytes = sink.0.lock().unwrap().clone();
        bytes
    }

    #[test]
    fn pipelined_encoding_writes_what_one_thread_writes() {
        // Tiny chunks: every batch is a chunk, many chunks in flight, row groups that end
        // inside batches; batches cut anywhere (as several reading threads cut them).
        let (_, as_made) = batches();
        for row_group_size in [150, 1000] {
            let reference = write(1, 1, row_group_size, 200, &cut(Some(200)));
            for (threads, chunk_limit, batches) in [
                (1, 1, as_made.clone()),
                (1, usize::MAX, cut(Some(7))),
                (2, 1, as_made.clone()),
                (4, 1, cut(Some(333))),
                (8, 1, as_made.clone()),
                (3, 50_000, cut(Some(1))),
                (4, usize::MAX, cut(None)),
            ] {
                assert!(
                    write(threads, chunk_limit, row_group_size, 200, &batches) == reference,
                    "threads {threads}, chunk {chunk_limit}, row groups of {row_group_size}"
                );
            }
        }
        let reference = write(1, 1, 1000, 200, &as_made);
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(reference)).unwrap();
        let groups = reader.metadata().num_row_groups();
        let rows: usize = as_made.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(groups, rows.div_ceil(1000));
        assert!(reader.metadata().row_group(0).column(0).data_page_offset() > 0);
        let read: Vec<RecordBatch> = reader.build().unwrap().map(Result::unwrap).collect();
        let read = arrow::compute::concat_batches(&read[0].schema(), &read).unwrap();
        let expected = arrow::compute::concat_batches(&as_made[0].schema(), &as_made).unwrap();
        assert_eq!(read.columns(), expected.columns());
    }

    #[test]
    fn rebatch_cuts_at_multiples_of_the_batch_size() {
        let (_, batches) = batches();
        let mut rebatch = Rebatch::new(250);
        let mut out = Vec::new();
        for batch in &batches {
            rebatch.push(batch, &mut out).unwrap();
        }
        out.extend(rebatch.flush().unwrap());
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(out.len(), rows.div_ceil(250));
        assert!(out[..out.len() - 1].iter().all(|b| b.num_rows() == 250));
        let joined = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
        let expected = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
        assert_eq!(joined, expected);
    }
}
