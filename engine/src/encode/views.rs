//! Typed views of the Arrow arrays a plan binds to: integers of any width, strings and
//! binaries of any offset kind, decimals, list offsets (the leaves of a bound array's `Kind`).

use super::plan::Bin;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, BinaryArray, BinaryViewArray, LargeBinaryArray, LargeStringArray, StringArray,
    StringViewArray,
};
use arrow_buffer::i256;
use arrow_schema::{DataType, TimeUnit};

/// Integer values of any Arrow integer (or date, time, timestamp, duration) array.
pub(super) enum Ints<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl Ints<'_> {
    pub(super) fn of(a: &dyn Array) -> Option<Ints<'_>> {
        use DataType as D;
        Some(match a.data_type() {
            D::Int8 => Ints::I8(a.as_primitive::<Int8Type>().values()),
            D::Int16 => Ints::I16(a.as_primitive::<Int16Type>().values()),
            D::Int32 => Ints::I32(a.as_primitive::<Int32Type>().values()),
            D::Int64 => Ints::I64(a.as_primitive::<Int64Type>().values()),
            D::UInt8 => Ints::U8(a.as_primitive::<UInt8Type>().values()),
            D::UInt16 => Ints::U16(a.as_primitive::<UInt16Type>().values()),
            D::UInt32 => Ints::U32(a.as_primitive::<UInt32Type>().values()),
            D::UInt64 => Ints::U64(a.as_primitive::<UInt64Type>().values()),
            D::Date32 => Ints::I32(a.as_primitive::<Date32Type>().values()),
            D::Date64 => Ints::I64(a.as_primitive::<Date64Type>().values()),
            D::Time32(TimeUnit::Second) => Ints::I32(a.as_primitive::<Time32SecondType>().values()),
            D::Time32(TimeUnit::Millisecond) => {
                Ints::I32(a.as_primitive::<Time32MillisecondType>().values())
            }
            D::Time64(TimeUnit::Microsecond) => {
                Ints::I64(a.as_primitive::<Time64MicrosecondType>().values())
            }
            D::Time64(TimeUnit::Nanosecond) => {
                Ints::I64(a.as_primitive::<Time64NanosecondType>().values())
            }
            D::Timestamp(TimeUnit::Second, _) => {
                Ints::I64(a.as_primitive::<TimestampSecondType>().values())
            }
            D::Timestamp(TimeUnit::Millisecond, _) => {
                Ints::I64(a.as_primitive::<TimestampMillisecondType>().values())
            }
            D::Timestamp(TimeUnit::Microsecond, _) => {
                Ints::I64(a.as_primitive::<TimestampMicrosecondType>().values())
            }
            D::Timestamp(TimeUnit::Nanosecond, _) => {
                Ints::I64(a.as_primitive::<TimestampNanosecondType>().values())
            }
            D::Duration(TimeUnit::Second) => {
                Ints::I64(a.as_primitive::<DurationSecondType>().values())
            }
            D::Duration(TimeUnit::Millisecond) => {
                Ints::I64(a.as_primitive::<DurationMillisecondType>().values())
            }
            D::Duration(TimeUnit::Microsecond) => {
                Ints::I64(a.as_primitive::<DurationMicrosecondType>().values())
            }
            D::Duration(TimeUnit::Nanosecond) => {
                Ints::I64(a.as_primitive::<DurationNanosecondType>().values())
            }
            _ => return None,
        })
    }

    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<i64> {
        Some(match self {
            Ints::I8(v) => i64::from(v[i]),
            Ints::I16(v) => i64::from(v[i]),
            Ints::I32(v) => i64::from(v[i]),
            Ints::I64(v) => v[i],
            Ints::U8(v) => i64::from(v[i]),
            Ints::U16(v) => i64::from(v[i]),
            Ints::U32(v) => i64::from(v[i]),
            Ints::U64(v) => i64::try_from(v[i]).ok()?,
        })
    }
}

/// The values of a string or binary array.
pub(super) enum BinRef<'a> {
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
}

impl BinRef<'_> {
    pub(super) fn of(a: &dyn Array, bin: Bin) -> BinRef<'_> {
        match bin {
            Bin::Utf8 => BinRef::Utf8(a.as_string::<i32>()),
            Bin::LargeUtf8 => BinRef::LargeUtf8(a.as_string::<i64>()),
            Bin::Utf8View => BinRef::Utf8View(a.as_string_view()),
            Bin::Binary => BinRef::Binary(a.as_binary::<i32>()),
            Bin::LargeBinary => BinRef::LargeBinary(a.as_binary::<i64>()),
            Bin::BinaryView => BinRef::BinaryView(a.as_binary_view()),
        }
    }

    /// The values buffer and the range of value `i` in it, where the array has one (not the
    /// view arrays).
    #[inline(always)]
    pub(super) fn span(&self, i: usize) -> Option<(&[u8], usize, usize)> {
        fn of<O: arrow_array::OffsetSizeTrait>(offsets: &[O], i: usize) -> (usize, usize) {
            (offsets[i].as_usize(), offsets[i + 1].as_usize())
        }
        Some(match self {
            BinRef::Utf8(a) => {
                let (s, e) = of(a.value_offsets(), i);
                (a.value_data(), s, e)
            }
            BinRef::LargeUtf8(a) => {
                let (s, e) = of(a.value_offsets(), i);
                (a.value_data(), s, e)
            }
            BinRef::Binary(a) => {
                let (s, e) = of(a.value_offsets(), i);
                (a.value_data(), s, e)
            }
            BinRef::LargeBinary(a) => {
                let (s, e) = of(a.value_offsets(), i);
                (a.value_data(), s, e)
            }
            BinRef::Utf8View(_) | BinRef::BinaryView(_) => return None,
        })
    }

    /// Append value `i` as Avro `string` / `bytes` (length, then bytes).
    #[inline(always)]
    pub(super) fn put(&self, i: usize, out: &mut Vec<u8>) {
        match self.span(i) {
            Some((values, start, end)) => super::sink::put_bytes(out, values, start, end),
            None => {
                let b = self.get(i);
                super::sink::put_bytes(out, b, 0, b.len());
            }
        }
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> &[u8] {
        match self {
            BinRef::Utf8(a) => a.value(i).as_bytes(),
            BinRef::LargeUtf8(a) => a.value(i).as_bytes(),
            BinRef::Utf8View(a) => a.value(i).as_bytes(),
            BinRef::Binary(a) => a.value(i),
            BinRef::LargeBinary(a) => a.value(i),
            BinRef::BinaryView(a) => a.value(i),
        }
    }
}

pub(super) enum Decs<'a> {
    D32(&'a [i32]),
    D64(&'a [i64]),
    D128(&'a [i128]),
    D256(&'a [i256]),
}

pub(super) enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
    Fixed(usize),
}

impl Offsets<'_> {
    #[inline]
    pub(super) fn range(&self, i: usize) -> (usize, usize) {
        match self {
            Offsets::I32(o) => (o[i] as usize, o[i + 1] as usize),
            Offsets::I64(o) => (o[i] as usize, o[i + 1] as usize),
            Offsets::Fixed(n) => (i * n, (i + 1) * n),
        }
    }
}

/// Float16 values are converted through `f32`.
pub(super) mod half_f16 {
    pub(crate) type F16 =
        <arrow_array::types::Float16Type as arrow_array::ArrowPrimitiveType>::Native;
}
