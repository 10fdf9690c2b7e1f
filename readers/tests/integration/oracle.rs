//! The test oracle shared by every topic module.
//!
//! * [`Model`]: an independent, spec-driven model of an Avro schema (parsed from the JSON with
//!   our own name resolution), used to derive the Arrow type each column must have.
//! * [`N`]: a normalized value. Both sides are converted to it: apache-avro's `Value`s (the
//!   independent reader) through [`expect_value`], avrow's Arrow arrays through [`arrow_value`].
//! * [`diff`]: equality with NaN == NaN, exact bits otherwise, reporting the first mismatch with
//!   its row and column path and both values.
//! * [`Container`]: a tiny parser of the Avro object container framing (header, blocks, sync
//!   markers), used to know where blocks end and to splice files.
//! * [`Opts`] / [`read_avrow`]: run avrow with a set of options and collect its batches.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use apache_avro::types::Value;
use arrow::array::{
    Array, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array,
    Decimal256Array, DictionaryArray, FixedSizeBinaryArray, Float32Array, Float64Array, Int32Array,
    Int64Array, IntervalMonthDayNanoArray, LargeBinaryArray, LargeStringArray, ListArray, MapArray,
    StringArray, StringViewArray, StructArray, Time32MillisecondArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, UnionArray,
};
use arrow::datatypes::{
    i256, DataType, Field, Int32Type, IntervalUnit, SchemaRef, TimeUnit, UnionMode,
};
use arrow::record_batch::RecordBatch;
use serde_json::Value as Json;

// ---------------------------------------------------------------------------------------------
// Schema model
// ---------------------------------------------------------------------------------------------

/// Timestamp precision of a `timestamp-*` / `local-timestamp-*` logical type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsUnit {
    Millis,
    Micros,
    Nanos,
}

/// One node of an Avro schema, as the specification (1.12) defines it.
#[derive(Clone, Debug)]
pub enum S {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed {
        name: String,
        size: usize,
    },
    Enum {
        name: String,
        symbols: Vec<String>,
    },
    Array(Box<S>),
    Map(Box<S>),
    Record {
        name: String,
        fields: Vec<(String, S)>,
    },
    Union(Vec<S>),
    /// `fixed` is the fixed type's (full name, size) when the decimal is on a fixed.
    Decimal {
        precision: usize,
        scale: usize,
        fixed: Option<(String, usize)>,
    },
    /// `fixed` is the fixed type's full name when the uuid is on a fixed(16).
    Uuid {
        fixed: Option<String>,
    },
    Date,
    TimeMillis,
    TimeMicros,
    Timestamp {
        unit: TsUnit,
        local: bool,
    },
    Duration {
        name: String,
    },
    /// A reference (by full name) to a named type defined earlier.
    Ref(String),
}

/// A parsed schema: its root and every named type by full name.
#[derive(Clone, Debug)]
pub struct Model {
    pub root: S,
    pub named: HashMap<String, S>,
    pub json: Json,
}

struct Parser {
    named: HashMap<String, S>,
    declared: HashSet<String>,
}

fn split_name(name: &str, ns_attr: Option<&str>, enclosing: &str) -> (String, String) {
    // (full name, namespace of the type)
    if let Some(pos) = name.rfind('.') {
        (name.to_string(), name[..pos].to_string())
    } else {
        let ns = ns_attr.unwrap_or(enclosing).to_string();
        if ns.is_empty() {
            (name.to_string(), ns)
        } else {
            (format!("{ns}.{name}"), ns)
        }
    }
}

impl Parser {
    fn lookup(&self, name: &str, ns: &str) -> Result<String, String> {
        if name.contains('.') {
            if self.declared.contains(name) {
                return Ok(name.to_string());
            }
        } else {
            if !ns.is_empty() {
                let full = format!("{ns}.{name}");
                if self.declared.contains(&full) {
                    return Ok(full);
                }
            }
            if self.declared.contains(name) {
                return Ok(name.to_string());
            }
        }
        Err(format!("undefined name {name:?} (namespace {ns:?})"))
    }

    fn declare(&mut self, full: &str) -> Result<(), String> {
        if !self.declared.insert(full.to_string()) {
            return Err(format!("duplicate name {full}"));
        }
        Ok(())
    }

    fn primitive(name: &str) -> Option<S> {
        Some(match name {
            "null" => S::Null,
            "boolean" => S::Boolean,
            "int" => S::Int,
            "long" => S::Long,
            "float" => S::Float,
            "double" => S::Double,
            "bytes" => S::Bytes,
            "string" => S::String,
            _ => return None,
        })
    }

    fn parse(&mut self, j: &Json, ns: &str) -> Result<S, String> {
        match j {
            Json::String(name) => {
                if let Some(p) = Self::primitive(name) {
                    return Ok(p);
                }
                Ok(S::Ref(self.lookup(name, ns)?))
            }
            Json::Array(branches) => Ok(S::Union(
                branches
                    .iter()
                    .map(|b| self.parse(b, ns))
                    .collect::<Result<_, _>>()?,
            )),
            Json::Object(o) => {
                let ty = o.get("type").ok_or("object schema without type")?;
                let ty = match ty {
                    Json::String(t) => t.as_str(),
                    other => return self.parse(other, ns),
                };
                let logical = o.get("logicalType").and_then(Json::as_str);
                match ty {
                    "record" | "error" => {
                        let name = o["name"].as_str().ok_or("record without name")?;
                        let (full, rns) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let mut fields = Vec::new();
                        for f in o["fields"].as_array().ok_or("record without fields")? {
                            let fname = f["name"].as_str().ok_or("field without name")?;
                            fields.push((fname.to_string(), self.parse(&f["type"], &rns)?));
                        }
                        let s = S::Record {
                            name: full.clone(),
                            fields,
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "enum" => {
                        let name = o["name"].as_str().ok_or("enum without name")?;
                        let (full, _) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let symbols = o["symbols"]
                            .as_array()
                            .ok_or("enum without symbols")?
                            .iter()
                            .map(|s| s.as_str().unwrap_or_default().to_string())
                            .collect();
                        let s = S::Enum {
                            name: full.clone(),
                            symbols,
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "fixed" => {
                        let name = o["name"].as_str().ok_or("fixed without name")?;
                        let (full, _) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let size = o["size"].as_u64().ok_or("fixed without size")? as usize;
                        let s = match logical {
                            Some("decimal") if valid_decimal(o, Some(size)) => S::Decimal {
                                precision: o["precision"].as_u64().unwrap() as usize,
                                scale: o.get("scale").and_then(Json::as_u64).unwrap_or(0) as usize,
                                fixed: Some((full.clone(), size)),
                            },
                            Some("uuid") if size == 16 => S::Uuid {
                                fixed: Some(full.clone()),
                            },
                            Some("duration") if size == 12 => S::Duration { name: full.clone() },
                            _ => S::Fixed {
                                name: full.clone(),
                                size,
                            },
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "array" => Ok(S::Array(Box::new(self.parse(&o["items"], ns)?))),
                    "map" => Ok(S::Map(Box::new(self.parse(&o["values"], ns)?))),
                    prim => {
                        let base = match Self::primitive(prim) {
                            Some(p) => p,
                            None => return Ok(S::Ref(self.lookup(prim, ns)?)),
                        };
                        Ok(match (logical, &base) {
                            (Some("decimal"), S::Bytes) if valid_decimal(o, None) => S::Decimal {
                                precision: o["precision"].as_u64().unwrap() as usize,
                                scale: o.get("scale").and_then(Json::as_u64).unwrap_or(0) as usize,
                                fixed: None,
                            },
                            (Some("uuid"), S::String) => S::Uuid { fixed: None },
                            (Some("date"), S::Int) => S::Date,
                            (Some("time-millis"), S::Int) => S::TimeMillis,
                            (Some("time-micros"), S::Long) => S::TimeMicros,
                            (Some(l), S::Long) if ts_kind(l).is_some() => {
                                let (unit, local) = ts_kind(l).unwrap();
                                S::Timestamp { unit, local }
                            }
                            _ => base,
                        })
                    }
                }
            }
            other => Err(format!("not a schema: {other}")),
        }
    }
}

fn ts_kind(l: &str) -> Option<(TsUnit, bool)> {
    Some(match l {
        "timestamp-millis" => (TsUnit::Millis, false),
        "timestamp-micros" => (TsUnit::Micros, false),
        "timestamp-nanos" => (TsUnit::Nanos, false),
        "local-timestamp-millis" => (TsUnit::Millis, true),
        "local-timestamp-micros" => (TsUnit::Micros, true),
        "local-timestamp-nanos" => (TsUnit::Nanos, true),
        _ => return None,
    })
}

/// The largest decimal precision a fixed of `size` bytes can hold.
pub fn max_precision_for_fixed(size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    // floor(log10(2^(8*size - 1) - 1))
    ((8 * size - 1) as f64 * 2f64.log10()).floor() as usize
}

fn valid_decimal(o: &serde_json::Map<String, Json>, fixed_size: Option<usize>) -> bool {
    let Some(p) = o.get("precision").and_then(Json::as_u64) else {
        return false;
    };
    let s = match o.get("scale") {
        None => 0,
        Some(s) => match s.as_u64() {
            Some(s) => s,
            None => return false,
        },
    };
    if p == 0 || s > p {
        return false;
    }
    match fixed_size {
        Some(n) => (p as usize) <= max_precision_for_fixed(n),
        None => true,
    }
}

impl Model {
    pub fn parse(json: &Json) -> Result<Model, String> {
        let mut p = Parser {
            named: HashMap::new(),
            declared: HashSet::new(),
        };
        let root = p.parse(json, "")?;
        Ok(Model {
            root,
            named: p.named,
            json: json.clone(),
        })
    }

    pub fn parse_str(s: &str) -> Result<Model, String> {
        let json: Json = serde_json::from_str(s).map_err(|e| e.to_string())?;
        Self::parse(&json)
    }

    /// Follow a reference to its definition.
    pub fn resolve<'a>(&'a self, s: &'a S) -> &'a S {
        match s {
            S::Ref(name) => &self.named[name],
            other => other,
        }
    }

    /// `Some((inner, null_index))` for `["null", T]` / `[T, "null"]`.
    pub fn optional<'a>(&'a self, s: &'a S) -> Option<(&'a S, usize)> {
        if let S::Union(b) = self.resolve(s) {
            if b.len() == 2 {
                match (self.resolve(&b[0]), self.resolve(&b[1])) {
                    (S::Null, S::Null) => None,
                    (S::Null, _) => Some((&b[1], 0)),
                    (_, S::Null) => Some((&b[0], 1)),
                    _ => None,
                }
            } else {
                None
            }
        } else {
            None
        }
    }

    /// The batch columns: the top-level record's fields, or one column `value`.
    pub fn columns(&self) -> Vec<(String, S)> {
        match self.resolve(&self.root) {
            S::Record { fields, .. } => fields.clone(),
            _ => vec![("value".to_string(), self.root.clone())],
        }
    }

    pub fn is_record_root(&self) -> bool {
        matches!(self.resolve(&self.root), S::Record { .. })
    }
}

// ---------------------------------------------------------------------------------------------
// Expected Arrow types
// ---------------------------------------------------------------------------------------------

fn check_field_inner(
    model: &Model,
    s: &S,
    field: &Field,
    path: &str,
    view: bool,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    let (inner, nullable) = match model.optional(s) {
        Some((t, _)) => (t, true),
        None => (s, false),
    };
    let inner = model.resolve(inner);
    let lenient_null = matches!(inner, S::Null)
        || matches!(inner, S::Union(b) if b.iter().any(|x| matches!(model.resolve(x), S::Null)));
    if !lenient_null && field.is_nullable() != nullable {
        return Err(format!(
            "{path}: field nullable={} but Avro type {} is {}",
            field.is_nullable(),
            describe(model, s),
            if nullable { "nullable" } else { "not nullable" }
        ));
    }
    if matches!(inner, S::Uuid { .. }) {
        let ext = field.metadata().get("ARROW:extension:name");
        if ext.map(String::as_str) != Some("arrow.uuid") {
            return Err(format!(
                "{path}: uuid field lacks extension name arrow.uuid (metadata {:?})",
                field.metadata()
            ));
        }
    }
    check_type(model, inner, field.data_type(), path, view, stack)
}

fn check_type(
    model: &Model,
    s: &S,
    dt: &DataType,
    path: &str,
    view: bool,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    let s = model.resolve(s);
    let bad = || {
        Err(format!(
            "{path}: Arrow type {dt:?} does not match Avro {}",
            describe(model, s)
        ))
    };
    let ok_if = |ok: bool| if ok { Ok(()) } else { bad() };
    let utf8_ok =
        |dt: &DataType| matches!(dt, DataType::Utf8) || (view && matches!(dt, DataType::Utf8View));
    match s {
        S::Null => ok_if(matches!(dt, DataType::Null)),
        S::Boolean => ok_if(matches!(dt, DataType::Boolean)),
        S::Int => ok_if(matches!(dt, DataType::Int32)),
        S::Long => ok_if(matches!(dt, DataType::Int64)),
        S::Float => ok_if(matches!(dt, DataType::Float32)),
        S::Double => ok_if(matches!(dt, DataType::Float64)),
        S::Bytes => {
            let want = if view {
                DataType::BinaryView
            } else {
                DataType::Binary
            };
            ok_if(dt == &want)
        }
        S::String => {
            let want = if view {
                DataType::Utf8View
            } else {
                DataType::Utf8
            };
            ok_if(dt == &want)
        }
        S::Fixed { size, .. } => ok_if(dt == &DataType::FixedSizeBinary(*size as i32)),
        S::Uuid { .. } => ok_if(dt == &DataType::FixedSizeBinary(16)),
        S::Enum { .. } => match dt {
            DataType::Dictionary(k, v) if **k == DataType::Int32 && utf8_ok(v) => Ok(()),
            _ => bad(),
        },
        S::Array(items) => match dt {
            DataType::List(f) => {
                if f.name() != "item" {
                    return Err(format!("{path}: list item field named {:?}", f.name()));
                }
                check_field_inner(model, items, f, &format!("{path}[]"), view, stack)
            }
            _ => bad(),
        },
        S::Map(values) => match dt {
            DataType::Map(entries, sorted) => {
                if *sorted {
                    return Err(format!("{path}: map marked sorted"));
                }
                if entries.is_nullable() {
                    return Err(format!("{path}: map entries field is nullable"));
                }
                let DataType::Struct(kv) = entries.data_type() else {
                    return bad();
                };
                if kv.len() != 2 || kv[0].name() != "key" || kv[1].name() != "value" {
                    return Err(format!(
                        "{path}: map entries are {kv:?}, want key and value"
                    ));
                }
                if kv[0].is_nullable() || !utf8_ok(kv[0].data_type()) {
                    return Err(format!("{path}: map key field is {:?}", kv[0]));
                }
                check_field_inner(model, values, &kv[1], &format!("{path}{{}}"), view, stack)
            }
            _ => bad(),
        },
        S::Record { name, fields } => {
            let DataType::Struct(af) = dt else {
                return bad();
            };
            if stack.contains(name) {
                // A recursive reference: the unrolling is checked by the recursion tests.
                return Ok(());
            }
            if af.len() != fields.len() {
                return Err(format!(
                    "{path}: struct has fields {:?}, Avro record {name} has {:?}",
                    af.iter().map(|f| f.name()).collect::<Vec<_>>(),
                    fields.iter().map(|f| &f.0).collect::<Vec<_>>()
                ));
            }
            stack.push(name.clone());
            for ((fname, fs), f) in fields.iter().zip(af.iter()) {
                if f.name() != fname {
                    stack.pop();
                    return Err(format!(
                        "{path}: struct field {:?}, want {fname:?}",
                        f.name()
                    ));
                }
                let p = if path.is_empty() {
                    fname.clone()
                } else {
                    format!("{path}.{fname}")
                };
                if let Err(e) = check_field_inner(model, fs, f, &p, view, stack) {
                    stack.pop();
                    return Err(e);
                }
            }
            stack.pop();
            Ok(())
        }
        S::Union(branches) => {
            // Only non-optional unions get here.
            let DataType::Union(uf, mode) = dt else {
                return bad();
            };
            if *mode != UnionMode::Dense {
                return Err(format!("{path}: union mode {mode:?}, want Dense"));
            }
            let children: Vec<_> = uf.iter().collect();
            if children.len() != branches.len() {
                return Err(format!(
                    "{path}: union has {} children, Avro union {} branches",
                    children.len(),
                    branches.len()
                ));
            }
            for (i, ((tid, f), b)) in children.into_iter().zip(branches).enumerate() {
                if tid as usize != i {
                    return Err(format!("{path}: union child {i} has type id {tid}"));
                }
                check_field_inner(model, b, f, &format!("{path}<{i}>"), view, stack)?;
            }
            Ok(())
        }
        S::Decimal {
            precision, scale, ..
        } => {
            let want = if *precision <= 38 {
                DataType::Decimal128(*precision as u8, *scale as i8)
            } else {
                DataType::Decimal256(*precision as u8, *scale as i8)
            };
            ok_if(dt == &want)
        }
        S::Date => ok_if(dt == &DataType::Date32),
        S::TimeMillis => ok_if(dt == &DataType::Time32(TimeUnit::Millisecond)),
        S::TimeMicros => ok_if(dt == &DataType::Time64(TimeUnit::Microsecond)),
        S::Timestamp { unit, local } => {
            let u = match unit {
                TsUnit::Millis => TimeUnit::Millisecond,
                TsUnit::Micros => TimeUnit::Microsecond,
                TsUnit::Nanos => TimeUnit::Nanosecond,
            };
            let tz = if *local { None } else { Some("+00:00".into()) };
            ok_if(dt == &DataType::Timestamp(u, tz))
        }
        S::Duration { .. } => ok_if(dt == &DataType::Interval(IntervalUnit::MonthDayNano)),
        S::Ref(_) => unreachable!("resolved above"),
    }
}

/// A short description of an Avro type for messages.
pub fn describe(model: &Model, s: &S) -> String {
    match s {
        S::Ref(n) => format!("ref {n} = {}", describe(model, model.resolve(s))),
        S::Record { name, .. } => format!("record {name}"),
        S::Enum { name, .. } => format!("enum {name}"),
        S::Fixed { name, size } => format!("fixed {name}({size})"),
        S::Duration { name } => format!("duration {name}"),
        S::Array(i) => format!("array<{}>", describe(model, i)),
        S::Map(v) => format!("map<{}>", describe(model, v)),
        S::Union(b) => format!(
            "[{}]",
            b.iter()
                .map(|x| describe(model, x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => format!("{other:?}"),
    }
}

/// Check an Arrow schema against the writer schema: columns, types, nullability, and the
/// `avro.schema` metadata (which must be the file header's schema JSON, `header_json`).
pub fn check_schema(
    model: &Model,
    schema: &SchemaRef,
    view: bool,
    header_json: Option<&Json>,
) -> Result<(), String> {
    let cols = model.columns();
    if schema.fields().len() != cols.len() {
        return Err(format!(
            "Arrow schema has columns {:?}, expected {:?}",
            schema.fields().iter().map(|f| f.name()).collect::<Vec<_>>(),
            cols.iter().map(|c| &c.0).collect::<Vec<_>>()
        ));
    }
    let root_name = match model.resolve(&model.root) {
        S::Record { name, .. } => Some(name.clone()),
        _ => None,
    };
    let mut stack: Vec<String> = root_name.into_iter().collect();
    for ((name, s), f) in cols.iter().zip(schema.fields().iter()) {
        if f.name() != name {
            return Err(format!("column {:?}, expected {name:?}", f.name()));
        }
        check_field_inner(model, s, f, name, view, &mut stack)?;
    }
    let Some(want) = header_json else {
        return Ok(());
    };
    match schema.metadata().get("avro.schema") {
        None => Err("Arrow schema lacks avro.schema metadata".into()),
        Some(text) => {
            let j: Json = serde_json::from_str(text)
                .map_err(|e| format!("avro.schema metadata is not JSON: {e}"))?;
            if &j != want {
                Err(format!(
                    "avro.schema metadata {text} differs from the header's writer schema {want}"
                ))
            } else {
                Ok(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Normalized values
// ---------------------------------------------------------------------------------------------

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

fn i256_from_be_signed(bytes: &[u8]) -> Result<i256, String> {
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

// ---------------------------------------------------------------------------------------------
// apache-avro side
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Container framing
// ---------------------------------------------------------------------------------------------

/// One data block of a container file.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    pub count: i64,
    pub data_start: usize,
    pub data_len: usize,
    /// One past the block's sync marker.
    pub end: usize,
}

/// The framing of a container file.
#[derive(Clone, Debug)]
pub struct Container {
    pub metadata: BTreeMap<String, Vec<u8>>,
    pub sync: [u8; 16],
    /// One past the header's sync marker.
    pub header_len: usize,
    pub blocks: Vec<BlockInfo>,
}

/// Read one zigzag varint.
pub fn read_long(b: &[u8], pos: &mut usize) -> Result<i64, String> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let byte = *b.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        if shift >= 64 {
            return Err("overlong varint".into());
        }
        v |= ((byte & 0x7f) as u64) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            break;
        }
    }
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

impl Container {
    pub fn parse(b: &[u8]) -> Result<Container, String> {
        if b.get(0..4) != Some(b"Obj\x01") {
            return Err("bad magic".into());
        }
        let mut pos = 4;
        let mut metadata = BTreeMap::new();
        loop {
            let mut n = read_long(b, &mut pos)?;
            if n == 0 {
                break;
            }
            if n < 0 {
                n = -n;
                read_long(b, &mut pos)?;
            }
            for _ in 0..n {
                let kl = read_long(b, &mut pos)? as usize;
                let k = String::from_utf8(b.get(pos..pos + kl).ok_or("truncated")?.to_vec())
                    .map_err(|e| e.to_string())?;
                pos += kl;
                let vl = read_long(b, &mut pos)? as usize;
                let v = b.get(pos..pos + vl).ok_or("truncated")?.to_vec();
                pos += vl;
                metadata.insert(k, v);
            }
        }
        let sync: [u8; 16] = b
            .get(pos..pos + 16)
            .ok_or("truncated sync")?
            .try_into()
            .unwrap();
        pos += 16;
        let header_len = pos;
        let mut blocks = Vec::new();
        while pos < b.len() {
            let start = pos;
            let count = read_long(b, &mut pos)?;
            let size = read_long(b, &mut pos)?;
            if size < 0 || pos + size as usize + 16 > b.len() {
                return Err(format!("bad block at {start}"));
            }
            let data_start = pos;
            pos += size as usize;
            if b[pos..pos + 16] != sync {
                return Err(format!("bad sync after block at {start}"));
            }
            pos += 16;
            blocks.push(BlockInfo {
                count,
                data_start,
                data_len: size as usize,
                end: pos,
            });
        }
        Ok(Container {
            metadata,
            sync,
            header_len,
            blocks,
        })
    }

    pub fn schema_json(&self) -> Result<Json, String> {
        let s = self
            .metadata
            .get("avro.schema")
            .ok_or("no avro.schema in header")?;
        serde_json::from_slice(s).map_err(|e| e.to_string())
    }

    pub fn model(&self) -> Result<Model, String> {
        Model::parse(&self.schema_json()?)
    }
}

// ---------------------------------------------------------------------------------------------
// The second oracle: fastavro's reading, stored as typed JSON (see tests/data/fastavro_expected.py)
// ---------------------------------------------------------------------------------------------

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err(format!("odd hex {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

/// Normalize one raw value as `fastavro_expected.py` encoded it, applying logical types.
pub fn expect_json(model: &Model, s: &S, j: &Json) -> Result<N, String> {
    let s = model.resolve(s);
    let err = || Err(format!("JSON {j} does not fit {}", describe(model, s)));
    let int = || j.as_i64().ok_or_else(|| format!("not an integer: {j}"));
    let text = || j.as_str().ok_or_else(|| format!("not a string: {j}"));
    Ok(match s {
        S::Union(branches) => {
            let b = j["branch"].as_u64().ok_or("union without branch")? as usize;
            let inner = expect_json(model, &branches[b], &j["value"])?;
            if model.optional(s).is_some() {
                inner
            } else {
                N::Union(b as i8, Box::new(inner))
            }
        }
        S::Null => match j {
            Json::Null => N::Null,
            _ => return err(),
        },
        S::Boolean => N::Bool(j.as_bool().ok_or("not a bool")?),
        S::Int | S::Date | S::TimeMillis => N::Int(int()? as i32),
        S::Long | S::TimeMicros | S::Timestamp { .. } => N::Long(int()?),
        S::Float => {
            let t = text()?;
            let h = t.strip_prefix("f32:").ok_or("float without f32:")?;
            N::F32(f32::from_bits(
                u32::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            ))
        }
        S::Double => {
            let t = text()?;
            let h = t.strip_prefix("f64:").ok_or("double without f64:")?;
            N::F64(f64::from_bits(
                u64::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            ))
        }
        S::Bytes | S::Fixed { .. } => N::Bytes(hex(text()?)?),
        S::String => N::Str(text()?.to_string()),
        S::Enum { symbols, .. } => {
            let t = text()?;
            let i = symbols
                .iter()
                .position(|x| x == t)
                .ok_or_else(|| format!("unknown symbol {t}"))?;
            N::Enum(i as i32, t.to_string())
        }
        S::Array(items) => N::List(
            j.as_array()
                .ok_or("not a list")?
                .iter()
                .map(|x| expect_json(model, items, x))
                .collect::<Result<_, _>>()?,
        ),
        S::Map(values) => {
            let mut e = j
                .as_array()
                .ok_or("not a map")?
                .iter()
                .map(|kv| {
                    Ok((
                        kv[0].as_str().ok_or("map key")?.to_string(),
                        expect_json(model, values, &kv[1])?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            e.sort_by(|a, b| a.0.cmp(&b.0));
            N::Map(e)
        }
        S::Record { fields, .. } => {
            let arr = j.as_array().ok_or("not a record")?;
            if arr.len() != fields.len() {
                return err();
            }
            N::Struct(
                fields
                    .iter()
                    .zip(arr)
                    .map(|((name, fs), kv)| {
                        if kv[0].as_str() != Some(name) {
                            return Err(format!("field {} where {name} expected", kv[0]));
                        }
                        Ok((name.clone(), expect_json(model, fs, &kv[1])?))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        S::Decimal { .. } => N::Decimal(i256_from_be_signed(&hex(text()?)?)?),
        S::Uuid { fixed: None } => N::Bytes(
            apache_avro::Uuid::parse_str(text()?)
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec(),
        ),
        S::Uuid { fixed: Some(_) } => N::Bytes(hex(text()?)?),
        S::Duration { .. } => duration_from_bytes(&hex(text()?)?)?,
        S::Ref(_) => unreachable!(),
    })
}

/// The rows of a fastavro expectation file.
pub fn json_rows(model: &Model, doc: &Json) -> Result<Vec<N>, String> {
    let rows = doc["rows"].as_array().ok_or("no rows")?;
    rows.iter()
        .map(|r| {
            if model.is_record_root() {
                expect_json(model, &model.root, r)
            } else {
                Ok(N::Struct(vec![(
                    "value".into(),
                    expect_json(model, &model.root, r)?,
                )]))
            }
        })
        .collect()
}
