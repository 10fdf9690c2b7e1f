//! Field defaults for schema resolution: a reader field that the writer's schema lacks takes its
//! JSON default, encoded here once into Avro binary so that the decoder can read it like any
//! other value (one code path for every type, nested records and unions included).

use crate::schema::{NamedDef, Node, Primitive, Schema};
use crate::varint::{Kernel, Scalar};
use serde_json::Value as Json;

/// How deep defaults may nest (records whose fields default to records of the same type
/// would otherwise recurse forever).
const MAX_DEPTH: usize = 64;

/// Encode `value`, the JSON default of a field of type `node` in `schema`, as Avro binary.
///
/// Follows the specification's table of default values: `bytes` and `fixed` are JSON strings
/// whose code points 0–255 are the bytes, enums are symbol strings, records are objects whose
/// missing fields take their own defaults, and a union's default is a value of one of its
/// branches, the first that takes it (Avro 1.12).
pub(crate) fn encode_default(
    schema: &Schema,
    node: &Node,
    value: &Json,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    // Values visited, at most: a union tries each branch, so a hostile default of unions of
    // records nested in records would cost branches^depth without a bound.
    let mut work = 1usize << 18;
    encode(schema, node, value, &mut out, 0, &mut work)?;
    Ok(out)
}

fn too_long() -> String {
    "the default value takes too long to encode (unions of records tried branch by branch)"
        .to_string()
}

fn too_deep() -> String {
    format!(
        "the default value nests more than {MAX_DEPTH} levels deep (as a record's default does \
         when it leaves out a field of its own type, whose default is then used, and so on)"
    )
}

fn encode(
    schema: &Schema,
    node: &Node,
    value: &Json,
    out: &mut Vec<u8>,
    depth: usize,
    work: &mut usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    *work = work.checked_sub(1).ok_or_else(too_long)?;
    let mismatch = |what: &str| Err(format!("{} is not a valid {what} default", short(value)));
    match node {
        Node::Primitive(p, _) => match (p, value) {
            (Primitive::Null, Json::Null) => Ok(()),
            (Primitive::Boolean, Json::Bool(b)) => {
                out.push(u8::from(*b));
                Ok(())
            }
            (Primitive::Int, _) => match value.as_i64().and_then(|v| i32::try_from(v).ok()) {
                Some(v) => {
                    write_long(out, i64::from(v));
                    Ok(())
                }
                None => mismatch("int"),
            },
            (Primitive::Long, _) => match value.as_i64() {
                Some(v) => {
                    write_long(out, v);
                    Ok(())
                }
                None => mismatch("long"),
            },
            (Primitive::Float, _) => match number(value) {
                Some(v) => {
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                    Ok(())
                }
                None => mismatch("float"),
            },
            (Primitive::Double, _) => match number(value) {
                Some(v) => {
                    out.extend_from_slice(&v.to_le_bytes());
                    Ok(())
                }
                None => mismatch("double"),
            },
            (Primitive::Bytes, Json::String(s)) => match latin1(s) {
                Some(bytes) => {
                    write_long(out, bytes.len() as i64);
                    out.extend_from_slice(&bytes);
                    Ok(())
                }
                None => mismatch("bytes (code points above 255)"),
            },
            (Primitive::String, Json::String(s)) => {
                write_long(out, s.len() as i64);
                out.extend_from_slice(s.as_bytes());
                Ok(())
            }
            (p, _) => mismatch(p.name()),
        },
        Node::Array(items) => {
            let Json::Array(values) = value else {
                return mismatch("array");
            };
            if !values.is_empty() {
                write_long(out, values.len() as i64);
                for v in values {
                    encode(schema, items, v, out, depth + 1, work)?;
                }
            }
            write_long(out, 0);
            Ok(())
        }
        Node::Map(values) => {
            let Json::Object(entries) = value else {
                return mismatch("map");
            };
            if !entries.is_empty() {
                write_long(out, entries.len() as i64);
                for (k, v) in entries {
                    write_long(out, k.len() as i64);
                    out.extend_from_slice(k.as_bytes());
                    encode(schema, values, v, out, depth + 1, work)?;
                }
            }
            write_long(out, 0);
            Ok(())
        }
        Node::Union(branches) => {
            let mut first_error = None;
            for (i, branch) in branches.iter().enumerate() {
                let mut attempt = Vec::new();
                write_long(&mut attempt, i as i64);
                match encode(schema, branch, value, &mut attempt, depth + 1, work) {
                    Ok(()) => {
                        out.extend_from_slice(&attempt);
                        return Ok(());
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            Err(first_error.unwrap_or_else(|| "an empty union has no default".to_string()))
        }
        Node::Named(i) => {
            let named = schema.named(*i);
            match &named.def {
                NamedDef::Record(r) => {
                    let Json::Object(fields) = value else {
                        return mismatch(&format!("record {}", named.name));
                    };
                    for f in &r.fields {
                        let v = fields.get(&f.name).or(f.default.as_ref()).ok_or_else(|| {
                            format!(
                                "the default of record {} has no value for field {} (and the field has no default)",
                                named.name, f.name
                            )
                        })?;
                        // (The depth error once, not behind a field name per level.)
                        encode(schema, &f.ty, v, out, depth + 1, work).map_err(|e| match e {
                            e if e == too_deep() || e == too_long() => e,
                            e => format!("field {}: {e}", f.name),
                        })?;
                    }
                    Ok(())
                }
                NamedDef::Enum(e) => {
                    let index = value
                        .as_str()
                        .and_then(|s| e.symbols.iter().position(|x| x == s));
                    match index {
                        Some(index) => {
                            write_long(out, index as i64);
                            Ok(())
                        }
                        None => mismatch(&format!("enum {}", named.name)),
                    }
                }
                NamedDef::Fixed(f) => match value.as_str().and_then(latin1) {
                    Some(bytes) if bytes.len() == f.size => {
                        out.extend_from_slice(&bytes);
                        Ok(())
                    }
                    _ => mismatch(&format!("fixed {} of {} bytes", named.name, f.size)),
                },
            }
        }
    }
}

/// A JSON number, or one of the strings Java's JSON writer uses for non-finite doubles.
fn number(value: &Json) -> Option<f64> {
    match value {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// The bytes of a JSON string whose code points are all below 256 (the Avro encoding of
/// `bytes` and `fixed` defaults).
fn latin1(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

/// Defaults are encoded once per plan: the reference encoder is fast enough.
fn write_long(out: &mut Vec<u8>, v: i64) {
    Scalar.write_long(v, out);
}

/// A JSON value for an error message, cut to a readable length.
fn short(value: &Json) -> String {
    let s = value.to_string();
    if s.len() <= 60 {
        s
    } else {
        let cut = (0..=57).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}...", &s[..cut])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(schema: &str, value: &str) -> Result<Vec<u8>, String> {
        let schema = Schema::parse(schema).unwrap();
        encode_default(
            &schema,
            schema.root(),
            &serde_json::from_str(value).unwrap(),
        )
    }

    #[test]
    fn primitives() {
        assert_eq!(enc(r#""null""#, "null").unwrap(), b"");
        assert_eq!(enc(r#""boolean""#, "true").unwrap(), [1]);
        assert_eq!(enc(r#""int""#, "-1").unwrap(), [1]);
        assert_eq!(enc(r#""long""#, "64").unwrap(), [0x80, 0x01]);
        assert_eq!(enc(r#""float""#, "1.5").unwrap(), 1.5f32.to_le_bytes());
        assert_eq!(enc(r#""double""#, r#""NaN""#).unwrap().len(), 8);
        assert_eq!(
            enc(r#""string""#, r#""hé""#).unwrap(),
            [6, b'h', 0xc3, 0xa9]
        );
        assert_eq!(enc(r#""bytes""#, r#""\u00ff""#).unwrap(), [2, 0xff]);
        assert!(enc(r#""bytes""#, r#""\u0100""#).is_err());
        assert!(enc(r#""int""#, "2147483648").is_err());
        assert!(enc(r#""int""#, r#""1""#).is_err());
        assert!(enc(r#""long""#, "1.5").is_err());
    }

    #[test]
    fn composites() {
        assert_eq!(enc(r#"{"type":"array","items":"int"}"#, "[]").unwrap(), [0]);
        assert_eq!(
            enc(r#"{"type":"array","items":"int"}"#, "[1,2]").unwrap(),
            [4, 2, 4, 0]
        );
        assert_eq!(
            enc(r#"{"type":"map","values":"int"}"#, r#"{"a":1}"#).unwrap(),
            [2, 2, b'a', 2, 0]
        );
        // First branch, then the others.
        assert_eq!(enc(r#"["null","int"]"#, "null").unwrap(), [0]);
        assert_eq!(enc(r#"["null","int"]"#, "3").unwrap(), [2, 6]);
        let record = r#"{"type":"record","name":"r","fields":[
            {"name":"a","type":"int"},{"name":"b","type":"string","default":"x"}]}"#;
        assert_eq!(enc(record, r#"{"a":1}"#).unwrap(), [2, 2, b'x']);
        assert!(enc(record, r#"{"b":"y"}"#).is_err());
        let e = r#"{"type":"enum","name":"e","symbols":["A","B"]}"#;
        assert_eq!(enc(e, r#""B""#).unwrap(), [2]);
        assert!(enc(e, r#""C""#).is_err());
        let f = r#"{"type":"fixed","name":"f","size":2}"#;
        assert_eq!(enc(f, r#""\u0001\u00ff""#).unwrap(), [1, 0xff]);
        assert!(enc(f, r#""a""#).is_err());
    }

    #[test]
    fn self_referencing_defaults_are_bounded() {
        let s = r#"{"type":"record","name":"n","fields":[
            {"name":"next","type":"n","default":{}}]}"#;
        let e = enc(s, "{}").unwrap_err();
        // Said once, not behind "field next: " per level.
        assert!(e.starts_with("the default value nests"), "{e}");
    }
}
