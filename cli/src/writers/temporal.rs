//! Dates and timestamps past what a calendar shows (beyond about ±262,000 years: a
//! `timestamp-millis` of `Long.MAX_VALUE`, the "valid until forever" of many tables, or a
//! `date` of `Integer.MAX_VALUE`): the text outputs (CSV, NDJSON, `head`) write such a value as
//! its raw count in the column's unit (days, or the timestamp's unit since 1970), where
//! arrow's formatter wrote an error message as the value (and CSV failed without naming the
//! column). Values a calendar shows keep arrow's text.

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::sync::Arc;

/// Whether `data_type` is a date or a timestamp.
pub fn is_temporal(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
    )
}

/// Value `i` of a date or timestamp array as its raw count.
fn raw(array: &dyn Array, i: usize) -> i64 {
    match array.data_type() {
        DataType::Date32 => i64::from(array.as_primitive::<Date32Type>().value(i)),
        DataType::Date64 => array.as_primitive::<Date64Type>().value(i),
        DataType::Timestamp(TimeUnit::Second, _) => {
            array.as_primitive::<TimestampSecondType>().value(i)
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            array.as_primitive::<TimestampMillisecondType>().value(i)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            array.as_primitive::<TimestampMicrosecondType>().value(i)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            array.as_primitive::<TimestampNanosecondType>().value(i)
        }
        _ => 0,
    }
}

/// Whether a calendar shows the raw count `v` of `data_type`.
fn shows(data_type: &DataType, v: i64) -> bool {
    use arrow::array::temporal_conversions::as_datetime;
    match data_type {
        DataType::Date32 => as_datetime::<Date32Type>(v).is_some(),
        DataType::Date64 => as_datetime::<Date64Type>(v).is_some(),
        DataType::Timestamp(TimeUnit::Second, _) => as_datetime::<TimestampSecondType>(v).is_some(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            as_datetime::<TimestampMillisecondType>(v).is_some()
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            as_datetime::<TimestampMicrosecondType>(v).is_some()
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            as_datetime::<TimestampNanosecondType>(v).is_some()
        }
        _ => true,
    }
}

/// Whether a date or timestamp array holds a value no calendar shows (its least and greatest
/// values checked).
pub fn has_unshowable(array: &dyn Array) -> bool {
    if !is_temporal(array.data_type()) {
        return false;
    }
    let (mut least, mut greatest) = (i64::MAX, i64::MIN);
    for i in 0..array.len() {
        if array.is_valid(i) {
            let v = raw(array, i);
            least = least.min(v);
            greatest = greatest.max(v);
        }
    }
    least <= greatest && !(shows(array.data_type(), least) && shows(array.data_type(), greatest))
}

/// Whether `array` or an array nested in it holds a date or timestamp past the calendar.
pub fn has_unshowable_within(array: &dyn Array) -> bool {
    has_unshowable(array)
        || array
            .to_data()
            .child_data()
            .iter()
            .any(|child| has_unshowable_within(arrow::array::make_array(child.clone()).as_ref()))
}

/// A date or timestamp array as text: arrow's (as its CSV writer formats it) where a calendar
/// shows the value, else the raw count.
///
/// # Errors
/// A value arrow cannot format otherwise.
pub fn as_text(array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(array.as_ref(), &options)?;
    let mut out = StringBuilder::with_capacity(array.len(), array.len() * 24);
    let mut text = String::new();
    for i in 0..array.len() {
        if array.is_null(i) {
            out.append_null();
            continue;
        }
        text.clear();
        let v = raw(array.as_ref(), i);
        if shows(array.data_type(), v) {
            use std::fmt::Write as _;
            write!(text, "{}", formatter.value(i))
                .map_err(|e| ArrowError::ComputeError(format!("formatting row {i}: {e}")))?;
        } else {
            text.push_str(&v.to_string());
        }
        out.append_value(&text);
    }
    Ok(Arc::new(out.finish()))
}

/// JSON encoding of a date or timestamp array with values no calendar shows: those as their
/// raw count (a JSON number), the others through arrow's own encoder.
pub struct RawWhereUnshowable<'a> {
    /// The array.
    pub array: &'a dyn Array,
    /// arrow-json's encoder of it.
    pub shown: arrow::json::writer::NullableEncoder<'a>,
}

impl arrow::json::writer::Encoder for RawWhereUnshowable<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let v = raw(self.array, idx);
        if shows(self.array.data_type(), v) {
            self.shown.encode(idx, out);
        } else {
            out.extend_from_slice(v.to_string().as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, TimestampMillisecondArray};

    #[test]
    fn values_past_the_calendar_are_their_raw_count() {
        let ts: ArrayRef = Arc::new(
            TimestampMillisecondArray::from(vec![Some(0), None, Some(i64::MAX), Some(i64::MIN)])
                .with_timezone("+00:00"),
        );
        assert!(has_unshowable(ts.as_ref()));
        let text = as_text(&ts).unwrap();
        let text = text.as_string::<i32>();
        assert_eq!(text.value(0), "1970-01-01T00:00:00Z");
        assert!(text.is_null(1));
        assert_eq!(text.value(2), i64::MAX.to_string());
        assert_eq!(text.value(3), i64::MIN.to_string());
        let days: ArrayRef = Arc::new(Date32Array::from(vec![19_000, i32::MAX]));
        assert!(has_unshowable(days.as_ref()));
        let text = as_text(&days).unwrap();
        assert_eq!(text.as_string::<i32>().value(0), "2022-01-08");
        assert_eq!(text.as_string::<i32>().value(1), i32::MAX.to_string());
        let fine: ArrayRef = Arc::new(Date32Array::from(vec![-719_162, 2_932_896]));
        assert!(!has_unshowable(fine.as_ref()));
    }
}
