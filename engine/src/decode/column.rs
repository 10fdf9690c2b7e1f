//! Column builders: one per Arrow column (recursively for nested types). Each decodes Avro values
//! straight into Arrow buffers it owns (values, offsets, validity) and finishes them into arrays
//! without copying.

use super::bits::{Bits, Validity};
use super::cursor::{Cursor, Sticky};
use super::pool::{BufferPool, Pooled};
use super::resolve::{decode_promoted, fill_zero_size, DefaultCol, PromotedCol, ResolvedUnion};
use super::skip::Skip;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::{BulkHint, Kernel};
use arrow_array::types::Int32Type;
use arrow_array::{
    make_array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Decimal128Array,
    Decimal256Array, DictionaryArray, FixedSizeBinaryArray, Int32Array, IntervalMonthDayNanoArray,
    ListArray, MapArray, NullArray, StringArray, StringViewArray, StructArray, UnionArray,
};
use arrow_buffer::{i256, Buffer, IntervalMonthDayNano, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, FieldRef, Fields, UnionFields};
use std::sync::Arc;

/// `v.reserve(n)`, through the pool (recycled buffers) when there is one: at the start of a
/// batch, when the buffers are empty.
#[inline]
fn grow<T: Pooled>(v: &mut Vec<T>, n: usize, pool: Option<&BufferPool>) {
    match pool {
        Some(pool) => pool.reserve(v, n),
        None => v.reserve(n),
    }
}

/// Decode a value out of line from the fast path: `$decode` (with the [`Cursor`] `$c`) runs
/// unless the record already failed; its error just fails the record (it is found again by
/// [`StructCol::decode_slow`]). A macro: the same code as a function taking a closure
/// compiled Wide's record loop 1.8 % longer.
macro_rules! call_sticky {
    ($f:expr, $c:expr, $decode:expr) => {
        if !$f.failed() {
            $c.pos = $f.pos;
            if $decode.is_ok() {
                $f.pos = $c.pos;
            } else {
                $f.fail();
            }
        }
    };
}

/// Decode one value of a primitive column (or an enum) on the fast path, or `$other` for
/// anything else.
macro_rules! decode_primitive_sticky {
    ($col:expr, $f:ident, $other:ident => $fallback:expr) => {
        match $col {
            Column::Int64(p) => {
                let v = $f.long();
                p.values.push(v);
            }
            Column::Int32(p) => {
                let v = $f.int();
                p.values.push(v);
            }
            Column::Float64(p) => {
                let v = $f.f64();
                p.values.push(v);
            }
            Column::Float32(p) => {
                let v = $f.f32();
                p.values.push(v);
            }
            Column::Bytes(b) => b.push_sticky($f),
            Column::Boolean(b) => {
                let v = $f.boolean();
                b.push(v);
            }
            Column::Enum(e) => {
                let index = $f.long();
                let key = e.key(index);
                if key < 0 {
                    $f.fail();
                }
                e.keys.push(key);
            }
            $other => $fallback,
        }
    };
}

/// How a column's values are laid out; see the module docs. (`repr(u8)`: an explicit tag is
/// cheaper to dispatch on in the hot loop than a niche-encoded one.)
#[derive(Debug, Clone)]
#[repr(u8)]
pub(crate) enum Column {
    /// `null`: no data, just a length.
    Null(usize),
    Boolean(Bits),
    /// `int` and its logical types (Date32, Time32(ms)).
    Int32(Prim<i32>),
    /// `long` and its logical types (Time64(µs), timestamps).
    Int64(Prim<i64>),
    Float32(Prim<f32>),
    Float64(Prim<f64>),
    Bytes(BytesCol),
    Fixed(FixedCol),
    Enum(EnumCol),
    Decimal(DecimalCol),
    /// `uuid` on `string`: parsed to 16 bytes.
    UuidString(FixedCol),
    Duration(Vec<IntervalMonthDayNano>),
    List(Box<ListCol>),
    Map(Box<MapCol>),
    Struct(StructCol),
    Nullable(Box<NullableCol>),
    Union(Box<UnionCol>),
    /// A projected-away field: decoded past, never materialized.
    Skip(Skip),
    /// A recursive type cut at the configured depth: any data here is an error.
    TooDeep(TooDeep),
    /// Schema resolution: a reader field missing from the writer's schema, filled with its
    /// default.
    Default(Box<DefaultCol>),
    /// Schema resolution: a writer number promoted to the reader's wider type.
    Promoted(Box<PromotedCol>),
    /// Schema resolution: a union whose writer branches map to the reader's schema other than
    /// one to one.
    Resolved(Box<ResolvedUnion>),
}

#[derive(Debug, Clone)]
pub(crate) struct Prim<T> {
    pub(crate) values: Vec<T>,
    pub(crate) data_type: DataType,
}

impl<T> Prim<T> {
    pub(crate) fn new(data_type: DataType) -> Self {
        Prim {
            values: Vec::new(),
            data_type,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BytesKind {
    Binary,
    Utf8,
}

#[derive(Debug, Clone)]
pub(crate) struct BytesCol {
    /// Starts with a leading 0.
    offsets: Vec<i32>,
    data: Vec<u8>,
    kind: BytesKind,
    view: bool,
    /// Bytes of `data` already validated as UTF-8.
    validated_bytes: usize,
    /// Values whose start offset was already checked to be a char boundary.
    validated_values: usize,
    /// Mean value length of the last finished batch (to reserve the data buffer up front).
    mean_len: usize,
}

impl BytesCol {
    pub(crate) fn new(kind: BytesKind, view: bool) -> Self {
        BytesCol {
            offsets: vec![0],
            data: Vec::new(),
            kind,
            view,
            validated_bytes: 0,
            validated_values: 0,
            mean_len: 0,
        }
    }

    /// Room for `n` more values; the data buffer gets the last batch's mean length per value,
    /// so that it does not regrow (and copy) while a batch fills.
    fn reserve(&mut self, n: usize, pool: Option<&BufferPool>) {
        grow(&mut self.offsets, n, pool);
        grow(&mut self.data, n.saturating_mul(self.mean_len), pool);
    }

    #[inline(always)]
    fn push<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let n = c.len_prefix()?;
        let from = c.pos;
        c.pos += n;
        if c.check_utf8 && self.kind == BytesKind::Utf8 {
            check_value_utf8(&c.buf[from..from + n], start)?;
        }
        append_bytes(&mut self.data, c.buf, from, n);
        match i32::try_from(self.data.len()) {
            Ok(end) => {
                self.offsets.push(end);
                Ok(())
            }
            Err(_) => Err(offsets_overflow(start)),
        }
    }

    /// [`BytesCol::push`] on the fast path.
    #[inline(always)]
    fn push_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        // (Strings are validated per buffer: the fast path never runs with `check_utf8`.)
        let (from, n) = f.len_prefix();
        append_bytes(&mut self.data, f.buf, from, n);
        match i32::try_from(self.data.len()) {
            Ok(end) => self.offsets.push(end),
            Err(_) => {
                f.fail();
                self.push_empty();
            }
        }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.offsets.truncate(len + 1);
            self.data.truncate(self.offsets[len] as usize);
            self.validated_values = self.validated_values.min(len);
            self.validated_bytes = self.validated_bytes.min(self.data.len());
        }
    }

    fn push_empty(&mut self) {
        let last = self.offsets[self.offsets.len() - 1];
        self.offsets.push(last);
    }

    /// Validate the UTF-8 appended since the last call: the new bytes as a whole, and that every
    /// new value starts on a character boundary. Which value is bad is found by decoding again
    /// with [`Cursor::check_utf8`] (see `RecordDecoder::decode_rows`).
    fn validate_utf8(&mut self) -> Result<(), DecodeErrorKind> {
        if self.kind != BytesKind::Utf8 {
            return Ok(());
        }
        let new_bytes = &self.data[self.validated_bytes..];
        let values = self.len();
        let ok = new_bytes.is_ascii()
            || (simdutf8::basic::from_utf8(new_bytes).is_ok()
                && self.offsets[self.validated_values..values]
                    .iter()
                    .all(|&o| {
                        self.data
                            .get(o as usize)
                            .is_none_or(|&b| (b as i8) >= -0x40)
                    }));
        if !ok {
            return Err(DecodeErrorKind::InvalidUtf8);
        }
        self.validated_bytes = self.data.len();
        self.validated_values = values;
        Ok(())
    }

    fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let data = std::mem::take(&mut self.data);
        self.mean_len = data.len().div_ceil(offsets.len().max(2) - 1);
        debug_assert!(
            self.kind == BytesKind::Binary || self.validated_values == offsets.len() - 1,
            "string column finished before UTF-8 validation"
        );
        self.validated_bytes = 0;
        self.validated_values = 0;
        if self.view {
            return self.finish_view(&offsets, data, nulls, pool);
        }
        debug_assert_eq!(offsets.last().map(|&o| o as usize), Some(data.len()));
        let offsets = pool.scalar(offsets);
        let offsets = if cfg!(debug_assertions) {
            OffsetBuffer::new(offsets)
        } else {
            // SAFETY: the offsets start at 0 (`vec![0]`) and never decrease: each push appends
            // the current length of `data`, which only grows between pushes (`push_empty`
            // repeats the last offset, `truncate` cuts `data` back to the last kept offset), and
            // every offset fits `i32` (checked before it is pushed). Debug builds check all of
            // this with `OffsetBuffer::new` above. (Validating ~8 instructions per value was 2 %
            // of decoding string-heavy records.)
            unsafe { OffsetBuffer::new_unchecked(offsets) }
        };
        let values = pool.buffer(data);
        match self.kind {
            BytesKind::Binary => Arc::new(BinaryArray::new(offsets, values, nulls)),
            BytesKind::Utf8 => {
                if cfg!(debug_assertions) {
                    return Arc::new(
                        StringArray::try_new(offsets, values, nulls)
                            .expect("validate_utf8 accepted invalid UTF-8"),
                    );
                }
                // SAFETY: `validate_utf8` checked all of `values` as UTF-8 and that every
                // value starts on a character boundary, and the offsets are monotonic (see
                // above) and within `values` (built from its length).
                // Debug builds check the same with `try_new` above.
                Arc::new(unsafe { StringArray::new_unchecked(offsets, values, nulls) })
            }
        }
    }

    fn finish_view(
        &self,
        offsets: &[i32],
        data: Vec<u8>,
        nulls: Option<NullBuffer>,
        pool: &Arc<BufferPool>,
    ) -> ArrayRef {
        let views: Vec<u128> = offsets
            .windows(2)
            .map(|w| {
                let (s, e) = (w[0] as usize, w[1] as usize);
                arrow_array::builder::make_view(&data[s..e], 0, s as u32)
            })
            .collect();
        let views = ScalarBuffer::from(views);
        let buffers: Arc<[Buffer]> = if data.is_empty() {
            Arc::from(Vec::new())
        } else {
            Arc::from(vec![pool.buffer(data)])
        };
        match self.kind {
            BytesKind::Binary => Arc::new(
                BinaryViewArray::try_new(views, buffers, nulls).expect("views built from offsets"),
            ),
            BytesKind::Utf8 => Arc::new(
                StringViewArray::try_new(views, buffers, nulls)
                    .expect("views built from validated offsets"),
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct FixedCol {
    size: usize,
    len: usize,
    data: Vec<u8>,
    data_type: DataType,
}

impl FixedCol {
    pub(crate) fn new(size: usize, data_type: DataType) -> Self {
        FixedCol {
            size,
            len: 0,
            data: Vec::new(),
            data_type,
        }
    }

    fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let len = std::mem::take(&mut self.len);
        let data = std::mem::take(&mut self.data);
        let builder = ArrayDataBuilder::new(self.data_type.clone())
            .len(len)
            .add_buffer(pool.buffer(data))
            .nulls(nulls);
        Arc::new(FixedSizeBinaryArray::from(
            builder.build().expect("fixed-size data matches its length"),
        ))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct EnumCol {
    keys: Vec<i32>,
    symbols: ArrayRef,
    n_symbols: usize,
    /// Schema resolution: the reader's index of each writer symbol (`-1`: none, an error).
    remap: Option<Arc<EnumRemap>>,
}

/// The writer's enum symbols resolved against the reader's.
#[derive(Debug)]
pub(crate) struct EnumRemap {
    /// The reader's index of each writer symbol, `-1` where there is none.
    pub(crate) keys: Box<[i32]>,
    pub(crate) writer_symbols: Box<[String]>,
}

impl EnumCol {
    pub(crate) fn new(symbols: &[String]) -> Self {
        // An enum without symbols can hold no value; its dictionary gets one entry so that
        // placeholder keys (under a null parent) stay valid.
        let dict: Vec<&str> = if symbols.is_empty() {
            vec![""]
        } else {
            symbols.iter().map(String::as_str).collect()
        };
        EnumCol {
            keys: Vec::new(),
            symbols: Arc::new(StringArray::from(dict)),
            n_symbols: symbols.len(),
            remap: None,
        }
    }

    /// Read the writer's indexes through `remap` (schema resolution).
    pub(crate) fn with_remap(mut self, remap: EnumRemap) -> Self {
        self.n_symbols = remap.keys.len();
        self.remap = Some(Arc::new(remap));
        self
    }

    /// The output key of the writer's index `index`; negative if there is none (out of
    /// range, or a writer symbol the reader's enum lacks).
    #[inline(always)]
    fn key(&self, index: i64) -> i32 {
        if index as u64 >= self.n_symbols as u64 {
            return -1;
        }
        match &self.remap {
            None => index as i32,
            Some(remap) => remap.keys[index as usize],
        }
    }

    fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let index = c.long()?;
        if index < 0 || index as u64 >= self.n_symbols as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::EnumIndex {
                    index,
                    symbols: self.n_symbols,
                },
                start,
            ));
        }
        let key = match &self.remap {
            None => index as i32,
            Some(remap) => {
                let key = remap.keys[index as usize];
                if key < 0 {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnresolvedEnumSymbol(
                            remap.writer_symbols[index as usize].clone(),
                        ),
                        start,
                    ));
                }
                key
            }
        };
        self.keys.push(key);
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum DecimalSource {
    Bytes,
    Fixed(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct DecimalCol {
    source: DecimalSource,
    precision: u8,
    scale: i8,
    narrow: Vec<i128>,
    wide: Vec<i256>,
    is_wide: bool,
}

impl DecimalCol {
    pub(crate) fn new(source: DecimalSource, precision: u8, scale: i8) -> Self {
        DecimalCol {
            source,
            precision,
            scale,
            narrow: Vec::new(),
            wide: Vec::new(),
            is_wide: precision > 38,
        }
    }

    /// Sign-extend a big-endian two's-complement integer into `N` bytes.
    #[inline]
    fn sign_extend<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        let negative = b.first().is_some_and(|&x| x & 0x80 != 0);
        let fill = if negative { 0xff } else { 0 };
        let mut out = [fill; N];
        if b.len() <= N {
            out[N - b.len()..].copy_from_slice(b);
            return Some(out);
        }
        // Longer than N: the extra leading bytes must be pure sign extension.
        let (extra, rest) = b.split_at(b.len() - N);
        if extra.iter().any(|&x| x != fill) || (rest[0] & 0x80 != 0) != negative {
            return None;
        }
        out.copy_from_slice(rest);
        Some(out)
    }

    #[inline]
    fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let b = match self.source {
            DecimalSource::Bytes => c.bytes()?,
            DecimalSource::Fixed(n) => c.take(n)?,
        };
        let overflow =
            || DecodeError::new(DecodeErrorKind::DecimalOverflow { len: b.len() }, start);
        if self.is_wide {
            let v = Self::sign_extend::<32>(b).ok_or_else(overflow)?;
            self.wide.push(i256::from_be_bytes(v));
        } else {
            let v = Self::sign_extend::<16>(b).ok_or_else(overflow)?;
            self.narrow.push(i128::from_be_bytes(v));
        }
        Ok(())
    }

    fn push_zero(&mut self) {
        if self.is_wide {
            self.wide.push(i256::ZERO);
        } else {
            self.narrow.push(0);
        }
    }

    fn len(&self) -> usize {
        if self.is_wide {
            self.wide.len()
        } else {
            self.narrow.len()
        }
    }

    fn finish(&mut self, nulls: Option<NullBuffer>) -> ArrayRef {
        if self.is_wide {
            let values = ScalarBuffer::from(std::mem::take(&mut self.wide));
            Arc::new(
                Decimal256Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        } else {
            let values = ScalarBuffer::from(std::mem::take(&mut self.narrow));
            Arc::new(
                Decimal128Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ListCol {
    /// Starts with a leading 0.
    offsets: Vec<i32>,
    pub(crate) child: Column,
    field: FieldRef,
    min_item_size: usize,
    /// What bulk varint decoding of this column's items learned from earlier arrays.
    hint: BulkHint,
    /// Mean items per list in the last finished batch (to reserve the items up front).
    mean_items: usize,
}

impl ListCol {
    /// Decode one array: its blocks of items, then its end offset.
    ///
    /// Out of line, but the record loops call it directly rather than through
    /// [`Column::decode_nested`], whose prologue and dispatch serve every type (with
    /// [`Column::decode_many`] inlined: Telemetry's 16-double arrays 162.9M -> 153.6M
    /// instructions for a 40 MB file).
    #[inline(never)]
    fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let mut total = self.offsets[self.offsets.len() - 1] as usize;
        while let Some(n) = c.block_count(self.min_item_size)? {
            total += n;
            if total > i32::MAX as usize {
                return Err(offsets_overflow(c.pos));
            }
            self.child
                .decode_many(c, n, self.min_item_size, &mut self.hint)?;
        }
        self.offsets.push(total as i32);
        Ok(())
    }

    pub(crate) fn new(child: Column, field: FieldRef) -> Self {
        let min_item_size = child.min_size();
        ListCol {
            offsets: vec![0],
            child,
            field,
            min_item_size,
            hint: BulkHint::default(),
            mean_items: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct MapCol {
    offsets: Vec<i32>,
    keys: BytesCol,
    pub(crate) values: Column,
    entries: FieldRef,
    min_entry_size: usize,
    /// Mean entries per map in the last finished batch (to reserve the entries up front).
    mean_entries: usize,
}

impl MapCol {
    /// Decode one map: its blocks of entries, then its end offset. (Through
    /// [`Column::decode_nested`]: calling it straight from the record loops, like
    /// [`ListCol::decode`], saved Order 1 % but cost Wide, which has no maps, 0.6 %.)
    #[inline(never)]
    fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let mut total = self.offsets[self.offsets.len() - 1] as usize;
        while let Some(n) = c.block_count(self.min_entry_size)? {
            total += n;
            if total > i32::MAX as usize {
                return Err(offsets_overflow(c.pos));
            }
            self.keys.offsets.reserve(n);
            self.values.reserve(n, None);
            for _ in 0..n {
                self.keys.push(c)?;
                self.values.decode_inline(c)?;
            }
        }
        self.offsets.push(total as i32);
        Ok(())
    }

    pub(crate) fn new(values: Column, entries: FieldRef, view: bool) -> Self {
        let min_entry_size = 1 + values.min_size();
        MapCol {
            offsets: vec![0],
            keys: BytesCol::new(BytesKind::Utf8, view),
            values,
            entries,
            min_entry_size,
            mean_entries: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct StructCol {
    pub(crate) columns: Vec<Column>,
    /// The Avro field name of each entry of `columns` (for error paths).
    pub(crate) names: Vec<Arc<str>>,
    /// The Arrow fields of the columns that are not skipped (in output order).
    pub(crate) fields: Fields,
    pub(crate) len: usize,
    /// Schema resolution: the output order of the columns (indexes into `columns`), when it
    /// is not the order of the non-skipped columns (reader fields reordered or defaulted).
    pub(crate) order: Option<Arc<[usize]>>,
}

impl StructCol {
    pub(crate) fn new(columns: Vec<Column>, names: Vec<Arc<str>>, fields: Fields) -> Self {
        debug_assert_eq!(columns.len(), names.len());
        StructCol {
            columns,
            names,
            fields,
            len: 0,
            order: None,
        }
    }

    /// Output the columns in this order (indexes into the columns); see [`StructCol::order`].
    pub(crate) fn with_order(mut self, order: Vec<usize>) -> Self {
        debug_assert!(order.iter().all(|&i| i < self.columns.len()));
        self.order = Some(order.into());
        self
    }

    /// Decode one record: primitive fields inline in this loop, nested ones through a call.
    #[inline(always)]
    pub(crate) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        self.decode_n(c, 1).map_err(|(_, e)| e)
    }

    /// Decode `n` consecutive records (the items of an array block, or a block's rows). On
    /// error, the index of the record that failed (the records before it are complete).
    /// Always inlined, so that a list of records runs this loop without a call per item.
    ///
    /// The fast path reads primitives through a [`Sticky`] cursor held in registers and checks
    /// for errors once per record, at its end; a record that failed is dropped and decoded
    /// again by [`StructCol::decode_slow`], which finds the error and names its field.
    #[inline(always)]
    pub(crate) fn decode_n<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        if c.check_utf8 {
            // Decoding again to find an error (see `RecordDecoder::decode_rows`): value by value.
            return self.decode_n_checked(c, n);
        }
        if n == 0 {
            // (Leaves `c.pos` as it is, even past the end.)
            return Ok(());
        }
        let mut start = c.pos;
        let f = &mut Sticky::new(c);
        for i in 0..n {
            for col in self.columns.iter_mut() {
                // Every variant is named (no `_`), so that the jump table covers all tags and
                // needs no range check.
                decode_primitive_sticky!(col, f, other => match other {
                    Column::Nullable(n) => n.decode_sticky(f, c),
                    Column::List(l) => call_sticky!(f, c, l.decode(c)),
                    other @ (Column::Null(_)
                    | Column::Int32(_)
                    | Column::Int64(_)
                    | Column::Float32(_)
                    | Column::Float64(_)
                    | Column::Bytes(_)
                    | Column::Boolean(_)
                    | Column::Enum(_)
                    | Column::Fixed(_)
                    | Column::Decimal(_)
                    | Column::UuidString(_)
                    | Column::Duration(_)
                    | Column::Map(_)
                    | Column::Struct(_)
                    | Column::Union(_)
                    | Column::Skip(_)
                    | Column::TooDeep(_)
                    | Column::Default(_)
                    | Column::Promoted(_)
                    | Column::Resolved(_)) => nested_sticky(other, f, c),
                });
            }
            if f.failed() {
                self.decode_slow(c, start).map_err(|e| (i, e))?;
                *f = Sticky::new(c);
            } else {
                self.len += 1;
            }
            start = f.pos;
        }
        c.pos = f.pos;
        Ok(())
    }

    /// Decode again, value by value with [`Cursor`]'s errors, a record whose fast path failed
    /// (after dropping what the fast path appended).
    #[cold]
    #[inline(never)]
    fn decode_slow<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        start: usize,
    ) -> Result<(), DecodeError> {
        self.truncate(self.len);
        c.pos = start;
        self.decode_checked(c)
    }

    /// Decode one record value by value with [`Cursor`]'s errors.
    fn decode_checked<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            if let Err(e) = col.decode_inline(c) {
                return Err(e.in_field(&self.names[i]));
            }
        }
        self.len += 1;
        Ok(())
    }

    /// [`StructCol::decode_n`] value by value, with every string checked as it is read.
    #[cold]
    #[inline(never)]
    fn decode_n_checked<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        for i in 0..n {
            self.decode_checked(c).map_err(|e| (i, e))?;
        }
        Ok(())
    }

    pub(crate) fn reserve(&mut self, n: usize, pool: Option<&BufferPool>) {
        for col in &mut self.columns {
            col.reserve(n, pool);
        }
    }

    pub(crate) fn min_size(&self) -> usize {
        self.columns.iter().map(Column::min_size).sum()
    }

    /// Drop everything after the first `len` rows, including parts of a row whose decoding
    /// failed halfway (some columns appended, others not).
    pub(crate) fn truncate(&mut self, len: usize) {
        for col in &mut self.columns {
            col.truncate(len);
        }
        self.len = self.len.min(len);
    }

    pub(crate) fn append_zero_size(&mut self, n: usize) -> Result<(), DecodeError> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            col.append_zero_size(n)
                .map_err(|e| e.in_field(&self.names[i]))?;
        }
        self.len += n;
        Ok(())
    }

    pub(crate) fn validate_utf8(&mut self) -> Result<(), DecodeError> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            col.validate_utf8()
                .map_err(|e| e.in_field(&self.names[i]))?;
        }
        Ok(())
    }

    /// The arrays of the kept columns.
    pub(crate) fn finish_columns(&mut self, pool: &Arc<BufferPool>) -> Vec<ArrayRef> {
        self.len = 0;
        match &self.order {
            None => self
                .columns
                .iter_mut()
                .filter(|c| !matches!(c, Column::Skip(_)))
                .map(|c| c.finish(None, pool))
                .collect(),
            Some(order) => order
                .iter()
                .map(|&i| self.columns[i].finish(None, pool))
                .collect(),
        }
    }

    fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let len = self.len;
        let arrays = self.finish_columns(pool);
        if arrays.is_empty() {
            return Arc::new(StructArray::new_empty_fields(len, nulls));
        }
        Arc::new(StructArray::new(self.fields.clone(), arrays, nulls))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct NullableCol {
    /// Branch index of `null`: 0 for `["null", T]`, 1 for `[T, "null"]`.
    null_index: i64,
    validity: Validity,
    pub(crate) child: Column,
}

impl NullableCol {
    pub(crate) fn new(null_index: i64, child: Column) -> Self {
        NullableCol {
            null_index,
            validity: Validity::default(),
            child,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct UnionCol {
    type_ids: Vec<i8>,
    offsets: Vec<i32>,
    pub(crate) children: Vec<Column>,
    fields: UnionFields,
}

impl UnionCol {
    pub(crate) fn new(children: Vec<Column>, fields: UnionFields) -> Self {
        UnionCol {
            type_ids: Vec::new(),
            offsets: Vec::new(),
            children,
            fields,
        }
    }

    /// Start a value in branch `branch` (which exists): returns the branch's column, to
    /// append the value to.
    pub(crate) fn push_branch(&mut self, branch: i8) -> &mut Column {
        let child = &mut self.children[branch as usize];
        self.type_ids.push(branch);
        self.offsets.push(child.len() as i32);
        child
    }
}

#[derive(Debug, Clone)]
pub(crate) struct TooDeep {
    len: usize,
    type_name: Arc<str>,
    depth: usize,
}

impl TooDeep {
    pub(crate) fn new(type_name: &str, depth: usize) -> Self {
        TooDeep {
            len: 0,
            type_name: type_name.into(),
            depth,
        }
    }
}

/// Append `buf[from..from + n]` to `data` (the caller checked `from + n <= buf.len()`).
///
/// Short values (most strings in real records) are copied as one fixed 64-byte move instead of
/// a call to `memcpy`, when 64 bytes are readable at `from` and writable at the end of `data`;
/// `extend_from_slice` is the reference the fast path is tested against.
#[inline(always)]
fn append_bytes(data: &mut Vec<u8>, buf: &[u8], from: usize, n: usize) {
    const CHUNK: usize = 64;
    if n <= CHUNK && from + CHUNK <= buf.len() {
        data.reserve(CHUNK);
        let len = data.len();
        // SAFETY: `from + CHUNK <= buf.len()`, so CHUNK bytes are readable at `buf[from]`;
        // `reserve(CHUNK)` guarantees CHUNK writable bytes at `data[len]`; the two regions belong to
        // different allocations (`data` is owned, `buf` is borrowed), so they do not overlap.
        // Only the first `n <= CHUNK` bytes become part of `data` (`set_len(len + n)`): they are
        // initialized by the copy, and the bytes after them stay spare capacity.
        unsafe {
            std::ptr::copy_nonoverlapping(
                buf.as_ptr().add(from),
                data.as_mut_ptr().add(len),
                CHUNK,
            );
            data.set_len(len + n);
        }
    } else {
        data.extend_from_slice(&buf[from..from + n]);
    }
}

/// `f32` and `f64` (implemented for nothing else): every bit pattern is a valid value, and on a
/// little-endian target the in-memory layout of a value is its Avro encoding.
trait LeFloat: Copy {
    /// `size_of::<Self>()`.
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
}

impl LeFloat for f32 {
    const SIZE: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
}

impl LeFloat for f64 {
    const SIZE: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

/// Append the values of an array block of `float`s or `double`s to `out`: on little-endian
/// targets one copy of the bytes (~5 % of decoding Telemetry's 16 doubles per row, against a
/// vectorized loop).
#[inline(always)]
fn extend_le<T: LeFloat>(out: &mut Vec<T>, bytes: &[u8]) {
    debug_assert_eq!(std::mem::size_of::<T>(), T::SIZE);
    let n = bytes.len() / T::SIZE;
    if cfg!(target_endian = "little") {
        out.reserve(n);
        let len = out.len();
        // SAFETY: `reserve(n)` leaves room for `n` more values after `len`, which is
        // `n * T::SIZE` bytes; `bytes` holds at least that many; the regions do not overlap
        // (`out` is owned, `bytes` is borrowed input). `T` is `f32` or `f64` (`LeFloat`), so
        // the copied bytes are valid values, equal to `T::from_le` of each chunk on this
        // little-endian target; `set_len` exposes only those `n` values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().add(len).cast::<u8>(),
                n * T::SIZE,
            );
            out.set_len(len + n);
        }
    } else {
        out.extend(bytes.chunks_exact(T::SIZE).map(T::from_le));
    }
}

#[cold]
#[inline(never)]
fn check_value_utf8(value: &[u8], at: usize) -> Result<(), DecodeError> {
    match std::str::from_utf8(value) {
        Ok(_) => Ok(()),
        Err(_) => Err(DecodeError::new(DecodeErrorKind::InvalidUtf8, at)),
    }
}

#[cold]
fn offsets_overflow(at: usize) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::TooLarge(
            "more than 2 GiB of values in one column of one batch (Arrow's 32-bit offsets); \
             use a smaller batch size"
                .to_string(),
        ),
        at,
    )
}

/// Parse a canonical 8-4-4-4-12 hexadecimal UUID.
fn parse_uuid(s: &[u8]) -> Option<[u8; 16]> {
    if s.len() != 36 || s[8] != b'-' || s[13] != b'-' || s[18] != b'-' || s[23] != b'-' {
        return None;
    }
    let hex = |b: u8| -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    };
    let mut out = [0u8; 16];
    let mut digits = s.iter().filter(|&&b| b != b'-');
    for byte in &mut out {
        let hi = hex(*digits.next()?)?;
        let lo = hex(*digits.next()?)?;
        *byte = hi << 4 | lo;
    }
    Some(out)
}

/// Decode one value of a primitive column inline, or `$other` for anything else.
macro_rules! decode_primitive {
    ($col:expr, $c:expr, $other:ident => $fallback:expr) => {
        match $col {
            Column::Int64(p) => {
                let v = $c.long()?;
                p.values.push(v);
            }
            Column::Int32(p) => {
                let v = $c.int()?;
                p.values.push(v);
            }
            Column::Float64(p) => {
                let v = $c.f64()?;
                p.values.push(v);
            }
            Column::Float32(p) => {
                let v = $c.f32()?;
                p.values.push(v);
            }
            Column::Bytes(b) => b.push($c)?,
            Column::Boolean(b) => {
                let v = $c.boolean()?;
                b.push(v);
            }
            $other => $fallback,
        }
    };
}

/// Any nested value on the fast path, through [`Column::decode_nested`].
#[inline(always)]
fn nested_sticky<K: Kernel>(col: &mut Column, f: &mut Sticky<'_, K>, c: &mut Cursor<'_, K>) {
    call_sticky!(f, c, col.decode_nested(c));
}

impl NullableCol {
    /// [`NullableCol::decode`] on the fast path.
    #[inline(always)]
    fn decode_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>, c: &mut Cursor<'_, K>) {
        let branch = f.long();
        if branch == 1 - self.null_index {
            self.validity.push(true);
            decode_primitive_sticky!(&mut self.child, f, other => nested_sticky(other, f, c));
        } else if branch == self.null_index {
            self.push_null();
        } else {
            f.fail();
        }
    }

    #[inline(always)]
    fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let branch = c.long()?;
        if branch == 1 - self.null_index {
            self.validity.push(true);
            decode_primitive!(&mut self.child, c, other => other.decode_nested(c)?);
        } else if branch == self.null_index {
            self.push_null();
        } else {
            return Err(DecodeError::new(
                DecodeErrorKind::UnionIndex {
                    index: branch,
                    branches: 2,
                },
                start,
            ));
        }
        Ok(())
    }

    /// Start a non-null value (the caller appends it to the child).
    #[inline]
    pub(crate) fn push_valid(&mut self) {
        self.validity.push(true);
    }

    #[inline(always)]
    pub(crate) fn push_null(&mut self) {
        self.validity.push(false);
        match &mut self.child {
            Column::Int64(p) => p.values.push(0),
            Column::Int32(p) => p.values.push(0),
            Column::Float64(p) => p.values.push(0.0),
            Column::Float32(p) => p.values.push(0.0),
            Column::Bytes(b) => b.push_empty(),
            other => other.append_placeholder(),
        }
    }
}

impl Column {
    /// Decode one value.
    #[inline]
    pub(crate) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        self.decode_inline(c)
    }

    /// Decode one value: primitives and nullable primitives inline in the caller's loop,
    /// everything else through [`Column::decode_nested`].
    #[inline(always)]
    fn decode_inline<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        decode_primitive!(self, c, other => match other {
            Column::Nullable(n) => n.decode(c)?,
            other => other.decode_nested(c)?,
        });
        Ok(())
    }

    /// Decode one value of any type (the out-of-line path for nested and rarer types).
    #[inline(never)]
    fn decode_nested<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        match self {
            Column::Int64(_)
            | Column::Int32(_)
            | Column::Float64(_)
            | Column::Float32(_)
            | Column::Bytes(_)
            | Column::Boolean(_) => return self.decode_inline(c),
            Column::Nullable(n) => n.decode(c)?,
            Column::Struct(s) => s.decode(c)?,
            Column::List(l) => l.decode(c)?,
            Column::Map(m) => m.decode(c)?,
            Column::Enum(e) => e.decode(c)?,
            Column::Fixed(f) => {
                let b = c.take(f.size)?;
                f.data.extend_from_slice(b);
                f.len += 1;
            }
            Column::Null(len) => *len += 1,
            Column::Decimal(d) => d.decode(c)?,
            Column::UuidString(f) => {
                let start = c.pos;
                let s = c.bytes()?;
                let Some(uuid) = parse_uuid(s) else {
                    return Err(DecodeError::new(
                        DecodeErrorKind::InvalidUuid(String::from_utf8_lossy(s).into_owned()),
                        start,
                    ));
                };
                f.data.extend_from_slice(&uuid);
                f.len += 1;
            }
            Column::Duration(v) => {
                let start = c.pos;
                let b = c.take(12)?;
                let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                let (months, days, millis) = (word(0), word(4), word(8));
                let (Ok(m), Ok(d)) = (i32::try_from(months), i32::try_from(days)) else {
                    return Err(DecodeError::new(
                        DecodeErrorKind::DurationOverflow { months, days },
                        start,
                    ));
                };
                v.push(IntervalMonthDayNano::new(
                    m,
                    d,
                    i64::from(millis) * 1_000_000,
                ));
            }
            Column::Union(u) => {
                let branch = c.branch(u.children.len())?;
                let child = &mut u.children[branch];
                u.type_ids.push(branch as i8);
                u.offsets.push(child.len() as i32);
                child.decode(c)?;
            }
            Column::Skip(s) => s.skip(c)?,
            Column::Default(d) => d.decode(c.k)?,
            Column::Promoted(p) => decode_promoted(&mut p.column, p.promotion, c)?,
            Column::Resolved(r) => r.decode(c)?,
            Column::TooDeep(t) => {
                return Err(DecodeError::new(
                    DecodeErrorKind::RecursionLimit {
                        type_name: t.type_name.to_string(),
                        depth: t.depth,
                    },
                    c.pos,
                ))
            }
        }
        Ok(())
    }

    /// Decode `n` consecutive values (the items of one array block). The caller has bounded
    /// `n` by the bytes left and this column's minimum size.
    ///
    /// Inlined into [`ListCol::decode`]: arrays of numbers go to their bulk paths without a
    /// further call; records and other items go through an out-of-line loop.
    #[inline(always)]
    fn decode_many<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
        min_size: usize,
        hint: &mut BulkHint,
    ) -> Result<(), DecodeError> {
        match self {
            Column::Int64(p) => {
                let start = c.pos;
                c.k.read_longs_hinted(c.buf, &mut c.pos, n, &mut p.values, hint)
                    .map_err(|e| DecodeError::new(DecodeErrorKind::Varint(e), start))
            }
            Column::Int32(p) => {
                let start = c.pos;
                c.k.read_ints_hinted(c.buf, &mut c.pos, n, &mut p.values, hint)
                    .map_err(|e| DecodeError::new(DecodeErrorKind::Varint(e), start))
            }
            Column::Float64(p) => {
                let bytes = c.take(n * 8)?;
                extend_le(&mut p.values, bytes);
                Ok(())
            }
            Column::Float32(p) => {
                let bytes = c.take(n * 4)?;
                extend_le(&mut p.values, bytes);
                Ok(())
            }
            _ => self.decode_many_other(c, n, min_size),
        }
    }

    /// [`Column::decode_many`] for items other than numbers.
    #[inline(never)]
    fn decode_many_other<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
        min_size: usize,
    ) -> Result<(), DecodeError> {
        match self {
            _ if min_size == 0 => self.append_zero_size(n),
            // Records: no reserve per array block (a call and a walk over the fields, ~3 % of
            // Order's 10-line arrays); the batch started with room for the last batch's mean
            // items per list, and pushes grow the buffers when that is not enough.
            Column::Struct(s) => s.decode_n(c, n).map_err(|(_, e)| e),
            _ => {
                self.reserve(n, None);
                for _ in 0..n {
                    self.decode_inline(c)?;
                }
                Ok(())
            }
        }
    }

    /// Number of values so far.
    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Null(len) => *len,
            Column::Boolean(b) => b.len(),
            Column::Int32(p) => p.values.len(),
            Column::Int64(p) => p.values.len(),
            Column::Float32(p) => p.values.len(),
            Column::Float64(p) => p.values.len(),
            Column::Bytes(b) => b.len(),
            Column::Fixed(f) | Column::UuidString(f) => f.len,
            Column::Enum(e) => e.keys.len(),
            Column::Decimal(d) => d.len(),
            Column::Duration(v) => v.len(),
            Column::List(l) => l.offsets.len() - 1,
            Column::Map(m) => m.offsets.len() - 1,
            Column::Struct(s) => s.len,
            Column::Nullable(n) => n.child.len(),
            Column::Union(u) => u.type_ids.len(),
            Column::Skip(_) => 0,
            Column::TooDeep(t) => t.len,
            Column::Default(d) => d.column.len(),
            Column::Promoted(p) => p.column.len(),
            Column::Resolved(r) => r.out.len(),
        }
    }

    /// The fewest bytes one encoded value can take.
    pub(crate) fn min_size(&self) -> usize {
        match self {
            Column::Null(_) => 0,
            Column::Float32(_) => 4,
            Column::Float64(_) => 8,
            Column::Fixed(f) => f.size,
            Column::Decimal(d) => match d.source {
                DecimalSource::Bytes => 1,
                DecimalSource::Fixed(n) => n,
            },
            Column::Duration(_) => 12,
            Column::Struct(s) => s.min_size(),
            Column::Skip(s) => s.min_size(),
            Column::Default(_) => 0,
            Column::Promoted(p) => p.promotion.min_size().unwrap_or(p.column.min_size()),
            Column::Resolved(r) => r.min_size,
            Column::Boolean(_)
            | Column::Int32(_)
            | Column::Int64(_)
            | Column::Bytes(_)
            | Column::Enum(_)
            | Column::UuidString(_)
            | Column::List(_)
            | Column::Map(_)
            | Column::Nullable(_)
            | Column::Union(_)
            | Column::TooDeep(_) => 1,
        }
    }

    /// Keep only the first `len` values (and the child values they reference).
    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            Column::Null(n) => *n = (*n).min(len),
            Column::Boolean(b) => b.truncate(len),
            Column::Int32(p) => p.values.truncate(len),
            Column::Int64(p) => p.values.truncate(len),
            Column::Float32(p) => p.values.truncate(len),
            Column::Float64(p) => p.values.truncate(len),
            Column::Bytes(b) => b.truncate(len),
            Column::Fixed(f) | Column::UuidString(f) => {
                if len < f.len {
                    f.len = len;
                    f.data.truncate(len * f.size);
                }
            }
            Column::Enum(e) => e.keys.truncate(len),
            Column::Decimal(d) => {
                d.narrow.truncate(len);
                d.wide.truncate(len);
            }
            Column::Duration(v) => v.truncate(len),
            Column::List(l) => {
                l.offsets.truncate(len + 1);
                l.child.truncate(l.offsets[l.offsets.len() - 1] as usize);
            }
            Column::Map(m) => {
                m.offsets.truncate(len + 1);
                let entries = m.offsets[m.offsets.len() - 1] as usize;
                m.keys.truncate(entries);
                m.values.truncate(entries);
            }
            Column::Struct(s) => s.truncate(len),
            Column::Nullable(n) => {
                n.validity.truncate(len);
                n.child.truncate(len);
            }
            Column::Union(u) => {
                u.type_ids.truncate(len);
                u.offsets.truncate(len);
                for (i, child) in u.children.iter_mut().enumerate() {
                    let kept = u.type_ids.iter().filter(|&&t| t as usize == i).count();
                    child.truncate(kept);
                }
            }
            Column::Skip(_) => {}
            Column::TooDeep(t) => t.len = t.len.min(len),
            Column::Default(d) => d.column.truncate(len),
            Column::Promoted(p) => p.column.truncate(len),
            Column::Resolved(r) => r.out.truncate(len),
        }
    }

    /// Append `n` values of a type whose encoding takes zero bytes (null, fixed(0), records of
    /// those), in O(1) per column.
    fn append_zero_size(&mut self, n: usize) -> Result<(), DecodeError> {
        match self {
            Column::Null(len) => *len += n,
            Column::Fixed(f) => {
                debug_assert_eq!(f.size, 0);
                f.len += n;
            }
            Column::Struct(s) => s.append_zero_size(n)?,
            Column::Skip(_) => {}
            Column::Default(_) | Column::Resolved(_) => fill_zero_size(self, n)?,
            other => debug_assert!(false, "append_zero_size on {other:?}"),
        }
        Ok(())
    }

    /// The variant's name, for internal error messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Column::Null(_) => "null",
            Column::Boolean(_) => "boolean",
            Column::Int32(_) => "int32",
            Column::Int64(_) => "int64",
            Column::Float32(_) => "float32",
            Column::Float64(_) => "float64",
            Column::Bytes(_) => "bytes",
            Column::Fixed(_) => "fixed",
            Column::Enum(_) => "enum",
            Column::Decimal(_) => "decimal",
            Column::UuidString(_) => "uuid",
            Column::Duration(_) => "duration",
            Column::List(_) => "list",
            Column::Map(_) => "map",
            Column::Struct(_) => "struct",
            Column::Nullable(_) => "nullable",
            Column::Union(_) => "union",
            Column::Skip(_) => "skip",
            Column::TooDeep(_) => "too-deep",
            Column::Default(_) => "default",
            Column::Promoted(_) => "promoted",
            Column::Resolved(_) => "resolved union",
        }
    }

    /// Append a placeholder slot under a null parent (a null if this column is nullable).
    pub(crate) fn append_placeholder(&mut self) {
        match self {
            Column::Null(len) => *len += 1,
            Column::Boolean(b) => b.push(false),
            Column::Int32(p) => p.values.push(0),
            Column::Int64(p) => p.values.push(0),
            Column::Float32(p) => p.values.push(0.0),
            Column::Float64(p) => p.values.push(0.0),
            Column::Bytes(b) => b.push_empty(),
            Column::Fixed(f) | Column::UuidString(f) => {
                f.data.resize(f.data.len() + f.size, 0);
                f.len += 1;
            }
            Column::Enum(e) => e.keys.push(0),
            Column::Decimal(d) => d.push_zero(),
            Column::Duration(v) => v.push(IntervalMonthDayNano::new(0, 0, 0)),
            Column::List(l) => {
                let last = l.offsets[l.offsets.len() - 1];
                l.offsets.push(last);
            }
            Column::Map(m) => {
                let last = m.offsets[m.offsets.len() - 1];
                m.offsets.push(last);
            }
            Column::Struct(s) => {
                for col in &mut s.columns {
                    col.append_placeholder();
                }
                s.len += 1;
            }
            Column::Nullable(n) => {
                n.validity.push(false);
                n.child.append_placeholder();
            }
            Column::Union(u) => {
                let child = &mut u.children[0];
                u.type_ids.push(0);
                u.offsets.push(child.len() as i32);
                child.append_placeholder();
            }
            Column::Skip(_) => {}
            Column::TooDeep(t) => t.len += 1,
            Column::Default(d) => d.column.append_placeholder(),
            Column::Promoted(p) => p.column.append_placeholder(),
            Column::Resolved(r) => r.out.append_placeholder(),
        }
    }

    /// Reserve room for `n` more values (top-level and per array block, never per value);
    /// with a pool (at the start of a batch), empty buffers get recycled allocations.
    pub(crate) fn reserve(&mut self, n: usize, pool: Option<&BufferPool>) {
        match self {
            Column::Boolean(b) => b.reserve(n),
            Column::Int32(p) => grow(&mut p.values, n, pool),
            Column::Int64(p) => grow(&mut p.values, n, pool),
            Column::Float32(p) => grow(&mut p.values, n, pool),
            Column::Float64(p) => grow(&mut p.values, n, pool),
            Column::Bytes(b) => b.reserve(n, pool),
            Column::Fixed(f) | Column::UuidString(f) => {
                grow(&mut f.data, n.saturating_mul(f.size), pool)
            }
            Column::Enum(e) => grow(&mut e.keys, n, pool),
            Column::List(l) => {
                grow(&mut l.offsets, n, pool);
                l.child.reserve(n.saturating_mul(l.mean_items), pool);
            }
            Column::Map(m) => {
                grow(&mut m.offsets, n, pool);
                let entries = n.saturating_mul(m.mean_entries);
                m.keys.reserve(entries, pool);
                m.values.reserve(entries, pool);
            }
            Column::Struct(s) => s.reserve(n, pool),
            Column::Nullable(c) => {
                c.validity.reserve(n);
                c.child.reserve(n, pool);
            }
            Column::Default(d) => d.column.reserve(n, pool),
            Column::Promoted(p) => p.column.reserve(n, pool),
            Column::Resolved(r) => r.out.reserve(n, pool),
            _ => {}
        }
    }

    /// Validate the UTF-8 of string values appended since the last call.
    pub(crate) fn validate_utf8(&mut self) -> Result<(), DecodeError> {
        let utf8 = |b: &mut BytesCol| b.validate_utf8().map_err(|k| DecodeError::new(k, 0));
        match self {
            Column::Bytes(b) => utf8(b),
            Column::List(l) => l.child.validate_utf8(),
            Column::Map(m) => {
                utf8(&mut m.keys)?;
                m.values.validate_utf8()
            }
            Column::Struct(s) => s.validate_utf8(),
            Column::Nullable(n) => n.child.validate_utf8(),
            Column::Union(u) => u.children.iter_mut().try_for_each(Column::validate_utf8),
            Column::Default(d) => d.column.validate_utf8(),
            Column::Resolved(r) => r.out.validate_utf8(),
            _ => Ok(()),
        }
    }

    /// Turn the buffers into an Arrow array (with `nulls` from a nullable parent) and reset.
    pub(crate) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        fn prim<T: Pooled>(
            p: &mut Prim<T>,
            nulls: Option<NullBuffer>,
            pool: &Arc<BufferPool>,
        ) -> ArrayRef {
            let values = std::mem::take(&mut p.values);
            let data = ArrayDataBuilder::new(p.data_type.clone())
                .len(values.len())
                .add_buffer(pool.buffer(values))
                .nulls(nulls)
                .build()
                .expect("primitive buffer matches its type");
            make_array(data)
        }
        match self {
            Column::Null(len) => Arc::new(NullArray::new(std::mem::take(len))),
            Column::Boolean(b) => Arc::new(BooleanArray::new(b.finish(), nulls)),
            Column::Int32(p) => prim(p, nulls, pool),
            Column::Int64(p) => prim(p, nulls, pool),
            Column::Float32(p) => prim(p, nulls, pool),
            Column::Float64(p) => prim(p, nulls, pool),
            Column::Bytes(b) => b.finish(nulls, pool),
            Column::Fixed(f) | Column::UuidString(f) => f.finish(nulls, pool),
            Column::Enum(e) => {
                let keys = Int32Array::new(pool.scalar(std::mem::take(&mut e.keys)), nulls);
                Arc::new(
                    DictionaryArray::<Int32Type>::try_new(keys, e.symbols.clone())
                        .expect("enum indexes checked while decoding"),
                )
            }
            Column::Decimal(d) => d.finish(nulls),
            Column::Duration(v) => Arc::new(IntervalMonthDayNanoArray::new(
                ScalarBuffer::from(std::mem::take(v)),
                nulls,
            )),
            Column::List(l) => {
                let offsets = std::mem::replace(&mut l.offsets, vec![0]);
                let lists = offsets.len() - 1;
                l.mean_items = (offsets[lists] as usize).div_ceil(lists.max(1));
                let values = l.child.finish(None, pool);
                Arc::new(ListArray::new(
                    l.field.clone(),
                    OffsetBuffer::new(pool.scalar(offsets)),
                    values,
                    nulls,
                ))
            }
            Column::Map(m) => {
                let offsets = std::mem::replace(&mut m.offsets, vec![0]);
                let maps = offsets.len() - 1;
                m.mean_entries = (offsets[maps] as usize).div_ceil(maps.max(1));
                let keys = m.keys.finish(None, pool);
                let values = m.values.finish(None, pool);
                let DataType::Struct(entry_fields) = m.entries.data_type() else {
                    unreachable!("map entries are a struct")
                };
                let entries = StructArray::new(entry_fields.clone(), vec![keys, values], None);
                Arc::new(MapArray::new(
                    m.entries.clone(),
                    OffsetBuffer::new(pool.scalar(offsets)),
                    entries,
                    nulls,
                    false,
                ))
            }
            Column::Struct(s) => s.finish(nulls, pool),
            Column::Nullable(n) => {
                debug_assert!(nulls.is_none(), "nullable inside nullable");
                let validity = n.validity.finish();
                n.child.finish(validity, pool)
            }
            Column::Union(u) => {
                let type_ids = ScalarBuffer::from(std::mem::take(&mut u.type_ids));
                let offsets = ScalarBuffer::from(std::mem::take(&mut u.offsets));
                let children = u
                    .children
                    .iter_mut()
                    .map(|c| c.finish(None, pool))
                    .collect();
                Arc::new(
                    UnionArray::try_new(u.fields.clone(), type_ids, Some(offsets), children)
                        .expect("union type ids and offsets built consistently"),
                )
            }
            Column::Skip(_) => unreachable!("skipped columns are never finished"),
            Column::TooDeep(t) => Arc::new(NullArray::new(std::mem::take(&mut t.len))),
            Column::Default(d) => d.column.finish(nulls, pool),
            Column::Promoted(p) => p.column.finish(nulls, pool),
            Column::Resolved(r) => r.out.finish(nulls, pool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_bytes_matches_extend_from_slice() {
        let buf: Vec<u8> = (0..=255u8).cycle().take(400).collect();
        for from in [0usize, 1, 7, 250, 320, 336, 340, 384, 399, 400] {
            for n in 0..=70usize {
                if from + n > buf.len() {
                    continue;
                }
                for prefix in [0usize, 3, 16] {
                    let mut fast = vec![9u8; prefix];
                    let mut reference = fast.clone();
                    append_bytes(&mut fast, &buf, from, n);
                    reference.extend_from_slice(&buf[from..from + n]);
                    assert_eq!(fast, reference, "from {from} n {n} prefix {prefix}");
                }
            }
        }
    }

    #[test]
    fn extend_le_matches_from_le_bytes() {
        let bytes: Vec<u8> = (0..=255u8).cycle().skip(3).take(8 * 9 + 5).collect();
        let mut doubles = vec![1.5f64];
        extend_le(&mut doubles, &bytes[..8 * 9]);
        let expected: Vec<u64> = std::iter::once(1.5f64.to_bits())
            .chain(
                bytes[..8 * 9]
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
            )
            .collect();
        assert_eq!(
            doubles.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
            expected
        );
        let mut floats = Vec::new();
        extend_le(&mut floats, &bytes[1..1 + 4 * 18]);
        let expected: Vec<u32> = bytes[1..1 + 4 * 18]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(
            floats.iter().map(|f: &f32| f.to_bits()).collect::<Vec<_>>(),
            expected
        );
    }

    #[test]
    fn uuid_parsing() {
        assert_eq!(
            parse_uuid(b"01234567-89ab-CDEF-0123-456789abcdef"),
            Some([
                0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                0xcd, 0xef
            ])
        );
        assert_eq!(parse_uuid(b"0123456789abcdef0123456789abcdef"), None);
        assert_eq!(parse_uuid(b"01234567-89ab-cdef-0123-456789abcdeg"), None);
        assert_eq!(parse_uuid(b"01234567-89ab-cdef-0123+456789abcdef"), None);
    }

    #[test]
    fn decimal_sign_extension() {
        assert_eq!(DecimalCol::sign_extend::<4>(&[0xff]), Some([0xff; 4]));
        assert_eq!(
            DecimalCol::sign_extend::<4>(&[0x01, 0x00]),
            Some([0, 0, 1, 0])
        );
        assert_eq!(DecimalCol::sign_extend::<4>(&[]), Some([0; 4]));
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0xff, 0xff, 0x80, 0x00]),
            Some([0x80, 0])
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0xff, 0xff, 0x7f, 0x00]),
            None
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0x00, 0x01, 0x00, 0x00]),
            None
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0x00, 0x00, 0x7f, 0x00]),
            Some([0x7f, 0])
        );
    }
}
