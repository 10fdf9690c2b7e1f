//! Normalized values ([`N`]): apache-avro's `Value`s and avrow's Arrow arrays both converted
//! to them, and compared with NaN == NaN and exact bits otherwise.

use super::*;

/// A normalized value both sides are converted to.
#[derive(Clone)]
pub enum N {
    Null,
    Bool(bool),
    /// int, date, time-millis
    Int(i32),
    /// long, time-micros, timestamps
    Long(i64),
    F32(f32),
    F64(f64),
    /// bytes, fixed, uuid
    Bytes(Vec<u8>),
    Str(String),
    /// (index, symbol)
    Enum(i32, String),
    /// Unscaled value (the scale is part of the type).
    Decimal(i256),
    /// (months, days, nanoseconds)
    Interval(i32, i32, i64),
    List(Vec<N>),
    /// Sorted by key (apache-avro does not keep map order).
    Map(Vec<(String, N)>),
    Struct(Vec<(String, N)>),
    /// (type id = branch index, value)
    Union(i8, Box<N>),
}

impl fmt::Debug for N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            N::Null => write!(f, "null"),
            N::Bool(b) => write!(f, "{b}"),
            N::Int(v) => write!(f, "{v}i"),
            N::Long(v) => write!(f, "{v}L"),
            N::F32(v) => write!(f, "{v:?}f32({:#x})", v.to_bits()),
            N::F64(v) => write!(f, "{v:?}f64({:#x})", v.to_bits()),
            N::Bytes(b) => write!(f, "b{b:02x?}"),
            N::Str(s) => write!(f, "{s:?}"),
            N::Enum(i, s) => write!(f, "enum({i}={s:?})"),
            N::Decimal(d) => write!(f, "dec({d})"),
            N::Interval(m, d, n) => write!(f, "interval({m}m {d}d {n}ns)"),
            N::List(v) => f.debug_list().entries(v).finish(),
            N::Map(v) => f
                .debug_map()
                .entries(v.iter().map(|(k, v)| (k, v)))
                .finish(),
            N::Struct(v) => {
                write!(f, "{{")?;
                for (i, (k, v)) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k}: {v:?}")?;
                }
                write!(f, "}}")
            }
            N::Union(t, v) => write!(f, "u{t}:{v:?}"),
        }
    }
}

/// Equality as [`diff`] defines it, without building messages (the fast path).
pub fn same(exp: &N, act: &N) -> bool {
    match (exp, act) {
        (N::Null, N::Null) => true,
        (N::Bool(a), N::Bool(b)) => a == b,
        (N::Int(a), N::Int(b)) => a == b,
        (N::Long(a), N::Long(b)) => a == b,
        (N::F32(a), N::F32(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
        (N::F64(a), N::F64(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
        (N::Bytes(a), N::Bytes(b)) => a == b,
        (N::Str(a), N::Str(b)) => a == b,
        (N::Enum(i, a), N::Enum(j, b)) => i == j && a == b,
        (N::Decimal(a), N::Decimal(b)) => a == b,
        (N::Interval(a, b, c), N::Interval(x, y, z)) => (a, b, c) == (x, y, z),
        (N::List(a), N::List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (N::Map(a), N::Map(b)) | (N::Struct(a), N::Struct(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((k, x), (l, y))| k == l && same(x, y))
        }
        (N::Union(t, x), N::Union(u, y)) => t == u && same(x, y),
        _ => false,
    }
}

/// Compare `exp` (oracle) with `act` (avrow). Returns the first mismatch: path and both values.
pub fn diff(exp: &N, act: &N, path: &str) -> Option<String> {
    if same(exp, act) {
        return None;
    }
    let mismatch = || Some(format!("at {path}: expected {exp:?}, avrow gave {act:?}"));
    match (exp, act) {
        (N::Null, N::Null) => None,
        (N::Bool(a), N::Bool(b)) if a == b => None,
        (N::Int(a), N::Int(b)) if a == b => None,
        (N::Long(a), N::Long(b)) if a == b => None,
        (N::F32(a), N::F32(b)) if (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits() => None,
        (N::F64(a), N::F64(b)) if (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits() => None,
        (N::Bytes(a), N::Bytes(b)) if a == b => None,
        (N::Str(a), N::Str(b)) if a == b => None,
        (N::Enum(i, a), N::Enum(j, b)) if i == j && a == b => None,
        (N::Decimal(a), N::Decimal(b)) if a == b => None,
        (N::Interval(a, b, c), N::Interval(x, y, z)) if (a, b, c) == (x, y, z) => None,
        (N::List(a), N::List(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "at {path}: list length {} expected, avrow gave {}: expected {exp:?}, got {act:?}",
                    a.len(),
                    b.len()
                ));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| diff(x, y, &format!("{path}[{i}]")))
        }
        (N::Map(a), N::Map(b)) => {
            let ka: Vec<_> = a.iter().map(|e| &e.0).collect();
            let kb: Vec<_> = b.iter().map(|e| &e.0).collect();
            if ka != kb {
                return Some(format!(
                    "at {path}: map keys {ka:?} expected, avrow gave {kb:?}"
                ));
            }
            a.iter()
                .zip(b)
                .find_map(|((k, x), (_, y))| diff(x, y, &format!("{path}{{{k:?}}}")))
        }
        (N::Struct(a), N::Struct(b)) => {
            let ka: Vec<_> = a.iter().map(|e| &e.0).collect();
            let kb: Vec<_> = b.iter().map(|e| &e.0).collect();
            if ka != kb {
                return Some(format!(
                    "at {path}: struct fields {ka:?} expected, avrow gave {kb:?}"
                ));
            }
            a.iter().zip(b).find_map(|((k, x), (_, y))| {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff(x, y, &p)
            })
        }
        (N::Union(t, x), N::Union(u, y)) => {
            if t != u {
                mismatch()
            } else {
                diff(x, y, &format!("{path}<{t}>"))
            }
        }
        _ => mismatch(),
    }
}

pub(super) fn i256_from_be_signed(bytes: &[u8]) -> Result<i256, String> {
    if bytes.len() > 32 {
        // Allow redundant sign extension only.
        let (head, tail) = bytes.split_at(bytes.len() - 32);
        let sign = if tail[0] & 0x80 != 0 { 0xff } else { 0 };
        if head.iter().any(|&b| b != sign) {
            return Err(format!(
                "decimal of {} bytes does not fit 256 bits",
                bytes.len()
            ));
        }
        return i256_from_be_signed(tail);
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut buf = [fill; 32];
    buf[32 - bytes.len()..].copy_from_slice(bytes);
    Ok(i256::from_be_bytes(buf))
}

/// Normalize a value read by apache-avro, guided by our schema model.
pub fn expect_value(model: &Model, s: &S, v: &Value) -> Result<N, String> {
    if let Some((inner, null_idx)) = model.optional(s) {
        return match v {
            Value::Union(i, b) if *i as usize == null_idx => match **b {
                Value::Null => Ok(N::Null),
                ref o => Err(format!("null branch holding {o:?}")),
            },
            Value::Union(_, b) => expect_value(model, inner, b),
            Value::Null => Ok(N::Null),
            other => expect_value(model, inner, other),
        };
    }
    let s = model.resolve(s);
    let err = || {
        Err(format!(
            "value {v:?} does not fit schema {}",
            describe(model, s)
        ))
    };
    Ok(match (s, v) {
        (S::Null, Value::Null) => N::Null,
        (S::Boolean, Value::Boolean(b)) => N::Bool(*b),
        (S::Int, Value::Int(i)) => N::Int(*i),
        (S::Long, Value::Long(i)) => N::Long(*i),
        (S::Float, Value::Float(x)) => N::F32(*x),
        (S::Double, Value::Double(x)) => N::F64(*x),
        (S::Bytes, Value::Bytes(b)) => N::Bytes(b.clone()),
        (S::String, Value::String(x)) => N::Str(x.clone()),
        (S::Fixed { size, .. }, Value::Fixed(n, b)) if n == size && b.len() == *size => {
            N::Bytes(b.clone())
        }
        (S::Enum { symbols, .. }, Value::Enum(i, sym)) => {
            if symbols.get(*i as usize) != Some(sym) {
                return Err(format!(
                    "enum value {i}={sym} does not match symbols {symbols:?}"
                ));
            }
            N::Enum(*i as i32, sym.clone())
        }
        (S::Array(items), Value::Array(xs)) => N::List(
            xs.iter()
                .map(|x| expect_value(model, items, x))
                .collect::<Result<_, _>>()?,
        ),
        (S::Map(values), Value::Map(m)) => {
            let mut e: Vec<(String, N)> = m
                .iter()
                .map(|(k, x)| Ok((k.clone(), expect_value(model, values, x)?)))
                .collect::<Result<_, String>>()?;
            e.sort_by(|a, b| a.0.cmp(&b.0));
            N::Map(e)
        }
        (S::Record { fields, .. }, Value::Record(vals)) => {
            if vals.len() != fields.len() {
                return err();
            }
            N::Struct(
                fields
                    .iter()
                    .zip(vals)
                    .map(|((name, fs), (vn, x))| {
                        if name != vn {
                            return Err(format!("record field {vn}, schema says {name}"));
                        }
                        Ok((name.clone(), expect_value(model, fs, x)?))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        (S::Union(branches), Value::Union(i, x)) => {
            let b = branches
                .get(*i as usize)
                .ok_or_else(|| format!("union branch {i} out of range"))?;
            N::Union(*i as i8, Box::new(expect_value(model, b, x)?))
        }
        (S::Decimal { .. }, Value::Decimal(d)) => {
            let bytes: Vec<u8> = d.try_into().map_err(|e| format!("decimal bytes: {e}"))?;
            N::Decimal(i256_from_be_signed(&bytes)?)
        }
        (S::Decimal { .. }, Value::Bytes(b) | Value::Fixed(_, b)) => {
            N::Decimal(i256_from_be_signed(b)?)
        }
        (S::Uuid { .. }, Value::Uuid(u)) => N::Bytes(u.as_bytes().to_vec()),
        (S::Uuid { fixed: None }, Value::String(x)) => N::Bytes(
            apache_avro::Uuid::parse_str(x)
                .map_err(|e| format!("bad uuid {x:?}: {e}"))?
                .as_bytes()
                .to_vec(),
        ),
        (S::Uuid { fixed: Some(_) }, Value::Fixed(16, b)) => N::Bytes(b.clone()),
        (S::Date, Value::Date(i) | Value::Int(i)) => N::Int(*i),
        (S::TimeMillis, Value::TimeMillis(i) | Value::Int(i)) => N::Int(*i),
        (S::TimeMicros, Value::TimeMicros(i) | Value::Long(i)) => N::Long(*i),
        (S::Timestamp { unit, local }, v) => match (unit, local, v) {
            (_, _, Value::Long(i)) => N::Long(*i),
            (TsUnit::Millis, false, Value::TimestampMillis(i))
            | (TsUnit::Micros, false, Value::TimestampMicros(i))
            | (TsUnit::Nanos, false, Value::TimestampNanos(i))
            | (TsUnit::Millis, true, Value::LocalTimestampMillis(i))
            | (TsUnit::Micros, true, Value::LocalTimestampMicros(i))
            | (TsUnit::Nanos, true, Value::LocalTimestampNanos(i)) => N::Long(*i),
            _ => return err(),
        },
        (S::Duration { .. }, Value::Duration(d)) => {
            let bytes: [u8; 12] = (*d).into();
            duration_from_bytes(&bytes)?
        }
        (S::Duration { .. }, Value::Fixed(12, b)) => duration_from_bytes(b)?,
        _ => return err(),
    })
}

/// months, days, millis: three little-endian u32.
pub fn duration_from_bytes(b: &[u8]) -> Result<N, String> {
    let m = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let d = u32::from_le_bytes(b[4..8].try_into().unwrap());
    let ms = u32::from_le_bytes(b[8..12].try_into().unwrap());
    if m > i32::MAX as u32 || d > i32::MAX as u32 {
        return Err(format!("duration months {m} / days {d} do not fit Int32"));
    }
    Ok(N::Interval(m as i32, d as i32, ms as i64 * 1_000_000))
}

/// One row as a `Struct` of the batch columns.
pub fn expect_row(model: &Model, v: &Value) -> Result<N, String> {
    if model.is_record_root() {
        expect_value(model, &model.root, v)
    } else {
        Ok(N::Struct(vec![(
            "value".into(),
            expect_value(model, &model.root, v)?,
        )]))
    }
}

/// Normalize one value of an Arrow array (driven by the array's own type).
pub fn arrow_value(a: &dyn Array, i: usize) -> N {
    let dt = a.data_type();
    if matches!(dt, DataType::Null) {
        return N::Null;
    }
    if !matches!(dt, DataType::Union(..)) && a.is_null(i) {
        return N::Null;
    }
    macro_rules! prim {
        ($t:ty, $v:ident) => {
            N::$v(a.as_any().downcast_ref::<$t>().unwrap().value(i))
        };
    }
    match dt {
        DataType::Boolean => prim!(BooleanArray, Bool),
        DataType::Int32 => prim!(Int32Array, Int),
        DataType::Int64 => prim!(Int64Array, Long),
        DataType::Float32 => prim!(Float32Array, F32),
        DataType::Float64 => prim!(Float64Array, F64),
        DataType::Date32 => prim!(Date32Array, Int),
        DataType::Time32(TimeUnit::Millisecond) => prim!(Time32MillisecondArray, Int),
        DataType::Time64(TimeUnit::Microsecond) => prim!(Time64MicrosecondArray, Long),
        DataType::Timestamp(TimeUnit::Millisecond, _) => prim!(TimestampMillisecondArray, Long),
        DataType::Timestamp(TimeUnit::Microsecond, _) => prim!(TimestampMicrosecondArray, Long),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => prim!(TimestampNanosecondArray, Long),
        DataType::Binary => N::Bytes(
            a.as_any()
                .downcast_ref::<BinaryArray>()
                .unwrap()
                .value(i)
                .to_vec(),
        ),
        DataType::LargeBinary => N::Bytes(
            a.as_any()
                .downcast_ref::<LargeBinaryArray>()
                .unwrap()
                .value(i)
                .to_vec(),
        ),
        DataType::BinaryView => N::Bytes(
            a.as_any()
                .downcast_ref::<BinaryViewArray>()
                .unwrap()
                .value(i)
                .to_vec(),
        ),
        DataType::FixedSizeBinary(_) => N::Bytes(
            a.as_any()
                .downcast_ref::<FixedSizeBinaryArray>()
                .unwrap()
                .value(i)
                .to_vec(),
        ),
        DataType::Utf8 => N::Str(
            a.as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .value(i)
                .to_string(),
        ),
        DataType::LargeUtf8 => N::Str(
            a.as_any()
                .downcast_ref::<LargeStringArray>()
                .unwrap()
                .value(i)
                .to_string(),
        ),
        DataType::Utf8View => N::Str(
            a.as_any()
                .downcast_ref::<StringViewArray>()
                .unwrap()
                .value(i)
                .to_string(),
        ),
        DataType::Dictionary(k, _) if **k == DataType::Int32 => {
            let d = a
                .as_any()
                .downcast_ref::<DictionaryArray<Int32Type>>()
                .unwrap();
            let key = d.keys().value(i);
            let sym = match arrow_value(d.values().as_ref(), key as usize) {
                N::Str(s) => s,
                other => format!("<non-string dictionary value {other:?}>"),
            };
            N::Enum(key, sym)
        }
        DataType::Decimal128(..) => N::Decimal(i256::from_i128(
            a.as_any()
                .downcast_ref::<Decimal128Array>()
                .unwrap()
                .value(i),
        )),
        DataType::Decimal256(..) => N::Decimal(
            a.as_any()
                .downcast_ref::<Decimal256Array>()
                .unwrap()
                .value(i),
        ),
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = a
                .as_any()
                .downcast_ref::<IntervalMonthDayNanoArray>()
                .unwrap()
                .value(i);
            N::Interval(v.months, v.days, v.nanoseconds)
        }
        DataType::List(_) => {
            let l = a.as_any().downcast_ref::<ListArray>().unwrap();
            let off = l.value_offsets();
            let (s, e) = (off[i] as usize, off[i + 1] as usize);
            let vals = l.values();
            N::List((s..e).map(|j| arrow_value(vals.as_ref(), j)).collect())
        }
        DataType::Map(..) => {
            let m = a.as_any().downcast_ref::<MapArray>().unwrap();
            let off = m.value_offsets();
            let (s, e) = (off[i] as usize, off[i + 1] as usize);
            let keys = m.keys();
            let vals = m.values();
            let mut entries: Vec<(String, N)> = (s..e)
                .map(|j| {
                    let k = match arrow_value(keys.as_ref(), j) {
                        N::Str(s) => s,
                        other => format!("<non-string key {other:?}>"),
                    };
                    (k, arrow_value(vals.as_ref(), j))
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            N::Map(entries)
        }
        DataType::Struct(fields) => {
            let s = a.as_any().downcast_ref::<StructArray>().unwrap();
            N::Struct(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), arrow_value(c.as_ref(), i)))
                    .collect(),
            )
        }
        DataType::Union(_, mode) => {
            let u = a.as_any().downcast_ref::<UnionArray>().unwrap();
            let t = u.type_id(i);
            let off = match mode {
                UnionMode::Dense => u.value_offset(i),
                UnionMode::Sparse => i,
            };
            N::Union(t, Box::new(arrow_value(u.child(t).as_ref(), off)))
        }
        other => N::Str(format!("<unsupported Arrow type {other:?}>")),
    }
}

/// Every row of a batch as a `Struct` of its columns.
pub fn batch_rows(batch: &RecordBatch) -> Vec<N> {
    let schema = batch.schema();
    (0..batch.num_rows())
        .map(|i| {
            N::Struct(
                schema
                    .fields()
                    .iter()
                    .zip(batch.columns())
                    .map(|(f, c)| (f.name().clone(), arrow_value(c.as_ref(), i)))
                    .collect(),
            )
        })
        .collect()
}

/// Compare whole row lists; the message names the first differing row.
pub fn diff_rows(exp: &[N], act: &[N]) -> Option<String> {
    for (i, (e, a)) in exp.iter().zip(act).enumerate() {
        if let Some(d) = diff(e, a, "") {
            return Some(format!("row {i}: {d}"));
        }
    }
    if exp.len() != act.len() {
        return Some(format!(
            "expected {} rows, avrow gave {}",
            exp.len(),
            act.len()
        ));
    }
    None
}

// apache-avro side

/// Read every value with apache-avro's Reader.
pub fn apache_read(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let reader = apache_avro::Reader::new(bytes).map_err(|e| e.to_string())?;
    reader
        .map(|r| r.map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()
}

/// The oracle's rows for a file, read by apache-avro.
pub fn apache_rows(model: &Model, bytes: &[u8]) -> Result<Vec<N>, String> {
    apache_read(bytes)?
        .iter()
        .map(|v| expect_row(model, v))
        .collect()
}
