//! Binding a [`Plan`] to one array of a batch: each array downcast once, its children bound
//! recursively, so that writing a row never looks at a data type.

use super::plan::{Plan, Scale};
use super::views::{half_f16, BinRef, Decs, Ints, Offsets};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    AnyDictionaryArray, Array, ArrayRef, ArrowPrimitiveType, BooleanArray, FixedSizeBinaryArray,
    UnionArray,
};
use arrow_buffer::ArrowNativeType;
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, IntervalUnit};
use std::collections::HashMap;
use std::sync::Arc;

/// The keys of `dict` as indexes into its values, [`NO_VALUE`] for a key that is not one (a
/// negative key, or one past the values: only a null row may hold one in valid Arrow data,
/// and an empty dictionary, an all-null column's, has no valid key at all). arrow's
/// `normalized_keys` panics on an empty dictionary and clamps bad keys to the last value.
fn dictionary_keys(dict: &dyn AnyDictionaryArray) -> Vec<usize> {
    fn of<K: ArrowPrimitiveType>(keys: &dyn Array, len: usize) -> Vec<usize> {
        let keys = keys.as_primitive::<K>().values();
        keys.iter()
            .map(|k| match k.to_i64() {
                Some(k) if k >= 0 && (k as u64) < len as u64 => k as usize,
                _ => NO_VALUE,
            })
            .collect()
    }
    let (keys, len) = (dict.keys(), dict.values().len());
    match keys.data_type() {
        DataType::Int8 => of::<Int8Type>(keys, len),
        DataType::Int16 => of::<Int16Type>(keys, len),
        DataType::Int32 => of::<Int32Type>(keys, len),
        DataType::Int64 => of::<Int64Type>(keys, len),
        DataType::UInt8 => of::<UInt8Type>(keys, len),
        DataType::UInt16 => of::<UInt16Type>(keys, len),
        DataType::UInt32 => of::<UInt32Type>(keys, len),
        DataType::UInt64 => of::<UInt64Type>(keys, len),
        // (Arrow has no other key type.)
        _ => vec![NO_VALUE; keys.len()],
    }
}

/// A dictionary key that names no value (see [`dictionary_keys`]).
pub(super) const NO_VALUE: usize = usize::MAX;

/// A plan bound to one array of a batch.
pub(crate) struct Bound<'a> {
    /// The array's logical nulls (a dictionary's null values among them): an `Arc` clone,
    /// once a batch.
    pub(super) nulls: Option<NullBuffer>,
    pub(super) path: Arc<str>,
    pub(super) kind: Kind<'a>,
}

/// Bind `plan` to `array`; `path` names the column in errors.
pub(crate) fn bind<'a>(plan: &'a Plan, array: &'a dyn Array, path: Arc<str>) -> Bound<'a> {
    let kind = match plan {
        Plan::Null => Kind::Null,
        Plan::Absent => Kind::Absent,
        Plan::Boolean => Kind::Boolean(array.as_boolean()),
        Plan::Int { scale, int32 } => Kind::Int {
            values: Ints::of(array).expect("the plan checked the type"),
            scale: *scale,
            int32: *int32,
        },
        Plan::Time { scale, int32, day } => Kind::Time {
            values: Ints::of(array).expect("the plan checked the type"),
            scale: *scale,
            int32: *int32,
            day: *day,
        },
        Plan::Float { double } => match array.data_type() {
            DataType::Float16 => Kind::F16(array.as_primitive::<Float16Type>().values(), *double),
            DataType::Float32 => Kind::F32(array.as_primitive::<Float32Type>().values(), *double),
            _ => Kind::F64(array.as_primitive::<Float64Type>().values()),
        },
        Plan::Bytes { bin, check_utf8 } => Kind::Bytes {
            values: BinRef::of(array, *bin),
            check_utf8: *check_utf8,
        },
        Plan::Dictionary { value } => {
            let dict = array.as_any_dictionary();
            let keys = dictionary_keys(dict);
            match value.as_ref() {
                Plan::Enum { bin, symbols } => {
                    let values = BinRef::of(dict.values().as_ref(), *bin);
                    let symbol = (0..dict.values().len())
                        .map(|i| {
                            let s = values.get(i);
                            std::str::from_utf8(s)
                                .ok()
                                .and_then(|s| symbols.get(s).copied())
                                .ok_or_else(|| String::from_utf8_lossy(s).into_owned())
                        })
                        .collect();
                    Kind::DictEnum { keys, symbol }
                }
                value => Kind::Dict {
                    keys,
                    value: Box::new(bind(value, dict.values().as_ref(), path.clone())),
                },
            }
        }
        Plan::Enum { bin, symbols } => Kind::Enum {
            values: BinRef::of(array, *bin),
            symbols,
        },
        Plan::Fixed => Kind::Fixed(array.as_fixed_size_binary()),
        Plan::UuidString => Kind::Uuid(array.as_fixed_size_binary()),
        Plan::UuidText { bin } => Kind::UuidText(BinRef::of(array, *bin)),
        Plan::Decimal { precision, fixed } => Kind::Decimal {
            values: match array.data_type() {
                DataType::Decimal32(..) => {
                    Decs::D32(array.as_primitive::<Decimal32Type>().values())
                }
                DataType::Decimal64(..) => {
                    Decs::D64(array.as_primitive::<Decimal64Type>().values())
                }
                DataType::Decimal128(..) => {
                    Decs::D128(array.as_primitive::<Decimal128Type>().values())
                }
                _ => Decs::D256(array.as_primitive::<Decimal256Type>().values()),
            },
            precision: *precision,
            fixed: *fixed,
        },
        Plan::Duration { unit } => Kind::Duration(array, *unit),
        Plan::Record { fields } => {
            let s = array.as_struct();
            Kind::Record(
                fields
                    .iter()
                    .map(|(i, name, p)| bind(p, s.column(*i).as_ref(), child(&path, name)))
                    .collect(),
            )
        }
        Plan::Array { item } => {
            let (offsets, values): (Offsets<'a>, &'a ArrayRef) = match array.data_type() {
                DataType::List(_) => {
                    let l = array.as_list::<i32>();
                    (Offsets::I32(l.value_offsets()), l.values())
                }
                DataType::LargeList(_) => {
                    let l = array.as_list::<i64>();
                    (Offsets::I64(l.value_offsets()), l.values())
                }
                _ => {
                    let l = array.as_fixed_size_list();
                    (Offsets::Fixed(l.value_length() as usize), l.values())
                }
            };
            Kind::Array {
                offsets,
                item: Box::new(bind(item, values.as_ref(), child(&path, "[]"))),
            }
        }
        Plan::Map { key, value } => {
            let m = array.as_map();
            Kind::Map {
                offsets: m.value_offsets(),
                keys: BinRef::of(m.keys().as_ref(), *key),
                value: Box::new(bind(value, m.values().as_ref(), child(&path, "{}"))),
            }
        }
        Plan::Branch { index, null, value } => Kind::Branch {
            index: *index,
            null: *null,
            value: Box::new(bind(value, array, path.clone())),
        },
        Plan::Union {
            dense,
            branches,
            null,
        } => {
            let u = array.as_union();
            Kind::Union {
                array: u,
                dense: *dense,
                null: *null,
                branches: branches
                    .iter()
                    .enumerate()
                    .map(|(tid, b)| {
                        b.as_ref().map(|(index, p)| {
                            (*index, bind(p, u.child(tid as i8).as_ref(), path.clone()))
                        })
                    })
                    .collect(),
            }
        }
    };
    let nulls = match array.data_type() {
        // A key may point at a null value: the value is null (for the dictionary's plan and
        // for the union branch around it).
        DataType::Dictionary(..) => array.logical_nulls(),
        _ => array.nulls().cloned(),
    };
    Bound { nulls, path, kind }
}

pub(super) fn child(parent: &str, name: &str) -> Arc<str> {
    match name {
        "[]" | "{}" => format!("{parent}{name}").into(),
        _ if parent.is_empty() => name.into(),
        _ => format!("{parent}.{name}").into(),
    }
}

/// What a bound array is, downcast: a leaf's typed view, or its bound children.
pub(super) enum Kind<'a> {
    Null,
    /// [`Plan::Absent`]: any value is an error.
    Absent,
    Boolean(&'a BooleanArray),
    Int {
        values: Ints<'a>,
        scale: Scale,
        int32: bool,
    },
    /// [`Plan::Time`].
    Time {
        values: Ints<'a>,
        scale: Scale,
        int32: bool,
        day: i64,
    },
    F16(&'a [half_f16::F16], bool),
    F32(&'a [f32], bool),
    F64(&'a [f64]),
    Bytes {
        values: BinRef<'a>,
        check_utf8: bool,
    },
    /// Keys into a bound dictionary values array.
    Dict {
        keys: Vec<usize>,
        value: Box<Bound<'a>>,
    },
    /// Keys into a dictionary whose values are enum symbols: the symbol index of each value
    /// (or the value that is not a symbol).
    DictEnum {
        keys: Vec<usize>,
        symbol: Vec<Result<u32, String>>,
    },
    Enum {
        values: BinRef<'a>,
        symbols: &'a HashMap<String, u32>,
    },
    Fixed(&'a FixedSizeBinaryArray),
    Uuid(&'a FixedSizeBinaryArray),
    /// [`Plan::UuidText`].
    UuidText(BinRef<'a>),
    Decimal {
        values: Decs<'a>,
        precision: u8,
        fixed: Option<usize>,
    },
    Duration(&'a dyn Array, IntervalUnit),
    Record(Vec<Bound<'a>>),
    Array {
        offsets: Offsets<'a>,
        item: Box<Bound<'a>>,
    },
    Map {
        offsets: &'a [i32],
        keys: BinRef<'a>,
        value: Box<Bound<'a>>,
    },
    Branch {
        index: u32,
        null: Option<u32>,
        value: Box<Bound<'a>>,
    },
    Union {
        array: &'a UnionArray,
        dense: bool,
        branches: Vec<Option<(u32, Bound<'a>)>>,
        null: Option<u32>,
    },
}
