//! General unions: [`UnionCol`] builds a dense union array, its type ids pushed per value
//! (the branch's value decoded inline when it is a primitive) and its offsets derived once per
//! batch.

use super::{nested_sticky, Column};
use crate::decode::cursor::{Cursor, Sticky};
use crate::decode::pool::BufferPool;
use crate::varint::Kernel;
use arrow_array::{ArrayRef, UnionArray};
use arrow_schema::UnionFields;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct UnionCol {
    /// The branch of every value. The dense offsets (each value's position in its branch)
    /// follow from them and are computed once per batch, in [`UnionCol::assemble`]: pushing
    /// them here cost a dispatch on the branch's column per value.
    pub(super) type_ids: Vec<i8>,
    pub(crate) children: Vec<Column>,
    pub(super) fields: UnionFields,
    /// The values of each branch among the first `counted` type ids, brought up to date by
    /// [`UnionCol::truncate`] from where it last was: a truncation costs its distance from the
    /// one before, not a pass over the batch (hostile blocks can fail the fast path and
    /// truncate once per array block).
    counts: Vec<usize>,
    counted: usize,
    /// The values of each branch in the last batch: a new batch reserves room in each branch
    /// for its share of the batch's values.
    last_counts: Vec<usize>,
}

impl UnionCol {
    pub(crate) fn new(children: Vec<Column>, fields: UnionFields) -> Self {
        UnionCol {
            type_ids: Vec::new(),
            counts: vec![0; children.len()],
            counted: 0,
            last_counts: vec![0; children.len()],
            children,
            fields,
        }
    }

    /// Room for `n` more values: type ids for all, and in each branch its share of the last
    /// batch's values (so a branch's values do not regrow by doubling, each batch, into fresh
    /// memory). A branch reserves at most as many values as it had in the last batch: room
    /// bounded by data already decoded (an array block of a million one-byte `int`s must not
    /// reserve a million values of a large `fixed` branch).
    pub(super) fn reserve(&mut self, n: usize, room: super::Room<'_>) {
        super::grow(&mut self.type_ids, n, room.pool);
        let last: usize = self.last_counts.iter().sum();
        if last == 0 {
            return;
        }
        for (child, &count) in self.children.iter_mut().zip(&self.last_counts) {
            let share = ((count as u128 * n as u128).div_ceil(last as u128) as usize).min(count);
            if share > 0 {
                child.reserve(share, room);
            }
        }
    }

    /// Keep the first `len` values: the type ids and, in each branch, the values they name
    /// (which drops a value a failed decode left half appended).
    pub(super) fn truncate(&mut self, len: usize) {
        let len = len.min(self.type_ids.len());
        if self.counted > self.type_ids.len() {
            // (Not reached: type ids are removed only here and by `assemble`, which both
            // update the counts; counted again from the start if they ever were.)
            self.counts.fill(0);
            self.counted = 0;
        }
        let counted = self.counted;
        // (Type ids always name a branch; `get_mut` keeps this panic-free regardless.)
        if len < counted {
            for &t in &self.type_ids[len..counted] {
                if let Some(n) = self.counts.get_mut(t as usize) {
                    *n = n.saturating_sub(1);
                }
            }
        } else {
            for &t in &self.type_ids[counted..len] {
                if let Some(n) = self.counts.get_mut(t as usize) {
                    *n += 1;
                }
            }
        }
        self.counted = len;
        self.type_ids.truncate(len);
        for (child, &kept) in self.children.iter_mut().zip(&self.counts) {
            child.truncate(kept);
        }
    }

    /// Whether every branch is a scalar ([`super::record::is_scalar`]) or `null`: a union
    /// the row loop of scalars reads inline (`StructCol::decode_rows_scalar`).
    pub(super) fn scalar_branches(&self) -> bool {
        self.children
            .iter()
            .all(|c| matches!(c, Column::Null(_)) || super::record::is_scalar(c))
    }

    /// [`Column::decode`] of a union on the fast path: the branch's value inline when it is a
    /// primitive.
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        self.decode_sticky_with::<K, false>(f, c)
    }

    /// [`UnionCol::decode_sticky`]; `SCALAR` for a union of [`UnionCol::scalar_branches`] in
    /// the row loop of scalars, whose code then has no call that takes the cursor's address
    /// (a record branch's fields would), so that the loop keeps it in registers.
    #[inline(always)]
    pub(super) fn decode_sticky_with<K: Kernel, const SCALAR: bool>(
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
        decode_primitive_sticky!(child, f, other => match other {
            // (The `null` branch of a general union: no call out of line.)
            Column::Null(len) => *len += 1,
            Column::Struct(s) if !SCALAR => s.fields_sticky(f, c),
            other => nested_sticky(other, f, c),
        });
    }

    /// Start a value in branch `branch` (which exists): returns the branch's column, to
    /// append the value to.
    pub(crate) fn push_branch(&mut self, branch: i8) -> &mut Column {
        self.type_ids.push(branch);
        &mut self.children[branch as usize]
    }

    /// The batch's dense union array: offsets derived from the type ids, which the branches'
    /// lengths must agree with.
    pub(super) fn assemble(&mut self, children: Vec<ArrayRef>, pool: &Arc<BufferPool>) -> ArrayRef {
        let type_ids = std::mem::take(&mut self.type_ids);
        self.counts.fill(0);
        self.counted = 0;
        // Each value's position among the values of its branch. Indexing `next` checks every
        // type id against the branches.
        let mut next = vec![0i32; children.len()];
        let mut offsets = Vec::new();
        pool.reserve(&mut offsets, type_ids.len());
        offsets.extend(type_ids.iter().map(|&t| {
            let slot = &mut next[t as usize];
            let offset = *slot;
            *slot += 1;
            offset
        }));
        for (last, &count) in self.last_counts.iter_mut().zip(&next) {
            *last = count as usize;
        }
        let consistent = children
            .iter()
            .zip(&next)
            .all(|(child, &count)| child.len() == count as usize)
            && self
                .fields
                .iter()
                .map(|(id, _)| id)
                .eq(0..children.len() as i8);
        let (type_ids, offsets) = (pool.scalar(type_ids), pool.scalar(offsets));
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
