//! Nested columns: lists and maps (an array block's numbers decoded in bulk, other items and
//! map entries on the fast path with one failure check per block; arrays of numbers, strings
//! or bytes and maps inside another fast path on its cursor). Nullable values are
//! [`super::nullable`]'s, general unions [`super::union`]'s.

use super::scalar::extend_le;
use super::{nested_sticky, offsets_overflow, BytesCol, BytesKind, Column};
use crate::decode::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::{BulkHint, Kernel};
use arrow_schema::FieldRef;

#[derive(Debug, Clone)]
pub(crate) struct ListCol {
    /// Starts with a leading 0.
    pub(super) offsets: Vec<i32>,
    pub(crate) child: Column,
    pub(super) field: FieldRef,
    min_item_size: usize,
    /// [`Column::excess_size`] of an item: the batch's items are bounded by the memory they
    /// take beyond their input, not only by their count.
    item_excess: usize,
    /// What bulk varint decoding of this column's items learned from earlier arrays.
    hint: BulkHint,
    /// Mean items per list in the last finished batch (to reserve the items up front).
    pub(super) mean_items: usize,
}

impl ListCol {
    /// Decode one array: its blocks of items, then its end offset.
    ///
    /// Out of line, but the record loops call it directly rather than through
    /// [`Column::decode_nested`], whose prologue and dispatch serve every type (with
    /// [`Column::decode_many`] inlined: Telemetry's 16-double arrays 162.9M -> 153.6M
    /// instructions for a 40 MB file).
    #[inline(never)]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        while let Some(n) = c.block_count(self.min_item_size)? {
            // Items before this array block, for the position in an error.
            let before = total - first;
            total += n;
            if total > i32::MAX as usize || too_much_excess(total, self.item_excess) {
                return Err(items_overflow(total - first, self.item_excess, c.pos));
            }
            // (The child holds `total - n` items: those of the lists before and this list's
            // earlier blocks.)
            self.child
                .decode_many(c, n, total - n, self.min_item_size, &mut self.hint)
                .map_err(|(i, e)| e.at_index((before + i) as u64))?;
        }
        self.offsets.push(total as i32);
        Ok(())
    }

    /// Whether [`ListCol::flat_sticky`] reads this column's arrays: items that are numbers
    /// (`long`, `int`, `double`, `float`), strings or bytes.
    #[inline(always)]
    pub(super) fn flat_items(&self) -> bool {
        matches!(
            self.child,
            Column::Int64(_)
                | Column::Int32(_)
                | Column::Float64(_)
                | Column::Float32(_)
                | Column::Bytes(_)
        )
    }

    /// A map block's `n` entries whose values are this column's arrays of
    /// [`ListCol::flat_items`] (tags, scores by key): keys and arrays read directly, with no
    /// `Column::reserve` or dispatch per block (each array reserves its items). Out of line,
    /// so that the map's loops for other values keep their code.
    #[inline(never)]
    fn map_values_sticky<K: Kernel>(
        &mut self,
        keys: &mut BytesCol,
        f: &mut Sticky<'_, K>,
        n: usize,
    ) {
        #[cfg(test)]
        crate::decode::probe::add(&crate::decode::probe::MAP_ARRAY_BLOCKS, 1);
        super::grow(&mut self.offsets, n, None);
        (0..n).for_each(|_| {
            keys.push_sticky(f);
            self.flat_sticky(f);
        })
    }

    /// [`ListCol::decode`] on an enclosing fast path's cursor (a record's field, a nullable's
    /// value, an array's item or a map's value), for the arrays of [`ListCol::flat_items`]:
    /// no cursor hand-over, `Result` or dispatch per array, whose fixed cost is most of a short
    /// array's. Out of line (see [`ListCol::numbers_sticky`]).
    #[inline(never)]
    pub(super) fn flat_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        debug_assert!(self.flat_items());
        self.flat_blocks::<K, true>(f);
    }

    /// An array in a record's field or a nullable's value, on the record loop's cursor:
    /// numbers inline ([`ListCol::numbers_sticky`]), strings and bytes out of line
    /// ([`ListCol::flat_sticky`]), records out of line ([`ListCol::records_sticky`]), other
    /// items through [`ListCol::decode`].
    #[inline(always)]
    pub(super) fn field_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>, c: &mut Cursor<'_, K>) {
        if !self.numbers_sticky(f) {
            if self.flat_items() {
                self.flat_sticky(f)
            } else if self.record_items() {
                self.records_sticky(f, c)
            } else {
                call_sticky!(f, c, self.decode(c))
            }
        }
    }

    /// Whether [`ListCol::records_sticky`] reads this column's arrays: items that are records
    /// of at least one byte (records of no bytes go through [`ListCol::decode`], which
    /// appends a block of them at once).
    #[inline(always)]
    pub(super) fn record_items(&self) -> bool {
        matches!(self.child, Column::Struct(_)) && self.min_item_size > 0
    }

    /// [`ListCol::decode`] on an enclosing fast path's cursor for arrays of records (order
    /// lines, events, key-value pairs): each block's items read by the record's fields loop
    /// ([`StructCol::fields_sticky_inline`](super::StructCol)) on the same cursor (a block of
    /// records that [`StructCol::decode_n`](super::StructCol) reads in bulk, through it), with no
    /// cursor, `Result` or dispatch per array or block and no failure check per item. A block
    /// that does not decode or passes a limit fails the enclosing record or block (after
    /// appending what it may, at most what its bytes hold), which truncates this column and
    /// decodes again value by value, naming the item.
    #[inline(never)]
    pub(super) fn records_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        let Column::Struct(s) = &mut self.child else {
            unreachable!("`record_items`: a record")
        };
        debug_assert!(self.min_item_size > 0);
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        while !f.failed() {
            let n = block_items(f, self.min_item_size, self.item_excess, &mut total);
            if n == 0 {
                break;
            }
            if s.bulk_rows(n) {
                // Points, pairs, fixed-size measurements: the bulk record paths.
                call_sticky!(f, c, s.decode_n(c, n));
            } else {
                for _ in 0..n {
                    s.fields_sticky_inline::<K, false>(f, c);
                }
            }
        }
        self.offsets.push(total as i32);
    }

    /// [`ListCol::flat_sticky`] inline, for arrays of numbers only (`false`, with nothing
    /// read, for others): the record loop's and a nullable's arrays of numbers, whose short
    /// arrays (Telemetry's 16 doubles) the call still cost ~9 %. The string loop is left out
    /// of line: inlined into the record loop too, its code cost WideRecord, which has no
    /// arrays, 5 % more instructions (registers spilled around every field); this costs it
    /// ~1 %.
    #[inline(always)]
    pub(super) fn numbers_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) -> bool {
        if !matches!(
            self.child,
            Column::Int64(_) | Column::Int32(_) | Column::Float64(_) | Column::Float32(_)
        ) {
            return false;
        }
        self.flat_blocks::<K, false>(f);
        true
    }

    /// The blocks of one array of [`ListCol::flat_items`] (numbers only unless `STRINGS`). A
    /// block that does not decode or passes a limit fails the enclosing record or block (after
    /// appending what it may), which truncates this column and decodes again value by value,
    /// naming the error.
    #[inline(always)]
    fn flat_blocks<K: Kernel, const STRINGS: bool>(&mut self, f: &mut Sticky<'_, K>) {
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        // (The block header of `block_items` written out: through it, arrays of longs took
        // 2 % more instructions, Telemetry's arrays of doubles 1 %.)
        loop {
            let count = f.long();
            if count == 0 {
                break;
            }
            let mut left = f.buf.len() - f.pos;
            if count < 0 {
                // A block with its size in bytes.
                let size = f.long();
                left = f.buf.len() - f.pos;
                if size as u64 > left as u64 {
                    f.fail();
                    break;
                }
            }
            let n = count.unsigned_abs();
            // (`min_item_size` is at least 1 for numbers: this also bounds `n`.)
            if n.checked_mul(self.min_item_size as u64)
                .is_none_or(|need| need > left as u64)
            {
                f.fail();
                break;
            }
            let n = n as usize;
            total += n;
            if total > i32::MAX as usize || too_much_excess(total, self.item_excess) {
                f.fail();
                break;
            }
            let read = match &mut self.child {
                // Blocks of fewer than `SHORT_BLOCK` varints inline: from one bitmap of
                // their terminators where they end in the next 64 bytes, else one by one (a
                // failed read fails the cursor). The bulk decoder's call, frame and
                // `vzeroupper` cost more than the reads of a short array. (Blocks of 16 to 32
                // varints tried on the bitmap too measured the same as in bulk.)
                Column::Int64(p) if n < SHORT_BLOCK => {
                    if !f.k.read_longs_short(f.buf, &mut f.pos, n, &mut p.values) {
                        p.values.reserve(n);
                        for _ in 0..n {
                            let v = f.long();
                            p.values.push(v);
                        }
                    }
                    true
                }
                Column::Int32(p) if n < SHORT_BLOCK => {
                    if !f.k.read_ints_short(f.buf, &mut f.pos, n, &mut p.values) {
                        p.values.reserve(n);
                        for _ in 0..n {
                            let v = f.int();
                            p.values.push(v);
                        }
                    }
                    true
                }
                Column::Int64(p) => {
                    f.k.read_longs_hinted(f.buf, &mut f.pos, n, &mut p.values, &mut self.hint)
                        .is_ok()
                }
                Column::Int32(p) => {
                    f.k.read_ints_hinted(f.buf, &mut f.pos, n, &mut p.values, &mut self.hint)
                        .is_ok()
                }
                // (`n * size <= left`: checked above.)
                Column::Float64(p) => {
                    extend_le(&mut p.values, f.buf, f.pos, n);
                    f.pos += n * 8;
                    true
                }
                Column::Float32(p) => {
                    extend_le(&mut p.values, f.buf, f.pos, n);
                    f.pos += n * 4;
                    true
                }
                // (A failed item fails the cursor: the rest of the block reads nothing.)
                Column::Bytes(b) if STRINGS => {
                    b.offsets.reserve(n);
                    (0..n).for_each(|_| b.push_sticky(f));
                    true
                }
                _ => unreachable!("`flat_items`: a number, string or bytes"),
            };
            if !read {
                f.fail();
                break;
            }
        }
        self.offsets.push(total as i32);
    }

    pub(crate) fn new(child: Column, field: FieldRef) -> Self {
        let min_item_size = child.min_size();
        ListCol {
            offsets: vec![0],
            item_excess: child.excess_size(),
            child,
            field,
            min_item_size,
            hint: BulkHint::default(),
            mean_items: 0,
        }
    }
}

/// Array blocks of fewer varints than this are read on the enclosing cursor
/// ([`ListCol::flat_sticky`]): from one bitmap of their terminators
/// ([`Kernel::read_longs_short`]) or value by value; longer ones by the kernel's bulk decoder,
/// whose block and step loops start at 16 values.
const SHORT_BLOCK: usize = 16;
// (Blocks the short path could not read would all go value by value.)
const _: () = assert!(SHORT_BLOCK <= crate::varint::SHORT_BLOCK_MAX);

/// The error for a batch's items past Arrow's limit for one column, found when an array or map
/// that has `own` items so far (the block that passed the limit included), each taking up to
/// `excess` bytes beyond its input, is decoded: [`Limit::ItemOffsets`] when its own items are
/// more than 32-bit offsets address, [`Limit::ItemValues`] when their excess alone passes the
/// limit (no batch size helps), else [`Limit::BatchValues`] (the lists before it in the batch
/// count too; when those are siblings in the same row, inside an enclosing list, a smaller
/// batch does not help either, which that error's message allows for).
#[cold]
fn items_overflow(own: usize, excess: usize, at: usize) -> DecodeError {
    let limit = if own > i32::MAX as usize {
        Limit::ItemOffsets { count: own as u64 }
    } else if too_much_excess(own, excess) {
        Limit::ItemValues { count: own as u64 }
    } else {
        return offsets_overflow(at);
    };
    DecodeError::new(DecodeErrorKind::TooLarge(limit), at)
}

/// The next block header of an array or a map on a fast path: its item count, which the
/// bytes left hold at `min_size` (at least 1) each and which keeps the column's `total`
/// items (grown by it) within [`i32::MAX`] and [`too_much_excess`]; 0 at the end of the array,
/// or with the cursor failed when the header lies or passes a limit.
#[inline(always)]
fn block_items<K: Kernel>(
    f: &mut Sticky<'_, K>,
    min_size: usize,
    excess: usize,
    total: &mut usize,
) -> usize {
    let count = f.long();
    if count == 0 {
        return 0;
    }
    let mut left = f.buf.len() - f.pos;
    if count < 0 {
        // A block with its size in bytes.
        let size = f.long();
        left = f.buf.len() - f.pos;
        if size as u64 > left as u64 {
            f.fail();
            return 0;
        }
    }
    let n = count.unsigned_abs();
    if n.checked_mul(min_size as u64)
        .is_none_or(|need| need > left as u64)
    {
        f.fail();
        return 0;
    }
    let n = n as usize;
    *total += n;
    if *total > i32::MAX as usize || too_much_excess(*total, excess) {
        f.fail();
        return 0;
    }
    n
}

/// Whether `items` values that each take up to `excess` bytes beyond their input could pass
/// 2 GiB in a batch, the limit for one column ([`Limit::BatchValues`], [`Limit::ItemValues`]):
/// checked before a block's items are decoded, so that a block of nulls of a large `fixed`
/// fails before it allocates.
#[inline(always)]
fn too_much_excess(items: usize, excess: usize) -> bool {
    items.saturating_mul(excess) > i32::MAX as usize
}

#[derive(Debug, Clone)]
pub(crate) struct MapCol {
    pub(super) offsets: Vec<i32>,
    pub(super) keys: BytesCol,
    pub(crate) values: Column,
    pub(super) entries: FieldRef,
    min_entry_size: usize,
    /// [`Column::excess_size`] of an entry (its key's offset and its value).
    entry_excess: usize,
    /// Mean entries per map in the last finished batch (to reserve the entries up front).
    pub(super) mean_entries: usize,
}

impl MapCol {
    /// Decode one map: its blocks of entries, then its end offset. The fast paths read maps
    /// with [`MapCol::decode_sticky`]; this is where they fall back to, value by value.
    #[inline(never)]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        while let Some(n) = c.block_count(self.min_entry_size)? {
            let before = total - first;
            total += n;
            if total > i32::MAX as usize || too_much_excess(total, self.entry_excess) {
                return Err(items_overflow(total - first, self.entry_excess, c.pos));
            }
            self.keys.offsets.reserve(n);
            self.values.reserve(n, super::Room::PLAIN);
            if !c.check_utf8 && self.entries_sticky(c, n, total - n) {
                continue;
            }
            for i in 0..n {
                let entry = |e: DecodeError| e.at_index((before + i) as u64);
                self.keys.push(c).map_err(entry)?;
                self.values.decode_inline(c).map_err(entry)?;
            }
        }
        self.offsets.push(total as i32);
        Ok(())
    }

    /// [`MapCol::decode`] on an enclosing fast path's cursor (a record's field, a nullable's
    /// value, an array's item or a map's value): no cursor hand-over, `Result` or dispatch
    /// per map, whose fixed cost is most of a small map's. A block that does not decode or
    /// passes a limit fails the enclosing record or block (after appending what it may),
    /// which truncates this column and decodes again value by value, naming the error. Out
    /// of line, like [`ListCol::flat_sticky`]: the record loop keeps its registers.
    #[inline(never)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        loop {
            // (`min_entry_size` is at least 1.)
            let n = block_items(f, self.min_entry_size, self.entry_excess, &mut total);
            if n == 0 {
                break;
            }
            let keys = &mut self.keys;
            keys.offsets.reserve(n);
            // (A failed entry fails the cursor: the rest of the block reads nothing.)
            match &mut self.values {
                Column::Bytes(b) => {
                    b.offsets.reserve(n);
                    let mut g = f.fork();
                    (0..n).for_each(|_| {
                        keys.push_sticky(&mut g);
                        b.push_sticky(&mut g);
                    });
                    f.join(g);
                }
                Column::Int64(p) => {
                    p.values.reserve(n);
                    let mut g = f.fork();
                    (0..n).for_each(|_| {
                        keys.push_sticky(&mut g);
                        p.values.push(g.long());
                    });
                    f.join(g);
                }
                Column::List(l) if l.flat_items() => l.map_values_sticky(keys, f, n),
                values => {
                    values.reserve(n, super::Room::PLAIN);
                    (0..n).for_each(|_| {
                        keys.push_sticky(f);
                        value_sticky(values, f, c);
                    })
                }
            }
            if f.failed() {
                break;
            }
        }
        self.offsets.push(total as i32);
    }

    /// The `n` entries of a map block on the fast path, as [`Column::items_sticky`] decodes an
    /// array block's items: on failure nothing is appended and `c.pos` is back at the block.
    #[inline(always)]
    fn entries_sticky<K: Kernel>(&mut self, c: &mut Cursor<'_, K>, n: usize, len: usize) -> bool {
        let start = c.pos;
        let f = &mut Sticky::new(c);
        let keys = &mut self.keys;
        // The common value types (string attributes, counters) get loops of their own, as
        // array items do.
        match &mut self.values {
            Column::Bytes(b) => (0..n).for_each(|_| {
                keys.push_sticky(f);
                b.push_sticky(f);
            }),
            Column::Int64(p) => (0..n).for_each(|_| {
                keys.push_sticky(f);
                p.values.push(f.long());
            }),
            values => (0..n).for_each(|_| {
                keys.push_sticky(f);
                value_sticky(values, f, c);
            }),
        }
        if !f.failed() {
            c.pos = f.pos;
            return true;
        }
        self.keys.truncate(len);
        self.values.truncate(len);
        c.pos = start;
        // The flag is shared with any fast path around this one, which goes on.
        c.failed.set(false);
        false
    }

    pub(crate) fn new(values: Column, entries: FieldRef, view: bool) -> Self {
        let min_entry_size = 1 + values.min_size();
        MapCol {
            offsets: vec![0],
            entry_excess: 3 + values.excess_size(),
            keys: BytesCol::new(BytesKind::Utf8, view),
            values,
            entries,
            min_entry_size,
            mean_entries: 0,
        }
    }
}

impl Column {
    /// Decode `n` consecutive values (the items of one array block) after the `len` this
    /// column holds. The caller has bounded `n` by the bytes left and this column's minimum
    /// size.
    ///
    /// Inlined into [`ListCol::decode`]: arrays of numbers go to their bulk paths without a
    /// further call; records and other items go through an out-of-line loop.
    #[inline(always)]
    fn decode_many<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
        len: usize,
        min_size: usize,
        hint: &mut BulkHint,
    ) -> Result<(), (usize, DecodeError)> {
        // Numbers are read in bulk: an error names the block's first item (the array block
        // in which decoding failed).
        match self {
            Column::Int64(p) => {
                let start = c.pos;
                c.k.read_longs_hinted(c.buf, &mut c.pos, n, &mut p.values, hint)
                    .map_err(|e| (0, DecodeError::new(DecodeErrorKind::Varint(e), start)))
            }
            Column::Int32(p) => {
                let start = c.pos;
                c.k.read_ints_hinted(c.buf, &mut c.pos, n, &mut p.values, hint)
                    .map_err(|e| (0, DecodeError::new(DecodeErrorKind::Varint(e), start)))
            }
            Column::Float64(p) => {
                let from = c.pos;
                c.take(n * 8).map_err(|e| (0, e))?;
                extend_le(&mut p.values, c.buf, from, n);
                Ok(())
            }
            Column::Float32(p) => {
                let from = c.pos;
                c.take(n * 4).map_err(|e| (0, e))?;
                extend_le(&mut p.values, c.buf, from, n);
                Ok(())
            }
            _ => self.decode_many_other(c, n, len, min_size),
        }
    }

    /// [`Column::decode_many`] for items other than numbers.
    #[inline(never)]
    fn decode_many_other<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
        len: usize,
        min_size: usize,
    ) -> Result<(), (usize, DecodeError)> {
        match self {
            _ if min_size == 0 => self.append_zero_size(n).map_err(|e| (0, e)),
            // Records: no reserve per array block (a call and a walk over the fields, ~3 % of
            // Order's 10-line arrays); the batch started with room for the last batch's mean
            // items per list, and pushes grow the buffers when that is not enough.
            Column::Struct(s) => s.decode_n(c, n),
            _ => {
                match &mut *self {
                    // (Inline: a call through `Column::reserve`'s dispatch cost strings in
                    // short arrays ~5 % of their instructions. The data grows as it is copied.)
                    Column::Bytes(b) => b.offsets.reserve(n),
                    other => other.reserve(n, super::Room::PLAIN),
                }
                if !c.check_utf8 && self.items_sticky(c, n, len) {
                    return Ok(());
                }
                for i in 0..n {
                    self.decode_inline(c).map_err(|e| (i, e))?;
                }
                Ok(())
            }
        }
    }

    /// The `n` items of an array block (after the `len` this column holds) on the fast path:
    /// one failure check for the block instead of a `Result` per item. Returns whether it
    /// decoded them; if not, nothing is appended and `c.pos` is where it was, for the
    /// value-by-value loop to decode the block again and name the failed item (or accept what
    /// the fast path does not: a nullable's branch index written as a padded varint).
    #[inline(always)]
    fn items_sticky<K: Kernel>(&mut self, c: &mut Cursor<'_, K>, n: usize, len: usize) -> bool {
        let start = c.pos;
        let f = &mut Sticky::new(c);
        // Strings (tags, labels, ids) get a loop of their own, without the dispatch per item
        // (and the registers the other types' code takes).
        match &mut *self {
            Column::Bytes(b) => (0..n).for_each(|_| b.push_sticky(f)),
            col => (0..n).for_each(|_| value_sticky(col, f, c)),
        }
        if !f.failed() {
            c.pos = f.pos;
            return true;
        }
        self.truncate(len);
        c.pos = start;
        // The flag is shared with any fast path around this one, which goes on.
        c.failed.set(false);
        false
    }
}

/// Decode one value of any column on the fast path of an array block (an item) or a map
/// block (a value): primitives, nullable values and union branches inline, arrays, maps and
/// records on the same cursor, the rest through a call. (A record's fields go through
/// `record::field_sticky`; arrays of records through `ListCol::records_sticky`.)
#[inline(always)]
fn value_sticky<K: Kernel>(col: &mut Column, f: &mut Sticky<'_, K>, c: &mut Cursor<'_, K>) {
    decode_primitive_sticky!(col, f, other => match other {
        Column::Nullable(n) => n.decode_sticky(f, c),
        Column::Union(u) => u.decode_sticky(f, c),
        Column::List(l) => {
            if l.flat_items() {
                l.flat_sticky(f)
            } else if l.record_items() {
                l.records_sticky(f, c)
            } else {
                call_sticky!(f, c, l.decode(c))
            }
        }
        Column::Map(m) => m.decode_sticky(f, c),
        Column::Struct(s) => s.fields_sticky(f, c),
        other => nested_sticky(other, f, c),
    });
}

#[cfg(test)]
mod tests;
