//! The Avro schema an Arrow schema is written as when none is given: the one avrow's reader
//! recorded (`avro.schema` metadata), so that read → write gives back the writer's schema;
//! otherwise the inverse of the read mapping, with the natural Avro type for Arrow types the
//! reader never produces (the table in the README).

use crate::error::PlanError;
use crate::schema::AVRO_SCHEMA_KEY;
use crate::schema::{Primitive, Schema};
use arrow_schema::{DataType, Field, Schema as ArrowSchema, TimeUnit};
use serde_json::{json, Value as Json};
use std::collections::HashSet;

/// The Avro schema for batches of `arrow`: the `avro.schema` metadata if present (the schema
/// avrow's reader read), otherwise a record named `topLevelRecord` with one field per column
/// (see the README's mapping table: nullable columns become `["null", T]`, named types take
/// the names of their fields).
///
/// # Errors
/// [`PlanError::InvalidName`] for a column name that is not a valid Avro name;
/// [`PlanError::NoAvroType`] for a type with no Avro counterpart (negative decimal scales,
/// run-end encoded or list-view arrays, maps with non-string keys, unions with two children
/// of one Avro type); [`PlanError::Underivable`] when the derived schema is still not valid
/// Avro (two columns of one name, a union of `Int32` and `Date32`, a union in a union);
/// [`PlanError::Incompatible`] if the metadata's schema does not parse.
pub fn avro_schema_for(arrow: &ArrowSchema) -> Result<Schema, PlanError> {
    if let Some(json) = arrow.metadata().get(AVRO_SCHEMA_KEY) {
        // (As the file's header was read: leniently, its defaults that do not fit dropped.)
        return Schema::parse_writer(json).map_err(|e| PlanError::Incompatible {
            path: String::new(),
            reason: format!("the {AVRO_SCHEMA_KEY} metadata is not a valid schema: {e}"),
        });
    }
    derived_avro_schema(arrow, "topLevelRecord")
}

/// The Avro schema derived from `arrow`'s columns alone (any `avro.schema` metadata is
/// ignored), as [`avro_schema_for`] derives it, its record named `full_name` (`name` or
/// `namespace.name`; named types inside it take its namespace).
///
/// # Errors
/// As [`avro_schema_for`]'s derivation, and [`PlanError::InvalidName`] for a `full_name` that
/// is not a valid Avro full name.
pub fn derived_avro_schema(arrow: &ArrowSchema, full_name: &str) -> Result<Schema, PlanError> {
    let (namespace, name) = match full_name.rsplit_once('.') {
        Some((namespace, name)) => (Some(namespace), name),
        None => (None, full_name),
    };
    // (A primitive type's name names no type outside a namespace.)
    let primitive = namespace.is_none() && Primitive::from_name(name).is_some();
    if !valid_name(name) || primitive || !namespace.is_none_or(|ns| ns.split('.').all(valid_name)) {
        return Err(PlanError::InvalidName {
            path: "(the record)".to_string(),
            name: full_name.to_string(),
        });
    }
    let mut d = Deriver {
        names: HashSet::new(),
    };
    let mut root = d.record(name, arrow.fields().iter().map(|f| f.as_ref()), "")?;
    if let (Some(namespace), Some(obj)) = (namespace, root.as_object_mut()) {
        obj.insert("namespace".into(), Json::String(namespace.to_string()));
    }
    Schema::parse(&root.to_string()).map_err(|e| PlanError::Underivable {
        reason: e.to_string(),
        schema: root.to_string(),
    })
}

struct Deriver {
    /// Named types defined so far (one namespace).
    names: HashSet<String>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Deriver {
    /// A new type name from `hint` (`topLevelRecord`, a field name), unique in the schema and
    /// not a primitive type's name (a column called `int` holding a record names it `int2`).
    fn name(&mut self, hint: &str) -> String {
        let base = if valid_name(hint) { hint } else { "type" };
        let mut name = base.to_string();
        let mut n = 1;
        while Primitive::from_name(&name).is_some() || !self.names.insert(name.clone()) {
            n += 1;
            name = format!("{base}{n}");
        }
        name
    }

    fn record<'f>(
        &mut self,
        hint: &str,
        fields: impl Iterator<Item = &'f Field>,
        path: &str,
    ) -> Result<Json, PlanError> {
        let name = self.name(hint);
        let mut out = Vec::new();
        for f in fields {
            let at = if path.is_empty() {
                f.name().clone()
            } else {
                format!("{path}.{}", f.name())
            };
            if !valid_name(f.name()) {
                return Err(PlanError::InvalidName {
                    path: at,
                    name: f.name().to_string(),
                });
            }
            out.push(json!({"name": f.name(), "type": self.field(f, &at)?}));
        }
        Ok(json!({"type": "record", "name": name, "fields": out}))
    }

    fn field(&mut self, f: &Field, path: &str) -> Result<Json, PlanError> {
        let t = self.data_type(f, f.data_type(), path)?;
        let nullable =
            f.is_nullable() && !matches!(f.data_type(), DataType::Null | DataType::Union(..));
        Ok(if nullable { json!(["null", t]) } else { t })
    }

    fn data_type(&mut self, f: &Field, t: &DataType, path: &str) -> Result<Json, PlanError> {
        use DataType as D;
        let unsupported = |reason: &'static str| PlanError::NoAvroType {
            path: path.to_string(),
            data_type: t.clone(),
            reason,
        };
        let logical = |base: &str, logical: &str| json!({"type": base, "logicalType": logical});
        Ok(match t {
            D::Null => json!("null"),
            D::Boolean => json!("boolean"),
            D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => json!("int"),
            D::Int64 | D::UInt32 | D::UInt64 => json!("long"),
            D::Float16 | D::Float32 => json!("float"),
            D::Float64 => json!("double"),
            D::Utf8 | D::LargeUtf8 | D::Utf8View => json!("string"),
            D::Binary | D::LargeBinary | D::BinaryView => json!("bytes"),
            D::FixedSizeBinary(16) if f.extension_type_name() == Some("arrow.uuid") => {
                logical("string", "uuid")
            }
            D::FixedSizeBinary(n) => {
                json!({"type": "fixed", "name": self.name(f.name()), "size": n})
            }
            D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) | D::Decimal256(p, s) => {
                if *s < 0 {
                    return Err(unsupported(
                        "has a negative scale, which Avro decimals cannot",
                    ));
                }
                json!({"type": "bytes", "logicalType": "decimal", "precision": p, "scale": s})
            }
            D::Date32 | D::Date64 => logical("int", "date"),
            D::Time32(_) => logical("int", "time-millis"),
            D::Time64(TimeUnit::Microsecond) => logical("long", "time-micros"),
            // Avro has no time-nanos: the nanoseconds as a plain long.
            D::Time64(_) => json!("long"),
            D::Timestamp(unit, tz) => {
                let unit = match unit {
                    TimeUnit::Second | TimeUnit::Millisecond => "millis",
                    TimeUnit::Microsecond => "micros",
                    TimeUnit::Nanosecond => "nanos",
                };
                let kind = if tz.is_some() {
                    "timestamp"
                } else {
                    "local-timestamp"
                };
                logical("long", &format!("{kind}-{unit}"))
            }
            // Avro has no duration of one unit: its count as a plain long.
            D::Duration(_) => json!("long"),
            D::Interval(_) => json!({
                "type": "fixed", "name": self.name(f.name()), "size": 12, "logicalType": "duration"
            }),
            D::List(item) | D::LargeList(item) | D::FixedSizeList(item, _) => {
                json!({"type": "array", "items": self.field(item, &format!("{path}[]"))?})
            }
            D::Map(entries, _) => {
                let D::Struct(kv) = entries.data_type() else {
                    return Err(unsupported("has map entries that are not a struct"));
                };
                if kv.len() != 2
                    || !matches!(kv[0].data_type(), D::Utf8 | D::LargeUtf8 | D::Utf8View)
                {
                    return Err(unsupported(
                        "has keys that are not strings, which Avro maps need",
                    ));
                }
                json!({"type": "map", "values": self.field(&kv[1], &format!("{path}{{}}"))?})
            }
            D::Struct(fields) => self.record(f.name(), fields.iter().map(|f| f.as_ref()), path)?,
            D::Dictionary(_, value) => self.data_type(f, value, path)?,
            D::Union(fields, _) => {
                let mut branches = Vec::new();
                let mut nullable = false;
                for (_, child) in fields.iter() {
                    nullable |= child.is_nullable() || matches!(child.data_type(), D::Null);
                    if matches!(child.data_type(), D::Null) {
                        continue;
                    }
                    let b = self.data_type(
                        child,
                        child.data_type(),
                        &format!("{path}.{}", child.name()),
                    )?;
                    if branches.contains(&b) {
                        return Err(unsupported(
                            "has two children of one Avro type, which an Avro union cannot",
                        ));
                    }
                    branches.push(b);
                }
                if nullable {
                    branches.insert(0, json!("null"));
                }
                Json::Array(branches)
            }
            _ => return Err(unsupported("has no Avro counterpart")),
        })
    }
}
