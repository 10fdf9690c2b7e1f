//! Writing one batch's values as Avro binary: a [`Plan`](super::plan::Plan) bound to the
//! batch's arrays (each downcast once per batch), then each record appended row by row
//! (records of many fields: `chunk.rs`). Values the Avro type cannot hold are an
//! [`EncodeError`] naming the column path and the row.

use super::bind::Bound;
use super::bind::{Kind, NO_VALUE};
use super::plan::Scale;
use super::sink::{put_fixed, put_long};
use super::views::{Decs, Ints};
use super::{EncodeError, EncodeErrorKind};
use crate::varint::{Fast, Kernel};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_buffer::{i256, ToByteSlice};
use arrow_schema::IntervalUnit;

impl<'a> Bound<'a> {
    fn error(&self, kind: EncodeErrorKind, row: usize) -> EncodeError {
        EncodeError::new(kind, &self.path, row)
    }

    /// Whether every value writes no bytes and cannot fail: Avro nulls, and records of them
    /// without nulls of their own.
    fn writes_nothing(&self) -> bool {
        match &self.kind {
            Kind::Null => true,
            Kind::Record(fields) => {
                self.nulls.is_none() && fields.iter().all(Bound::writes_nothing)
            }
            _ => false,
        }
    }

    /// Append the value at `i` (`row`: the batch row it belongs to, for errors).
    pub(crate) fn write(&self, i: usize, row: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        if let Some(n) = &self.nulls {
            if n.is_null(i) {
                return match &self.kind {
                    Kind::Null => Ok(()),
                    Kind::Branch { null: Some(b), .. } => {
                        put_long(out, i64::from(*b));
                        Ok(())
                    }
                    _ => Err(self.error(EncodeErrorKind::Null, row)),
                };
            }
        }
        match &self.kind {
            Kind::Null => {}
            Kind::Absent => return Err(self.error(EncodeErrorKind::Null, row)),
            Kind::Boolean(a) => out.push(u8::from(a.value(i))),
            Kind::Int {
                values,
                scale,
                int32,
            } => {
                let range = || self.error(EncodeErrorKind::OutOfRange, row);
                let v = scaled(values, i, *scale, *int32).ok_or_else(range)?;
                put_long(out, v);
            }
            Kind::Time {
                values,
                scale,
                int32,
                day,
            } => {
                let range = || self.error(EncodeErrorKind::OutOfRange, row);
                let v = scaled(values, i, *scale, *int32).ok_or_else(range)?;
                if !(0..*day).contains(&v) {
                    let unit = if *int32 { "ms" } else { "µs" };
                    let kind = EncodeErrorKind::TimeOfDayOutOfRange { value: v, unit };
                    return Err(self.error(kind, row));
                }
                put_long(out, v);
            }
            Kind::F16(v, double) => {
                let f = v[i].to_f32();
                if *double {
                    put_fixed(out, f64::from(f).to_le_bytes());
                } else {
                    put_fixed(out, f.to_le_bytes());
                }
            }
            Kind::F32(v, double) => {
                if *double {
                    put_fixed(out, f64::from(v[i]).to_le_bytes());
                } else {
                    put_fixed(out, v[i].to_le_bytes());
                }
            }
            Kind::F64(v) => put_fixed(out, v[i].to_le_bytes()),
            Kind::Bytes { values, check_utf8 } => {
                if *check_utf8 && simdutf8::basic::from_utf8(values.get(i)).is_err() {
                    return Err(self.error(EncodeErrorKind::InvalidUtf8, row));
                }
                values.put(i, out);
            }
            Kind::Dict { keys, value } => match keys[i] {
                NO_VALUE => return Err(self.error(EncodeErrorKind::DictionaryKey, row)),
                key => value.write(key, row, out)?,
            },
            Kind::DictEnum { keys, symbol } => match symbol.get(keys[i]) {
                Some(Ok(s)) => put_long(out, i64::from(*s)),
                Some(Err(v)) => return Err(self.error(EncodeErrorKind::NotASymbol(v.clone()), row)),
                None => return Err(self.error(EncodeErrorKind::DictionaryKey, row)),
            },
            Kind::Enum { values, symbols } => {
                let b = values.get(i);
                let s = std::str::from_utf8(b).ok().and_then(|s| symbols.get(s));
                match s {
                    Some(s) => put_long(out, i64::from(*s)),
                    None => {
                        let v = String::from_utf8_lossy(b).into_owned();
                        return Err(self.error(EncodeErrorKind::NotASymbol(v), row));
                    }
                }
            }
            Kind::Fixed(a) => out.extend_from_slice(a.value(i)),
            Kind::UuidText(values) => {
                let b = values.get(i);
                if crate::decode::parse_uuid(b).is_none() {
                    // (At most 64 bytes of it in the message: the value may be megabytes.)
                    let v = String::from_utf8_lossy(&b[..b.len().min(64)]).into_owned();
                    return Err(self.error(EncodeErrorKind::InvalidUuid(v), row));
                }
                values.put(i, out);
            }
            Kind::Uuid(a) => {
                let b = a.value(i);
                const HEX: &[u8; 16] = b"0123456789abcdef";
                put_long(out, 36);
                for (k, byte) in b.iter().enumerate() {
                    if matches!(k, 4 | 6 | 8 | 10) {
                        out.push(b'-');
                    }
                    out.push(HEX[(byte >> 4) as usize]);
                    out.push(HEX[(byte & 15) as usize]);
                }
            }
            Kind::Decimal {
                values,
                precision,
                fixed,
            } => {
                let (be, fits): ([u8; 32], bool) = match values {
                    Decs::D32(v) => (
                        sign_extend(&i128::from(v[i]).to_be_bytes()),
                        within(i128::from(v[i]), *precision),
                    ),
                    Decs::D64(v) => (
                        sign_extend(&i128::from(v[i]).to_be_bytes()),
                        within(i128::from(v[i]), *precision),
                    ),
                    Decs::D128(v) => (sign_extend(&v[i].to_be_bytes()), within(v[i], *precision)),
                    Decs::D256(v) => (v[i].to_be_bytes(), within256(v[i], *precision)),
                };
                if !fits {
                    return Err(self.error(EncodeErrorKind::Precision(*precision), row));
                }
                let minimal = minimal_len(&be);
                match fixed {
                    None => {
                        put_long(out, minimal as i64);
                        out.extend_from_slice(&be[32 - minimal..]);
                    }
                    Some(n) => {
                        if minimal > *n {
                            return Err(self.error(EncodeErrorKind::Precision(*precision), row));
                        }
                        let fill = if be[0] & 0x80 != 0 { 0xff } else { 0 };
                        if *n > 32 {
                            out.extend(std::iter::repeat_n(fill, n - 32));
                            out.extend_from_slice(&be);
                        } else {
                            out.extend_from_slice(&be[32 - n..]);
                        }
                    }
                }
            }
            Kind::Duration(a, unit) => {
                let (months, days, millis): (i64, i64, i64) = match unit {
                    IntervalUnit::YearMonth => (
                        i64::from(a.as_primitive::<IntervalYearMonthType>().value(i)),
                        0,
                        0,
                    ),
                    IntervalUnit::DayTime => {
                        let v = a.as_primitive::<IntervalDayTimeType>().value(i);
                        (0, i64::from(v.days), i64::from(v.milliseconds))
                    }
                    IntervalUnit::MonthDayNano => {
                        let v = a.as_primitive::<IntervalMonthDayNanoType>().value(i);
                        if v.nanoseconds % 1_000_000 != 0 {
                            return Err(self.error(EncodeErrorKind::OutOfRange, row));
                        }
                        (
                            i64::from(v.months),
                            i64::from(v.days),
                            v.nanoseconds / 1_000_000,
                        )
                    }
                };
                for part in [months, days, millis] {
                    let Ok(p) = u32::try_from(part) else {
                        return Err(self.error(EncodeErrorKind::OutOfRange, row));
                    };
                    out.extend_from_slice(&p.to_le_bytes());
                }
            }
            Kind::Record(_) => self.write_record(i, row, out)?,
            Kind::Array { offsets, item } => {
                let (start, end) = offsets.range(i);
                if end > start {
                    put_long(out, (end - start) as i64);
                    match (&item.kind, item.nulls.as_ref()) {
                        // Items of no bytes (nulls, records of nulls): nothing to write for
                        // any number of them (a list may hold billions, as the decoder
                        // produces them in O(1)).
                        _ if item.writes_nothing() => {}
                        // Arrays of doubles or floats without nulls: their bytes as they are
                        // (Avro's encoding is little-endian IEEE 754, as Arrow's buffers are).
                        #[cfg(target_endian = "little")]
                        (Kind::F64(v), None) => {
                            out.extend_from_slice(v[start..end].to_byte_slice())
                        }
                        #[cfg(target_endian = "little")]
                        (Kind::F32(v, false), None) => {
                            out.extend_from_slice(v[start..end].to_byte_slice())
                        }
                        (
                            Kind::Int {
                                values: Ints::I64(v),
                                scale: Scale::One,
                                int32: false,
                            },
                            None,
                        ) => Fast.write_longs(&v[start..end], out),
                        (
                            Kind::Int {
                                values: Ints::I32(v),
                                scale: Scale::One,
                                ..
                            },
                            None,
                        ) => Fast.write_ints(&v[start..end], out),
                        (Kind::Record(_), None) => {
                            for k in start..end {
                                item.write_record(k, row, out)?;
                            }
                        }
                        _ => {
                            for k in start..end {
                                item.write(k, row, out)?;
                            }
                        }
                    }
                }
                out.push(0);
            }
            Kind::Map {
                offsets,
                keys,
                value,
            } => {
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                if end > start {
                    put_long(out, (end - start) as i64);
                    for k in start..end {
                        keys.put(k, out);
                        value.write(k, row, out)?;
                    }
                }
                out.push(0);
            }
            Kind::Branch { index, value, .. } => {
                put_long(out, i64::from(*index));
                value.write(i, row, out)?;
            }
            Kind::Union {
                array,
                dense,
                branches,
                null,
            } => {
                let tid = array.type_id(i);
                let Some(Some((index, value))) = branches.get(tid as u8 as usize) else {
                    return Err(self.error(EncodeErrorKind::UnionTypeId(tid), row));
                };
                let k = if *dense { array.value_offset(i) } else { i };
                // A null in the selected child is the union's null, where it has one.
                match (null, value.nulls.as_ref()) {
                    (Some(n), Some(nulls)) if nulls.is_null(k) => put_long(out, i64::from(*n)),
                    _ => {
                        put_long(out, i64::from(*index));
                        value.write(k, row, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Append the record at `i`: its fields' common leaves (and nullable leaves) written
    /// inline, anything else through [`Bound::write`].
    #[inline]
    pub(super) fn write_record(
        &self,
        i: usize,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let Kind::Record(fields) = &self.kind else {
            return self.write(i, row, out);
        };
        for f in fields {
            f.write_field(i, row, out)?;
        }
        Ok(())
    }

    /// Append the value at `i` of a record's field: a leaf (or a leaf in a `["null", T]`
    /// union) inline, anything else through [`Bound::write`].
    #[inline(always)]
    pub(super) fn write_field(
        &self,
        i: usize,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match (&self.kind, self.nulls.as_ref()) {
            (
                Kind::Branch {
                    index,
                    null: Some(null),
                    value,
                },
                nulls,
            ) => {
                if nulls.is_some_and(|n| n.is_null(i)) {
                    put_long(out, i64::from(*null));
                } else {
                    put_long(out, i64::from(*index));
                    if !write_leaf(&value.kind, i, out) {
                        value.write(i, row, out)?;
                    }
                }
            }
            (kind, None) => {
                if !write_leaf(kind, i, out) {
                    self.write(i, row, out)?;
                }
            }
            _ => self.write(i, row, out)?,
        }
        Ok(())
    }
}

/// Write the value at `i` of a common leaf that cannot fail (integers as they are, floats,
/// strings, booleans); false for any other kind, which the caller writes through
/// [`Bound::write`]. The caller has dealt with nulls.
#[inline(always)]
pub(super) fn write_leaf(kind: &Kind<'_>, i: usize, out: &mut Vec<u8>) -> bool {
    match kind {
        Kind::Int {
            values: Ints::I64(v),
            scale: Scale::One,
            int32: false,
        } => put_long(out, v[i]),
        Kind::Int {
            values: Ints::I32(v),
            scale: Scale::One,
            ..
        } => put_long(out, i64::from(v[i])),
        Kind::F64(v) => put_fixed(out, v[i].to_le_bytes()),
        Kind::F32(v, false) => put_fixed(out, v[i].to_le_bytes()),
        Kind::Boolean(a) => out.push(u8::from(a.value(i))),
        Kind::Bytes {
            values,
            check_utf8: false,
        } => {
            values.put(i, out);
        }
        _ => return false,
    }
    true
}

/// Value `i` of an integer column in its Avro unit (`scale` applied, exactly), or `None`
/// where it does not fit (an `int`'s 32 bits if `int32`, a conversion that overflows or is not
/// exact).
fn scaled(values: &Ints<'_>, i: usize, scale: Scale, int32: bool) -> Option<i64> {
    let v = values.get(i)?;
    let v = match scale {
        Scale::One => v,
        Scale::Mul(k) => v.checked_mul(k)?,
        Scale::Div(k) => (v % k == 0).then_some(v / k)?,
    };
    (!int32 || i32::try_from(v).is_ok()).then_some(v)
}

/// A big-endian two's complement value widened to 32 bytes.
fn sign_extend(be: &[u8]) -> [u8; 32] {
    let fill = if be[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut out = [fill; 32];
    out[32 - be.len()..].copy_from_slice(be);
    out
}

/// The fewest bytes that hold the big-endian two's complement value `be` (at least one).
fn minimal_len(be: &[u8; 32]) -> usize {
    let mut start = 0;
    while start < 31 {
        let (b, next) = (be[start], be[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    32 - start
}

/// Whether `v` has at most `precision` decimal digits.
fn within(v: i128, precision: u8) -> bool {
    if precision >= 39 {
        return true;
    }
    let limit = 10i128.pow(u32::from(precision));
    v.unsigned_abs() < limit as u128
}

fn within256(v: i256, precision: u8) -> bool {
    if precision >= 77 {
        return true;
    }
    let limit = i256::from_i128(10).wrapping_pow(u32::from(precision));
    v < limit && v > limit.wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::super::bind::bind;
    use super::super::chunk::write_rows;
    use super::super::sink::put_long_reference;
    use super::*;
    use crate::varint::{Kernel, Scalar};
    use arrow_array::Array;
    use std::sync::Arc;

    #[test]
    fn decimal_bytes_are_minimal_twos_complement() {
        for (v, bytes) in [
            (0i128, vec![0u8]),
            (1, vec![1]),
            (-1, vec![0xff]),
            (127, vec![0x7f]),
            (128, vec![0x00, 0x80]),
            (-128, vec![0x80]),
            (-129, vec![0xff, 0x7f]),
            (65535, vec![0x00, 0xff, 0xff]),
        ] {
            let be = sign_extend(&v.to_be_bytes());
            let n = minimal_len(&be);
            assert_eq!(&be[32 - n..], &bytes[..], "{v}");
        }
        assert!(within(99_999, 5) && !within(100_000, 5) && !within(-100_000, 5));
        assert!(within256(i256::from_i128(-99), 2) && !within256(i256::from_i128(100), 2));
    }

    #[test]
    fn fast_writes_equal_the_reference() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let (mut fast, mut reference) = (Vec::new(), Vec::new());
        let n = if cfg!(miri) { 3_000 } else { 100_000 };
        for k in 0..n {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Every length: shift the random value by 0..64 bits.
            let v = (rng >> (k % 64)) as i64;
            put_long(&mut fast, v);
            put_long_reference(&mut reference, v);
            put_fixed(&mut fast, (v as f64).to_le_bytes());
            reference.extend_from_slice(&(v as f64).to_le_bytes());
            if k % 1000 == 0 {
                // Start over from a vector without spare capacity.
                assert_eq!(fast, reference);
                fast = Vec::new();
                reference.clear();
            }
        }
        assert_eq!(fast, reference);
    }

    #[test]
    fn strings_are_written_as_length_and_bytes_at_every_edge() {
        // Values of 0 to 40 bytes ending at every distance from the end of the values
        // buffer (the fixed 16-byte copy needs 16 bytes from the value's start), after
        // outputs of every length mod 16 and without spare capacity.
        use super::super::sink::put_bytes;
        let values: Vec<u8> = (0..64u8).collect();
        for start in 0..values.len() {
            for end in start..values.len().min(start + 40) + 1 {
                for prefix in 0..17 {
                    let mut got = vec![0xaa; prefix];
                    got.shrink_to_fit();
                    put_bytes(&mut got, &values, start, end);
                    let mut want = vec![0xaa; prefix];
                    put_long_reference(&mut want, (end - start) as i64);
                    want.extend_from_slice(&values[start..end]);
                    assert_eq!(got, want, "{start}..{end} after {prefix}");
                }
            }
        }
    }

    #[test]
    fn chunked_rows_equal_row_by_row() {
        // A record of 33 fields (the chunked path) over 300 rows (two chunks): strings of 0
        // to 40 bytes across the 16-byte copies, nullable longs and strings (with nulls),
        // longs, ints, doubles and floats without nulls (the bulk column paths) and with
        // them; the same rows one at a time.
        use crate::schema::Schema;
        use arrow_array::{Int64Array, RecordBatch, StringArray, StructArray};
        let rows = if cfg!(miri) { 260 } else { 300 };
        let mut columns: Vec<(String, arrow_array::ArrayRef)> = Vec::new();
        for c in 0..33 {
            // Magnitudes of every varint length, so that the bulk column path's ends fall
            // anywhere in its words.
            let wide = |r: usize| ((r * 7919 + c) as i64 * 0x9e37_79b9) >> ((r + c) % 64);
            // From the 19th column on, doubles, floats, ints and one long in two have nulls
            // too, at rows chosen at random, and null slots hold values (which the writer
            // must not write: the row-by-row path writes a null's branch index alone).
            let nulls = (c >= 18).then(|| {
                arrow_buffer::NullBuffer::from_iter(
                    (0..rows as u64).map(|r| (r * 2_654_435_761 + c as u64 * 97) % 1000 >= 300),
                )
            });
            let a: arrow_array::ArrayRef = match c % 6 {
                4 => Arc::new(arrow_array::Float64Array::new(
                    (0..rows).map(|r| wide(r) as f64 / 7.0).collect(),
                    nulls,
                )),
                5 => Arc::new(arrow_array::Float32Array::new(
                    (0..rows).map(|r| wide(r) as f32 / 3.0).collect(),
                    nulls,
                )),
                0 if c >= 18 => Arc::new(Int64Array::new((0..rows).map(wide).collect(), nulls)),
                0 => Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| (r % 5 != c % 5).then_some((r * c) as i64 - 99)),
                )),
                1 => Arc::new(Int64Array::from_iter_values((0..rows).map(wide))),
                2 => Arc::new(arrow_array::Int32Array::new(
                    (0..rows).map(|r| wide(r) as i32).collect(),
                    nulls,
                )),
                _ if c % 12 == 3 => Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|r| "y".repeat((r * 3 + c) % 41)),
                )),
                // Null strings whose slots hold bytes.
                _ if c >= 18 => {
                    let values =
                        StringArray::from_iter_values((0..rows).map(|r| "x".repeat(r % 23)));
                    let (offsets, data, _) = values.into_parts();
                    Arc::new(StringArray::new(offsets, data, nulls))
                }
                _ => Arc::new(StringArray::from_iter(
                    (0..rows).map(|r| (r % 7 != c % 7).then(|| "z".repeat((r * 5 + c) % 37))),
                )),
            };
            columns.push((format!("c{c}"), a));
        }
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let avro: Schema = super::super::avro_schema_for(batch.schema_ref()).unwrap();
        let plan = super::super::EncodePlan::new(batch.schema(), avro).unwrap();
        let s = StructArray::from(batch.clone());
        let bound = bind(&plan.root, &s as &dyn Array, Arc::from(""));
        let mut chunked = vec![7u8];
        write_rows(&bound, rows, &mut chunked).unwrap();
        let mut one_by_one = vec![7u8];
        for r in 0..rows {
            bound.write_record(r, r, &mut one_by_one).unwrap();
        }
        assert_eq!(chunked, one_by_one);
    }

    #[test]
    fn plain_columns_take_the_union_branch_of_their_own_type() {
        // Not the first branch the column could be written as: a string stays a string in
        // `["bytes", "string"]`, 2^40 a long in `["int", "long"]` (`int` failed), a float a
        // float in `["double", "float"]`, bytes that are not UTF-8 bytes in `["string", "bytes"]`.
        use crate::schema::Schema;
        use arrow_array::{
            ArrayRef, BinaryArray, Float32Array, Int64Array, RecordBatch, StringArray,
        };
        let cases: [(&str, ArrayRef, Vec<u8>); 4] = [
            (
                r#"["bytes","string"]"#,
                Arc::new(StringArray::from(vec!["a"])),
                vec![2, 2, b'a'],
            ),
            (
                r#"["int","long"]"#,
                Arc::new(Int64Array::from(vec![1i64 << 40])),
                {
                    let mut e = vec![2];
                    put_long(&mut e, 1 << 40);
                    e
                },
            ),
            (
                r#"["double","float"]"#,
                Arc::new(Float32Array::from(vec![1.5f32])),
                {
                    let mut e = vec![2];
                    e.extend(1.5f32.to_le_bytes());
                    e
                },
            ),
            (
                r#"["string","bytes"]"#,
                Arc::new(BinaryArray::from(vec![&[0xffu8][..]])),
                vec![2, 2, 0xff],
            ),
        ];
        // A dictionary of strings: the string branch where there is one (its values need not
        // be symbols), else the enum (as avrow reads enums).
        let dict: ArrayRef = Arc::new(arrow_array::DictionaryArray::new(
            arrow_array::Int32Array::from(vec![0]),
            Arc::new(StringArray::from(vec!["B"])),
        ));
        let dicts = [
            (
                r#"[{"type":"enum","name":"E","symbols":["A","B"]},"string"]"#,
                vec![2, 2, b'B'],
            ),
            (
                r#"["null",{"type":"enum","name":"E","symbols":["A","B"]}]"#,
                vec![2, 2],
            ),
        ];
        let dicts = dicts.map(|(u, e)| (u, Arc::clone(&dict), e));
        for (union, array, expected) in cases.into_iter().chain(dicts) {
            let avro = Schema::parse(&format!(
                r#"{{"type":"record","name":"r","fields":[{{"name":"c","type":{union}}}]}}"#
            ))
            .unwrap();
            let batch = RecordBatch::try_from_iter([("c", array)]).unwrap();
            let plan = super::super::EncodePlan::new(batch.schema(), avro).unwrap();
            let mut out = Vec::new();
            plan.encode(&batch, &mut out).unwrap();
            assert_eq!(out, expected, "{union}");
        }
    }

    #[test]
    fn null_values_of_a_dictionary_are_nulls() {
        // pyarrow's `dictionary_encode(null_encoding="encode")`: the null is a value the
        // keys point at, not a null key.
        use crate::schema::Schema;
        use arrow_array::{DictionaryArray, Int32Array, RecordBatch, StringArray};
        let dict = DictionaryArray::new(
            Int32Array::from(vec![0, 1, 0]),
            Arc::new(StringArray::from(vec![Some("x"), None])),
        );
        let batch = RecordBatch::try_from_iter_with_nullable([(
            "c",
            Arc::new(dict) as arrow_array::ArrayRef,
            true,
        )])
        .unwrap();
        for (union, expected) in [
            (r#"["null","string"]"#, vec![2, 2, b'x', 0, 2, 2, b'x']),
            (r#"["string","null"]"#, vec![0, 2, b'x', 2, 0, 2, b'x']),
        ] {
            let avro = Schema::parse(&format!(
                r#"{{"type":"record","name":"r","fields":[{{"name":"c","type":{union}}}]}}"#
            ))
            .unwrap();
            let plan = super::super::EncodePlan::new(batch.schema(), avro).unwrap();
            let mut out = Vec::new();
            plan.encode(&batch, &mut out).unwrap();
            assert_eq!(out, expected, "{union}");
        }
        // Derived from a nullable field: `["null", "string"]`.
        let plan = super::super::EncodePlan::new(
            batch.schema(),
            super::super::avro_schema_for(batch.schema_ref()).unwrap(),
        )
        .unwrap();
        let mut out = Vec::new();
        plan.encode(&batch, &mut out).unwrap();
        assert_eq!(out.len(), 7);
    }

    #[test]
    fn null_columns_write_the_null_branch_of_their_union() {
        // A Null column (`pyarrow.nulls`, a column of None in polars) against a union with
        // `null`: each value is that branch's index (it was written as nothing, and the
        // next column's bytes read as the index). Narrow records (value by value) and wide
        // ones (column chunks).
        use crate::schema::Schema;
        use arrow_array::{ArrayRef, Int64Array, NullArray, RecordBatch};
        for (union, byte) in [
            (r#"["null","string"]"#, 0u8),
            (r#"["long","null"]"#, 2),
            (r#"["null"]"#, 0),
        ] {
            for longs in [1usize, 40] {
                let mut fields = format!(r#"{{"name":"n","type":{union}}}"#);
                let mut columns = vec![("n".to_string(), Arc::new(NullArray::new(3)) as ArrayRef)];
                for c in 0..longs {
                    fields.push_str(&format!(r#",{{"name":"x{c}","type":"long"}}"#));
                    let values = Int64Array::from_iter_values((0..3).map(|r| r * 100 + c as i64));
                    columns.push((format!("x{c}"), Arc::new(values) as ArrayRef));
                }
                let avro = Schema::parse(&format!(
                    r#"{{"type":"record","name":"r","fields":[{fields}]}}"#
                ))
                .unwrap();
                let batch = RecordBatch::try_from_iter(columns).unwrap();
                let plan = super::super::EncodePlan::new(batch.schema(), avro).unwrap();
                let mut out = Vec::new();
                plan.encode(&batch, &mut out).unwrap();
                let mut expected = Vec::new();
                for r in 0..3 {
                    expected.push(byte);
                    for c in 0..longs {
                        put_long(&mut expected, r * 100 + c as i64);
                    }
                }
                assert_eq!(out, expected, "{union}, {longs} longs");
            }
        }
    }

    #[test]
    fn arrays_of_billions_of_nulls_take_no_time() {
        // Fuzz finding (decode target's round trip): a list of 2^31 - 1 nulls, which the
        // decoder produces in O(1), was written one item at a time (49 s).
        use crate::schema::Schema;
        use arrow_array::{ListArray, NullArray, RecordBatch};
        use arrow_buffer::OffsetBuffer;
        use arrow_schema::{DataType, Field};
        let n = i32::MAX as usize;
        let item = Arc::new(Field::new("item", DataType::Null, true));
        let list = ListArray::new(
            item,
            OffsetBuffer::from_lengths([n]),
            Arc::new(NullArray::new(n)),
            None,
        );
        let batch =
            RecordBatch::try_from_iter([("a", Arc::new(list) as arrow_array::ArrayRef)]).unwrap();
        let avro = Schema::parse(
            r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"null"}}]}"#,
        )
        .unwrap();
        let plan = super::super::EncodePlan::new(batch.schema(), avro).unwrap();
        let start = std::time::Instant::now();
        let mut out = Vec::new();
        plan.encode(&batch, &mut out).unwrap();
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        let mut expected = Vec::new();
        put_long(&mut expected, n as i64);
        expected.push(0);
        assert_eq!(out, expected);
    }

    #[test]
    fn varints_are_zigzag() {
        let mut out = Vec::new();
        for v in [0i64, -1, 1, -64, 64, i64::MAX, i64::MIN] {
            put_long(&mut out, v);
        }
        let mut pos = 0;
        let mut got = Vec::new();
        while pos < out.len() {
            got.push(Scalar.read_long(&out, &mut pos).unwrap());
        }
        assert_eq!(got, [0, -1, 1, -64, 64, i64::MAX, i64::MIN]);
    }
}
