//! The Arrow type each column must have, derived from the [`Model`], and the check of a schema
//! against it.

use super::*;

pub(super) fn check_field_inner(
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

pub(super) fn check_type(
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
