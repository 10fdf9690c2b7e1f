//! [`WriterBuilder`] → [`Writer`]: Arrow record batches written as an Avro object container
//! file. Batches are cut into blocks of about the block size; each block is encoded
//! (`avrow_engine::encode`) and compressed, on rayon workers when several threads are asked
//! for, and written in order. At most two blocks per thread are held at once.

use crate::codec::Codec;
use crate::compress::Compressor;
use crate::container::MAGIC;
use crate::error::{Error, Result};
use crate::parallel::pool_for;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use avrow_engine::encode::{avro_schema_for, derived_avro_schema, EncodePlan};
use avrow_engine::{PlanError, Schema};
use std::io::Write;
use std::sync::Arc;

/// The default uncompressed size of a block: 1 MiB.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Name of the output in errors.
const OUTPUT: &str = "<output>";

/// Builds a [`Writer`] for batches of one Arrow schema.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Int64Array, RecordBatch, StringArray};
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as _),
///     ("name", Arc::new(StringArray::from(vec!["a", "b", "c"])) as _),
/// ])?;
/// let mut writer = avrow::WriterBuilder::new(batch.schema())
///     .with_codec(avrow::Codec::Zstandard)
///     .build(Vec::new())?;
/// writer.write(&batch)?;
/// let file = writer.finish()?;
/// let back: Vec<_> = avrow::ReaderBuilder::new().read_bytes(file)?.collect::<Result<_, _>>()?;
/// assert_eq!(back[0].num_rows(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct WriterBuilder {
    arrow: SchemaRef,
    avro: Option<Schema>,
    codec: Codec,
    level: Option<i32>,
    block_size: usize,
    sync: Option<[u8; 16]>,
    metadata: Vec<(String, Vec<u8>)>,
    threads: usize,
    record_name: Option<String>,
}

impl WriterBuilder {
    /// A builder for batches of `arrow`; by default the Avro schema is derived from it (see
    /// [`WriterBuilder::with_avro_schema`]), with no compression, blocks of about 1 MiB, a
    /// random sync marker and one thread.
    pub fn new(arrow: SchemaRef) -> Self {
        WriterBuilder {
            arrow,
            avro: None,
            codec: Codec::Null,
            level: None,
            block_size: DEFAULT_BLOCK_SIZE,
            sync: None,
            metadata: Vec::new(),
            threads: 1,
            record_name: None,
        }
    }

    /// Write with this Avro schema, checked against the Arrow schema when the writer is
    /// built. Without it: the `avro.schema` metadata of the Arrow schema (which avrow's reader
    /// sets, so that a file read and written again keeps its writer schema) if the columns
    /// still fit it; else, if the columns are some of its record's fields and fit their
    /// types, that record cut to them, and the records inside them to the fields a nested
    /// projection read ([`Schema::project_paths`]: a projection keeps the record's name and
    /// named types); else the schema the README's mapping table derives.
    pub fn with_avro_schema(mut self, schema: Schema) -> Self {
        self.avro = Some(schema);
        self
    }

    /// Name the record `full_name` (`name` or `namespace.name`, default `topLevelRecord`)
    /// where the writer derives the Avro schema from the Arrow schema: without
    /// [`WriterBuilder::with_avro_schema`] and with no `avro.schema` metadata that fits the
    /// columns (a recorded schema keeps its own name). Named types inside it take its
    /// namespace.
    pub fn with_record_name(mut self, full_name: impl Into<String>) -> Self {
        self.record_name = Some(full_name.into());
        self
    }

    /// Compress blocks with `codec` (default: none).
    pub fn with_codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// The codec's compression level (see [`Codec::levels`]; default: the codec's default).
    pub fn with_level(mut self, level: i32) -> Self {
        self.level = Some(level);
        self
    }

    /// Cut blocks at about this many bytes of uncompressed record data (at least one record
    /// a block).
    pub fn with_block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes.max(1);
        self
    }

    /// Use this 16-byte sync marker (default: a random one).
    pub fn with_sync_marker(mut self, sync: [u8; 16]) -> Self {
        self.sync = Some(sync);
        self
    }

    /// Add a user metadata entry to the header (keys starting with `avro.` are reserved).
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }

    /// Encode and compress blocks on this many threads (0: every core; at most eight a core,
    /// and at least 16, as [`ReaderBuilder::with_threads`](crate::ReaderBuilder::with_threads)).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// A writer to `out`; the header is written now.
    ///
    /// # Errors
    /// An Avro schema the Arrow schema cannot be written as ([`Error::Plan`]), a level the
    /// codec does not take ([`Error::Level`]) or a reserved metadata key
    /// ([`Error::InvalidArgument`]), or a
    /// failed write ([`Error::Io`]).
    pub fn build<W: Write>(self, mut out: W) -> Result<Writer<W>> {
        let plan_error = |source| Error::Plan {
            file: OUTPUT.to_string(),
            source,
        };

        if let Some(level) = self.level {
            let levels = self.codec.levels().map(|(range, _)| range);
            if !levels.as_ref().is_some_and(|range| range.contains(&level)) {
                return Err(Error::Level {
                    codec: self.codec,
                    level,
                    levels,
                });
            }
        }
        if let Some((key, _)) = self.metadata.iter().find(|(k, _)| k.starts_with("avro.")) {
            return Err(Error::InvalidArgument(format!(
                "metadata key {key:?}: keys starting with \"avro.\" are reserved"
            )));
        }
        let record_name = self.record_name.as_deref().unwrap_or("topLevelRecord");
        let derive = || {
            derived_avro_schema(&self.arrow, record_name)
                .and_then(|s| EncodePlan::new(self.arrow.clone(), s))
        };
        let recorded = self
            .arrow
            .metadata()
            .contains_key(avrow_engine::AVRO_SCHEMA_KEY);
        if self.record_name.is_some() && self.avro.is_none() {
            // Checked whether or not it is used: a bad name is a mistake either way.
            if let Err(e @ PlanError::InvalidName { .. }) =
                derived_avro_schema(&arrow_schema::Schema::empty(), record_name)
            {
                return Err(plan_error(e));
            }
        }
        let plan = match self.avro {
            Some(s) => EncodePlan::new(self.arrow.clone(), s),
            None if !recorded => derive(),
            // The recorded schema (`avro.schema`) if it fits the columns. Else some of its
            // fields (a projection, a SQL query's columns) keep its record's name, named
            // types, docs and defaults if their types still fit; columns that another format
            // changed (a union stored as a struct in Parquet) get a derived schema.
            None => {
                // Only if each column still has the type the recorded field reads as: a
                // column renamed to another's name (`SELECT e AS s, s AS e`) would otherwise
                // be written as that column's type (strings as enum symbols: an error at the
                // first value that is none).
                let recorded = avro_schema_for(&self.arrow).ok();
                let fits = recorded.clone().filter(|s| columns_read_as(s, &self.arrow));
                let whole = fits
                    .clone()
                    .and_then(|s| EncodePlan::new(self.arrow.clone(), s).ok());
                // Else the columns cut from the recorded record (a projection of whole
                // columns: recursive types stay recursive), else their paths, nested ones
                // too (`columns=["b.y"]`: record `b` cut to `y`).
                let columns: Vec<&str> = self
                    .arrow
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                let plan = whole
                    .or_else(|| {
                        fits.and_then(|s| s.project_fields(&columns))
                            .and_then(|s| EncodePlan::new(self.arrow.clone(), s).ok())
                    })
                    .or_else(|| {
                        let paths = projection_paths(&self.arrow);
                        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                        recorded
                            .and_then(|s| s.project_paths(&paths))
                            .filter(|s| columns_read_as(s, &self.arrow))
                            .and_then(|s| EncodePlan::new(self.arrow.clone(), s).ok())
                    });
                match plan {
                    Some(plan) => Ok(plan.with_note(RECORDED_NOTE)),
                    None => derive(),
                }
            }
        }
        .map_err(plan_error)?;
        let sync = self.sync.unwrap_or_else(random_sync);
        let mut header = MAGIC.to_vec();
        let mut meta: Vec<(&str, &[u8])> = vec![
            ("avro.schema", plan.avro_schema().json().as_bytes()),
            ("avro.codec", self.codec.name().as_bytes()),
        ];
        meta.extend(
            self.metadata
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_slice())),
        );
        put_long(&mut header, meta.len() as i64);
        for (k, v) in meta {
            put_long(&mut header, k.len() as i64);
            header.extend_from_slice(k.as_bytes());
            put_long(&mut header, v.len() as i64);
            header.extend_from_slice(v);
        }
        put_long(&mut header, 0);
        header.extend_from_slice(&sync);
        out.write_all(&header).map_err(io)?;
        let threads = match self.threads {
            0 => crate::parallel::available_threads(),
            n => n.min(crate::parallel::max_threads()),
        };
        let pool = if threads > 1 {
            Some(pool_for(threads)?)
        } else {
            None
        };
        Ok(Writer {
            out: Some(out),
            plan: Arc::new(plan),
            codec: self.codec,
            level: self.level,
            block_size: self.block_size,
            sync,
            threads,
            pool,
            filling: Block::default(),
            row_bytes: None,
            compressor: Compressor::new(self.codec, self.level),
            scratch: Encoded::default(),
            contexts: Arc::default(),
            spare: Arc::default(),
            in_flight: std::collections::VecDeque::new(),
            failed: false,
            rows: 0,
            blocks: 0,
        })
    }
}

/// Whether each of `arrow`'s columns that `recorded`'s record has is of the Arrow type that
/// field reads as: string, binary and list types of any width or view alike, nullability,
/// field metadata and list items' names aside, and a `Null` type on either side matching
/// anything (a recursive type unrolled to another depth ends in one).
fn columns_read_as(recorded: &Schema, arrow: &arrow_schema::Schema) -> bool {
    use arrow_schema::DataType as T;
    fn alike(r: &T, c: &T) -> bool {
        let string = |t: &T| matches!(t, T::Utf8 | T::Utf8View | T::LargeUtf8);
        let binary = |t: &T| matches!(t, T::Binary | T::BinaryView | T::LargeBinary);
        let list = |t: &T| match t {
            T::List(f) | T::LargeList(f) | T::ListView(f) | T::LargeListView(f) => {
                Some(f.data_type().clone())
            }
            _ => None,
        };
        match (r, c) {
            (T::Null, _) | (_, T::Null) => true,
            _ if string(r) || string(c) => string(r) && string(c),
            _ if binary(r) || binary(c) => binary(r) && binary(c),
            _ if list(r).is_some() || list(c).is_some() => {
                matches!((list(r), list(c)), (Some(a), Some(b)) if alike(&a, &b))
            }
            (T::FixedSizeList(a, n), T::FixedSizeList(b, m)) => {
                n == m && alike(a.data_type(), b.data_type())
            }
            (T::Struct(a), T::Struct(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.name() == y.name() && alike(x.data_type(), y.data_type()))
            }
            (T::Map(a, _), T::Map(b, _)) => alike(a.data_type(), b.data_type()),
            (T::Union(a, m), T::Union(b, n)) => {
                m == n
                    && a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((i, x), (j, y))| i == j && alike(x.data_type(), y.data_type()))
            }
            (T::Dictionary(_, a), T::Dictionary(_, b)) => alike(a, b),
            _ => r == c,
        }
    }
    let Ok(plan) = avrow_engine::DecodePlan::new(recorded, &Default::default()) else {
        return false;
    };
    let read = plan.arrow_schema();
    arrow.fields().iter().all(|f| {
        read.field_with_name(f.name())
            .map_or(true, |r| alike(r.data_type(), f.data_type()))
    })
}

/// The projection paths `arrow`'s columns are (what a reader's projection of these columns
/// names): a struct's fields below its name, through list items and map values; any other
/// column whole.
fn projection_paths(arrow: &arrow_schema::Schema) -> Vec<String> {
    use arrow_schema::DataType as T;
    fn walk(path: String, t: &T, out: &mut Vec<String>) {
        match t {
            T::Struct(fields) if !fields.is_empty() => {
                for f in fields {
                    walk(format!("{path}.{}", f.name()), f.data_type(), out);
                }
            }
            T::List(item) | T::LargeList(item) => walk(path, item.data_type(), out),
            T::Map(entries, _) => match entries.data_type() {
                T::Struct(kv) if kv.len() == 2 => walk(path, kv[1].data_type(), out),
                _ => out.push(path),
            },
            _ => out.push(path),
        }
    }
    let mut out = Vec::new();
    for f in arrow.fields() {
        walk(f.name().clone(), f.data_type(), &mut out);
    }
    out
}

/// Said with each value a schema taken from the batch's `avro.schema` metadata cannot hold:
/// the batch was read from Avro and a column changed since (widened, cast), which the
/// recorded type no longer fits.
const RECORDED_NOTE: &str = "the Avro types are those of the batch's avro.schema metadata, \
     the schema of the file it was read from: give an Avro schema, or remove that metadata to \
     derive one from the Arrow types";

fn io(source: std::io::Error) -> Error {
    Error::Io {
        file: OUTPUT.to_string(),
        source,
    }
}

/// A zigzag varint of the header or a block's framing, through the engine's encoder.
fn put_long(out: &mut Vec<u8>, v: i64) {
    avrow_engine::varint::Writer::new(avrow_engine::varint::Scalar, out).write_long(v);
}

/// 16 random bytes from the standard library's randomly keyed hasher.
fn random_sync() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut sync = [0u8; 16];
    for (i, half) in sync.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    sync
}

/// Writes Arrow record batches as an Avro container file (see [`WriterBuilder`]).
///
/// Rows are buffered into blocks; a block is encoded and written when it fills (with several
/// threads, when two blocks per thread have filled), so an error in a value may surface at a
/// later [`Writer::write`] or at [`Writer::finish`]. Its row is counted from the first row
/// written. After an error, what was written is an incomplete file: write to a temporary
/// name and rename it on success (as the CLI does).
pub struct Writer<W: Write> {
    out: Option<W>,
    plan: Arc<EncodePlan>,
    codec: Codec,
    level: Option<i32>,
    block_size: usize,
    sync: [u8; 16],
    threads: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The block filling up.
    filling: Block,
    /// Encoded bytes a row takes (a running estimate from the blocks written).
    row_bytes: Option<f64>,
    compressor: Compressor,
    /// The buffers of the last block written on this thread.
    scratch: Encoded,
    /// Compression contexts of the worker threads, reused.
    contexts: Arc<std::sync::Mutex<Vec<Compressor>>>,
    /// Buffers of blocks written, for the next blocks.
    spare: Arc<std::sync::Mutex<Vec<Encoded>>>,
    /// Blocks being encoded on the pool, oldest first.
    in_flight: std::collections::VecDeque<std::sync::mpsc::Receiver<Result<Encoded>>>,
    failed: bool,
    rows: u64,
    blocks: u64,
}

/// Row slices of batches, encoded together as one block.
#[derive(Default)]
struct Block {
    /// Each slice with the index of its first row among all rows written.
    slices: Vec<(u64, RecordBatch)>,
    rows: u64,
    /// Estimated encoded bytes.
    bytes: f64,
}

impl<W: Write> std::fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("codec", &self.codec)
            .field("block_size", &self.block_size)
            .field("threads", &self.threads)
            .field("rows", &self.rows)
            .field("blocks", &self.blocks)
            .finish_non_exhaustive()
    }
}

/// One block: its records' encoding, and that compressed (empty for the null codec, whose
/// data is the encoding itself).
#[derive(Default)]
struct Encoded {
    rows: u64,
    raw: Vec<u8>,
    compressed: Vec<u8>,
    null_codec: bool,
}

impl Encoded {
    fn data(&self) -> &[u8] {
        if self.null_codec {
            &self.raw
        } else {
            &self.compressed
        }
    }
}

fn write_block(out: &mut impl Write, e: &Encoded, sync: &[u8; 16]) -> Result<()> {
    let mut head = Vec::with_capacity(20);
    put_long(&mut head, e.rows as i64);
    put_long(&mut head, e.data().len() as i64);
    out.write_all(&head).map_err(io)?;
    out.write_all(e.data()).map_err(io)?;
    out.write_all(sync).map_err(io)
}

impl<W: Write> Writer<W> {
    /// The Avro schema being written.
    pub fn avro_schema(&self) -> &Schema {
        self.plan.avro_schema()
    }

    /// Records taken so far (including those still buffered).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Write the rows of `batch` (buffered until a block fills).
    ///
    /// # Errors
    /// A value the Avro schema cannot hold ([`Error::Encode`]: its column, and its row counted
    /// from the first row written), a batch of another schema, or a failed write. After an
    /// error the writer refuses further writes.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.failed {
            return Err(Error::WriterFailed);
        }
        let result = self.take_rows(batch);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    fn take_rows(&mut self, batch: &RecordBatch) -> Result<()> {
        self.plan
            .check_schema(batch.schema_ref())
            .map_err(|source| Error::Encode { source })?;
        let rows = batch.num_rows();
        let mut start = 0;
        while start < rows {
            let n = match self.row_bytes {
                // The first block: a small one, to learn the size of a row.
                None => (rows - start).min(1024),
                Some(per_row) => {
                    let room = (self.block_size as f64 - self.filling.bytes).max(0.0);
                    ((room / per_row.max(1.0)).ceil() as usize).clamp(1, rows - start)
                }
            };
            self.filling
                .slices
                .push((self.rows + start as u64, batch.slice(start, n)));
            self.filling.rows += n as u64;
            self.filling.bytes += n as f64 * self.row_bytes.unwrap_or(0.0);
            start += n;
            if self.row_bytes.is_none() || self.filling.bytes >= self.block_size as f64 {
                let block = std::mem::take(&mut self.filling);
                self.write_filled(block)?;
            }
        }
        self.rows += rows as u64;
        Ok(())
    }

    /// Encode, compress and write a full block, in order: on this thread, or with several
    /// threads handed to the pool, with at most two blocks per thread in flight (the oldest is
    /// written when the window is full, while the others are encoded).
    fn write_filled(&mut self, block: Block) -> Result<()> {
        let Some(pool) = self.pool.clone() else {
            // Through buffers kept from block to block.
            let mut e = std::mem::take(&mut self.scratch);
            let result = encode_block(&self.plan, &mut self.compressor, &block, &mut e)
                .and_then(|()| self.write_encoded(&e));
            self.scratch = e;
            return result;
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let (plan, contexts, spare) =
            (self.plan.clone(), self.contexts.clone(), self.spare.clone());
        let (codec, level) = (self.codec, self.level);
        pool.spawn(move || {
            // Compression contexts and block buffers are reused from block to block (a
            // zstd context costs more to set up than a small block to compress, and new
            // buffers are pages touched for the first time).
            let popped = contexts.lock().ok().and_then(|mut c| c.pop());
            let mut c = popped.unwrap_or_else(|| Compressor::new(codec, level));
            let mut e = spare
                .lock()
                .ok()
                .and_then(|mut s| s.pop())
                .unwrap_or_default();
            let result = encode_block(&plan, &mut c, &block, &mut e).map(|()| e);
            if let Ok(mut all) = contexts.lock() {
                all.push(c);
            }
            // The input's slices are released before the block is handed back: once
            // `finish` has the last block, no worker holds the caller's batches (Python's
            // `write_avro` returned while workers still released pyarrow's buffers, which
            // could run into the interpreter's exit).
            drop(block);
            // The writer may have been dropped; then nobody wants the block.
            let _ = tx.send(result);
        });
        self.in_flight.push_back(rx);
        // The first block tells the size of a row, which sizes the blocks after it.
        while self.in_flight.len() > 2 * self.threads
            || (self.row_bytes.is_none() && !self.in_flight.is_empty())
        {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Wait for the oldest block in flight and write it.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(rx) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let e = rx
            .recv()
            .map_err(|_| Error::Internal("an encoding worker stopped without a result".into()))??;
        self.write_encoded(&e)?;
        if let Ok(mut spare) = self.spare.lock() {
            spare.push(e);
        }
        Ok(())
    }

    /// Write one encoded block and learn the size of a row from it.
    fn write_encoded(&mut self, e: &Encoded) -> Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| Error::Internal("a writer without its output".into()))?;
        write_block(out, e, &self.sync)?;
        self.blocks += 1;
        if e.rows > 0 {
            let per_row = e.raw.len() as f64 / e.rows as f64;
            self.row_bytes = Some(match self.row_bytes {
                Some(old) => 0.75 * old + 0.25 * per_row,
                None => per_row,
            });
        }
        Ok(())
    }

    /// Write what is buffered, flush, and return the output.
    ///
    /// # Errors
    /// As [`Writer::write`].
    pub fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(Error::WriterFailed);
        }
        if self.filling.rows > 0 {
            let block = std::mem::take(&mut self.filling);
            self.write_filled(block)?;
        }
        while !self.in_flight.is_empty() {
            self.write_oldest()?;
        }
        let mut out = self
            .out
            .take()
            .ok_or_else(|| Error::Internal("a writer without its output".into()))?;
        out.flush().map_err(io)?;
        Ok(out)
    }
}

/// Encode and compress one block into `e` (its buffers reused).
fn encode_block(
    plan: &EncodePlan,
    c: &mut Compressor,
    block: &Block,
    e: &mut Encoded,
) -> Result<()> {
    e.raw.clear();
    e.raw.reserve(block.bytes as usize + 64);
    for (first, slice) in &block.slices {
        plan.encode(slice, &mut e.raw)
            .map_err(|source| Error::Encode {
                source: source.with_row_base(*first as usize),
            })?;
    }
    e.rows = block.rows;
    e.null_codec = c.is_null();
    if !e.null_codec {
        c.compress(&e.raw, &mut e.compressed).map_err(io)?;
    }
    Ok(())
}
