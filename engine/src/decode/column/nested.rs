//! Nested columns: lists (with the bulk decoding of one array block's items), maps, nullable
//! values (`["null", T]`) and general unions.

use super::scalar::extend_le;
use super::{nested_sticky, offsets_overflow, BytesCol, BytesKind, Column};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::{BulkHint, Kernel};
use arrow_array::{ArrayRef, UnionArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{FieldRef, UnionFields};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct ListCol {
    /// Starts with a leading 0.
    pub(super) offsets: Vec<i32>,
    pub(crate) child: Column,
    pub(super) field: FieldRef,
    min_item_size: usize,
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
            if total > i32::MAX as usize {
                return Err(offsets_overflow(c.pos));
            }
            self.child
                .decode_many(c, n, self.min_item_size, &mut self.hint)
                .map_err(|(i, e)| e.at_index((before + i) as u64))?;
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
    pub(super) offsets: Vec<i32>,
    pub(super) keys: BytesCol,
    pub(crate) values: Column,
    pub(super) entries: FieldRef,
    min_entry_size: usize,
    /// Mean entries per map in the last finished batch (to reserve the entries up front).
    pub(super) mean_entries: usize,
}

impl MapCol {
    /// Decode one map: its blocks of entries, then its end offset. (Through
    /// [`Column::decode_nested`]: calling it straight from the record loops, like
    /// [`ListCol::decode`], saved Order 1 % but cost Wide, which has no maps, 0.6 %.)
    #[inline(never)]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let first = self.offsets[self.offsets.len() - 1] as usize;
        let mut total = first;
        while let Some(n) = c.block_count(self.min_entry_size)? {
            let before = total - first;
            total += n;
            if total > i32::MAX as usize {
                return Err(offsets_overflow(c.pos));
            }
            self.keys.offsets.reserve(n);
            self.values.reserve(n, None);
            for i in 0..n {
                let entry = |e: DecodeError| e.at_index((before + i) as u64);
                self.keys.push(c).map_err(entry)?;
                self.values.decode_inline(c).map_err(entry)?;
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
pub(crate) struct NullableCol {
    /// Branch index of `null`: 0 for `["null", T]`, 1 for `[T, "null"]`.
    null_index: i64,
    /// The one byte that encodes the other branch's index (zigzag 0 and 1: 0 and 2).
    value_byte: u8,
    pub(super) validity: Validity,
    pub(crate) child: Column,
}

impl NullableCol {
    pub(crate) fn new(null_index: i64, child: Column) -> Self {
        NullableCol {
            null_index,
            value_byte: if null_index == 0 { 2 } else { 0 },
            validity: Validity::default(),
            child,
        }
    }
}

impl NullableCol {
    /// [`NullableCol::decode`] on the fast path.
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        // The branch index as its one encoded byte (zigzag 0 and 1: the bytes 0 and 2),
        // compared without decoding it. Anything else fails the record, which the reference
        // path then decodes again: it reports a bad index and accepts an index written as a
        // longer (padded) varint, as it always did.
        let value_byte = self.value_byte;
        match f.buf.get(f.pos) {
            Some(&b) if b == value_byte => {
                f.pos += 1;
                self.validity.push(true);
                decode_primitive_sticky!(&mut self.child, f, other => nested_sticky(other, f, c));
            }
            Some(&b) if b == 2 - value_byte => {
                f.pos += 1;
                self.push_null();
            }
            _ => f.fail(),
        }
    }

    #[inline(always)]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
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

#[derive(Debug, Clone)]
pub(crate) struct UnionCol {
    /// The branch of every value. The dense offsets (each value's position in its branch)
    /// follow from them and are computed once per batch, in [`UnionCol::offsets`]: pushing
    /// them here cost a dispatch on the branch's column per value.
    pub(super) type_ids: Vec<i8>,
    pub(crate) children: Vec<Column>,
    pub(super) fields: UnionFields,
}

impl UnionCol {
    pub(crate) fn new(children: Vec<Column>, fields: UnionFields) -> Self {
        UnionCol {
            type_ids: Vec::new(),
            children,
            fields,
        }
    }

    /// [`Column::decode`] of a union on the fast path: the branch's value inline when it is a
    /// primitive.
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        let branch = f.branch_index();
        let Some(child) = usize::try_from(branch)
            .ok()
            .and_then(|b| self.children.get_mut(b))
        else {
            // (Nothing appended: the record is truncated and decoded again.)
            f.fail();
            return;
        };
        self.type_ids.push(branch as i8);
        decode_primitive_sticky!(child, f, other => nested_sticky(other, f, c));
    }

    /// Start a value in branch `branch` (which exists): returns the branch's column, to
    /// append the value to.
    pub(crate) fn push_branch(&mut self, branch: i8) -> &mut Column {
        self.type_ids.push(branch);
        &mut self.children[branch as usize]
    }

    /// The batch's dense union array: offsets derived from the type ids, which the branches'
    /// lengths must agree with.
    pub(super) fn assemble(&mut self, children: Vec<ArrayRef>) -> ArrayRef {
        let type_ids = std::mem::take(&mut self.type_ids);
        // Each value's position among the values of its branch. Indexing `next` checks every
        // type id against the branches.
        let mut next = vec![0i32; children.len()];
        let offsets: Vec<i32> = type_ids
            .iter()
            .map(|&t| {
                let slot = &mut next[t as usize];
                let offset = *slot;
                *slot += 1;
                offset
            })
            .collect();
        let consistent = children
            .iter()
            .zip(&next)
            .all(|(child, &count)| child.len() == count as usize)
            && self
                .fields
                .iter()
                .map(|(id, _)| id)
                .eq(0..children.len() as i8);
        let (type_ids, offsets) = (ScalarBuffer::from(type_ids), ScalarBuffer::from(offsets));
        if consistent {
            // SAFETY: every type id indexed `next` above, so it is in 0..children.len(), and
            // the fields' ids are exactly 0..children.len(): each type id names a field. Each
            // offset is the count of earlier values of its branch, below that branch's total
            // count, which equals its child's length: every offset is in bounds. The type ids
            // and offsets have one entry per value. (`try_new` checks the same per value: 13 %
            // of decoding a file of four general unions.)
            Arc::new(unsafe {
                UnionArray::new_unchecked(self.fields.clone(), type_ids, Some(offsets), children)
            })
        } else {
            Arc::new(
                UnionArray::try_new(self.fields.clone(), type_ids, Some(offsets), children)
                    .expect("union branches agree with their type ids"),
            )
        }
    }
}

impl Column {
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
                let bytes = c.take(n * 8).map_err(|e| (0, e))?;
                extend_le(&mut p.values, bytes);
                Ok(())
            }
            Column::Float32(p) => {
                let bytes = c.take(n * 4).map_err(|e| (0, e))?;
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
    ) -> Result<(), (usize, DecodeError)> {
        match self {
            _ if min_size == 0 => self.append_zero_size(n).map_err(|e| (0, e)),
            // Records: no reserve per array block (a call and a walk over the fields, ~3 % of
            // Order's 10-line arrays); the batch started with room for the last batch's mean
            // items per list, and pushes grow the buffers when that is not enough.
            Column::Struct(s) => s.decode_n(c, n),
            _ => {
                self.reserve(n, None);
                for i in 0..n {
                    self.decode_inline(c).map_err(|e| (i, e))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::decode::{DecodeOptions, DecodePlan};
    use crate::schema::Schema;
    use arrow_array::{Array, ArrayRef, Int64Array, StringArray, UnionArray};
    use arrow_buffer::ScalarBuffer;

    fn zigzag(v: i64, out: &mut Vec<u8>) {
        crate::varint::Kernel::write_long(crate::varint::Scalar, v, out);
    }

    /// The union a decoder assembles (offsets derived from the type ids, `new_unchecked`)
    /// equals the one `try_new` validates from the same values, in batches that end anywhere.
    #[test]
    fn assembled_unions_equal_validated_ones() {
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","fields":[{"name":"u","type":["null","long","string"]}]}"#,
        )
        .unwrap();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut block = Vec::new();
        let mut branches = Vec::new();
        for i in 0..1000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = (x % 3) as i64;
            zigzag(b, &mut block);
            match b {
                1 => zigzag(i * 7 - 300, &mut block),
                2 => {
                    let s = format!("s{i}");
                    zigzag(s.len() as i64, &mut block);
                    block.extend_from_slice(s.as_bytes());
                }
                _ => {}
            }
            branches.push(b);
        }
        for batch_size in [1, 7, 64, 1000] {
            let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                .unwrap()
                .decoder()
                .with_batch_size(batch_size);
            let mut batches = decoder.decode_block(&block, 1000).unwrap();
            batches.extend(decoder.flush().unwrap());
            let mut row = 0usize;
            for batch in &batches {
                let got = batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<UnionArray>()
                    .unwrap();
                let mine = &branches[row..row + batch.num_rows()];
                let mut counts = [0i32; 3];
                let offsets: Vec<i32> = mine
                    .iter()
                    .map(|&b| {
                        counts[b as usize] += 1;
                        counts[b as usize] - 1
                    })
                    .collect();
                let children: Vec<ArrayRef> = (0..3).map(|b| got.child(b).clone()).collect();
                let fields = match got.data_type() {
                    arrow_schema::DataType::Union(fields, _) => fields.clone(),
                    other => panic!("not a union: {other}"),
                };
                let expected = UnionArray::try_new(
                    fields,
                    ScalarBuffer::from(mine.iter().map(|&b| b as i8).collect::<Vec<_>>()),
                    Some(ScalarBuffer::from(offsets)),
                    children,
                )
                .unwrap();
                assert_eq!(
                    got.to_data(),
                    expected.to_data(),
                    "batch size {batch_size}, rows from {row}"
                );
                let longs = got.child(1).as_any().downcast_ref::<Int64Array>().unwrap();
                let strings = got.child(2).as_any().downcast_ref::<StringArray>().unwrap();
                assert_eq!(longs.len() as i32, counts[1]);
                assert_eq!(strings.len() as i32, counts[2]);
                row += batch.num_rows();
            }
            assert_eq!(row, 1000);
        }
    }
}
