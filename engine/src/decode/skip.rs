//! Skipping projected-away values without decoding them: strings by length, fixed-size values
//! by size, varints by their last bytes (runs of them, arrays of longs included, eight or
//! sixteen bytes at a time), nullable flat values with no branch on null (`Skip::NullOr*`),
//! arrays and maps by their block byte size when the writer recorded one.
//!
//! [`Skip::skip`] is the reference, with [`Cursor`]'s errors; [`Skip::skip_sticky`] is the fast
//! path, on a [`Sticky`] cursor (the record loops run it through
//! [`Skip::skip_column_sticky`], which steps through a run of skipped fields' parts in the
//! loop itself): it accepts exactly what the reference accepts and ends at the same position,
//! and when it fails the record is read again with the reference, which names the error.

use super::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::skip::{skip_n, skip_one};
use crate::varint::word::HIGH;
use crate::varint::Kernel;
use std::sync::Arc;

/// How to skip one value of some type.
#[derive(Debug, Clone)]
pub(crate) enum Skip {
    /// A fixed number of bytes (null: 0, boolean: 1, float: 4, double: 8, fixed(n): n).
    Bytes(usize),
    /// One varint (int, long, enum).
    Varint,
    /// This many (two or more) consecutive varints: adjacent varint fields of a record.
    Varints(usize),
    /// A length-prefixed byte string (bytes, string).
    Sized,
    /// An array of items.
    Array(Box<Skip>),
    /// A map of string keys to values.
    Map(Box<Skip>),
    /// The fields of a record in order (consecutive fixed sizes merged).
    Record(Vec<Skip>),
    /// One of the branches, selected by a varint.
    Union(Vec<Skip>),
    /// A union of `null` and a varint (`["null", "long"]`, or the other way round): the
    /// branch index of `null`. The commonest unions, nullable fields, have variants of their
    /// own ([`Skip::union`]), stepped over with no branch on whether the value is null.
    NullOrVarint(u8),
    /// A union of `null` and a string or bytes; the branch index of `null`.
    NullOrSized(u8),
    /// A union of `null` and this many bytes (more than none: a double, a fixed); the branch
    /// index of `null`.
    NullOrBytes(u8, usize),
    /// A recursive type cut at the configured depth.
    TooDeep(Arc<str>, usize),
    /// Consecutive fields of a record that are all skipped, as one column of the record: each
    /// field's name and skip (the reference path, whose errors name the field), and all of
    /// them as one [`Skip::record`] (the fast path, whose parts the record loop steps through).
    Fields(Vec<(Arc<str>, Skip)>, Box<Skip>),
    // The variants below appear only in the tree of a whole writer record built for checking
    // a block as it streams (`decode/stream.rs`), which also checks the values' validity;
    // skipping treats them as the plain variants above.
    /// A string (its UTF-8 is checked by the streaming check).
    Str,
    /// An `int` (checked to fit 32 bits).
    Int,
    /// A boolean (a byte 0 or 1).
    Boolean,
    /// An enum index below this many symbols.
    Enum(usize),
}

impl Skip {
    /// Merge adjacent fixed-size parts of a record.
    pub(crate) fn record(parts: Vec<Skip>) -> Skip {
        let mut out: Vec<Skip> = Vec::with_capacity(parts.len());
        for p in parts {
            match (out.last_mut(), p) {
                (_, Skip::Bytes(0)) => {}
                (Some(Skip::Bytes(a)), Skip::Bytes(b)) => *a += b,
                (
                    Some(last @ (Skip::Varint | Skip::Varints(_))),
                    p @ (Skip::Varint | Skip::Varints(_)),
                ) => {
                    *last = Skip::Varints(last.varints() + p.varints());
                }
                (_, Skip::Record(inner)) => out.extend(inner),
                (_, p) => out.push(p),
            }
        }
        match out.len() {
            0 => Skip::Bytes(0),
            1 => out.pop().expect("one element"),
            _ => Skip::Record(out),
        }
    }

    /// How to skip a union of these branches: a nullable flat value as one of the `NullOr`
    /// variants, anything else as [`Skip::Union`].
    pub(crate) fn union(branches: Vec<Skip>) -> Skip {
        let nullable = |null: u8, value: &Skip| match *value {
            Skip::Varint => Some(Skip::NullOrVarint(null)),
            Skip::Sized => Some(Skip::NullOrSized(null)),
            Skip::Bytes(n) if n > 0 => Some(Skip::NullOrBytes(null, n)),
            _ => None,
        };
        let merged = match branches.as_slice() {
            [Skip::Bytes(0), value] => nullable(0, value),
            [value, Skip::Bytes(0)] => nullable(1, value),
            _ => None,
        };
        merged.unwrap_or(Skip::Union(branches))
    }

    /// The skipped field `name` after this skipped field (`first` its name) of a record: both
    /// as one [`Skip::Fields`].
    pub(crate) fn then_field(self, first: &Arc<str>, name: Arc<str>, next: Skip) -> Skip {
        let mut fields = match self {
            Skip::Fields(fields, _) => fields,
            one => vec![(first.clone(), one)],
        };
        fields.push((name, next));
        let merged = Skip::record(fields.iter().map(|(_, s)| s.clone()).collect());
        Skip::Fields(fields, Box::new(merged))
    }

    /// The varints of a [`Skip::Varint`] or [`Skip::Varints`] (0 for anything else).
    fn varints(&self) -> usize {
        match self {
            Skip::Varint => 1,
            Skip::Varints(k) => *k,
            _ => 0,
        }
    }

    pub(crate) fn min_size(&self) -> usize {
        match self {
            Skip::Bytes(n) | Skip::Varints(n) => *n,
            Skip::Record(parts) => parts.iter().map(Skip::min_size).sum(),
            Skip::Fields(_, merged) => merged.min_size(),
            Skip::Varint
            | Skip::Sized
            | Skip::Str
            | Skip::Int
            | Skip::Boolean
            | Skip::Enum(_)
            | Skip::Array(_)
            | Skip::Map(_)
            | Skip::Union(_)
            | Skip::NullOrVarint(_)
            | Skip::NullOrSized(_)
            | Skip::NullOrBytes(..)
            | Skip::TooDeep(..) => 1,
        }
    }

    pub(crate) fn skip<K: Kernel>(&self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        match self {
            Skip::Bytes(n) => c.take(*n).map(drop),
            Skip::Boolean => c.take(1).map(drop),
            Skip::Varint | Skip::Int | Skip::Enum(_) => c.long().map(drop),
            Skip::Varints(k) => (0..*k).try_for_each(|_| c.long().map(drop)),
            Skip::Sized | Skip::Str => c.bytes().map(drop),
            Skip::Array(item) => skip_blocks(c, item.min_size(), |c| item.skip(c)),
            Skip::Map(value) => skip_blocks(c, 1 + value.min_size(), |c| {
                c.bytes()?;
                value.skip(c)
            }),
            Skip::Record(parts) => parts.iter().try_for_each(|p| p.skip(c)),
            Skip::Fields(fields, _) => fields
                .iter()
                .try_for_each(|(name, p)| p.skip(c).map_err(|e| e.in_field(name))),
            Skip::Union(branches) => {
                let b = c.branch(branches.len())?;
                branches[b].skip(c)
            }
            Skip::NullOrVarint(null) | Skip::NullOrSized(null) | Skip::NullOrBytes(null, _) => {
                if c.branch(2)? == usize::from(*null) {
                    return Ok(());
                }
                match self {
                    Skip::NullOrVarint(_) => c.long().map(drop),
                    Skip::NullOrSized(_) => c.bytes().map(drop),
                    Skip::NullOrBytes(_, n) => c.take(*n).map(drop),
                    _ => unreachable!("a nullable skip"),
                }
            }
            Skip::TooDeep(name, depth) => Err(DecodeError::new(
                DecodeErrorKind::RecursionLimit {
                    type_name: name.to_string(),
                    depth: *depth,
                },
                c.pos,
            )),
        }
    }
}

impl Skip {
    /// [`Skip::skip`] on the record fast path: no `Result` per value, bulk steps over runs of
    /// varints and fixed-size items. On failure `f` is marked failed (see [`Sticky`]).
    #[inline]
    pub(crate) fn skip_sticky<K: Kernel>(&self, f: &mut Sticky<'_, K>) {
        match self {
            Skip::Bytes(n) => {
                f.take(*n);
            }
            Skip::Boolean => {
                f.take(1);
            }
            Skip::Varint | Skip::Int | Skip::Enum(_) => {
                if !skip_one(f.buf, &mut f.pos) {
                    f.fail();
                }
            }
            Skip::Varints(k) => varints_sticky(f, *k as u64),
            Skip::Sized | Skip::Str => {
                f.len_prefix();
            }
            Skip::NullOrVarint(null) => null_or_varint(f, *null),
            Skip::NullOrSized(null) => null_or_sized(f, *null),
            Skip::NullOrBytes(null, n) => null_or_bytes(f, *null, *n),
            Skip::Array(item) => blocks_sticky(f, item, false),
            Skip::Map(value) => blocks_sticky(f, value, true),
            Skip::Record(parts) => {
                for p in parts {
                    p.skip_part_sticky(f);
                }
            }
            Skip::Fields(_, merged) => merged.skip_sticky(f),
            Skip::Union(branches) => {
                let b = f.branch_index();
                match usize::try_from(b).ok().and_then(|b| branches.get(b)) {
                    Some(branch) => branch.skip_sticky(f),
                    None => f.fail(),
                }
            }
            Skip::TooDeep(..) => f.fail(),
        }
    }
}

impl Skip {
    /// [`Skip::skip_sticky`] of a skipped column of a record, in the record's own loop: a run
    /// of skipped fields ([`Skip::Fields`]) steps through its merged parts right here, where
    /// it cost a call and a dispatch for the run, then a second call and dispatch for its
    /// merged record, before the parts.
    #[inline(always)]
    pub(crate) fn skip_column_sticky<K: Kernel>(&self, f: &mut Sticky<'_, K>) {
        let merged = match self {
            Skip::Fields(_, merged) => &**merged,
            one => one,
        };
        let parts = match merged {
            Skip::Record(parts) => parts.as_slice(),
            one => std::slice::from_ref(one),
        };
        for p in parts {
            p.skip_part_sticky(f);
        }
    }

    /// [`Skip::skip_sticky`] of a record's part: the flat kinds (nullable ones included)
    /// inline in the record's loop, and so are a general union's flat branch (no call and no
    /// second dispatch per value) and an array of fixed-size items; the others through a call.
    #[inline(always)]
    fn skip_part_sticky<K: Kernel>(&self, f: &mut Sticky<'_, K>) {
        if self.skip_flat_sticky(f) {
            return;
        }
        match self {
            Skip::Varints(k) => varints_sticky(f, *k as u64),
            Skip::Union(branches) => {
                let b = f.branch_index();
                match usize::try_from(b).ok().and_then(|b| branches.get(b)) {
                    Some(branch) => {
                        if !branch.skip_flat_sticky(f) {
                            branch.skip_sticky(f);
                        }
                    }
                    None => f.fail(),
                }
            }
            Skip::Array(item) => match **item {
                Skip::Bytes(size) if size > 0 => fixed_items_sticky(f, size),
                _ => blocks_sticky(f, item, false),
            },
            other => other.skip_sticky(f),
        }
    }

    /// One value of a flat kind (fixed size, varint, string, or one of them or null) stepped
    /// over inline; `false`, with nothing read, for the other kinds.
    #[inline(always)]
    fn skip_flat_sticky<K: Kernel>(&self, f: &mut Sticky<'_, K>) -> bool {
        match self {
            Skip::Bytes(n) => {
                f.take(*n);
            }
            Skip::Varint => {
                if !skip_one(f.buf, &mut f.pos) {
                    f.fail();
                }
            }
            Skip::Sized => {
                f.len_prefix();
            }
            Skip::NullOrVarint(null) => null_or_varint(f, *null),
            Skip::NullOrSized(null) => null_or_sized(f, *null),
            Skip::NullOrBytes(null, n) => null_or_bytes(f, *null, *n),
            _ => return false,
        }
        true
    }
}

/// A nullable value (`null` the branch index `null`, the other branch a value of
/// `value(next, at)` bytes, where `next` are the 8 bytes at `at`, its start) on the fast path.
/// Nulls come at random in real data, so a branch on them mispredicts: the value's size is
/// computed from the bytes after the index whether or not it is there (`value` returns it
/// and whether it is valid there), and the position moves past it only if it is.
/// The rest (the last 16 bytes of the data, an index or a length of more than one or two
/// bytes, an invalid value) goes the reference's way, value by value.
#[inline(always)]
fn null_or_sticky<K: Kernel>(
    f: &mut Sticky<'_, K>,
    null: u8,
    value: impl FnOnce(u64, usize) -> (usize, bool),
    slow: impl FnOnce(&mut Sticky<'_, K>),
) {
    let p = f.pos;
    if let Some(chunk) = f.buf.get(p..).and_then(|rest| rest.first_chunk::<16>()) {
        // Branch indexes 0 and 1 are the bytes 0 and 2: both tested at once (as separate
        // tests, the compiler branched on the null one).
        let index = chunk[0];
        let index_ok = index & !2 == 0;
        let present = index == (1 - null) << 1;
        let next = u64::from_le_bytes(*chunk[1..].first_chunk().expect("8 bytes"));
        let (size, valid) = value(next, p + 1);
        if index_ok & !(present & !valid) {
            f.pos = p + 1 + (size & usize::from(present).wrapping_neg());
            return;
        }
    }
    let index = f.branch_index();
    if index == i64::from(null) {
        return;
    }
    if index != i64::from(1 - null) {
        f.fail();
        return;
    }
    slow(f);
}

/// `["null", varint]` ([`null_or_sticky`]): a varint that ends in the next 8 bytes.
#[inline(always)]
fn null_or_varint<K: Kernel>(f: &mut Sticky<'_, K>, null: u8) {
    null_or_sticky(
        f,
        null,
        |next, _| {
            let ends = !next & HIGH;
            ((ends.trailing_zeros() / 8) as usize + 1, ends != 0)
        },
        |f| {
            if !skip_one(f.buf, &mut f.pos) {
                f.fail();
            }
        },
    );
}

/// `["null", string]` ([`null_or_sticky`]): a length of one or two bytes, and that many bytes
/// within the data.
#[inline(always)]
fn null_or_sized<K: Kernel>(f: &mut Sticky<'_, K>, null: u8) {
    let len = f.buf.len();
    null_or_sticky(
        f,
        null,
        |next, at| {
            let one = next & 0x7f;
            let two = one | (next >> 1 & 0x3f80);
            let short = next & 0x80 == 0;
            let zigzag = if short { one } else { two };
            let n = (zigzag >> 1) as usize;
            let digits = if short { 1 } else { 2 };
            // Two bytes at most, not negative, within the data.
            let valid = (short | (next & 0x8000 == 0))
                & (zigzag & 1 == 0)
                & (n <= len.saturating_sub(at + digits));
            (digits + n, valid)
        },
        |f| {
            f.len_prefix();
        },
    );
}

/// `["null", fixed]`, `["null", double]` ([`null_or_sticky`]): `n` bytes within the data.
#[inline(always)]
fn null_or_bytes<K: Kernel>(f: &mut Sticky<'_, K>, null: u8, n: usize) {
    let len = f.buf.len();
    null_or_sticky(
        f,
        null,
        |_, at| (n, n <= len - at),
        |f| {
            f.take(n);
        },
    );
}

/// The blocks of an array of items of `size` (> 0) bytes each, a block in one step: inline in
/// a record's loop, and [`blocks_sticky`]'s path for such items.
#[inline(always)]
fn fixed_items_sticky<K: Kernel>(f: &mut Sticky<'_, K>, size: usize) {
    while !f.failed() {
        let count = f.long();
        if count == 0 {
            return;
        }
        let bytes = if count < 0 {
            let bytes = f.long();
            if bytes < 0 {
                f.fail();
                return;
            }
            bytes as u64
        } else {
            match (count as u64).checked_mul(size as u64) {
                Some(total) if total <= (f.buf.len() - f.pos) as u64 => total,
                _ => {
                    f.fail();
                    return;
                }
            }
        };
        // `take` fails if it is past the end.
        f.take(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
}

#[inline]
fn varints_sticky<K: Kernel>(f: &mut Sticky<'_, K>, n: u64) {
    // Even for two or three (a record's adjacent fields): counting the ends in a word beats
    // stepping from one varint to the next (ledger-like records: 26 vs 19 ms).
    if !skip_n(f.buf, &mut f.pos, n) {
        f.fail();
    }
}

/// The blocks of an array (`map`: of a map, each item a key then `item`) on the fast path:
/// blocks with a byte size in one step, items of varints or of a fixed size in bulk, strings
/// in a loop of their own.
///
/// Items that take a byte at least cannot number more than the bytes left (the reference
/// refuses such a count up front, by the items' least size; both refuse it); items of no bytes
/// are not looked at.
fn blocks_sticky<K: Kernel>(f: &mut Sticky<'_, K>, item: &Skip, map: bool) {
    if let (false, &Skip::Bytes(size)) = (map, item) {
        if size > 0 {
            return fixed_items_sticky(f, size);
        }
    }
    while !f.failed() {
        let count = f.long();
        if count == 0 {
            return;
        }
        if count < 0 {
            let size = f.long();
            if size < 0 {
                f.fail();
                return;
            }
            // `take` fails if it is past the end.
            f.take(usize::try_from(size).unwrap_or(usize::MAX));
            continue;
        }
        let n = count as u64;
        let left = (f.buf.len() - f.pos) as u64;
        match (map, item) {
            (false, Skip::Bytes(0)) => {}
            (false, Skip::Varint | Skip::Varints(_)) => {
                let k = item.varints() as u64;
                // Each varint takes a byte at least: more than the bytes left cannot fit (and
                // the product cannot overflow once `n <= left`).
                if n > left {
                    f.fail();
                    return;
                }
                varints_sticky(f, n * k);
            }
            (false, Skip::Sized | Skip::Str) => {
                for _ in 0..n {
                    f.len_prefix();
                    if f.failed() {
                        return;
                    }
                }
            }
            (true, Skip::Sized | Skip::Str) => {
                for _ in 0..n {
                    f.len_prefix();
                    f.len_prefix();
                    if f.failed() {
                        return;
                    }
                }
            }
            _ => {
                if n > left {
                    if item.min_size() == 0 && !map {
                        continue;
                    }
                    f.fail();
                    return;
                }
                for _ in 0..n {
                    if map {
                        f.len_prefix();
                    }
                    item.skip_sticky(f);
                    if f.failed() {
                        return;
                    }
                }
            }
        }
    }
}

fn skip_blocks<K: Kernel>(
    c: &mut Cursor<'_, K>,
    min_item_size: usize,
    mut item: impl FnMut(&mut Cursor<'_, K>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    while let Some((n, size)) = c.block_count_and_size()? {
        if let Some(size) = size {
            c.take(size)?;
            continue;
        }
        if min_item_size == 0 {
            // Items of zero bytes: nothing to skip, however many there are.
            continue;
        }
        if n > (c.remaining() / min_item_size) as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::TooLarge(Limit::Items {
                    count: n,
                    min_item_size,
                    left: c.remaining(),
                }),
                c.pos,
            ));
        }
        for _ in 0..n {
            item(c)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
