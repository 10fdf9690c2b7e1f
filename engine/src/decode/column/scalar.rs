//! Scalar columns: the plain numbers ([`Prim`]) and the bulk copy of `float`/`double` array
//! items. Enums and decimals have modules of their own.

use crate::error::DecodeErrorKind;
use arrow_schema::{DataType, TimeUnit};

#[derive(Debug, Clone)]
pub(crate) struct Prim<T> {
    pub(crate) values: Vec<T>,
    pub(crate) data_type: DataType,
    /// For a time of day, one past its largest value (a day in its unit); values checked
    /// against it by [`Prim::validate_time`].
    day: Option<u64>,
    /// Values [`Prim::validate_time`] has checked.
    checked: usize,
}

impl<T> Prim<T> {
    pub(crate) fn new(data_type: DataType) -> Self {
        let day = match data_type {
            DataType::Time32(TimeUnit::Second) => Some(86_400),
            DataType::Time32(TimeUnit::Millisecond) => Some(86_400_000),
            DataType::Time64(TimeUnit::Microsecond) => Some(86_400_000_000),
            DataType::Time64(TimeUnit::Nanosecond) => Some(86_400_000_000_000),
            _ => None,
        };
        Prim {
            values: Vec::new(),
            data_type,
            day,
            checked: 0,
        }
    }

    /// Keep the first `len` values.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.values.truncate(len);
        self.checked = self.checked.min(len);
    }

    /// The values, taken for an array (the column starts again empty).
    pub(crate) fn take(&mut self) -> Vec<T> {
        self.checked = 0;
        std::mem::take(&mut self.values)
    }
}

impl<T: Copy + Into<i64>> Prim<T> {
    /// Check that the times of day appended since the last call are within a day: Arrow's
    /// `Time32`/`Time64` arrays must not hold others (pyarrow's full validation refuses them,
    /// and Avro's readers in Java and Python fail on them). One pass without a branch a
    /// value; nothing to do for columns of other types. Which record is bad is found by
    /// decoding again, record by record.
    pub(crate) fn validate_time(&mut self) -> Result<(), DecodeErrorKind> {
        let Some(day) = self.day else {
            return Ok(());
        };
        let outside = self.values[self.checked..]
            .iter()
            .fold(0u8, |out, &v| out | u8::from(v.into() as u64 >= day));
        if outside != 0 {
            let value = self.values[self.checked..]
                .iter()
                .map(|&v| v.into())
                .find(|&v| v as u64 >= day)
                .unwrap_or_default();
            return Err(DecodeErrorKind::TimeOfDayOutOfRange {
                value,
                unit: match self.data_type {
                    DataType::Time32(TimeUnit::Second) => "s",
                    DataType::Time32(TimeUnit::Millisecond) => "ms",
                    DataType::Time64(TimeUnit::Microsecond) => "µs",
                    _ => "ns",
                },
            });
        }
        self.checked = self.values.len();
        Ok(())
    }
}

/// `f32` and `f64` (implemented for nothing else): every bit pattern is a valid value, and on a
/// little-endian target the in-memory layout of a value is its Avro encoding.
pub(super) trait LeFloat: Copy {
    /// `size_of::<Self>()`.
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
}

impl LeFloat for f32 {
    const SIZE: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
}

impl LeFloat for f64 {
    const SIZE: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

/// The bytes [`extend_le`] moves at once for a short array block.
const FLOATS_MOVE: usize = 128;

/// Append the `n` values of an array block of `float`s or `double`s at `buf[from..]` to `out`
/// (the caller checked that `n * T::SIZE` bytes are there): on little-endian targets one copy of
/// the bytes (~5 % of decoding Telemetry's 16 doubles per row, against a vectorized loop). A
/// block of at most [`FLOATS_MOVE`] bytes (16 doubles), the common short array, is one fixed
/// move of that many bytes when they are readable: no call to `memcpy`, whose branches on the
/// size mispredicted about once per array of random length.
#[inline(always)]
pub(super) fn extend_le<T: LeFloat>(out: &mut Vec<T>, buf: &[u8], from: usize, n: usize) {
    debug_assert_eq!(std::mem::size_of::<T>(), T::SIZE);
    let size = n * T::SIZE;
    debug_assert!(from + size <= buf.len());
    if cfg!(target_endian = "little") {
        let len = out.len();
        if size <= FLOATS_MOVE && buf.len() - from >= FLOATS_MOVE {
            out.reserve(FLOATS_MOVE / T::SIZE);
            // SAFETY: `FLOATS_MOVE` bytes are readable at `buf[from]` (checked) and writable
            // after `len` (`reserve` of that many bytes' values); `out` is owned and `buf`
            // borrowed, so they do not overlap. `T` is `f32` or `f64` (`LeFloat`): any bytes are
            // valid values, equal to `T::from_le` of each chunk on this little-endian target;
            // `set_len` exposes only the `n` values of the block (`size <= FLOATS_MOVE`).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    buf.as_ptr().add(from),
                    out.as_mut_ptr().add(len).cast::<u8>(),
                    FLOATS_MOVE,
                );
                out.set_len(len + n);
            }
        } else {
            let bytes = &buf[from..from + size];
            out.reserve(n);
            // SAFETY: `reserve(n)` leaves room for `n` more values after `len`, which is
            // `size` bytes; `bytes` holds that many; the regions do not overlap (`out` is
            // owned, `bytes` is borrowed input). `T` is `f32` or `f64` (`LeFloat`), so the
            // copied bytes are valid values, equal to `T::from_le` of each chunk on this
            // little-endian target; `set_len` exposes only those `n` values.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    out.as_mut_ptr().add(len).cast::<u8>(),
                    size,
                );
                out.set_len(len + n);
            }
        }
    } else {
        out.extend(buf[from..from + size].chunks_exact(T::SIZE).map(T::from_le));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    /// Every block length around the fixed move (0 to 20 doubles, 0 to 40 floats) at every
    /// distance from the input's end (fewer than `FLOATS_MOVE` bytes readable: the copy of the
    /// exact size), after values already there: the values of `from_le_bytes`.
    #[test]
    fn extend_le_matches_from_le_bytes() {
        let buf: Vec<u8> = (0..=255u8).cycle().skip(3).take(400).collect();
        for from in [0usize, 1, 5, 100, 230, 240, 250, 272, 300, 399, 400] {
            for n in 0..=20usize {
                if from + 8 * n <= buf.len() {
                    let mut doubles = vec![1.5f64];
                    extend_le(&mut doubles, &buf, from, n);
                    let expected: Vec<u64> = std::iter::once(1.5f64.to_bits())
                        .chain(
                            buf[from..from + 8 * n]
                                .chunks_exact(8)
                                .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
                        )
                        .collect();
                    let got: Vec<u64> = doubles.iter().map(|d| d.to_bits()).collect();
                    assert_eq!(got, expected, "doubles: from {from}, n {n}");
                }
            }
            for n in 0..=40usize {
                if from + 4 * n <= buf.len() {
                    let mut floats: Vec<f32> = Vec::new();
                    extend_le(&mut floats, &buf, from, n);
                    let expected: Vec<u32> = buf[from..from + 4 * n]
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                        .collect();
                    let got: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
                    assert_eq!(got, expected, "floats: from {from}, n {n}");
                }
            }
        }
    }

    /// A time of day outside a day (`time-millis` and `time-micros`, plain, in an array, in
    /// a union) is an error naming its record, field and the record's offset; the rows
    /// before it are kept; the bounds themselves (0 and a day less one unit) read.
    #[test]
    fn times_outside_a_day_are_errors() {
        use crate::decode::test_encode::zigzag;
        use crate::decode::{DecodeOptions, DecodePlan};
        use crate::schema::Schema;
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","fields":[
                {"name":"id","type":"long"},
                {"name":"t","type":{"type":"int","logicalType":"time-millis"}},
                {"name":"u","type":{"type":"array","items":{"type":"long","logicalType":"time-micros"}}},
                {"name":"n","type":["null",{"type":"int","logicalType":"time-millis"}]}]}"#,
        )
        .unwrap();
        const MS: i64 = 86_400_000;
        const US: i64 = 86_400_000_000;
        let row = |out: &mut Vec<u8>, id: i64, t: i64, u: [i64; 2], n: Option<i64>| {
            zigzag(id, out);
            zigzag(t, out);
            zigzag(2, out);
            zigzag(u[0], out);
            zigzag(u[1], out);
            zigzag(0, out);
            match n {
                None => out.push(0),
                Some(v) => {
                    out.push(2);
                    zigzag(v, out);
                }
            }
        };
        // (field, t, u, n, message)
        type Case = (&'static str, i64, [i64; 2], Option<i64>, &'static str);
        let bad_cases: [Case; 5] = [
            ("t", MS, [0, 1], Some(5), "time of day 86400000 ms"),
            ("t", -1, [0, 1], None, "time of day -1 ms"),
            ("u.1", 5, [0, US], None, "time of day 86400000000 µs"),
            ("u.0", 5, [-7, 0], Some(1), "time of day -7 µs"),
            ("n", 5, [0, 1], Some(MS + 3), "time of day 86400003 ms"),
        ];
        for rows in [8usize, 1000] {
            for (field, t, u, n, message) in bad_cases {
                for bad_row in [0, rows / 2, rows - 1] {
                    let mut block = Vec::new();
                    let mut offset = 0;
                    for r in 0..rows {
                        if r == bad_row {
                            offset = block.len();
                            row(&mut block, r as i64, t, u, n);
                        } else {
                            let edge = (r % 2) as i64;
                            row(
                                &mut block,
                                r as i64,
                                edge * (MS - 1),
                                [edge * (US - 1), 0],
                                (r % 3 != 0).then_some((1 - edge) * (MS - 1)),
                            );
                        }
                    }
                    let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                        .unwrap()
                        .decoder();
                    let error = decoder.decode_block(&block, rows as u64).unwrap_err();
                    assert!(
                        matches!(error.kind(), DecodeErrorKind::TimeOfDayOutOfRange { .. }),
                        "{field}: {error}"
                    );
                    assert!(error.to_string().contains(message), "{error}");
                    assert_eq!(error.record(), Some(bad_row as u64), "{field}: {error}");
                    let path = error.field_path();
                    assert_eq!(path, field.split('.').next().unwrap(), "{error}");
                    assert_eq!(error.offset(), offset, "{field}: {error}");
                    let kept = decoder.flush().unwrap();
                    assert_eq!(kept.iter().map(|b| b.num_rows()).sum::<usize>(), bad_row);
                    if let Some(batch) = &kept {
                        batch
                            .columns()
                            .iter()
                            .for_each(|c| c.to_data().validate_full().unwrap());
                    }
                }
            }
            // Every row within a day: read whole.
            let mut block = Vec::new();
            for r in 0..rows {
                let edge = (r % 2) as i64;
                row(
                    &mut block,
                    r as i64,
                    edge * (MS - 1),
                    [edge * (US - 1), 0],
                    Some(0),
                );
            }
            let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                .unwrap()
                .decoder();
            decoder.decode_block(&block, rows as u64).unwrap();
            let kept = decoder.flush().unwrap();
            assert_eq!(kept.iter().map(|b| b.num_rows()).sum::<usize>(), rows);
        }
        // Read in another unit (`time-millis` as `time-micros`): checked in the reader's.
        let writer = Schema::parse(
            r#"{"type":"record","name":"r","fields":[
                {"name":"t","type":{"type":"int","logicalType":"time-millis"}}]}"#,
        )
        .unwrap();
        let reader = Schema::parse(
            r#"{"type":"record","name":"r","fields":[
                {"name":"t","type":{"type":"long","logicalType":"time-micros"}}]}"#,
        )
        .unwrap();
        let mut block = Vec::new();
        for t in [MS - 1, MS] {
            zigzag(t, &mut block);
        }
        let mut decoder = DecodePlan::resolve(&writer, &reader, &DecodeOptions::default())
            .unwrap()
            .decoder();
        let error = decoder.decode_block(&block, 2).unwrap_err();
        assert!(
            error.to_string().contains("time of day 86400000000 µs"),
            "{error}"
        );
        assert_eq!(error.record(), Some(1), "{error}");
        assert_eq!(error.field_path(), "t", "{error}");
    }
}
