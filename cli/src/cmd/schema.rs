//! `avrow schema FILE...`: the writer schema as pretty Avro JSON (of several files, the schema
//! they are read as together: merged where they differ), the Arrow schema it is read as (also
//! under a `--reader-schema`), its Parsing Canonical Form or a fingerprint; `--json` for
//! machines.

use std::collections::HashMap;

use super::{hex, json_text, print};
use crate::args::{FingerprintArg, SchemaArgs};
use crate::inputs::{self, ByteCounter, Input};
use anyhow::{Context, Result};
use arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema, UnionMode};
use avrow::avrow_engine::schema::Fingerprint;
use serde_json::{json, Map, Value};

/// The fingerprint algorithm of a `--fingerprint` value.
pub fn fingerprint(arg: FingerprintArg) -> Fingerprint {
    match arg {
        FingerprintArg::Rabin => Fingerprint::Rabin,
        FingerprintArg::Md5 => Fingerprint::Md5,
        FingerprintArg::Sha256 => Fingerprint::Sha256,
    }
}

/// The name of a fingerprint algorithm as the CLI spells it.
pub fn fingerprint_name(algorithm: Fingerprint) -> &'static str {
    match algorithm {
        Fingerprint::Rabin => "rabin",
        Fingerprint::Md5 => "md5",
        Fingerprint::Sha256 => "sha256",
        _ => "unknown",
    }
}

/// Prints what `args` asks for.
///
/// # Errors
/// A file cannot be read, a header or schema is invalid, the files' schemas do not merge, or
/// writing fails.
pub fn run(args: &SchemaArgs) -> Result<()> {
    let inputs = inputs::expand(&args.files)?;
    let counter = ByteCounter::default();
    let (input, names) = match inputs.as_slice() {
        [one] => (Some(one), json!(one.to_string())),
        many => (
            None,
            json!(many.iter().map(ToString::to_string).collect::<Vec<_>>()),
        ),
    };
    // `"file": NAME` for one input, `"files": [NAMES]` for several.
    let key = if input.is_some() { "file" } else { "files" };
    let open = |builder: avrow::ReaderBuilder| -> Result<avrow::Reader> {
        Ok(match input {
            Some(one) => one.open(builder, &counter)?,
            None => builder.open_many(inputs.iter().filter_map(|i| match i {
                Input::File(path) => Some(path.as_path()),
                Input::Stdin => None,
            }))?,
        })
    };
    if args.arrow {
        let mut builder = avrow::ReaderBuilder::new().with_threads(1);
        if let Some(path) = &args.reader_schema {
            builder = builder.with_reader_schema(crate::config::load_reader_schema(path)?);
        }
        let schema = open(builder)?.schema();
        let text = if args.json {
            json_text(
                &json!({ key: names, "arrow_schema": schema_json(&schema) }),
                true,
            )
        } else {
            schema_text(&schema)
        };
        print(&text)?;
        return Ok(());
    }
    // One file: its writer schema from the header; several: the schema they are read as
    // together (their merged schema where they differ).
    let schema = match input {
        Some(one) => one.blocks(&counter)?.header().schema().as_ref().clone(),
        None => open(avrow::ReaderBuilder::new().with_threads(1))?
            .avro_schema()
            .clone(),
    };
    let text = if args.canonical {
        let canonical = schema.canonical_form();
        if args.json {
            json_text(&json!({ key: names, "canonical_form": canonical }), true)
        } else {
            format!("{canonical}\n")
        }
    } else if let Some(arg) = args.fingerprint {
        let algorithm = fingerprint(arg);
        let value = hex(&schema.fingerprint(algorithm));
        if args.json {
            json_text(
                &json!({
                    key: names,
                    "fingerprint": { "algorithm": fingerprint_name(algorithm), "hex": value },
                }),
                true,
            )
        } else {
            format!("{value}\n")
        }
    } else {
        let value: Value = serde_json::from_str(schema.json())
            .with_context(|| format!("{names}: the schema is not valid JSON"))?;
        if args.json {
            json_text(&json!({ key: names, "schema": value }), true)
        } else {
            json_text(&value, true)
        }
    };
    print(&text)?;
    Ok(())
}

/// The children of a nested Arrow type, and its short label.
fn label_and_children(data_type: &DataType) -> (String, Vec<FieldRef>) {
    match data_type {
        DataType::Struct(fields) => ("Struct".into(), fields.iter().cloned().collect()),
        DataType::List(f) => ("List".into(), vec![f.clone()]),
        DataType::LargeList(f) => ("LargeList".into(), vec![f.clone()]),
        DataType::ListView(f) => ("ListView".into(), vec![f.clone()]),
        DataType::LargeListView(f) => ("LargeListView".into(), vec![f.clone()]),
        DataType::FixedSizeList(f, n) => (format!("FixedSizeList({n})"), vec![f.clone()]),
        DataType::Map(f, sorted) => (
            if *sorted { "Map(sorted)" } else { "Map" }.into(),
            vec![f.clone()],
        ),
        DataType::Union(fields, mode) => (
            match mode {
                UnionMode::Dense => "Union(Dense)",
                UnionMode::Sparse => "Union(Sparse)",
            }
            .into(),
            fields.iter().map(|(_, f)| f.clone()).collect(),
        ),
        other => (other.to_string(), Vec::new()),
    }
}

fn extension(field: &Field) -> Option<&str> {
    field
        .metadata()
        .get("ARROW:extension:name")
        .map(String::as_str)
}

/// The Arrow schema as an indented tree, one field per line.
pub fn schema_text(schema: &ArrowSchema) -> String {
    fn field_text(field: &Field, depth: usize, out: &mut String) {
        let (label, children) = label_and_children(field.data_type());
        out.push_str(&"  ".repeat(depth));
        out.push_str(field.name());
        out.push_str(": ");
        out.push_str(&label);
        if !field.is_nullable() {
            out.push_str(" not null");
        }
        if let Some(ext) = extension(field) {
            out.push_str(&format!(" [extension {ext}]"));
        }
        out.push('\n');
        for child in children {
            field_text(&child, depth + 1, out);
        }
    }
    let mut out = String::new();
    for field in schema.fields() {
        field_text(field, 0, &mut out);
    }
    out
}

fn metadata_json(metadata: &HashMap<String, String>) -> Value {
    Value::Object(
        metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>(),
    )
}

/// The Arrow schema as JSON: fields with name, type, nullability, metadata and children.
pub fn schema_json(schema: &ArrowSchema) -> Value {
    fn field_json(field: &Field) -> Value {
        let (label, children) = label_and_children(field.data_type());
        let mut obj = Map::new();
        obj.insert("name".into(), json!(field.name()));
        obj.insert("type".into(), json!(label));
        obj.insert("nullable".into(), json!(field.is_nullable()));
        if !field.metadata().is_empty() {
            obj.insert("metadata".into(), metadata_json(field.metadata()));
        }
        if !children.is_empty() {
            obj.insert(
                "children".into(),
                Value::Array(children.iter().map(|c| field_json(c)).collect()),
            );
        }
        Value::Object(obj)
    }
    json!({
        "fields": schema.fields().iter().map(|f| field_json(f)).collect::<Vec<_>>(),
        "metadata": metadata_json(schema.metadata()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn arrow_schema_tree() {
        let schema = ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new(
                "tags",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ]);
        assert_eq!(
            schema_text(&schema),
            "id: Int64 not null\ntags: List\n  item: Utf8\n"
        );
        let json = schema_json(&schema);
        assert_eq!(json["fields"][1]["children"][0]["type"], "Utf8");
        assert_eq!(json["fields"][0]["nullable"], false);
    }
}
