//! Decimals: [`DecimalCol`] reads `bytes` and `fixed` decimals (big-endian two's complement)
//! into `Decimal128` or `Decimal256` values, in bulk for records of fixed-size decimals, and
//! checks their precision once per batch.

use super::nullable::{keep, null_index};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::decode::pool::BufferPool;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::Kernel;
use arrow_array::types::{Decimal256Type, DecimalType};
use arrow_array::{ArrayRef, Decimal128Array, Decimal256Array};
use arrow_buffer::{i256, NullBuffer};
use std::hint::select_unpredictable;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
pub(crate) enum DecimalSource {
    Bytes,
    Fixed(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct DecimalCol {
    pub(super) source: DecimalSource,
    precision: u8,
    scale: i8,
    pub(super) narrow: Vec<i128>,
    pub(super) wide: Vec<i256>,
    is_wide: bool,
    /// Values whose precision [`DecimalCol::validate_precision`] has checked.
    pub(super) checked: usize,
}

impl DecimalCol {
    /// The bytes of one Arrow value: 16 (`Decimal128`) or 32 (`Decimal256`).
    pub(super) fn value_size(&self) -> usize {
        if self.is_wide {
            32
        } else {
            16
        }
    }

    pub(crate) fn new(source: DecimalSource, precision: u8, scale: i8) -> Self {
        DecimalCol {
            source,
            precision,
            scale,
            narrow: Vec::new(),
            wide: Vec::new(),
            is_wide: precision > 38,
            checked: 0,
        }
    }

    /// Whether this column's values are read by [`window_short`]: `fixed` ones (one size)
    /// and those of precision 18 or less (at most eight bytes unless padded).
    #[inline(always)]
    fn short_windows(&self) -> bool {
        matches!(self.source, DecimalSource::Fixed(_)) || self.precision <= 18
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

    /// Whether every value of this column is `n` bytes that always fit its Arrow type (a
    /// `fixed` of at most 16 bytes, or 32 for `Decimal256`): then any bytes decode to a value
    /// (its precision is checked afterwards, [`DecimalCol::validate_precision`])
    /// and a record of such fields has a fixed size ([`DecimalCol::extend_fixed_rows`]).
    pub(super) fn fixed_size(&self) -> Option<usize> {
        match self.source {
            DecimalSource::Fixed(n) if n <= if self.is_wide { 32 } else { 16 } => Some(n),
            _ => None,
        }
    }

    /// The value whose `b.len()` bytes end at `buf[end]`, pushed; `false` when it does not fit.
    #[inline(always)]
    fn push_at(&mut self, buf: &[u8], end: usize, b: &[u8]) -> bool {
        debug_assert!(end >= b.len() && buf.get(end - b.len()..end) == Some(b));
        if self.is_wide {
            match wide_at(buf, end, b) {
                Some(v) => self.wide.push(v),
                None => return false,
            }
        } else {
            // (Two instances, each with one window read: a test of the flag before each
            // value's read made both kinds of column slower.)
            let v = if self.short_windows() {
                narrow_at::<true>(buf, end, b)
            } else {
                narrow_at::<false>(buf, end, b)
            };
            match v {
                Some(v) => self.narrow.push(v),
                None => return false,
            }
        }
        true
    }

    #[inline]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let b = match self.source {
            DecimalSource::Bytes => c.bytes()?,
            DecimalSource::Fixed(n) => c.take(n)?,
        };
        if self.push_at(c.buf, c.pos, b) {
            // (The value-by-value path names the record that `validate_precision` found.)
            let checked = self.checked;
            self.checked = self.len() - 1;
            let fits = self.validate_precision().is_ok();
            self.checked = checked;
            if !fits {
                self.truncate(self.len() - 1);
                return Err(DecodeError::new(
                    DecodeErrorKind::DecimalPrecision {
                        precision: self.precision,
                    },
                    start,
                ));
            }
            Ok(())
        } else {
            Err(DecodeError::new(
                DecodeErrorKind::DecimalOverflow { len: b.len() },
                start,
            ))
        }
    }

    /// [`DecimalCol::decode`] on the fast path (zero after a failure).
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        let b = match self.source {
            DecimalSource::Bytes => f.bytes(),
            DecimalSource::Fixed(n) => f.take(n),
        };
        // (After a failure `b` is empty and `f.pos` the end of the buffer.)
        if !self.push_at(f.buf, f.pos, b) {
            f.fail();
            self.push_zero();
        }
    }

    /// A nullable `fixed` decimal of up to 16 bytes (`value_byte` the encoded index of its
    /// branch) on the fast path, with no branch on null, as
    /// [`number_or_null`](super::nullable::number_or_null) reads numbers: the window ending
    /// where the value would end ([`window_short`]) is read either way, and the value (0 for
    /// a null, as on the branching path) and the position past it kept by selects. `false`,
    /// with nothing read, where that does not decide: a bad index, a window outside the data
    /// (the first bytes of a block, the last ones), `bytes` decimals and `Decimal256`
    /// columns.
    #[inline(always)]
    pub(super) fn or_null_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        value_byte: u8,
        validity: &mut Validity,
    ) -> bool {
        let DecimalSource::Fixed(n) = self.source else {
            return false;
        };
        let p = f.pos;
        let Some(&index) = f.buf.get(p) else {
            return false;
        };
        let (present, index_ok) = null_index(index, value_byte);
        let end = p + 1 + n;
        if !index_ok | self.is_wide | (n > 16) | (end < 16) | (end > f.buf.len()) {
            return false;
        }
        let value = window_short(f.buf, end, n);
        self.narrow.push(keep(value, present));
        validity.push(present);
        f.pos = select_unpredictable(present, end, p + 1);
        true
    }

    /// The values of `rows` records of `size` bytes starting at `buf[start]`, this column's
    /// `n` bytes (see [`DecimalCol::fixed_size`]) at `offset` in each: a strided read.
    pub(super) fn extend_fixed_rows(
        &mut self,
        buf: &[u8],
        start: usize,
        rows: usize,
        size: usize,
        offset: usize,
    ) {
        let n = self.fixed_size().expect("a fixed-size decimal");
        let first = start + offset + n;
        if !self.is_wide && first >= 16 {
            // Every value's window is in the buffer; the common sizes get their shift as a
            // constant.
            match n {
                8 => extend_windows::<8>(&mut self.narrow, buf, first, rows, size),
                16 => extend_windows::<16>(&mut self.narrow, buf, first, rows, size),
                _ => self
                    .narrow
                    .extend((0..rows).map(|r| window_short(buf, first + r * size, n))),
            }
            return;
        }
        let ends = (0..rows).map(|r| first + r * size);
        if self.is_wide {
            self.wide.extend(
                ends.map(|end| {
                    wide_at(buf, end, &buf[end - n..end]).expect("32 bytes or fewer fit")
                }),
            );
        } else {
            self.narrow.extend(ends.map(|end| {
                narrow_at::<true>(buf, end, &buf[end - n..end]).expect("16 bytes or fewer fit")
            }));
        }
    }

    pub(super) fn push_zero(&mut self) {
        if self.is_wide {
            self.wide.push(i256::ZERO);
        } else {
            self.narrow.push(0);
        }
    }

    pub(super) fn reserve(&mut self, n: usize, pool: Option<&BufferPool>) {
        if self.is_wide {
            super::grow(&mut self.wide, n, pool);
        } else {
            super::grow(&mut self.narrow, n, pool);
        }
    }

    fn len(&self) -> usize {
        if self.is_wide {
            self.wide.len()
        } else {
            self.narrow.len()
        }
    }

    /// Keep the first `len` values.
    pub(super) fn truncate(&mut self, len: usize) {
        self.narrow.truncate(len);
        self.wide.truncate(len);
        self.checked = self.checked.min(len);
    }

    /// Check that the values appended since the last call have at most the schema's
    /// precision in digits (the bytes only bound them by their length): Arrow's decimal
    /// arrays must not hold more, and pyarrow's Parquet writer, for one, stores such a value
    /// cut. One pass over the new values, without a branch a value; which record is bad is
    /// found by decoding again ([`DecimalCol::decode`] checks each value).
    pub(super) fn validate_precision(&mut self) -> Result<(), DecodeErrorKind> {
        let p = self.precision;
        let fits = if self.is_wide {
            self.wide[self.checked..].iter().fold(true, |ok, &v| {
                ok & Decimal256Type::is_valid_decimal_precision(v, p)
            })
        } else if p <= 18 && matches!(self.source, DecimalSource::Fixed(n) if n <= 8) {
            // Sign-extended from at most 8 bytes: the low word holds the value.
            let max = 10i64.pow(u32::from(p)) - 1;
            let span = (2 * max) as u64;
            self.narrow[self.checked..].iter().fold(0u8, |out, &v| {
                out | u8::from((v as i64).wrapping_add(max) as u64 > span)
            }) == 0
        } else if p <= 18 {
            // Within an i64 (the high word the low word's sign) and -max <= v <= max, as one
            // unsigned comparison: 64-bit operations only, no branch.
            let max = 10i64.pow(u32::from(p)) - 1;
            let span = (2 * max) as u64;
            self.narrow[self.checked..].iter().fold(0u64, |out, &v| {
                let (lo, hi) = (v as i64, (v >> 64) as i64);
                out | (hi ^ (lo >> 63)) as u64 | u64::from(lo.wrapping_add(max) as u64 > span)
            }) == 0
        } else {
            // -max <= v <= max as one unsigned comparison (2 max < 2^128 for p <= 38).
            let max = 10i128.pow(u32::from(p)) - 1;
            let span = 2 * max as u128;
            self.narrow[self.checked..].iter().fold(0u8, |out, &v| {
                out | u8::from(v.wrapping_add(max) as u128 > span)
            }) == 0
        };
        if !fits {
            return Err(DecodeErrorKind::DecimalPrecision { precision: p });
        }
        self.checked = self.len();
        Ok(())
    }

    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        self.checked = 0;
        if self.is_wide {
            let values = pool.scalar(std::mem::take(&mut self.wide));
            Arc::new(
                Decimal256Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        } else {
            let values = pool.scalar(std::mem::take(&mut self.narrow));
            Arc::new(
                Decimal128Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        }
    }
}

/// The big-endian two's-complement integer `b` (the `b.len()` bytes of `buf` that end at
/// `end`) as an `i128`, or `None` when it does not fit.
///
/// A value of at most 16 bytes with 16 bytes of `buf` before its end (every value but those at
/// the very start of a block) is read as one window ending at `end` (16 bytes, or 8 for
/// [`window_short`]'s short values): byte-swapped, the bytes before the value shifted out to
/// the left and shifted back arithmetically, which extends the sign. That replaces a copy of
/// `b.len()` bytes (a `memcpy` call) into a filled array; [`DecimalCol::sign_extend`] is the
/// reference, and serves every other value.
///
/// `SHORT`: read by [`window_short`] (see there which columns).
#[inline(always)]
fn narrow_at<const SHORT: bool>(buf: &[u8], end: usize, b: &[u8]) -> Option<i128> {
    let n = b.len();
    if n <= 16 && end >= 16 {
        Some(if SHORT {
            window_short(buf, end, n)
        } else {
            window_i128(buf, end, n)
        })
    } else {
        DecimalCol::sign_extend::<16>(b).map(i128::from_be_bytes)
    }
}

/// [`narrow_at`] for `Decimal256`: two windows for values of 17 to 32 bytes.
#[inline(always)]
fn wide_at(buf: &[u8], end: usize, b: &[u8]) -> Option<i256> {
    let n = b.len();
    if n <= 16 && end >= 16 {
        let low = window_i128(buf, end, n);
        Some(i256::from_parts(low as u128, low >> 127))
    } else if n <= 32 && end >= 32 {
        let low = window_i128(buf, end, 16) as u128;
        Some(i256::from_parts(low, window_i128(buf, end - 16, n - 16)))
    } else {
        DecimalCol::sign_extend::<32>(b).map(i256::from_be_bytes)
    }
}

/// The `N`-byte values that end at `first`, `first + size`, ... (`rows` of them), read as
/// [`window_short`] with `N` known.
fn extend_windows<const N: usize>(
    out: &mut Vec<i128>,
    buf: &[u8],
    first: usize,
    rows: usize,
    size: usize,
) {
    out.extend((0..rows).map(|r| window_short(buf, first + r * size, N)));
}

/// The `n <= 16` bytes of `buf` that end at `end >= 16`, a big-endian two's-complement
/// integer, sign-extended.
#[inline(always)]
fn window_i128(buf: &[u8], end: usize, n: usize) -> i128 {
    debug_assert!(n <= 16 && end >= 16);
    let window: [u8; 16] = buf[end - 16..end].try_into().expect("16 bytes");
    if n == 0 {
        return 0;
    }
    // 0..=120: the bytes before the value, shifted out.
    let shift = 8 * (16 - n) as u32;
    ((u128::from_be_bytes(window) << shift) as i128) >> shift
}

/// [`window_i128`], with values of at most eight bytes shifted as 64-bit words: a 128-bit
/// shift by a variable count is a double shift, a test and two selects each way, ~16
/// instructions against ~5. For columns whose values are all on one side of eight bytes
/// (a `fixed` size; precision 18 or less, in its fewest bytes, is at most eight): where
/// lengths straddle it (`bytes` decimals of precision 38), the branch on the length
/// mispredicts and costs more than the shift (+40 %).
#[inline(always)]
fn window_short(buf: &[u8], end: usize, n: usize) -> i128 {
    debug_assert!(n <= 16 && end >= 16);
    if n == 0 || n > 8 {
        return window_i128(buf, end, n);
    }
    let window: [u8; 8] = buf[end - 8..end].try_into().expect("8 bytes");
    // 0..=56: the bytes before the value, shifted out.
    let shift = 8 * (8 - n) as u32;
    i128::from(((u64::from_be_bytes(window) << shift) as i64) >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A xorshift generator for the tests below.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// A random byte, often a sign-extension byte or one next to a sign boundary, so that
    /// long values that still fit (and ones that just do not) are common.
    fn edge_byte(x: &mut u64) -> u8 {
        match next(x) % 6 {
            0 | 1 => 0x00,
            2 => 0xff,
            3 => 0x80,
            4 => 0x7f,
            _ => next(x) as u8,
        }
    }

    /// The window reads ([`narrow_at`], [`wide_at`]) equal the reference sign extension for
    /// every value length up to 40 bytes, at every end position in the buffer (those too close
    /// to its start take the reference path themselves).
    #[test]
    fn decimal_windows_match_sign_extension() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200 {
            let buf: Vec<u8> = (0..(next(&mut x) % 80) as usize)
                .map(|_| edge_byte(&mut x))
                .collect();
            for end in 0..=buf.len() {
                for n in 0..=end.min(40) {
                    let b = &buf[end - n..end];
                    let reference = DecimalCol::sign_extend::<16>(b).map(i128::from_be_bytes);
                    assert_eq!(
                        narrow_at::<false>(&buf, end, b),
                        reference,
                        "{b:02x?} at {end}"
                    );
                    assert_eq!(
                        narrow_at::<true>(&buf, end, b),
                        reference,
                        "{b:02x?} at {end}"
                    );
                    assert_eq!(
                        wide_at(&buf, end, b),
                        DecimalCol::sign_extend::<32>(b).map(i256::from_be_bytes),
                        "{b:02x?} ending at {end}"
                    );
                }
            }
        }
    }

    /// Records of `fixed` decimals only (the strided fixed-size-record path), and the same
    /// fields after a `long` (the record loop), decode to the reference values, in batches that
    /// end anywhere; a `fixed(17)` decimal of precision 38 (not always fitting) that does not
    /// fit is an error.
    #[test]
    fn fixed_decimal_records_decode_to_the_reference_values() {
        use crate::decode::{DecodeOptions, DecodePlan};
        use crate::schema::Schema;
        use arrow_array::{Array, Decimal128Array, Decimal256Array};
        let fields = r#"{"name":"a","type":{"type":"fixed","name":"f8","size":8,"logicalType":"decimal","precision":18,"scale":2}},
            {"name":"b","type":{"type":"fixed","name":"f16","size":16,"logicalType":"decimal","precision":38,"scale":0}},
            {"name":"c","type":{"type":"fixed","name":"f3","size":3,"logicalType":"decimal","precision":6,"scale":1}},
            {"name":"d","type":{"type":"fixed","name":"f20","size":20,"logicalType":"decimal","precision":45,"scale":3}}"#;
        let sizes = [8, 16, 3, 20];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let rows = 700;
        // Significant bytes each precision holds (2^55 < 10^18, 2^119 < 10^38, 2^15 < 10^6,
        // 2^143 < 10^45).
        let keep = [7, 15, 2, 18];
        let values: Vec<Vec<u8>> = (0..rows * sizes.len())
            .map(|i| {
                let mut v: Vec<u8> = (0..sizes[i % 4]).map(|_| edge_byte(&mut x)).collect();
                crate::decode::test_encode::within(&mut v, keep[i % 4]);
                v
            })
            .collect();
        for lead in [false, true] {
            let schema = Schema::parse(&format!(
                r#"{{"type":"record","name":"r","fields":[{}{fields}]}}"#,
                if lead {
                    r#"{"name":"n","type":"long"},"#
                } else {
                    ""
                }
            ))
            .unwrap();
            let mut block = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if lead && i % 4 == 0 {
                    block.push(0x02);
                }
                block.extend_from_slice(v);
            }
            for batch_size in [1, 33, 256, 1000] {
                let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                    .unwrap()
                    .decoder()
                    .with_batch_size(batch_size);
                let mut batches = decoder.decode_block(&block, rows as u64).unwrap();
                batches.extend(decoder.flush().unwrap());
                let column = |j: usize| -> Vec<i256> {
                    let j = j + usize::from(lead);
                    batches
                        .iter()
                        .flat_map(|batch| {
                            let a = batch.column(j);
                            match a.as_any().downcast_ref::<Decimal128Array>() {
                                Some(a) => a.values().iter().map(|&v| i256::from_i128(v)).collect(),
                                None => a
                                    .as_any()
                                    .downcast_ref::<Decimal256Array>()
                                    .unwrap()
                                    .values()
                                    .to_vec(),
                            }
                        })
                        .collect()
                };
                for j in 0..4 {
                    let expected: Vec<i256> = values[j..]
                        .iter()
                        .step_by(4)
                        .map(|v| i256::from_be_bytes(DecimalCol::sign_extend::<32>(v).unwrap()))
                        .collect();
                    assert_eq!(
                        column(j),
                        expected,
                        "field {j}, lead {lead}, batch {batch_size}"
                    );
                }
            }
        }
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"fixed","name":"f17","size":17,"logicalType":"decimal","precision":38,"scale":0}}]}"#,
        )
        .unwrap();
        let mut block = vec![0xff; 17];
        block.extend([0x00; 17]);
        block.extend([0x01; 17]);
        let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder();
        let error = decoder.decode_block(&block, 3).unwrap_err();
        assert!(
            matches!(error.kind(), DecodeErrorKind::DecimalOverflow { len: 17 }),
            "{error}"
        );
    }

    /// A decimal with more digits than its precision (a writer that did not check) is an
    /// error naming its record, field and offset, in `bytes` and `fixed`, plain and in a
    /// union, `Decimal128` and `Decimal256`; the rows before it are kept.
    #[test]
    fn decimals_past_their_precision_are_errors() {
        use crate::decode::test_encode::zigzag;
        use crate::decode::{DecodeOptions, DecodePlan};
        use crate::schema::Schema;
        let bytes = |v: &[u8]| {
            let mut e = Vec::new();
            zigzag(v.len() as i64, &mut e);
            e.extend(v);
            e
        };
        let cases: [(&str, Vec<u8>, Vec<u8>); 4] = [
            // 10^38 - 1 fits thirty-eight digits, -10^38 does not (the bound of Decimal128).
            (
                r#"{"type":"fixed","name":"F","size":16,"logicalType":"decimal","precision":38,"scale":0}"#,
                (10i128.pow(38) - 1).to_be_bytes().to_vec(),
                (-(10i128.pow(38))).to_be_bytes().to_vec(),
            ),
            // 9999 fits four digits, 0x7fffffff (2147483647) does not.
            (
                r#"{"type":"bytes","logicalType":"decimal","precision":4,"scale":0}"#,
                bytes(&[0x27, 0x0f]),
                bytes(&[0x7f, 0xff, 0xff, 0xff]),
            ),
            // 10^18 - 1 fits eighteen digits, i64::MAX does not.
            (
                r#"{"type":"fixed","name":"F","size":8,"logicalType":"decimal","precision":18,"scale":2}"#,
                (10i64.pow(18) - 1).to_be_bytes().to_vec(),
                i64::MAX.to_be_bytes().to_vec(),
            ),
            // Decimal256: 2^127 fits forty digits, 2^135 (41 digits) does not.
            (
                r#"{"type":"bytes","logicalType":"decimal","precision":40,"scale":0}"#,
                bytes(&{
                    let mut v = vec![0u8; 17];
                    v[1] = 0x80;
                    v
                }),
                bytes(&[0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ),
        ];
        for (ty, good, bad) in cases {
            let schema = Schema::parse(&format!(
                r#"{{"type":"record","name":"r","fields":[{{"name":"a","type":{ty}}},{{"name":"b","type":["null",{{"type":"record","name":"In","fields":[{{"name":"c","type":{}}}]}}]}}]}}"#,
                ty.replace(r#""name":"F""#, r#""name":"G""#)
            ))
            .unwrap();
            for (bad_in_b, bad_row) in [(false, 0usize), (false, 3), (true, 5)] {
                let mut block = Vec::new();
                let mut offset = 0;
                for row in 0..8 {
                    let (a, c) = match (row == bad_row, bad_in_b) {
                        (true, false) => (&bad, &good),
                        (true, true) => (&good, &bad),
                        _ => (&good, &good),
                    };
                    if row == bad_row && !bad_in_b {
                        offset = block.len();
                    }
                    block.extend(a);
                    block.push(2);
                    if row == bad_row && bad_in_b {
                        offset = block.len();
                    }
                    block.extend(c);
                }
                let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                    .unwrap()
                    .decoder();
                let error = decoder.decode_block(&block, 8).unwrap_err();
                assert!(
                    matches!(error.kind(), DecodeErrorKind::DecimalPrecision { .. }),
                    "{ty}: {error}"
                );
                assert_eq!(error.record(), Some(bad_row as u64), "{ty}: {error}");
                let path = if bad_in_b { "b.c" } else { "a" };
                assert_eq!(error.field_path(), path, "{ty}: {error}");
                assert_eq!(error.offset(), offset, "{ty}: {error}");
                let kept = decoder.flush().unwrap();
                assert_eq!(kept.iter().map(|b| b.num_rows()).sum::<usize>(), bad_row);
            }
        }
    }
}
