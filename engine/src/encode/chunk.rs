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
        match (&self.kind, self.nulls) {
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
