//! Column builders: one per Arrow column (recursively for nested types). Each decodes Avro values
//! straight into Arrow buffers it owns (values, offsets, validity) and finishes them into arrays
//! without copying.
//!
//! This module owns the [`Column`] enum and its dispatch (decoding one value, lengths, sizes,
//! truncation, placeholders, reserving, finishing), and the macros and helpers the parts share;
//! the builders themselves live in [`scalar`] (numbers), [`enums`], [`decimal`], [`bytes`]
//! (strings, bytes, fixed), [`uuid`], [`nested`] (lists, maps), [`nullable`] (`["null", T]` and
//! the reads with no branch on null), [`union`] (general unions), [`resolve`] (schema
//! resolution's columns) and [`record`] ([`StructCol`] and its record loops).

use super::bits::Bits;
use super::cursor::{Cursor, Sticky};
use super::pool::{BufferPool, Pooled};
use super::skip::Skip;
use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::Kernel;
use arrow_array::{
    make_array, ArrayRef, BooleanArray, IntervalMonthDayNanoArray, ListArray, MapArray, NullArray,
    StructArray,
};
use arrow_buffer::{IntervalMonthDayNano, NullBuffer, OffsetBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::DataType;
use resolve::{decode_promoted, fill_zero_size, DefaultCol, PromotedCol, ResolvedUnion};
use std::sync::Arc;

/// Bytes one reservation asks for at most. Reservations are estimates (a batch's rows, the last
/// batch's mean sizes, an array block's item count): an array block of a million one-byte
/// nulls must not reserve a million values of a large `fixed` or of the last batch's long
/// strings. Past this, a buffer grows as values arrive (bounded by the data).
const MAX_RESERVE_BYTES: usize = 64 << 20;

/// How a column reserves room: through the pool (recycled buffers) when there is one, and
/// whether variable-size columns with no earlier batch size their room by the values they
/// hold (only for a decoder's first batch, at its second block, for as many rows as its
/// input bounds: a mean of one value, extrapolated to a block's rows, could be anything).
#[derive(Clone, Copy)]
pub(crate) struct Room<'a> {
    pub(crate) pool: Option<&'a BufferPool>,
    pub(crate) by_held: bool,
}

impl<'a> Room<'a> {
    /// No pool, room by the last batch.
    pub(crate) const PLAIN: Room<'static> = Room {
        pool: None,
        by_held: false,
    };

    /// Through `pool`, room by the last batch.
    pub(crate) fn pooled(pool: &'a BufferPool) -> Self {
        Room {
            pool: Some(pool),
            by_held: false,
        }
    }

    /// The mean size per value of the last batch (`last`), or by the values held (`total`
    /// over `count`) where there was none and this room may be sized so.
    fn mean(self, last: usize, total: usize, count: usize) -> usize {
        if self.by_held {
            mean_so_far(last, total, count)
        } else {
            last
        }
    }
}

/// Append `f`'s value of field `j` of each row of `k` values in `values` to `out`; whether `f`
/// found every one valid.
///
/// Written for the bulk paths' inner loops: the flag stays in a register (a closure capturing
/// it for `Vec::extend`, which was not inlined, made it a read-modify-write of memory per
/// value: the enum family 20 % slower than two passes), and the rows and the reserved slots
/// are walked in step by index, with no per-value length update or bounds check.
#[inline(always)]
pub(crate) fn extend_checked<T>(
    out: &mut Vec<T>,
    values: &[i64],
    j: usize,
    k: usize,
    f: impl Fn(i64) -> (T, bool),
) -> bool {
    let rows = values.chunks_exact(k);
    out.reserve(rows.len());
    let mut valid = true;
    let mut written = 0;
    for (slot, row) in out.spare_capacity_mut().iter_mut().zip(rows) {
        let (x, ok) = f(row[j]);
        valid &= ok;
        slot.write(x);
        written += 1;
    }
    // SAFETY: the `written` slots after the length were each just initialized (`slot.write`),
    // and `reserve` made them part of the allocation.
    unsafe { out.set_len(out.len() + written) };
    valid
}

/// `v.reserve(n)` (at most [`MAX_RESERVE_BYTES`]), through the pool (recycled buffers) when
/// there is one: at the start of a batch, when the buffers are empty.
#[inline]
fn grow<T: Pooled>(v: &mut Vec<T>, n: usize, pool: Option<&BufferPool>) {
    let n = n.min(MAX_RESERVE_BYTES / std::mem::size_of::<T>().max(1));
    match pool {
        Some(pool) => pool.reserve(v, n),
        None => v.reserve(n),
    }
}

/// Room for `n` values of a variable-size column (string bytes, list items, map entries)
/// whose last batch held `mean` per value, rounded up: a sixteenth more than that (a mean
/// under 16 gets as much or more from its rounding). A batch's total varies around
/// `n × mean`, and one that needs more than its room doubles its buffer near the end: a copy
/// of everything so far into fresh memory, whose pages fault in (`bytes`: 5.5 → 4.3 ms a
/// 16 MB file, same instructions). Room reserved and not used is never touched.
fn room(n: usize, mean: usize) -> usize {
    n.saturating_mul(mean.saturating_add(mean / 16))
}

/// The mean size per value of the last batch, or when there was none (a decoder's first
/// batch), of the `count` values holding `total` so far.
fn mean_so_far(last: usize, total: usize, count: usize) -> usize {
    if last == 0 && count > 0 {
        total.div_ceil(count)
    } else {
        last
    }
}

/// Decode a value out of line from the fast path: `$decode` (with the [`Cursor`] `$c`) runs
/// unless the record already failed; its error just fails the record (it is found again by
/// [`StructCol::decode_slow`], or by an array block's value-by-value loop). A macro: the same
/// code as a function taking a closure compiled Wide's record loop 1.8 % longer.
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
            Column::Fixed(x) => x.push_sticky($f),
            Column::UuidString(x) => x.push_uuid_sticky($f),
            Column::Decimal(d) => d.decode_sticky($f),
            $other => $fallback,
        }
    };
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

#[cold]
fn offsets_overflow(at: usize) -> DecodeError {
    DecodeError::new(DecodeErrorKind::TooLarge(Limit::BatchValues), at)
}

// (Declared after the macros above, which are in scope only in the text that follows them.)
mod bytes;
mod decimal;
mod enums;
mod nested;
mod nullable;
mod record;
pub(crate) mod resolve;
mod scalar;
mod union;
mod uuid;

pub(crate) use bytes::{BytesCol, BytesKind, FixedCol};
pub(crate) use decimal::{DecimalCol, DecimalSource};
pub(crate) use enums::{EnumCol, EnumRemap};
pub(crate) use nested::{ListCol, MapCol};
pub(crate) use nullable::NullableCol;
pub(crate) use record::StructCol;
pub(crate) use scalar::Prim;
pub(crate) use union::UnionCol;
pub(crate) use uuid::parse_uuid;

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
                u.type_ids.push(branch as i8);
                u.children[branch].decode(c)?;
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

    /// The bytes a placeholder (a value under a null parent, [`Column::append_placeholder`])
    /// adds to this column's fixed-width Arrow buffers: a `fixed` its whole size, a record its
    /// fields', a union a type id, an offset and its first branch's.
    pub(crate) fn slot_size(&self) -> usize {
        match self {
            Column::Null(_) | Column::Boolean(_) | Column::Skip(_) | Column::TooDeep(_) => 0,
            Column::Int32(_) | Column::Float32(_) | Column::Enum(_) => 4,
            Column::Int64(_) | Column::Float64(_) => 8,
            Column::Bytes(b) => b.slot_size(),
            Column::List(_) | Column::Map(_) => 4,
            Column::Fixed(f) | Column::UuidString(f) => f.size,
            Column::Decimal(d) => d.value_size(),
            Column::Duration(_) => 16,
            Column::Struct(s) => s.columns.iter().map(Column::slot_size).sum(),
            Column::Nullable(n) => n.child.slot_size(),
            Column::Union(u) => 5 + u.children.first().map_or(0, Column::slot_size),
            Column::Default(d) => d.column.slot_size(),
            Column::Promoted(p) => p.column.slot_size(),
            Column::Resolved(r) => r.out.slot_size(),
        }
    }

    /// The most bytes one value can add to this column's fixed-width Arrow buffers beyond the
    /// bytes of input it takes. A null takes one byte of Avro and its value's whole slot (a
    /// 1 MiB `fixed` under `["null", fixed]`: a millionfold), a default takes none; a present
    /// `fixed` pays for its slot with its own bytes. This bounds the items of a list or map in
    /// one batch and the rows of a batch by memory, where the input's size does not.
    pub(crate) fn excess_size(&self) -> usize {
        match self {
            Column::Null(_) | Column::Boolean(_) | Column::Skip(_) | Column::TooDeep(_) => 0,
            Column::Fixed(_) | Column::UuidString(_) => 0,
            Column::Float32(_) | Column::Float64(_) => 0,
            // Four or eight bytes (an offset, a key) from a varint of one byte at least.
            Column::Int32(_) | Column::Enum(_) | Column::List(_) | Column::Map(_) => 3,
            Column::Int64(_) => 7,
            Column::Bytes(b) => b.slot_size() - 1,
            Column::Decimal(d) => d.value_size().saturating_sub(self.min_size()),
            Column::Duration(_) => 4,
            Column::Struct(s) => s.columns.iter().map(Column::excess_size).sum(),
            // A null: one byte, the child's placeholder; a value: one byte more than the child.
            Column::Nullable(n) => n.child.slot_size().max(n.child.excess_size()),
            // A type id and an offset from a branch index of one byte at least, then a branch.
            Column::Union(u) => {
                4 + u
                    .children
                    .iter()
                    .map(Column::excess_size)
                    .max()
                    .unwrap_or(0)
            }
            // No input at all: the value's whole slot (its items, a default list's, are
            // bounded by the list's own check).
            Column::Default(d) => d.column.slot_size(),
            Column::Promoted(p) => p.column.slot_size(),
            Column::Resolved(r) => r.out.slot_size().max(r.out.excess_size()),
        }
    }

    /// Keep only the first `len` values (and the child values they reference).
    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            Column::Null(n) => *n = (*n).min(len),
            Column::Boolean(b) => b.truncate(len),
            Column::Int32(p) => p.truncate(len),
            Column::Int64(p) => p.truncate(len),
            Column::Float32(p) => p.truncate(len),
            Column::Float64(p) => p.truncate(len),
            Column::Bytes(b) => b.truncate(len),
            Column::Fixed(f) | Column::UuidString(f) => {
                if len < f.len {
                    f.len = len;
                    f.data.truncate(len * f.size);
                }
            }
            Column::Enum(e) => e.keys.truncate(len),
            Column::Decimal(d) => d.truncate(len),
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
            Column::Union(u) => u.truncate(len),
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
                u.type_ids.push(0);
                u.children[0].append_placeholder();
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
    pub(crate) fn reserve(&mut self, n: usize, room: Room<'_>) {
        let pool = room.pool;
        match self {
            Column::Boolean(b) => b.reserve(n),
            Column::Int32(p) => grow(&mut p.values, n, pool),
            Column::Int64(p) => grow(&mut p.values, n, pool),
            Column::Float32(p) => grow(&mut p.values, n, pool),
            Column::Float64(p) => grow(&mut p.values, n, pool),
            Column::Bytes(b) => b.reserve(n, room),
            Column::Fixed(f) | Column::UuidString(f) => grow(
                &mut f.data,
                n.saturating_mul(f.size).saturating_add(bytes::CHUNK),
                pool,
            ),
            Column::Enum(e) => grow(&mut e.keys, n, pool),
            Column::List(l) => {
                let items = l.offsets.last().map_or(0, |&o| o as usize);
                let mean = room.mean(l.mean_items, items, l.offsets.len().saturating_sub(1));
                grow(&mut l.offsets, n, pool);
                l.child.reserve(self::room(n, mean), room);
            }
            Column::Map(m) => {
                let items = m.offsets.last().map_or(0, |&o| o as usize);
                let mean = room.mean(m.mean_entries, items, m.offsets.len().saturating_sub(1));
                grow(&mut m.offsets, n, pool);
                let entries = self::room(n, mean);
                m.keys.reserve(entries, room);
                m.values.reserve(entries, room);
            }
            Column::Struct(s) => s.reserve(n, room),
            Column::Nullable(c) => {
                c.validity.reserve(n);
                c.child.reserve(n, room);
            }
            Column::Default(d) => d.column.reserve(n, room),
            Column::Promoted(p) => p.column.reserve(n, room),
            Column::Resolved(r) => r.out.reserve(n, room),
            Column::Decimal(d) => d.reserve(n, pool),
            Column::Union(u) => u.reserve(n, room),
            Column::Duration(v) => grow(v, n, pool),
            _ => {}
        }
    }

    /// Validate the values appended since the last call that the decoding loops leave
    /// unchecked: strings' UTF-8, decimals' precision and times of day within a day.
    pub(crate) fn validate_values(&mut self) -> Result<(), DecodeError> {
        let utf8 = |b: &mut BytesCol| b.validate_utf8().map_err(|k| DecodeError::new(k, 0));
        match self {
            Column::Bytes(b) => utf8(b),
            Column::Int32(p) => p.validate_time().map_err(|k| DecodeError::new(k, 0)),
            Column::Int64(p) => p.validate_time().map_err(|k| DecodeError::new(k, 0)),
            Column::List(l) => l.child.validate_values(),
            Column::Map(m) => {
                utf8(&mut m.keys)?;
                m.values.validate_values()
            }
            Column::Struct(s) => s.validate_values(),
            Column::Nullable(n) => n.child.validate_values(),
            Column::Union(u) => u.children.iter_mut().try_for_each(Column::validate_values),
            Column::Default(d) => d.column.validate_values(),
            Column::Resolved(r) => r.out.validate_values(),
            // (A time read in another unit, `time-millis` as `time-micros`, among others.)
            Column::Promoted(p) => p.column.validate_values(),
            Column::Decimal(d) => d.validate_precision().map_err(|k| DecodeError::new(k, 0)),
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
            let values = p.take();
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
            Column::Enum(e) => e.finish(nulls, pool),
            Column::Decimal(d) => d.finish(nulls, pool),
            Column::Duration(v) => Arc::new(IntervalMonthDayNanoArray::new(
                pool.scalar(std::mem::take(v)),
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
                let children = u
                    .children
                    .iter_mut()
                    .map(|c| c.finish(None, pool))
                    .collect();
                u.assemble(children, pool)
            }
            Column::Skip(_) => unreachable!("skipped columns are never finished"),
            Column::TooDeep(t) => Arc::new(NullArray::new(std::mem::take(&mut t.len))),
            Column::Default(d) => d.column.finish(nulls, pool),
            Column::Promoted(p) => p.column.finish(nulls, pool),
            Column::Resolved(r) => r.out.finish(nulls, pool),
        }
    }
}
