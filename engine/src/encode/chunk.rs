//! Records of many fields encoded column by column, a chunk of rows at a time, then
//! interleaved into rows: each column is read in order (which the prefetchers follow) instead
//! of every column a value at a time.

use super::bind::Bound;
use super::bind::Kind;
use super::plan::Scale;
use super::sink::{put_fixed, put_long};
use super::views::{BinRef, Ints};
use super::EncodeError;
use crate::varint::{Fast, Kernel};
#[cfg(target_endian = "little")]
use arrow_buffer::ToByteSlice;

/// Rows a record is encoded in at a time, column by column.
const CHUNK_ROWS: usize = 256;

/// Records of fewer fields are written row by row: interleaving costs more than the columns
/// read a value at a time (measured: Telemetry's 9 fields 141 → 160 ns/row in chunks,
/// WideRecord's 100 fields 1738 → 1361; see docs/perf/write.md).
const CHUNK_MIN_FIELDS: usize = 32;

/// Values of at most this many bytes are moved by one fixed-size copy when rows are
/// interleaved.
const SHORT: usize = 16;

/// Append rows `0..rows` of a record bound as `bound`, column by column in chunks of
/// [`CHUNK_ROWS`] rows: each field's values of a chunk are encoded into a buffer of their own
/// (a column read in order, which the prefetchers follow, instead of a hundred columns read
/// a value at a time), then the rows are interleaved into `out`. Anything that is not a
/// record, and records of fewer than [`CHUNK_MIN_FIELDS`] fields, are written row by row.
pub(crate) fn write_rows(
    bound: &Bound<'_>,
    rows: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let Kind::Record(fields) = &bound.kind else {
        for r in 0..rows {
            bound.write(r, r, out)?;
        }
        return Ok(());
    };
    if fields.len() < CHUNK_MIN_FIELDS {
        for r in 0..rows {
            bound.write_record(r, r, out)?;
        }
        return Ok(());
    }
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); fields.len()];
    let mut ends: Vec<Vec<usize>> = (0..fields.len())
        .map(|_| Vec::with_capacity(CHUNK_ROWS))
        .collect();
    let mut start = 0;
    while start < rows {
        let n = CHUNK_ROWS.min(rows - start);
        let mut total = 0;
        for ((f, buf), end) in fields.iter().zip(&mut bufs).zip(&mut ends) {
            buf.clear();
            end.clear();
            f.write_column(start..start + n, buf, end)?;
            total += buf.len();
            // Initialised bytes past the last value, so that a fixed-size copy of a short
            // value never reads beyond them.
            buf.extend_from_slice(&[0; SHORT]);
        }
        interleave(&bufs, &ends, n, total, out);
        start += n;
    }
    Ok(())
}

/// Append rows `0..n` of the encoded columns `bufs` (row `k` of column `c` is
/// `bufs[c][ends[c][k - 1]..ends[c][k]]`, each buffer followed by [`SHORT`] padding bytes),
/// `total` bytes in all, row after row.
fn interleave(bufs: &[Vec<u8>], ends: &[Vec<usize>], n: usize, total: usize, out: &mut Vec<u8>) {
    out.reserve(total + SHORT);
    let base = out.len();
    let mut at = 0;
    for k in 0..n {
        for (buf, end) in bufs.iter().zip(ends) {
            let from = if k == 0 { 0 } else { end[k - 1] };
            let len = end[k] - from;
            debug_assert!(from + len + SHORT <= buf.len() && at + len <= total);
            // SAFETY: `out` has room for `total + SHORT` bytes past `base` (reserved above),
            // and `at + len <= total` (the lengths add up to `total`), so writing
            // `max(len, SHORT)` bytes at `base + at` stays inside it. The source range
            // `from..from + max(len, SHORT)` is inside `buf`, whose last value ends
            // `SHORT` initialised bytes before its end. Source and destination are different
            // allocations. A short copy may write past `at + len`; the next copy, or nothing
            // (past `base + total`, outside the length set below), covers those bytes, so
            // every byte up to `base + total` is written from initialised data.
            unsafe {
                let src = buf.as_ptr().add(from);
                let dst = out.as_mut_ptr().add(base + at);
                if len <= SHORT {
                    std::ptr::copy_nonoverlapping(src, dst, SHORT);
                } else {
                    std::ptr::copy_nonoverlapping(src, dst, len);
                }
            }
            at += len;
        }
    }
    debug_assert_eq!(at, total);
    // SAFETY: bytes `base..base + total` were all written above (see the copies' comment),
    // within the capacity reserved.
    unsafe { out.set_len(base + total) };
}

/// Append `bytes`, values of `size` bytes each, recording where each ends.
#[cfg(target_endian = "little")]
fn fixed_column(bytes: &[u8], size: usize, buf: &mut Vec<u8>, ends: &mut Vec<usize>) {
    let from = buf.len();
    buf.extend_from_slice(bytes);
    ends.extend((1..=bytes.len() / size).map(|k| from + k * size));
}

/// Record in `ends` where each of the `n` varints written to `buf` from `from` on ends:
/// after every byte without the continuation bit, eight bytes at a time, into capacity
/// reserved once.
fn varint_ends(buf: &[u8], from: usize, n: usize, ends: &mut Vec<usize>) {
    ends.reserve(n);
    let spare = ends.spare_capacity_mut();
    let mut k = 0;
    let mut words = buf[from..].chunks_exact(8);
    let mut at = from;
    for w in &mut words {
        let mut last = !u64::from_le_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080;
        while last != 0 {
            spare[k].write(at + (last.trailing_zeros() as usize >> 3) + 1);
            k += 1;
            last &= last - 1;
        }
        at += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b < 0x80 {
            spare[k].write(at + i + 1);
            k += 1;
        }
    }
    let len = ends.len();
    // SAFETY: the first `k` elements of the spare capacity were written above (indexing
    // checked them to be within it).
    unsafe { ends.set_len(len + k) };
}

impl Bound<'_> {
    /// Append the values of rows `range` of a record's field to `buf`, recording where each
    /// ends in `ends`: one loop per kind of leaf, the value-by-value path for the rest.
    fn write_column(
        &self,
        range: std::ops::Range<usize>,
        buf: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), EncodeError> {
        macro_rules! each {
            (|$k:ident| $body:expr) => {
                for $k in range.clone() {
                    $body;
                    ends.push(buf.len());
                }
            };
        }
        match (&self.kind, self.nulls.as_ref()) {
            (
                Kind::Int {
                    values: Ints::I64(v),
                    scale: Scale::One,
                    int32: false,
                },
                None,
            ) => {
                let from = buf.len();
                Fast.write_longs(&v[range.clone()], buf);
                varint_ends(buf, from, range.len(), ends);
            }
            (
                Kind::Int {
                    values: Ints::I32(v),
                    scale: Scale::One,
                    ..
                },
                None,
            ) => {
                let from = buf.len();
                Fast.write_ints(&v[range.clone()], buf);
                varint_ends(buf, from, range.len(), ends);
            }
            // Times of day: as integers, once the chunk's values are all within a day (else
            // value by value, which names the first that is not).
            (
                Kind::Time {
                    values: Ints::I32(v),
                    scale: Scale::One,
                    day,
                    ..
                },
                None,
            ) if v[range.clone()]
                .iter()
                .all(|&t| (0..*day).contains(&i64::from(t))) =>
            {
                let from = buf.len();
                Fast.write_ints(&v[range.clone()], buf);
                varint_ends(buf, from, range.len(), ends);
            }
            (
                Kind::Time {
                    values: Ints::I64(v),
                    scale: Scale::One,
                    day,
                    ..
                },
                None,
            ) if v[range.clone()].iter().all(|t| (0..*day).contains(t)) => {
                let from = buf.len();
                Fast.write_longs(&v[range.clone()], buf);
                varint_ends(buf, from, range.len(), ends);
            }
            // Doubles and floats: their bytes as they are (Avro's encoding is little-endian
            // IEEE 754, as Arrow's buffers are), the ends a fixed stride apart.
            #[cfg(target_endian = "little")]
            (Kind::F64(v), None) => fixed_column(v[range].to_byte_slice(), 8, buf, ends),
            #[cfg(target_endian = "little")]
            (Kind::F32(v, false), None) => fixed_column(v[range].to_byte_slice(), 4, buf, ends),
            #[cfg(not(target_endian = "little"))]
            (Kind::F64(v), None) => each!(|k| put_fixed(buf, v[k].to_le_bytes())),
            #[cfg(not(target_endian = "little"))]
            (Kind::F32(v, false), None) => each!(|k| put_fixed(buf, v[k].to_le_bytes())),
            (Kind::Boolean(a), None) => each!(|k| buf.push(u8::from(a.value(k)))),
            (
                Kind::Bytes {
                    values: values @ BinRef::Utf8(_),
                    check_utf8: false,
                },
                None,
            ) => each!(|k| values.put(k, buf)),
            // A leaf in a `["null", T]` union: the leaf's kind matched once for the chunk, not
            // per value (the leaves `write_leaf` writes inline, with the same semantics).
            (
                Kind::Branch {
                    index,
                    null: Some(null),
                    value,
                },
                nulls,
            ) => {
                let (index, null) = (i64::from(*index), i64::from(*null));
                macro_rules! nullable {
                    (|$k:ident| $body:expr) => {
                        each!(|$k| if nulls.is_some_and(|n| n.is_null($k)) {
                            put_long(buf, null)
                        } else {
                            put_long(buf, index);
                            $body
                        })
                    };
                }
                match &value.kind {
                    Kind::Int {
                        values: Ints::I64(v),
                        scale: Scale::One,
                        int32: false,
                    } => nullable!(|k| put_long(buf, v[k])),
                    Kind::Int {
                        values: Ints::I32(v),
                        scale: Scale::One,
                        ..
                    } => nullable!(|k| put_long(buf, i64::from(v[k]))),
                    Kind::F64(v) => nullable!(|k| put_fixed(buf, v[k].to_le_bytes())),
                    Kind::F32(v, false) => nullable!(|k| put_fixed(buf, v[k].to_le_bytes())),
                    Kind::Bytes {
                        values,
                        check_utf8: false,
                    } => nullable!(|k| values.put(k, buf)),
                    _ => each!(|k| self.write_field(k, k, buf)?),
                }
            }
            _ => each!(|k| self.write_field(k, k, buf)?),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The column chunks against the value-by-value path ([`Bound::write`], one field of one
    //! row at a time): the same bytes for random wide batches of every kind the chunks
    //! special-case, with and without nulls, sliced so that bitmaps and offsets do not start
    //! at zero.
    use super::*;
    use crate::encode::{avro_schema_for, EncodePlan};
    use arrow_array::builder::{Int32Builder, ListBuilder};
    use arrow_array::{
        Array, ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array,
        Int64Array, LargeStringArray, RecordBatch, StringArray, StructArray,
        Time32MillisecondArray, Time64MicrosecondArray, TimestampMillisecondArray,
    };
    use std::sync::Arc;

    /// A small xorshift generator: the property's cases come from proptest's seeds.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A long of a random magnitude, the extremes included.
        fn long(&mut self) -> i64 {
            match self.below(8) {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => (self.next() as i64) >> self.below(64),
            }
        }

        fn text(&mut self) -> String {
            let len = match self.below(4) {
                0 => 0,
                1 => self.below(17),
                2 => 17 + self.below(40),
                _ => self.below(300),
            };
            (0..len)
                .map(|k| {
                    if k % 7 == 3 {
                        'é'
                    } else {
                        char::from(b'a' + (k % 26) as u8)
                    }
                })
                .collect()
        }
    }

    /// Column `c` of `rows` rows, nullable with nulls one value in `null_every` (never when
    /// 0): every kind `write_column` special-cases, and one (a list) it does not.
    fn column(c: usize, rows: usize, null_every: u64, rng: &mut Rng) -> (ArrayRef, bool) {
        let nullable = c % 2 == 1;
        let null = |rng: &mut Rng| nullable && null_every > 0 && rng.below(null_every) == 0;
        let array: ArrayRef = match (c / 2) % 11 {
            0 => Arc::new(Int64Array::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.long())),
            )),
            1 => Arc::new(Int32Array::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| (rng.long() >> 32) as i32)),
            )),
            2 => Arc::new(Float64Array::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.long() as f64 / 3.0)),
            )),
            3 => Arc::new(Float32Array::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.long() as f32 / 7.0)),
            )),
            4 => Arc::new(BooleanArray::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.below(2) == 1)),
            )),
            5 => Arc::new(StringArray::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.text())),
            )),
            6 => Arc::new(LargeStringArray::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.text())),
            )),
            7 => Arc::new(
                (0..rows)
                    .map(|_| (!null(rng)).then(|| rng.text().into_bytes()))
                    .collect::<BinaryArray>(),
            ),
            8 => Arc::new(Time32MillisecondArray::from_iter((0..rows).map(|_| {
                (!null(rng)).then(|| rng.long().rem_euclid(86_400_000) as i32)
            }))),
            9 => {
                Arc::new(Time64MicrosecondArray::from_iter((0..rows).map(|_| {
                    (!null(rng)).then(|| rng.long().rem_euclid(86_400_000_000))
                })))
            }
            _ if c.is_multiple_of(4) => Arc::new(TimestampMillisecondArray::from_iter(
                (0..rows).map(|_| (!null(rng)).then(|| rng.long() >> 20)),
            )),
            _ => {
                let mut b = ListBuilder::new(Int32Builder::new());
                for _ in 0..rows {
                    for _ in 0..rng.below(4) {
                        b.values().append_value(rng.long() as i32);
                    }
                    b.append(!null(rng));
                }
                Arc::new(b.finish())
            }
        };
        (array, nullable)
    }

    /// `write_rows` and the value-by-value path write the same bytes for `batch`.
    fn check(batch: &RecordBatch) {
        let avro = avro_schema_for(batch.schema_ref()).unwrap();
        let plan = EncodePlan::new(batch.schema(), avro).unwrap();
        let s = StructArray::from(batch.clone());
        let bound = crate::encode::bind::bind(&plan.root, &s as &dyn Array, Arc::from(""));
        let Kind::Record(fields) = &bound.kind else {
            panic!("a record")
        };
        assert!(fields.len() >= CHUNK_MIN_FIELDS);
        let mut chunked = Vec::new();
        write_rows(&bound, batch.num_rows(), &mut chunked).unwrap();
        let mut reference = Vec::new();
        for r in 0..batch.num_rows() {
            for f in fields {
                f.write(r, r, &mut reference).unwrap();
            }
        }
        assert_eq!(chunked, reference);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        #[test]
        fn chunks_write_what_the_value_path_writes(
            seed in 1u64..,
            columns in CHUNK_MIN_FIELDS..80,
            rows in 0usize..700,
            null_every in 0u64..5,
            cut in 0usize..40,
        ) {
            let mut rng = Rng(seed);
            let arrays: Vec<(String, ArrayRef, bool)> = (0..columns)
                .map(|c| {
                    let (a, nullable) = column(c, rows + cut, null_every, &mut rng);
                    (format!("c{c}"), a, nullable)
                })
                .collect();
            let batch = RecordBatch::try_from_iter_with_nullable(arrays).unwrap();
            check(&batch);
            // Sliced: bitmaps, offsets and values that do not start at the buffers' starts.
            let from = cut.min(rows);
            check(&batch.slice(from, rows + cut - from));
        }
    }
}
