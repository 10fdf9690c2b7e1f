//! Parquet output, with the leaf columns (and consecutive row groups) encoded and compressed
//! in parallel while the next batches are decoded.
//!
//! parquet's `ArrowWriter` encodes the columns of a row group one after the other on the
//! caller's thread. The crate's lower-level API (`ArrowWriter::into_serialized_writer`, one
//! `ArrowColumnWriter` per leaf column, `compute_leaves`, `ArrowColumnChunk::append_to_row_group`)
//! allows more, and this writer uses it:
//!
//! - batches are gathered into chunks of about [`CHUNK_BYTES`] (never across a row group);
//! - every leaf column of a row group has its own queue of chunks and its own column writer,
//!   which encodes the queued chunks in order on a rayon pool (`--threads`); columns do not
//!   wait for each other, so an expensive column keeps one thread busy while the others move
//!   on; the encoding tasks also split the batches into leaf columns (levels computed), a
//!   top-level field at a time, as they reach them ([`Chunk`]), so that a chunk holds its
//!   batches and only the levels of leaves that a column has yet to encode;
//! - when a row group has all its rows, the next one starts at once, with new column writers,
//!   while the previous ones finish encoding: up to one row group per thread is encoded at the
//!   same time (at least two, within [`GROUP_BYTES_IN_FLIGHT`] of Arrow data), so even a file
//!   dominated by one column (one long array) uses several threads when it has several row
//!   groups; a file of many leaf columns, whose column writers take much memory, encodes one
//!   row group at a time, its columns in parallel ([`max_groups`]);
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
//! (same schema conversion, embedded Arrow schema), except for the dictionary-encoded
//! byte-array columns outside lists and maps (Avro enums, and strings given a dictionary):
//! `dictionary.rs` writes those, enums from their keys and strings through its own interner,
//! with pages cut by row count alone.

mod bounds;
mod dictionary;
mod hybrid;
mod interner;
mod leaf;
mod paths;
mod rebatch;

use super::compat::{self, Mapping};
use super::encoding::{Plan, SAMPLE_ROWS};
use super::{BatchWriter, WriterOptions};
use crate::format::Compression;
use crate::output::Out;
use anyhow::{anyhow, bail, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use dictionary::KeyWriter;
use leaf::{Chunk, Closed, LeafPlan, LeafWriter};
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{BrotliLevel, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{SchemaDescPtr, SchemaDescriptor};
use paths::KeyColumns;
use rayon::prelude::*;
use rebatch::Rebatch;
use std::collections::VecDeque;
use std::io::Write;
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

/// Memory one leaf column's writer holds while its row group is open, besides the encoded
/// pages: the `parquet` crate gives each its own zstd compression and decompression contexts
/// and, for `DELTA_BINARY_PACKED` columns, a 1 MiB bit writer (valgrind's massif on a
/// 100-column file: about 1.5 MiB a leaf).
pub const WRITER_BYTES_PER_LEAF: usize = 3 << 19;

/// The column writers of the row groups open at the same time are kept under this, by
/// opening fewer row groups at once when a file has many leaf columns (its columns are then
/// what is encoded in parallel).
pub const WRITER_BYTES_IN_FLIGHT: usize = 96 << 20;

/// Row groups encoded at the same time at most: one per thread, at least two (the one
/// finishing and the one receiving rows), unless the column writers of two would pass
/// [`WRITER_BYTES_IN_FLIGHT`]: then one, whose leaf columns are encoded in parallel.
fn max_groups(threads: usize, leaves: usize) -> usize {
    let fit = WRITER_BYTES_IN_FLIGHT / leaves.saturating_mul(WRITER_BYTES_PER_LEAF).max(1);
    threads.max(2).min(fit).max(1)
}

/// One leaf column of a row group being encoded.
struct Column {
    /// The writer; `None` while a task is encoding with it.
    writer: Option<LeafWriter>,
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
fn drain(shared: Arc<Shared>, plan: Arc<LeafPlan>, g: usize, c: usize) {
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
            Some(writer) => chunk.encode(&plan, c, writer),
            None => Err(anyhow!("a column writer went missing")),
        };
        drop(chunk);
        let mut state = shared.lock();
        if let Err(e) = result {
            state.error.get_or_insert_with(|| format!("{e:#}"));
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
    /// Row groups encoded at the same time at most, when not [`max_groups`]'s (tests).
    group_limit: Option<usize>,
}

enum Stage {
    /// Gathering the first rows; the file is not started.
    Sampling(Box<Sampling>),
    Encoding(Box<Encoder>),
    /// Between the two, or after a failure to start.
    Poisoned,
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
    /// How batches become leaf columns (with the dictionary columns written by
    /// `dictionary.rs`, whose writers also need the properties and the Parquet schema).
    plan: Arc<LeafPlan>,
    props: WriterProperties,
    parquet_schema: SchemaDescPtr,
    shared: Arc<Shared>,
    /// Where columns are encoded: `None` on the caller's thread, as batches come.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Row groups encoded at the same time at most ([`max_groups`]).
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
        // Tests: many pages, cut by size and by rows, and dictionaries that fall back.
        Some(limit) => builder
            .set_data_page_size_limit(limit)
            .set_data_page_row_count_limit(limit / 16)
            .set_dictionary_page_size_limit(limit * 4),
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
                options: options.clone(),
                custom,
                descriptor,
                batches: Vec::new(),
                rows: 0,
            })),
            chunk_limit: CHUNK_BYTES,
            page_limit: None,
            group_limit: None,
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
                self.group_limit,
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
        group_limit: Option<usize>,
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
        let mut writer_options = ArrowWriterOptions::new().with_properties(props.clone());
        if let Some(descriptor) = custom {
            writer_options = writer_options.with_parquet_schema(descriptor);
        }
        let writer = ArrowWriter::try_new_with_options(out, schema.clone(), writer_options)?;
        let (file, factory) = writer.into_serialized_writer()?;
        let parquet_schema = Arc::new(file.schema_descr().clone());
        let keys = KeyColumns::new(schema.fields(), &parquet_schema, &props);
        let threads = match options.threads {
            0 => rayon::current_num_threads(),
            n => n,
        };
        let max_groups =
            group_limit.unwrap_or_else(|| max_groups(threads, parquet_schema.num_columns()));
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
        let plan = Arc::new(LeafPlan::new(Arc::clone(&schema), keys, &parquet_schema)?);
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
            plan,
            props,
            parquet_schema,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    groups: VecDeque::new(),
                    error: None,
                }),
                progress: Condvar::new(),
            }),
            pool,
            max_groups,
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
                        .map(LeafWriter::close)
                        .collect::<Result<Vec<Closed>>>()
                })?,
                None => writers
                    .into_iter()
                    .map(LeafWriter::close)
                    .collect::<Result<Vec<_>>>()?,
            };
            let mut row_group = self.file.next_row_group()?;
            for chunk in chunks {
                chunk.append(&mut row_group)?;
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
            .zip(&self.plan.keys.paths)
            .enumerate()
            .map(|(c, (writer, path))| {
                let writer = match path {
                    Some(path) => LeafWriter::Keys(Box::new(KeyWriter::new(
                        self.parquet_schema.column(c),
                        path,
                        &self.props,
                    )?)),
                    None => LeafWriter::Arrow(Box::new(writer)),
                };
                Ok(Column {
                    writer: Some(writer),
                    queue: VecDeque::new(),
                    running: false,
                })
            })
            .collect::<Result<_>>()?;
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

    /// Queues the gathered batches, as one [`Chunk`], on every column of the current row
    /// group (or, on one thread, encodes them right away).
    fn submit_chunk(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let g = self.current_group()?;
        let batches = std::mem::take(&mut self.chunk);
        let bytes = std::mem::take(&mut self.chunk_bytes);
        let chunk = Arc::new(Chunk::new(batches, self.schema.fields().len()));
        let Some(pool) = self.pool.clone() else {
            let mut state = self.shared.lock();
            let group = state
                .group(g)
                .ok_or_else(|| anyhow!("row group {g} went missing"))?;
            for (c, column) in group.columns.iter_mut().enumerate() {
                if let Some(writer) = column.writer.as_mut() {
                    chunk.encode(&self.plan, c, writer)?;
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
                let plan = self.plan.clone();
                pool.spawn(move || drain(shared, plan, g, c));
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
mod tests;
