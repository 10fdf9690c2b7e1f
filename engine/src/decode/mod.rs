//! Decoding record data: a [`DecodePlan`] compiled once from the schema, and a
//! [`RecordDecoder`] per worker that turns blocks of Avro-encoded records into Arrow
//! `RecordBatch`es.
//!
//! Decoding a block is a function of (plan, block bytes, record count): each decoder owns its
//! column buffers and shares nothing mutable, so any thread can decode any block.

mod bits;
pub(crate) mod column;
mod cursor;
mod plan;
mod pool;
#[cfg(test)]
pub(crate) mod probe;
pub(crate) mod skip;
mod stream;
#[cfg(test)]
mod test_encode;

use crate::error::{DecodeError, DecodeErrorKind, Limit, PlanError};
use crate::schema::Schema;
use crate::schema::AVRO_SCHEMA_KEY;
use crate::varint::{Kernel, KernelKind};
use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use column::StructCol;
use cursor::Cursor;
use plan::{compile, Compiled};
use skip::Skip;
use std::collections::HashMap;
use std::sync::Arc;

/// [`RecordDecoder::decode_rows_with`]'s row loops: [`StructCol::decode_rows`].
const PLAIN_ROWS: u8 = 0;
/// [`StructCol::decode_rows_nested`], for a root that nests records two deep.
const NESTED_ROWS: u8 = 1;
/// [`StructCol::decode_rows_inline_numbers`], for a root with nullable ints or enums.
const NUMBER_ROWS: u8 = 2;
/// [`StructCol::decode_rows_scalar`], for a root of scalar fields and nullable ones, without
/// general unions (nullable ints and enums not among them, or among them:
/// `SCALAR_NUMBER_ROWS`).
const SCALAR_ROWS: u8 = 3;
const SCALAR_NUMBER_ROWS: u8 = 4;
/// [`StructCol::decode_rows_scalar`] with general unions of scalars among the fields (their
/// reads, and the nullable numbers', inline).
const SCALAR_UNION_ROWS: u8 = 5;
/// [`StructCol::decode_rows_strings`], for a root of strings and bytes only.
const STRING_ROWS: u8 = 6;

pub(crate) use column::parse_uuid;
pub use plan::DecodeOptions;
pub use stream::StreamCheckError;

/// The default number of rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// A schema compiled for decoding: the Arrow schema and the column layout. Cheap to clone and
/// to create decoders from.
///
/// ```
/// use avrow_engine::{DecodeOptions, DecodePlan, schema::Schema};
/// let schema = Schema::parse(r#"{"type":"record","name":"r","fields":[
///     {"name":"id","type":"long"},{"name":"name","type":"string"}]}"#)?;
/// let plan = DecodePlan::new(&schema, &DecodeOptions::default())?;
/// let mut decoder = plan.decoder();
/// // Two records: (1, "a"), (-1, "bc") — zigzag varints and length-prefixed strings.
/// let block = [0x02, 0x02, b'a', 0x01, 0x04, b'b', b'c'];
/// let batches = decoder.decode_block(&block, 2)?;
/// assert!(batches.is_empty()); // fewer rows than the batch size: still buffered
/// let batch = decoder.flush()?.unwrap();
/// assert_eq!(batch.num_rows(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DecodePlan {
    schema: SchemaRef,
    root: StructCol,
    min_record_size: usize,
    record_skip: Option<Arc<Skip>>,
}

impl DecodePlan {
    /// Compile `schema` (the writer schema) with `options`.
    ///
    /// # Errors
    /// An unknown projection path, or a schema that cannot be mapped to Arrow.
    pub fn new(schema: &Schema, options: &DecodeOptions) -> Result<Self, PlanError> {
        Self::build(compile(schema, None, options)?, schema)
    }

    /// Compile a plan that decodes data written with `writer` as the reader's schema `reader`
    /// (Avro schema resolution): the batches have the reader's fields, in the reader's order;
    /// fields only the writer has are skipped, fields only the reader has take their defaults,
    /// numbers are promoted (`int` → `long`/`float`/`double`, `long` → `float`/`double`,
    /// `float` → `double`), `string` and `bytes` read as each other, enum symbols and union
    /// branches are matched by name and type. The projection names reader fields.
    ///
    /// ```
    /// use avrow_engine::{DecodeOptions, DecodePlan, schema::Schema};
    /// let writer = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"id","type":"int"},{"name":"old","type":"string"}]}"#)?;
    /// let reader = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"added","type":"string","default":"none"},{"name":"id","type":"double"}]}"#)?;
    /// let plan = DecodePlan::resolve(&writer, &reader, &DecodeOptions::default())?;
    /// let mut decoder = plan.decoder();
    /// // One record as the writer wrote it: id = 3, old = "x".
    /// decoder.decode_block(&[0x06, 0x02, b'x'], 1)?;
    /// let batch = decoder.flush()?.unwrap();
    /// assert_eq!(batch.schema().field(0).name(), "added");
    /// let id = batch.column(1).as_any().downcast_ref::<arrow_array::Float64Array>().unwrap();
    /// assert_eq!(id.value(0), 3.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`PlanError::Incompatible`] where the reader's schema cannot read the writer's (a type
    /// that no rule converts, a reader field without a default that the writer lacks, fixed
    /// sizes or decimal scales that differ), and the errors of [`DecodePlan::new`]. Writer
    /// enum symbols and union branches with no counterpart fail only if data uses them.
    pub fn resolve(
        writer: &Schema,
        reader: &Schema,
        options: &DecodeOptions,
    ) -> Result<Self, PlanError> {
        Self::build(compile(writer, Some(reader), options)?, reader)
    }

    /// The plan around compiled columns; `schema` is the schema of the output, recorded in the
    /// Arrow schema's metadata.
    fn build(compiled: Compiled, schema: &Schema) -> Result<Self, PlanError> {
        let metadata = HashMap::from([(AVRO_SCHEMA_KEY.to_string(), schema.json().to_string())]);
        let arrow = ArrowSchema::new_with_metadata(compiled.fields, metadata);
        let min_record_size = compiled.root.min_size();
        Ok(DecodePlan {
            schema: Arc::new(arrow),
            root: compiled.root,
            min_record_size,
            record_skip: compiled.record_skip.map(Arc::new),
        })
    }

    /// The Arrow schema of the batches.
    pub fn arrow_schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The fewest bytes one encoded record can take (0 for records of only nulls).
    pub fn min_record_size(&self) -> usize {
        self.min_record_size
    }

    /// A new decoder with empty buffers, the process's varint kernel and the default batch size.
    pub fn decoder(&self) -> RecordDecoder {
        RecordDecoder {
            schema: self.schema.clone(),
            root: self.root.clone(),
            min_record_size: self.min_record_size,
            record_skip: self.record_skip.clone(),
            kernel: crate::varint::selected().unwrap_or_else(|_| crate::varint::best_available()),
            batch_size: DEFAULT_BATCH_SIZE.min(self.root.max_batch_rows()),
            last_batch_rows: 0,
            room_deferred: None,
            pool: Default::default(),
        }
    }
}

/// The input a decoder's first batch reserves room for at its second block, scaled from the
/// first block (see `RecordDecoder::reserve_deferred`): enough for a whole batch of most
/// files, and a bound on what hostile first blocks can make it reserve (room not filled is
/// never touched).
const FIRST_BATCH_INPUT: usize = 32 << 20;

/// Decodes Avro records into Arrow column buffers, row by row, and hands out `RecordBatch`es.
/// One per worker thread; see [`DecodePlan`] for an example.
///
/// Large column buffers (16 KiB and up) of the batches it handed out come back to the decoder
/// when the application drops those batches (on any thread), and later batches are decoded
/// into them instead of into new memory. A decoder and its clones share these buffers, keep
/// at most about 256 MB of them, and free them when the last of them is dropped.
#[derive(Debug, Clone)]
pub struct RecordDecoder {
    schema: SchemaRef,
    root: StructCol,
    min_record_size: usize,
    /// How to skip a whole writer record ([`RecordDecoder::check_stream`]).
    record_skip: Option<Arc<Skip>>,
    kernel: KernelKind,
    batch_size: usize,
    /// Rows of the last flushed batch: a new batch reserves room for at least that many (up to
    /// the batch size), so that its columns do not regrow (and copy) when a batch spans blocks.
    /// Bounded by data already decoded, so hostile input cannot make it reserve more.
    last_batch_rows: usize,
    /// The buffered batch gets its room for a whole batch at the next block
    /// ([`RecordDecoder::decode_block_into`]), not at its start, when it began in the middle
    /// of a block (the batch before it not handed out yet: an application that drops each
    /// batch before asking for the next has given that one's buffers back by the next block,
    /// so the new batch fills them instead of fresh memory, whose pages fault in) or is the
    /// decoder's first (its strings' and arrays' sizes are known from its first block, and
    /// its room can come from buffers other readers gave back). The value is the input bytes
    /// of the first batch's first block (0 otherwise), which bounds that batch's room.
    room_deferred: Option<usize>,
    /// Column buffers of dropped batches, for the next batches (shared with this decoder's
    /// clones).
    pool: Arc<pool::BufferPool>,
}

impl RecordDecoder {
    /// Use this varint kernel (it must be available on this CPU: see
    /// [`varint::is_available`](crate::varint::is_available)).
    ///
    /// # Panics
    /// If the kernel is not available on this CPU.
    pub fn with_kernel(mut self, kernel: KernelKind) -> Self {
        assert!(
            crate::varint::is_available(kernel),
            "varint kernel {kernel} is not available on this CPU"
        );
        self.kernel = kernel;
        self
    }

    /// Rows per batch for [`RecordDecoder::decode_block`] (at least 1). Fewer when a batch of
    /// that many rows could take more than 2 GiB of fixed-width buffers beyond its input:
    /// rows of large `fixed` values, which take their whole size even when null (a 1 MiB one
    /// under `["null", fixed]`: 2047 rows).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1).min(self.root.max_batch_rows());
        self
    }

    /// The varint kernel in use.
    pub fn kernel(&self) -> KernelKind {
        self.kernel
    }

    /// The rows per batch.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The fewest bytes a record takes (0: every record takes none, and all rows are alike).
    pub fn min_record_size(&self) -> usize {
        self.min_record_size
    }

    /// Rows decoded and not yet flushed.
    pub fn buffered_rows(&self) -> usize {
        self.root.len
    }

    /// Drop the buffered rows after the first `rows` (a caller that skips a bad block removes
    /// the rows it had decoded of it).
    pub fn truncate(&mut self, rows: usize) {
        if rows == 0 {
            self.room_deferred = None;
        }
        self.root.truncate(rows);
    }

    /// Make room for `rows` more records in every column, so that columns do not regrow while
    /// a batch fills (callers that know how many rows are coming, such as a work unit of several
    /// blocks, call this once per batch). Capped at the batch size; a new batch also gets room
    /// for as many rows as the last batch had.
    pub fn reserve(&mut self, rows: usize) {
        let room = rows.min(self.batch_size - self.buffered_rows().min(self.batch_size));
        self.root.reserve(
            room.max(self.batch_start_rows()),
            column::Room::pooled(&self.pool),
        );
    }

    /// The room of a batch whose room was deferred (see `room_deferred`), at its second block:
    /// as many rows as the last batch had, or for the decoder's first batch, as many as fit
    /// [`FIRST_BATCH_INPUT`] bytes of input at its first block's rate, up to the batch size.
    /// Variable-size columns size their room by the values they hold when they know no
    /// earlier batch.
    fn reserve_deferred(&mut self, first_input: usize, rows_ahead: u64) {
        let buffered = self.buffered_rows();
        if buffered == 0 {
            return;
        }
        if self.last_batch_rows > 0 {
            let ahead = usize::try_from(rows_ahead).unwrap_or(usize::MAX);
            let rows = self.last_batch_rows.max(buffered.saturating_add(ahead));
            let room = rows.min(self.batch_size).saturating_sub(buffered);
            self.root.reserve(room, column::Room::pooled(&self.pool));
            return;
        }
        // The first batch: as many rows as its first block's input scaled to
        // FIRST_BATCH_INPUT, each variable-size column by the values it holds.
        let scale = (FIRST_BATCH_INPUT / first_input.max(1)).max(1);
        let rows = buffered.saturating_mul(scale).min(self.batch_size);
        let room = column::Room {
            pool: Some(&self.pool),
            by_held: true,
        };
        self.root.reserve(rows.saturating_sub(buffered), room);
    }

    /// At the start of a batch, the rows of the last batch (capped at the batch size), else 0.
    fn batch_start_rows(&self) -> usize {
        if self.buffered_rows() == 0 && self.room_deferred.is_none() {
            self.last_batch_rows.min(self.batch_size)
        } else {
            0
        }
    }

    /// Check a block's record count against its size ([`Limit::check_records`] with this
    /// schema's smallest record).
    ///
    /// # Errors
    /// If the count cannot be right for `data_len` bytes.
    pub fn check_record_count(&self, count: u64, data_len: usize) -> Result<usize, DecodeError> {
        Limit::check_records(count, data_len, self.min_record_size)
            .map_err(|limit| DecodeError::new(DecodeErrorKind::TooLarge(limit), 0))
    }

    /// Decode exactly `n` records from `data` starting at `*pos`, appending them to the buffered
    /// rows, and advance `*pos`. Record indexes in errors count from this call's first record.
    /// The caller bounds `n` (see [`RecordDecoder::check_record_count`]).
    ///
    /// On error the buffered rows are those decoded before the bad record, so they can still be
    /// flushed.
    ///
    /// # Errors
    /// Malformed data: the error names the byte offset in `data`, the record and the field.
    pub fn decode_rows(
        &mut self,
        data: &[u8],
        pos: &mut usize,
        n: usize,
    ) -> Result<(), DecodeError> {
        if self.min_record_size == 0 {
            // Nothing to read, but defaults may fill in values (strings among them).
            let before = self.root.len;
            let result = self
                .root
                .append_zero_size(n)
                .and_then(|()| self.root.validate_values());
            if result.is_err() {
                self.root.truncate(before);
            }
            return result;
        }
        let before = self.root.len;
        let start = *pos;
        // Records nested two deep or more: their own loop, in a function of its own (a branch
        // to it inside `decode_rows_with` changed that loop's code: 5 % more instructions
        // for records without nested ones).
        let result = if self.root.nests_records() {
            crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, NESTED_ROWS>(k, data, pos, n, false))
        } else if self.root.reads_scalars() {
            if self.root.reads_strings() {
                crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, STRING_ROWS>(k, data, pos, n, false))
            } else if self.root.scalar_unions() {
                crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, SCALAR_UNION_ROWS>(k, data, pos, n, false))
            } else if self.root.inlines_nullable_numbers() {
                crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, SCALAR_NUMBER_ROWS>(k, data, pos, n, false))
            } else {
                crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, SCALAR_ROWS>(k, data, pos, n, false))
            }
        } else if self.root.inlines_nullable_numbers() {
            crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, NUMBER_ROWS>(k, data, pos, n, false))
        } else {
            crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, PLAIN_ROWS>(k, data, pos, n, false))
        }
        .and_then(|()| self.root.validate_values());
        let Err(first) = result else {
            return Ok(());
        };
        // Something failed: decode the same records again, checking every string (and
        // decimal) as it is read, so that the error (also an invalid string or a decimal past
        // its precision found by the per-buffer check) names its record, field and byte
        // offset, and the rows before it are complete and valid.
        self.root.truncate(before);
        let mut again = start;
        let recheck = crate::dispatch_kernel!(self.kernel, k => self.decode_rows_with::<_, PLAIN_ROWS>(k, data, &mut again, n, true));
        let error = recheck.err().unwrap_or(first);
        self.root.truncate(self.root.len);
        // The complete rows' values were each checked; record that (it cannot fail now).
        if self.root.validate_values().is_err() {
            self.root.truncate(before);
        }
        Err(error)
    }

    /// The rows of [`RecordDecoder::decode_rows`] through one of the root's row loops
    /// (`LOOP`: [`PLAIN_ROWS`], [`NESTED_ROWS`], [`NUMBER_ROWS`], [`SCALAR_ROWS`],
    /// [`SCALAR_NUMBER_ROWS`], [`SCALAR_UNION_ROWS`] or [`STRING_ROWS`]), strings checked as they are read
    /// when `check_utf8` (only the plain loop checks them). One instance per loop, each out
    /// of line: a branch to another loop inside the plain loop's function changed
    /// that loop's code (5 % more instructions for records that take neither other loop).
    #[inline(never)]
    fn decode_rows_with<K: Kernel, const LOOP: u8>(
        &mut self,
        k: K,
        data: &[u8],
        pos: &mut usize,
        n: usize,
        check_utf8: bool,
    ) -> Result<(), DecodeError> {
        #[cfg(test)]
        probe::set(&probe::LAST_LOOP, u64::from(LOOP));
        let failed = std::cell::Cell::new(false);
        let mut c = Cursor::new(data, *pos, k, &failed);
        c.check_utf8 = check_utf8;
        // `n` is bounded by the bytes of the block (see `check_record_count`), the rows of the
        // last batch by data already decoded.
        self.root.reserve(
            n.max(self.batch_start_rows()),
            column::Room::pooled(&self.pool),
        );
        match LOOP {
            NESTED_ROWS => self.root.decode_rows_nested(&mut c, n),
            NUMBER_ROWS => self.root.decode_rows_inline_numbers(&mut c, n),
            SCALAR_ROWS => self.root.decode_rows_scalar::<K, false, false>(&mut c, n),
            SCALAR_NUMBER_ROWS => self.root.decode_rows_scalar::<K, true, false>(&mut c, n),
            SCALAR_UNION_ROWS => self.root.decode_rows_scalar::<K, true, true>(&mut c, n),
            STRING_ROWS => self.root.decode_rows_strings(&mut c, n),
            _ => self.root.decode_rows(&mut c, n),
        }
        .map_err(|(i, e)| e.at_record(i as u64))?;
        *pos = c.pos;
        Ok(())
    }

    /// Decode a whole block of `count` records. Returns the batches that filled up
    /// ([`RecordDecoder::with_batch_size`]); rows of a partial batch stay buffered for the next
    /// block or [`RecordDecoder::flush`].
    ///
    /// # Errors
    /// Malformed data, a count that does not fit the block, or bytes left over after the last
    /// record.
    pub fn decode_block(
        &mut self,
        data: &[u8],
        count: u64,
    ) -> Result<Vec<RecordBatch>, DecodeError> {
        let mut out = Vec::new();
        self.decode_block_into(data, count, count, &mut out)?;
        Ok(out)
    }

    /// Decode a whole block of `count` records, handing each batch that fills up to `out`;
    /// rows of a partial batch stay buffered for the next block or [`RecordDecoder::flush`].
    ///
    /// `rows_ahead` is how many records are still to come into the current batch from this
    /// block and the blocks after it (at least `count`; a caller that does not know passes
    /// `count`): each new batch reserves room for that many rows, up to the batch size, so that
    /// a batch that spans blocks does not regrow its columns.
    ///
    /// Records of zero bytes are all the same row: one full batch of them is decoded and
    /// handed to [`BatchSink::push_run`] for the block's other full batches, so a block that
    /// declares `i32::MAX` of them costs one batch, not millions.
    ///
    /// On error the buffered rows are those decoded before the bad record, so they can still
    /// be flushed; record indexes in the error count from the block's first record.
    ///
    /// # Errors
    /// Malformed data, a count that does not fit the block, or bytes left over after the last
    /// record.
    pub fn decode_block_into(
        &mut self,
        data: &[u8],
        count: u64,
        rows_ahead: u64,
        out: &mut impl BatchSink,
    ) -> Result<(), DecodeError> {
        let mut progress = BlockProgress::default();
        while !self.decode_block_part(data, count, rows_ahead, out, &mut progress)? {}
        Ok(())
    }

    /// Decode a block as [`RecordDecoder::decode_block_into`] does, from where `progress`
    /// says (a new [`BlockProgress`] for a new block), but return when `out` says it is full
    /// ([`BatchSink::is_full`]) after a batch was handed to it and records are left: then
    /// `progress` holds where to go on, no rows are buffered, and the result is `false`.
    /// `true` when the block is done. A caller that hands batches out as they fill keeps a
    /// few of them in memory at a time, however many records the block holds. This is the
    /// one place a block is cut into batches.
    ///
    /// Pass the same `data`, `count` and `rows_ahead` to every call for one block. Record
    /// indexes in errors count from the block's first record.
    ///
    /// ```
    /// use avrow_engine::{BlockProgress, DecodeOptions, DecodePlan, schema::Schema};
    /// let schema = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"n","type":"long"}]}"#)?;
    /// let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())?
    ///     .decoder()
    ///     .with_batch_size(2);
    /// let block = [0x02, 0x04, 0x06, 0x08, 0x0a]; // 1, 2, 3, 4, 5
    /// let mut progress = BlockProgress::default();
    /// let mut sizes = Vec::new();
    /// loop {
    ///     // A `Vec` sink is never full: each call here decodes the rest of the block.
    ///     let mut out = Vec::new();
    ///     let done = decoder.decode_block_part(&block, 5, 5, &mut out, &mut progress)?;
    ///     sizes.extend(out.iter().map(|b| b.num_rows()));
    ///     if done {
    ///         break;
    ///     }
    /// }
    /// assert_eq!(sizes, [2, 2]);
    /// assert_eq!(decoder.flush()?.unwrap().num_rows(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`RecordDecoder::decode_block_into`].
    pub fn decode_block_part(
        &mut self,
        data: &[u8],
        count: u64,
        rows_ahead: u64,
        out: &mut impl BatchSink,
        progress: &mut BlockProgress,
    ) -> Result<bool, DecodeError> {
        let count = self.check_record_count(count, data.len())?;
        let BlockProgress { mut pos, mut done } = *progress;
        if done > count || pos > data.len() {
            return Err(DecodeError::new(
                DecodeErrorKind::Internal("a block resumed past its end".into()),
                pos,
            ));
        }
        let batch_size = self.batch_size;
        if self.min_record_size == 0 {
            // Rows of an earlier block still buffered are completed into a batch first.
            // (Every row is alike: a run costs one batch, so these never pause.)
            let buffered = self.buffered_rows();
            if buffered > 0 && buffered < batch_size && count - done >= 2 * batch_size {
                let n = batch_size - buffered;
                self.decode_rows(data, &mut pos, n)?;
                done += n;
                if let Some(batch) = self.flush()? {
                    out.push(batch);
                }
            }
            while self.buffered_rows() == 0 && count - done >= 2 * batch_size {
                let before = pos;
                self.decode_rows(data, &mut pos, batch_size)
                    .map_err(|e| e.with_record_base(done as u64))?;
                let (Some(batch), true) = (self.flush()?, pos == before) else {
                    return Err(DecodeError::new(
                        DecodeErrorKind::Internal(
                            "records of zero bytes read bytes or gave no batch".into(),
                        ),
                        pos,
                    ));
                };
                let times = (count - done) / batch_size;
                out.push_run(batch, times as u64);
                done += times * batch_size;
            }
        }
        if let Some(input) = self.room_deferred.take() {
            self.reserve_deferred(input, rows_ahead);
        }
        while done < count {
            if self.buffered_rows() == 0 {
                let ahead = rows_ahead
                    .saturating_sub(done as u64)
                    .max((count - done) as u64);
                if count - done >= batch_size {
                    self.reserve(usize::try_from(ahead).unwrap_or(usize::MAX));
                } else if done > 0 && rows_ahead <= count as u64 {
                    // Begun mid-block, ending in a later block, batches handed out after
                    // each block (a unit of several blocks hands them out at its end): room
                    // for this block's rows now, for the batch at the next block (see
                    // `room_deferred`).
                    self.root
                        .reserve(count - done, column::Room::pooled(&self.pool));
                    self.room_deferred = Some(0);
                } else {
                    self.reserve(usize::try_from(ahead).unwrap_or(usize::MAX));
                    if self.last_batch_rows == 0 {
                        self.room_deferred = Some(data.len());
                    }
                }
            }
            let n = (count - done).min(batch_size - self.buffered_rows().min(batch_size));
            if n > 0 {
                self.decode_rows(data, &mut pos, n)
                    .map_err(|e| e.with_record_base(done as u64))?;
                done += n;
            }
            // n == 0: a full batch buffered by `decode_rows` calls before this one.
            if self.buffered_rows() >= batch_size {
                if let Some(batch) = self.flush()? {
                    out.push(batch);
                }
                if done < count && out.is_full() {
                    *progress = BlockProgress { pos, done };
                    return Ok(false);
                }
            }
        }
        *progress = BlockProgress { pos, done };
        if pos != data.len() {
            return Err(DecodeError::new(
                DecodeErrorKind::TrailingBytes(data.len() - pos),
                pos,
            ));
        }
        Ok(true)
    }

    /// The buffered rows as a batch (`None` if there are none); the buffers start over.
    ///
    /// # Errors
    /// Only if Arrow rejects the assembled arrays, which would be a bug in avrow.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>, DecodeError> {
        let rows = self.root.len;
        if rows == 0 {
            return Ok(None);
        }
        self.last_batch_rows = rows;
        self.room_deferred = None;
        let columns = self.root.finish_columns(&self.pool);
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
            .map(Some)
            .map_err(|e| {
                DecodeError::new(
                    DecodeErrorKind::Internal(format!("Arrow rejected an assembled batch: {e}")),
                    0,
                )
            })
    }
}

/// Where [`RecordDecoder::decode_block_into`] puts the batches that fill up.
pub trait BatchSink {
    /// One batch.
    fn push(&mut self, batch: RecordBatch);

    /// The same batch `times` times in a row (full batches of records of zero bytes are all
    /// alike). The default pushes a clone each time, which shares the arrays.
    fn push_run(&mut self, batch: RecordBatch, times: u64) {
        for _ in 0..times {
            self.push(batch.clone());
        }
    }

    /// Whether [`RecordDecoder::decode_block_part`] should return after the batch just
    /// pushed, for its caller to hand batches out before decoding more of the block. The
    /// default never is.
    fn is_full(&self) -> bool {
        false
    }
}

/// Where a block's decoding stands between calls of [`RecordDecoder::decode_block_part`]:
/// the records decoded of it and the byte offset they end at. A new block starts from the
/// default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockProgress {
    pos: usize,
    done: usize,
}

impl BlockProgress {
    /// Records of the block decoded so far.
    pub fn records(&self) -> u64 {
        self.done as u64
    }

    /// The offset in the block's data where the next record starts.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl BatchSink for Vec<RecordBatch> {
    fn push(&mut self, batch: RecordBatch) {
        Vec::push(self, batch);
    }
}

#[cfg(test)]
mod tests;
