//! Nested columns: lists (with the bulk decoding of one array block's items), maps, nullable
//! values (`["null", T]`) and general unions.

use super::scalar::extend_le;
use super::{nested_sticky, offsets_overflow, BytesCol, BytesKind, Column};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::{BulkHint, Kernel};
use arrow_schema::{FieldRef, UnionFields};

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
    pub(super) validity: Validity,
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

impl NullableCol {
    /// [`NullableCol::decode`] on the fast path.
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
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
    pub(super) type_ids: Vec<i8>,
    pub(super) offsets: Vec<i32>,
    pub(crate) children: Vec<Column>,
    pub(super) fields: UnionFields,
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
