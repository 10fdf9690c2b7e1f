//! Record columns: [`StructCol`], its record loops (the fast path through a [`Sticky`] cursor,
//! and the value-by-value path that finds and names a failed field) and its per-field
//! bookkeeping.

use super::bytes::extend_strided;
use super::{extend_checked, nested_sticky, Column};
use crate::decode::cursor::{Cursor, Sticky};
use crate::decode::pool::BufferPool;
use crate::decode::skip::Skip;
use crate::error::DecodeError;
use crate::varint::{BulkHint, Kernel};
use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::Fields;
use std::sync::Arc;

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
    /// Whether every field is a varint (see [`StructCol::decode_flat`]).
    flat: bool,
    /// Whether a field is a nullable `int` or enum (see
    /// [`StructCol::inlines_nullable_numbers`]).
    nullable_numbers: bool,
    /// Whether a field is a record (not nullable) with a record among its own fields: a
    /// block's rows then read the leaves of the tree in one loop
    /// ([`StructCol::decode_rows_nested`]).
    nested: bool,
    /// Whether every field is a scalar value, a nullable one or a general union of them and
    /// the rows are not read in bulk (see [`StructCol::reads_scalars`]).
    scalar: bool,
    /// Whether some field of a [`StructCol::reads_scalars`] record is a general union (of
    /// scalars and null): its loop's form with the union's read in it.
    scalar_unions: bool,
    /// Whether every field is a string or bytes ([`StructCol::reads_strings`]).
    strings: bool,
    /// The size of a record whose fields all have a fixed size (float, double, fixed), which
    /// [`StructCol::decode_fixed_rows`] decodes with strided copies.
    fixed_row: Option<usize>,
    /// The varints of [`StructCol::decode_flat`]'s rows, and its bulk decoder's hint.
    scratch: Vec<i64>,
    hint: BulkHint,
}

/// Rows [`StructCol::decode_flat`] decodes at a time (bounds its scratch buffer).
const FLAT_ROWS: usize = 1024;

/// The fewest records worth [`StructCol::decode_flat`]'s set-up.
pub(super) const FLAT_MIN_ROWS: usize = 16;

impl StructCol {
    pub(crate) fn new(columns: Vec<Column>, names: Vec<Arc<str>>, fields: Fields) -> Self {
        debug_assert_eq!(columns.len(), names.len());
        let flat = columns.len() >= 2
            && columns.iter().all(|c| {
                matches!(
                    c,
                    Column::Int32(_) | Column::Int64(_) | Column::Enum(_) | Column::Boolean(_)
                )
            });
        // Records one level down are inlined in the row loop anyway (`field_sticky`); below
        // that, the tree costs a call per row.
        let nested = columns.iter().any(|c| match c {
            Column::Struct(s) => s.columns.iter().any(|c| matches!(c, Column::Struct(_))),
            _ => false,
        });
        let nullable_numbers = columns.iter().any(|c| match c {
            Column::Nullable(n) => matches!(n.child, Column::Int32(_) | Column::Enum(_)),
            _ => false,
        });
        let fixed_row = columns
            .iter()
            .map(|c| match c {
                Column::Float32(_) => Some(4),
                Column::Float64(_) => Some(8),
                Column::Fixed(f) => Some(f.size),
                Column::Decimal(d) => d.fixed_size(),
                _ => None,
            })
            .sum::<Option<usize>>()
            .filter(|&size| size > 0);
        // (Records read in bulk keep the plain loop for their last rows: no gain to have.)
        let scalar = !flat
            && fixed_row.is_none()
            && columns.iter().all(|c| match c {
                Column::Nullable(n) => is_scalar(&n.child),
                Column::Union(u) => u.scalar_branches(),
                other => is_scalar(other),
            });
        let scalar_unions = scalar && columns.iter().any(|c| matches!(c, Column::Union(_)));
        let strings =
            scalar && !columns.is_empty() && columns.iter().all(|c| matches!(c, Column::Bytes(_)));
        StructCol {
            columns,
            names,
            fields,
            len: 0,
            order: None,
            flat,
            nullable_numbers,
            nested,
            scalar,
            scalar_unions,
            strings,
            fixed_row,
            scratch: Vec::new(),
            hint: BulkHint::default(),
        }
    }

    /// The most rows whose fixed-width values beyond their input ([`Column::excess_size`],
    /// summed over the columns) stay within 2 GiB: the rows of one batch at most (at least 1).
    pub(crate) fn max_batch_rows(&self) -> usize {
        let row: usize = self.columns.iter().map(Column::excess_size).sum();
        (i32::MAX as usize / row.max(1)).max(1)
    }

    /// Whether `n` of these records in a row are read in bulk by [`StructCol::decode_n`]
    /// (records of varints only or of fixed-size fields only, at least [`FLAT_MIN_ROWS`]).
    #[inline(always)]
    pub(super) fn bulk_rows(&self, n: usize) -> bool {
        n >= FLAT_MIN_ROWS && (self.flat || self.fixed_row.is_some())
    }

    /// Whether a block's rows are read by [`StructCol::decode_rows_nested`]: a field is a
    /// record (not nullable) with a record among its own fields.
    pub(crate) fn nests_records(&self) -> bool {
        self.nested
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
    /// The fast path reads primitives through a [`Sticky`] cursor (see its doc for where it
    /// stays in registers) and checks
    /// for errors once per record, at its end; a record that failed is dropped and decoded
    /// again by [`StructCol::decode_slow`], which finds the error and names its field.
    #[inline(always)]
    pub(crate) fn decode_n<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        self.decode_n_with::<K, false, false, false, false, false>(c, n)
    }

    /// [`StructCol::decode_n`] for a block's rows: the data ahead of the loop is prefetched
    /// ([`Sticky::prefetch`]). Not for nested records, whose loops (an array's items) would
    /// ask again for lines the block's loop already asked for, and start cold per array.
    #[inline(always)]
    pub(crate) fn decode_rows<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        self.decode_n_with::<K, true, false, false, false, false>(c, n)
    }

    /// [`StructCol::decode_rows`] with the nullable `int`s and enums among the fields read
    /// inline (see [`StructCol::inlines_nullable_numbers`]).
    #[inline(always)]
    pub(crate) fn decode_rows_inline_numbers<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        self.decode_n_with::<K, true, true, false, false, false>(c, n)
    }

    /// Whether a block's rows are read by [`StructCol::decode_rows_inline_numbers`]: a field
    /// is a nullable `int` (dates and times among them) or enum. Their reads inline in the
    /// row loop (no call per value: `int_small_nullable` -20 %, `enum_nullable` -24 %) would
    /// make the loop of records without them slower (cdc -12 to -15 %): two loops, chosen
    /// once.
    pub(crate) fn inlines_nullable_numbers(&self) -> bool {
        self.nullable_numbers
    }

    /// Whether a block's rows are read by [`StructCol::decode_rows_scalar`]: every field is
    /// a number, boolean, enum, string, bytes, fixed, decimal or uuid, one of them or null,
    /// or a general union of them and null, and the rows are not read in bulk (neither all
    /// varints nor all fixed-size). Their loop's code has only those reads (anything else is
    /// a call), so the compiler keeps its cursor in registers, where the loop that can read
    /// any field keeps it in memory: a store and a reload on every field's path.
    pub(crate) fn reads_scalars(&self) -> bool {
        self.scalar
    }

    /// Whether [`StructCol::decode_rows_scalar`] reads this record with its union arm
    /// (`UNIONS`): some field is a general union of scalar branches (the arm kept out of the
    /// loop of records that have none, as the nullable numbers' reads are).
    pub(crate) fn scalar_unions(&self) -> bool {
        self.scalar_unions
    }

    /// [`StructCol::decode_rows_scalar`] for records of [`StructCol::reads_strings`]: each
    /// field's read with no dispatch on its kind.
    #[inline(always)]
    pub(crate) fn decode_rows_strings<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        debug_assert!(self.strings);
        self.decode_n_with::<K, true, false, true, false, true>(c, n)
    }

    /// Whether every field is a string or bytes (not nullable): log lines, CSV-like exports.
    /// Their row loop ([`StructCol::decode_rows_strings`]) reads each field as a string, with
    /// no dispatch on the field's kind.
    pub(crate) fn reads_strings(&self) -> bool {
        self.strings
    }

    /// [`StructCol::decode_rows`] for records of [`StructCol::reads_scalars`]: with
    /// `INLINE_NUMBERS` (records with nullable `int`s or enums) their reads inline, without
    /// them not in the loop at all (their code made WideRecord's loop 10 % slower; none comes
    /// there, as the form is chosen by [`StructCol::inlines_nullable_numbers`], and one would be
    /// read with a branch on null, not by a call, which would take the cursor's address).
    /// With `UNIONS` (roots of [`StructCol::scalar_unions`]) the unions' reads are in the loop
    /// too, and the nullable numbers' always.
    #[inline(always)]
    pub(crate) fn decode_rows_scalar<K: Kernel, const INLINE_NUMBERS: bool, const UNIONS: bool>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        debug_assert!(self.scalar && (UNIONS || !self.scalar_unions));
        self.decode_n_with::<K, true, INLINE_NUMBERS, true, UNIONS, false>(c, n)
    }

    #[inline(always)]
    fn decode_n_with<
        K: Kernel,
        const PREFETCH: bool,
        const INLINE_NUMBERS: bool,
        const SCALAR: bool,
        const UNIONS: bool,
        const STRINGS: bool,
    >(
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
        let flat = if n < FLAT_MIN_ROWS {
            0
        } else if self.flat {
            self.decode_flat(c, n)
        } else if let Some(size) = self.fixed_row {
            self.decode_fixed_rows(c, n, size)
        } else {
            0
        };
        let mut start = c.pos;
        let f = &mut Sticky::new(c);
        let mut span = 0;
        for i in flat..n {
            if PREFETCH {
                f.prefetch(span);
            }
            // A block's rows (`PREFETCH`) decode their record fields (plain or nullable)
            // inline, an array's items through a call (see `StructCol::fields_sticky`).
            for col in self.columns.iter_mut() {
                if STRINGS {
                    // (Every field is a string or bytes: `StructCol::reads_strings`.)
                    match col {
                        Column::Bytes(b) => b.push_sticky(f),
                        _ => f.fail(),
                    }
                } else if SCALAR {
                    field_scalar::<K, INLINE_NUMBERS, UNIONS>(col, f, c);
                } else {
                    field_sticky::<K, PREFETCH, INLINE_NUMBERS>(col, f, c);
                }
            }
            if f.failed() {
                self.decode_slow(c, start).map_err(|e| (i, e))?;
                *f = Sticky::new(c);
            } else {
                self.len += 1;
            }
            if PREFETCH {
                span = f.pos - start;
            }
            start = f.pos;
        }
        c.pos = f.pos;
        Ok(())
    }

    /// A block's `n` rows of a record with records among its fields (not nullable: one
    /// nested row per row): one loop over the leaves of the tree, depth first (the order of
    /// their values in the bytes; [`nested_leaves`]), with no dispatch, loop or call per
    /// nested record, and the nested records' lengths added once per run of rows. A row that
    /// fails is decoded again through the tree ([`StructCol::decode_slow`], which names the
    /// field), after the lengths are brought up to date, and the leaves found again.
    ///
    /// For records that [`StructCol::nests_records`]; strings unchecked (as
    /// [`StructCol::decode_rows`] without `check_utf8`).
    #[inline(always)]
    pub(crate) fn decode_rows_nested<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
    ) -> Result<(), (usize, DecodeError)> {
        debug_assert!(self.nested && !c.check_utf8);
        let mut i = 0;
        while i < n {
            let mut start = c.pos;
            let mut rows = 0;
            let (mut leaves, mut lens) = (Vec::new(), Vec::new());
            nested_leaves(&mut self.columns, &mut leaves, &mut lens);
            let f = &mut Sticky::new(c);
            let mut span = 0;
            while i + rows < n {
                f.prefetch(span);
                // (`INLINE_RECORD` false: the nullable records among the leaves go through
                // a call, and the row loop's own instances of the value paths keep their one
                // caller each, which LLVM inlines into it.)
                for leaf in leaves.iter_mut() {
                    field_sticky::<K, false, false>(leaf, f, c);
                }
                if f.failed() {
                    break;
                }
                rows += 1;
                span = f.pos - start;
                start = f.pos;
            }
            for len in lens {
                *len += rows;
            }
            let failed = f.failed();
            self.len += rows;
            i += rows;
            if failed {
                self.decode_slow(c, start).map_err(|e| (i, e))?;
                i += 1;
            } else {
                c.pos = f.pos;
            }
        }
        Ok(())
    }

    /// This record's fields on an enclosing fast path (a record field, the value of a
    /// `["null", record]`, a union branch): on the caller's [`Sticky`] cursor, with no failure
    /// check or cursor of its own. A failure is the enclosing record's (or array block's),
    /// which truncates this column with its own and decodes again value by value. (Through
    /// [`StructCol::decode_n`], a nested record paid a dispatch, a cursor and a check per
    /// level.)
    ///
    /// Out of line, with the records among its own fields, and the values of its
    /// `["null", record]` fields, decoded inline ([`StructCol::fields_sticky_inline`]): two
    /// levels a call. A block's row loop inlines its record fields and nullable records too,
    /// so records nested three deep cost one call, not three (nested3 -17 % time; a
    /// Debezium-style change record, two nullable records and one plain, -12 %). An array's
    /// item loop keeps the call: inlined there as well, the larger loop body cost arrays of
    /// records 9 % (docs/perf/families.md).
    #[inline(never)]
    pub(super) fn fields_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        self.fields_sticky_inline::<K, true>(f, c);
    }

    /// [`StructCol::fields_sticky`]'s body, inline: its own (`INLINE_RECORD`, the records
    /// among its fields inline too), and for a record among those fields or in a row loop
    /// (without: records inside this one go through the call again).
    #[inline(always)]
    pub(super) fn fields_sticky_inline<K: Kernel, const INLINE_RECORD: bool>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        for col in self.columns.iter_mut() {
            field_sticky::<K, INLINE_RECORD, false>(col, f, c);
        }
        self.len += 1;
    }

    /// Records whose fields are all varints (ints, longs, enums, booleans: metrics, ids,
    /// timestamps, codes) are one run of varints: decoded in bulk, [`FLAT_ROWS`] records at a
    /// time, by the kernel's array decoder, checked (int range, enum symbol, boolean byte) and
    /// dealt out to the columns, with no dispatch or push per field. Returns how many of the
    /// `n` records it decoded; at the first chunk that does not decode or check, it stops with
    /// `c.pos` at that chunk's start, and the caller decodes the rest record by record (which
    /// finds and names the error).
    fn decode_flat<K: Kernel>(&mut self, c: &mut Cursor<'_, K>, n: usize) -> usize {
        let k = self.columns.len();
        let booleans = self.columns.iter().any(|c| matches!(c, Column::Boolean(_)));
        let mut done = 0;
        while done < n {
            let rows = (n - done).min(FLAT_ROWS);
            let start = c.pos;
            self.scratch.clear();
            let decoded = c.k.read_longs_hinted(
                c.buf,
                &mut c.pos,
                rows * k,
                &mut self.scratch,
                &mut self.hint,
            );
            // Each column's values are dealt out and checked in the same pass (`ok` without
            // a branch per value); a chunk that fails is dropped from every column.
            let mut ok = decoded.is_ok();
            if ok {
                let values = &self.scratch[..];
                for (j, col) in self.columns.iter_mut().enumerate() {
                    ok &= match col {
                        Column::Int64(p) => {
                            extend_checked(&mut p.values, values, j, k, |v| (v, true))
                        }
                        Column::Int32(p) => extend_checked(&mut p.values, values, j, k, |v| {
                            (v as i32, v as i32 as i64 == v)
                        }),
                        // Zigzag 0 and -1: the bytes 0 and 1.
                        Column::Boolean(b) => b.extend_checked(values, j, k, |v| {
                            (v != 0, v.wrapping_add(1) as u64 <= 1)
                        }),
                        Column::Enum(e) => e.extend_checked(values, j, k),
                        other => unreachable!(
                            "a flat record holds only varints, not {}",
                            other.kind_name()
                        ),
                    };
                }
            }
            // A boolean is one byte, 0 or 1, but the bulk decoder also reads a padded varint
            // (0x80 0x00) there, which the record loop refuses. With booleans among the
            // fields, a chunk counts only if no varint in it is padded: none ends in a zero
            // byte after a continuation byte (the shortest encoding ends in a zero byte only
            // for 0 itself). One pass over the bytes, which the compiler vectorizes; a sum of
            // each value's shortest length instead made such records 50 % slower. (Padded
            // ints and longs, which are legal, send their chunk to the record loop.)
            if ok && booleans && c.pos - start != self.scratch.len() {
                // (A chunk of one-byte varints, flags and small codes, has none padded.)
                let bytes = &c.buf[start..c.pos];
                let padded = bytes
                    .iter()
                    .zip(bytes.iter().skip(1))
                    .fold(0u8, |acc, (&a, &b)| acc | ((a >> 7) & u8::from(b == 0)));
                ok = padded == 0;
            }
            if !ok {
                self.truncate(self.len);
                c.pos = start;
                break;
            }
            self.len += rows;
            done += rows;
        }
        #[cfg(test)]
        crate::decode::probe::add(&crate::decode::probe::FLAT_RECORDS, done as u64);
        done
    }

    /// Records whose fields all have a fixed size (floats, doubles, fixed, decimals in a fixed
    /// that always fits: coordinates, measurements, hashes, amounts) have a fixed size too:
    /// `n` of them are `n * size` bytes, each field a strided copy from them. Any bytes decode (decimals' precision is checked after
    /// the block, with the other columns' values). Returns the records decoded:
    /// `n`, or 0 (nothing read) when fewer bytes are left, for the record loop to report.
    fn decode_fixed_rows<K: Kernel>(
        &mut self,
        c: &mut Cursor<'_, K>,
        n: usize,
        size: usize,
    ) -> usize {
        let Some(bytes) = n
            .checked_mul(size)
            .and_then(|total| c.buf.get(c.pos..)?.get(..total))
        else {
            return 0;
        };
        let mut offset = 0;
        for col in self.columns.iter_mut() {
            let rows = bytes.chunks_exact(size);
            match col {
                Column::Float64(p) => {
                    p.values.extend(rows.map(|r| {
                        f64::from_le_bytes(*r[offset..].first_chunk().expect("8 bytes in a row"))
                    }));
                    offset += 8;
                }
                Column::Float32(p) => {
                    p.values.extend(rows.map(|r| {
                        f32::from_le_bytes(*r[offset..].first_chunk().expect("4 bytes in a row"))
                    }));
                    offset += 4;
                }
                Column::Decimal(d) => {
                    d.extend_fixed_rows(c.buf, c.pos, n, size, offset);
                    offset += d.fixed_size().expect("a fixed-size decimal");
                }
                Column::Fixed(f) => {
                    extend_strided(&mut f.data, c.buf, c.pos + offset, n, size, f.size);
                    f.len += n;
                    offset += f.size;
                }
                other => unreachable!(
                    "a fixed-size record holds only floats, fixed and decimals, not {}",
                    other.kind_name()
                ),
            }
        }
        c.pos += n * size;
        self.len += n;
        n
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
        #[cfg(test)]
        crate::decode::probe::add(&crate::decode::probe::SLOW_RECORDS, 1);
        self.truncate(self.len);
        c.pos = start;
        self.decode_checked(c)
    }

    /// Decode one record value by value with [`Cursor`]'s errors.
    fn decode_checked<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            if let Err(e) = col.decode_inline(c) {
                return Err(match col {
                    // A run of skipped fields names the field itself.
                    Column::Skip(Skip::Fields(..)) => e,
                    _ => e.in_field(&self.names[i]),
                });
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
            let start = c.pos;
            self.decode_checked(c).map_err(|e| (i, e))?;
            // Values otherwise checked a buffer at a time (times of day) are checked here
            // record by record, so that the error names its record (at the record's start).
            if let Err(e) = self.validate_values() {
                self.len -= 1;
                return Err((i, e.with_offset_base(start)));
            }
        }
        Ok(())
    }

    pub(crate) fn reserve(&mut self, n: usize, room: super::Room<'_>) {
        for col in &mut self.columns {
            col.reserve(n, room);
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

    pub(crate) fn validate_values(&mut self) -> Result<(), DecodeError> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            col.validate_values()
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

    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let len = self.len;
        let arrays = self.finish_columns(pool);
        if arrays.is_empty() {
            return Arc::new(StructArray::new_empty_fields(len, nulls));
        }
        Arc::new(StructArray::new(self.fields.clone(), arrays, nulls))
    }
}

/// The columns of `columns` with those of its records (not nullable) in their place, depth
/// first, into `leaves`, and the lengths of those records into `lens`.
fn nested_leaves<'a>(
    columns: &'a mut [Column],
    leaves: &mut Vec<&'a mut Column>,
    lens: &mut Vec<&'a mut usize>,
) {
    for col in columns {
        match col {
            Column::Struct(s) => {
                lens.push(&mut s.len);
                nested_leaves(&mut s.columns, leaves, lens);
            }
            other => leaves.push(other),
        }
    }
}

/// Decode one field of a record on the fast path: primitives inline, nested records on the
/// same cursor (inline with `INLINE_RECORD`, else through [`StructCol::fields_sticky`]; so
/// are the values of nullable records), the rest through a call.
#[inline(always)]
fn field_sticky<K: Kernel, const INLINE_RECORD: bool, const INLINE_NUMBERS: bool>(
    col: &mut Column,
    f: &mut Sticky<'_, K>,
    c: &mut Cursor<'_, K>,
) {
    // Every variant is named (no `_`), so that the jump table covers all tags and needs no
    // range check.
    decode_primitive_sticky!(col, f, other => match other {
        Column::Nullable(n) => n.decode_sticky_with::<K, INLINE_RECORD, INLINE_NUMBERS>(f, c),
        Column::Union(u) => u.decode_sticky(f, c),
        Column::List(l) => l.field_sticky(f, c),
        Column::Struct(s) if INLINE_RECORD => s.fields_sticky_inline::<K, false>(f, c),
        Column::Struct(s) => s.fields_sticky(f, c),
        Column::Map(m) => m.decode_sticky(f, c),
        Column::Skip(s) => s.skip_column_sticky(f),
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
        | Column::TooDeep(_)
        | Column::Default(_)
        | Column::Promoted(_)
        | Column::Resolved(_)) => nested_sticky(other, f, c),
    });
}

/// Whether `col` is read inline by [`field_scalar`].
pub(super) fn is_scalar(col: &Column) -> bool {
    matches!(
        col,
        Column::Int32(_)
            | Column::Int64(_)
            | Column::Float32(_)
            | Column::Float64(_)
            | Column::Bytes(_)
            | Column::Boolean(_)
            | Column::Enum(_)
            | Column::Fixed(_)
            | Column::Decimal(_)
            | Column::UuidString(_)
    )
}

/// One field of [`StructCol::decode_rows_scalar`]'s loop: scalars and their nullable forms
/// inline (a nullable value the branch-free read does not decide by
/// `NullableCol::slow_sticky`, with a branch on null), and with `UNIONS` general unions of
/// scalars (`UnionCol::decode_sticky_with`); any other column through a call on a copy of
/// the cursor (an arm the loop's records never take).
#[inline(always)]
fn field_scalar<K: Kernel, const INLINE_NUMBERS: bool, const UNIONS: bool>(
    col: &mut Column,
    f: &mut Sticky<'_, K>,
    c: &mut Cursor<'_, K>,
) {
    decode_primitive_sticky!(col, f, other => match other {
        Column::Nullable(n) => {
            let fast = if INLINE_NUMBERS {
                n.fast_sticky::<K, true, false>(f)
            } else {
                n.fast_sticky::<K, false, true>(f)
            };
            if !fast {
                n.slow_sticky::<K, false, true>(f, c);
            }
        }
        Column::Union(u) if UNIONS => u.decode_sticky_with::<K, true>(f, c),
        other => f.out_of_line(|g| field_sticky_out(other, g, c)),
    });
}

/// [`field_sticky`] through a call.
#[inline(never)]
fn field_sticky_out<K: Kernel>(col: &mut Column, f: &mut Sticky<'_, K>, c: &mut Cursor<'_, K>) {
    field_sticky::<K, false, false>(col, f, c);
}

#[cfg(test)]
mod flat_tests;
#[cfg(test)]
mod string_tests;
#[cfg(test)]
mod tests;
