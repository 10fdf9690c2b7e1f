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
    /// (`LOOP`: [`PLAIN_ROWS`], [`NESTED_ROWS`] or [`NUMBER_ROWS`]), strings checked as they
    /// are read when `check_utf8` (only the plain loop checks them). One instance per loop,
    /// each out of line: a branch to another loop inside the plain loop's function changed
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
    /// This is the one place a block is cut into batches.
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
        let count = self.check_record_count(count, data.len())?;
        let (mut pos, mut done) = (0, 0);
        let batch_size = self.batch_size;
        if self.min_record_size == 0 {
            // Rows of an earlier block still buffered are completed into a batch first.
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
            if n == 0 {
                // A full batch buffered by `decode_rows` calls before this one.
                if let Some(batch) = self.flush()? {
                    out.push(batch);
                }
                continue;
            }
            self.decode_rows(data, &mut pos, n)
                .map_err(|e| e.with_record_base(done as u64))?;
            done += n;
            if self.buffered_rows() >= batch_size {
                if let Some(batch) = self.flush()? {
                    out.push(batch);
                }
            }
        }
        if pos != data.len() {
            return Err(DecodeError::new(
                DecodeErrorKind::TrailingBytes(data.len() - pos),
                pos,
            ));
        }
        Ok(())
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
}

impl BatchSink for Vec<RecordBatch> {
    fn push(&mut self, batch: RecordBatch) {
        Vec::push(self, batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_encode::Rng;
    use crate::varint::Scalar;
    use arrow_array::cast::AsArray;
    use arrow_array::{Array, Int64Array};

    fn decoder(json: &str, batch_size: usize) -> RecordDecoder {
        let schema = Schema::parse(json).unwrap();
        DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size)
    }

    fn longs(batches: &[RecordBatch]) -> Vec<i64> {
        let column = |b: &RecordBatch| {
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            a.values().to_vec()
        };
        batches.iter().flat_map(column).collect()
    }

    /// Zigzag varints of `values`, one record each.
    fn encode(values: impl IntoIterator<Item = i64>) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            Scalar.write_long(v, &mut out);
        }
        out
    }

    const LONGS: &str = r#"{"type":"record","name":"r","fields":[{"name":"v","type":"long"}]}"#;

    /// A consumer that drops each batch before the next block is decoded: the batch that
    /// began in the middle of a block fills the dropped batch's buffers (its room deferred to
    /// its next block), and a decoder's first batch gets a whole batch's room at its second
    /// block, from buffers a reader that is gone gave back.
    #[test]
    fn batches_begun_mid_block_reuse_the_dropped_batches_buffers() {
        const STRINGS: &str =
            r#"{"type":"record","name":"r","fields":[{"name":"s","type":"string"}]}"#;
        let text = "x".repeat(1000);
        let mut block = Vec::new();
        for _ in 0..30 {
            crate::decode::test_encode::string(&text, &mut block);
        }
        let values = |b: &RecordBatch| b.column(0).as_string::<i32>().values().as_ptr();
        // Blocks of 30 rows, batches of 400: every batch after the first begins mid-block.
        let read = |d: &mut RecordDecoder| {
            let mut seen = Vec::new();
            for _ in 0..100 {
                for batch in d.decode_block(&block, 30).unwrap() {
                    assert_eq!(batch.num_rows(), 400);
                    seen.push(values(&batch));
                }
            }
            // The rest, as a reader flushes it at the end of the file.
            assert_eq!(d.flush().unwrap().map(|b| b.num_rows()), Some(200));
            seen
        };
        let mut d = decoder(STRINGS, 400);
        let seen = read(&mut d);
        assert_eq!(seen.len(), 7);
        for (i, p) in seen.iter().enumerate().skip(1) {
            assert_eq!(*p, seen[0], "batch {i} is in fresh memory");
        }
        drop(d);
        // The next reader's first batch: the buffer the last one left.
        let mut next = decoder(STRINGS, 400);
        assert_eq!(read(&mut next)[0], seen[0]);
    }

    #[test]
    fn a_block_is_cut_into_batches_and_the_rest_stays_buffered() {
        let mut d = decoder(LONGS, 1000);
        let values: Vec<i64> = (0..2500).map(|i| i * 7919 - 5000).collect();
        let batches = d.decode_block(&encode(values.clone()), 2500).unwrap();
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            [1000, 1000]
        );
        assert_eq!(d.buffered_rows(), 500);
        let mut all = batches;
        all.extend(d.flush().unwrap());
        assert_eq!(longs(&all), values);
    }

    #[test]
    fn a_full_batch_buffered_before_the_block_is_handed_out_first() {
        let mut d = decoder(LONGS, 4);
        let mut pos = 0;
        d.decode_rows(&encode(0..6), &mut pos, 6).unwrap();
        assert_eq!(d.buffered_rows(), 6);
        let batches = d.decode_block(&encode(6..9), 3).unwrap();
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            [6]
        );
        let mut all = batches;
        all.extend(d.flush().unwrap());
        assert_eq!(longs(&all), (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn records_of_zero_bytes_repeat_one_batch() {
        let json = r#"{"type":"record","name":"r","fields":[{"name":"n","type":"null"}]}"#;
        let mut d = decoder(json, 1000);
        let batches = d.decode_block(&[], 10_000_500).unwrap();
        assert_eq!(batches.len(), 10_000);
        assert!(batches.iter().all(|b| b.num_rows() == 1000));
        // One batch, handed out again: every clone shares its arrays.
        assert!(batches
            .iter()
            .all(|b| Arc::ptr_eq(b.column(0), batches[0].column(0))));
        assert_eq!(d.buffered_rows(), 500);
        assert_eq!(d.flush().unwrap().unwrap().num_rows(), 500);
    }

    #[test]
    fn bytes_after_the_last_record_are_an_error() {
        let mut d = decoder(LONGS, 1000);
        let mut data = encode([1, 2]);
        data.push(0);
        let e = d.decode_block(&data, 2).unwrap_err();
        assert!(matches!(e.kind(), DecodeErrorKind::TrailingBytes(1)), "{e}");
    }

    /// Nullable fields read their branch index as one byte on the fast path; an index written
    /// as a longer (padded) varint sends the record to the reference path, which reads it as
    /// before, and a bad index is an error naming the field, whichever order the union has.
    #[test]
    fn nullable_branch_bytes_padded_indexes_and_bad_indexes() {
        const NULLABLE: &str = r#"{"type":"record","name":"r","fields":[
            {"name":"a","type":["null","long"]},{"name":"b","type":["double","null"]}]}"#;
        let mut d = decoder(NULLABLE, 100);
        let mut data = Vec::new();
        let mut expect = Vec::new();
        for i in 0..100i64 {
            // a: null every third record; b: null every fifth.
            let a = (i % 3 != 0).then_some(i * 1000 - 7);
            let b = (i % 5 != 0).then_some(i as f64 * 0.5);
            let padded = i % 7 == 0;
            match a {
                Some(_) if padded => data.extend([0x82, 0x00]),
                Some(_) => data.push(2),
                None if padded => data.extend([0x80, 0x80, 0x00]),
                None => data.push(0),
            }
            if let Some(v) = a {
                Scalar.write_long(v, &mut data);
            }
            match b {
                Some(v) => {
                    data.push(if padded { 0x80 } else { 0 });
                    if padded {
                        data.push(0);
                    }
                    data.extend(v.to_le_bytes());
                }
                None => data.push(2),
            }
            expect.push((a, b));
        }
        let batches = d.decode_block(&data, 100).unwrap();
        assert_eq!(batches.len(), 1);
        let a = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let b = batches[0]
            .column(1)
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        let got: Vec<_> = (0..100)
            .map(|i| {
                (
                    a.is_valid(i).then(|| a.value(i)),
                    b.is_valid(i).then(|| b.value(i)),
                )
            })
            .collect();
        assert_eq!(got, expect);
        assert_eq!(a.null_count(), 34);
        assert_eq!(b.null_count(), 20);

        // All valid: no null buffer at all.
        let mut d = decoder(NULLABLE, 10);
        let mut data = Vec::new();
        for i in 0..10i64 {
            data.push(2);
            Scalar.write_long(i, &mut data);
            data.push(0);
            data.extend(1.5f64.to_le_bytes());
        }
        let batches = d.decode_block(&data, 10).unwrap();
        assert!(batches[0].column(0).nulls().is_none());
        assert!(batches[0].column(1).nulls().is_none());

        // Branch index 2 (the byte 4) in either order of the union.
        for (bad, field) in [(vec![4u8, 0], "a"), (vec![0, 4], "b")] {
            let mut d = decoder(NULLABLE, 1000);
            let e = d.decode_block(&bad, 1).unwrap_err();
            assert!(
                matches!(e.kind(), DecodeErrorKind::UnionIndex { index: 2, .. }),
                "{e}"
            );
            assert_eq!(e.field_path(), field, "{e}");
        }
    }

    /// Nullable numbers are read with no branch on null (the number read from the bytes after
    /// the index either way, kept only if present): the same batches as the reference path,
    /// which a padded branch index sends every record to, for numbers at their extremes, in
    /// either order of the union, the last value of the block included.
    #[test]
    fn nullable_numbers_without_a_branch_match_the_reference() {
        use super::test_encode::{branch, string};
        const NUMBERS: &str = r#"{"type":"record","name":"r","fields":[
            {"name":"i","type":["null","int"]},{"name":"l","type":["long","null"]},
            {"name":"s","type":"string"},
            {"name":"f","type":["null","float"]},{"name":"d","type":["double","null"]},
            {"name":"b","type":["null","boolean"]},
            {"name":"e","type":[{"type":"enum","name":"E","symbols":["A","B","C"]},"null"]},
            {"name":"t","type":["null","string"]},{"name":"y","type":["bytes","null"]}]}"#;
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next();
        let rows = 2000;
        let (mut plain, mut padded) = (Vec::new(), Vec::new());
        for _ in 0..rows {
            let r = next();
            let long = match r % 5 {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => (next() as i64) >> (next() % 64),
            };
            let int = [i32::MIN, i32::MAX, -1, 0, (next() >> 40) as i32][(r >> 8) as usize % 5];
            // (null index, present, value bytes) per nullable field, then the string.
            // Strings and bytes of one-byte and two-byte lengths, under and over the 64
            // bytes copied by one fixed move; a column of long values (`y`) takes the
            // branching path from its second batch.
            let text = |len: u64| {
                let mut v = Vec::new();
                Scalar.write_long(len as i64, &mut v);
                v.extend((0..len).map(|i| b'a' + (i % 26) as u8));
                v
            };
            let short = [0, 3, 63, 64, 65, 70][(r >> 40) as usize % 6];
            let long_len = 40 + (r >> 44) % 260;
            let fields: [(i64, bool, Vec<u8>); 8] = [
                (0, r >> 16 & 3 != 0, {
                    let mut v = Vec::new();
                    Scalar.write_long(int.into(), &mut v);
                    v
                }),
                (1, r >> 18 & 3 != 0, {
                    let mut v = Vec::new();
                    Scalar.write_long(long, &mut v);
                    v
                }),
                (
                    0,
                    r >> 20 & 1 != 0,
                    f32::from_bits(next() as u32).to_le_bytes().to_vec(),
                ),
                (
                    1,
                    r >> 21 & 1 != 0,
                    f64::from_bits(next()).to_le_bytes().to_vec(),
                ),
                (0, r >> 22 & 1 != 0, vec![(r >> 30) as u8 & 1]),
                (1, r >> 23 & 3 != 0, vec![(r >> 32) as u8 % 3 * 2]),
                (0, r >> 25 & 1 != 0, text(short)),
                (1, r >> 26 & 3 != 0, text(long_len)),
            ];
            for (out, pad) in [(&mut plain, false), (&mut padded, true)] {
                for (k, (null, present, value)) in fields.iter().enumerate() {
                    if k == 2 {
                        string(&"x".repeat((r >> 24) as usize % 20), out);
                    }
                    let index = if *present { 1 - null } else { *null };
                    branch(index, pad, out);
                    if *present {
                        out.extend(value);
                    }
                }
            }
        }
        for batch_size in [3, 1000] {
            let decode = |data: &[u8]| {
                let mut d = decoder(NUMBERS, batch_size);
                let mut batches = d.decode_block(data, rows).unwrap();
                batches.extend(d.flush().unwrap());
                batches
            };
            let reference = decode(&padded);
            assert_eq!(decode(&plain), reference, "batch size {batch_size}");
            // The same record as the one field of another: read by the record loop's fields
            // path (the numbers through a call, `number_or_null_out`), not the row loop.
            let wrapped = format!(
                r#"{{"type":"record","name":"w","fields":[{{"name":"r","type":{NUMBERS}}}]}}"#
            );
            let mut d = decoder(&wrapped, batch_size);
            let mut batches = d.decode_block(&plain, rows).unwrap();
            batches.extend(d.flush().unwrap());
            assert_eq!(batches.len(), reference.len());
            for (w, r) in batches.iter().zip(&reference) {
                let inner = w.column(0).as_struct();
                assert_eq!(inner.columns(), r.columns(), "batch size {batch_size}");
            }
        }
        // An int out of range and a value cut short are errors of their field, as on the
        // reference path.
        let mut bad = vec![2];
        Scalar.write_long(i64::from(i32::MAX) + 1, &mut bad);
        bad.extend([0; 16]);
        let e = decoder(NUMBERS, 10).decode_block(&bad, 1).unwrap_err();
        assert_eq!(e.field_path(), "i", "{e}");
        let e = decoder(NUMBERS, 10)
            .decode_block(&[0, 2, 6, b'a', b'b', b'c', 2, 1, 2], 1)
            .unwrap_err();
        assert_eq!(e.field_path(), "f", "{e}");
        // A boolean byte of 2, an enum index past the symbols (each with 16 bytes after it:
        // the values are read ahead either way).
        let head = [0u8, 2, 0, 0, 2];
        for (tail, field) in [
            (vec![2u8, 2], "b"),
            (vec![0, 0, 6], "e"),
            (vec![0, 0, 0, 2, 40], "t"),
        ] {
            let mut bad = head.to_vec();
            bad.extend(tail);
            bad.extend([0; 16]);
            let e = decoder(NUMBERS, 10).decode_block(&bad, 1).unwrap_err();
            assert_eq!(e.field_path(), field, "{e}");
        }
    }

    /// Nested records (plain, nullable, in arrays) are decoded on their enclosing record's fast
    /// path. Every row written with padded branch indexes (legal) fails that path and is decoded
    /// by the value-by-value reference; rows padded only in their innermost nullable field fail
    /// it after the outer fields were appended. All three encodings give the same batches.
    #[test]
    fn nested_records_on_the_fast_path_match_the_reference() {
        use super::test_encode::{branch, string};
        const NESTED: &str = r#"{"type":"record","name":"r","fields":[
            {"name":"id","type":"long"},
            {"name":"a","type":{"type":"record","name":"A","fields":[
                {"name":"x","type":"long"},
                {"name":"b","type":{"type":"record","name":"B","fields":[
                    {"name":"s","type":"string"},{"name":"n","type":["null","long"]},
                    {"name":"c","type":{"type":"record","name":"C","fields":[
                        {"name":"t","type":["null","long"]},
                        {"name":"d","type":{"type":"record","name":"D","fields":[
                            {"name":"u","type":"string"},
                            {"name":"p","type":["null","int"]}]}}]}},
                    {"name":"m","type":["null",{"type":"record","name":"M","fields":[
                        {"name":"g","type":"string"},
                        {"name":"h","type":["null","long"]}]}]}]}}]}},
            {"name":"o","type":["null",{"type":"record","name":"O","fields":[
                {"name":"y","type":"int"},{"name":"z","type":"string"},
                {"name":"w","type":["null","double"]}]}]},
            {"name":"l","type":{"type":"array","items":{"type":"record","name":"L","fields":[
                {"name":"k","type":"string"},
                {"name":"v","type":{"type":"record","name":"V","fields":[
                    {"name":"q","type":["null","long"]}]}}]}}}]}"#;
        let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
        let mut next = move |m: u64| rng.below(m);
        // (pad every branch index, pad only the innermost ones) -> bytes.
        let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
        let rows = 300;
        for row in 0..rows as i64 {
            let (n, o, w) = (next(3) > 0, next(4) > 0, next(2) > 0);
            let items: Vec<(u64, bool)> = (0..next(4)).map(|_| (next(1000), next(3) > 0)).collect();
            for (e, out) in encodings.iter_mut().enumerate() {
                let pad_all = e == 1;
                let pad_inner = pad_all || (e == 2 && row % 3 == 0);
                Scalar.write_long(row * 1001, out);
                Scalar.write_long(-row, out);
                string(&format!("s{row}"), out);
                branch(n as i64, pad_inner, out);
                if n {
                    Scalar.write_long(row << 20, out);
                }
                // Records four deep: C and D alternate between a call and inline code.
                branch(i64::from(row % 5 != 0), pad_inner, out);
                if row % 5 != 0 {
                    Scalar.write_long(row * 3, out);
                }
                string(&"u".repeat(row as usize % 4), out);
                branch(i64::from(w), pad_inner, out);
                if w {
                    Scalar.write_long(row % 1000, out);
                }
                // A nullable record inside them (inline in B's called code).
                branch(i64::from(row % 3 != 0), pad_all, out);
                if row % 3 != 0 {
                    string(&"g".repeat(row as usize % 5), out);
                    branch(i64::from(n), pad_inner, out);
                    if n {
                        Scalar.write_long(row * 7, out);
                    }
                }
                branch(o as i64, pad_all, out);
                if o {
                    Scalar.write_long(row % 77, out);
                    string(&"z".repeat(row as usize % 9), out);
                    branch(w as i64, pad_inner, out);
                    if w {
                        out.extend((row as f64 * 0.25).to_le_bytes());
                    }
                }
                if !items.is_empty() {
                    Scalar.write_long(items.len() as i64, out);
                    for &(k, q) in &items {
                        string(&format!("k{k}"), out);
                        branch(q as i64, pad_inner, out);
                        if q {
                            Scalar.write_long(k as i64 - 500, out);
                        }
                    }
                }
                out.push(0);
            }
        }
        for batch_size in [7, 1000] {
            let decoded: Vec<Vec<RecordBatch>> = encodings
                .iter()
                .map(|data| {
                    let mut d = decoder(NESTED, batch_size);
                    let mut batches = d.decode_block(data, rows).unwrap();
                    batches.extend(d.flush().unwrap());
                    batches
                })
                .collect();
            let total: usize = decoded[0].iter().map(|b| b.num_rows()).sum();
            assert_eq!(total as u64, rows);
            assert_eq!(
                decoded[0], decoded[1],
                "batch size {batch_size}: all padded"
            );
            assert_eq!(
                decoded[0], decoded[2],
                "batch size {batch_size}: inner padded"
            );
        }

        // A bad branch index deep inside is named by its path: in B, four records deep
        // (after the inner records' first fields were read), and in a nullable record among
        // them. (The zeros after each are the rest of the record's minimum size.)
        for (head, bad_index, path) in [
            (&[2, 2, 2, b's', 6][..], 3, "a.b.n"),
            (&[2, 2, 2, b's', 0, 0, 0, 4][..], 2, "a.b.c.d.p"),
            (&[2, 2, 2, b's', 0, 0, 0, 0, 2, 0, 4][..], 2, "a.b.m.h"),
        ] {
            let mut data = head.to_vec();
            data.extend([0; 12]);
            let e = decoder(NESTED, 10).decode_block(&data, 1).unwrap_err();
            assert!(
                matches!(e.kind(), DecodeErrorKind::UnionIndex { index, .. } if *index == bad_index),
                "{path}: {e}"
            );
            assert_eq!(e.field_path(), path, "{e}");
        }
    }
}
