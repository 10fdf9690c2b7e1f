//! Schema resolution (`with_reader_schema`): data written with one schema, read as another.
//! apache-avro's resolving reader is the oracle (random values of the writer's schema, read by
//! both sides as the reader's schema); decode-time and plan-time errors are checked by hand.

use apache_avro::types::Value;
use apache_avro::Schema as ApacheSchema;
use arrow::array::{Array, Float64Array, Int64Array, StringArray};
use arrow::datatypes::DataType;
use avrow::{Error, ReaderBuilder, Schema};

use crate::gen::{random_value, write_file, Rng};
use crate::oracle::{check_schema, diff_rows, expect_row, Model, N};

/// Read `file` with avrow as `reader`.
fn avrow_rows(
    file: &[u8],
    reader: &str,
    batch_size: usize,
    threads: usize,
) -> Result<(arrow::datatypes::SchemaRef, Vec<N>), Error> {
    let r = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(reader).expect("reader schema parses"))
        .with_batch_size(batch_size)
        .with_threads(threads)
        .read_bytes(file.to_vec())?;
    let schema = r.schema();
    let mut rows = Vec::new();
    for batch in r {
        let batch = batch?;
        assert!(batch.num_rows() <= batch_size);
        assert_eq!(batch.schema().fields(), schema.fields());
        for c in batch.columns() {
            c.to_data().validate_full().expect("valid Arrow array");
        }
        rows.extend(crate::oracle::batch_rows(&batch));
    }
    Ok((schema, rows))
}

/// apache-avro's rows for `file` read as `reader`.
fn apache_resolved(file: &[u8], reader: &str, model: &Model) -> Vec<N> {
    let schema = ApacheSchema::parse_str(reader).expect("apache parses the reader schema");
    apache_avro::Reader::builder(file)
        .reader_schema(&schema)
        .build()
        .expect("apache opens the file")
        .map(|v| expect_row(model, &v.expect("apache resolves the value")).expect("oracle row"))
        .collect()
}

/// Random values of `writer` written to a file, read as `reader` by avrow and by apache-avro:
/// the same rows, and the Arrow schema the reader's schema maps to.
fn check_pair(name: &str, writer: &str, reader: &str) {
    let wmodel = Model::parse_str(writer).unwrap_or_else(|e| panic!("{name}: writer model: {e}"));
    let rmodel = Model::parse_str(reader).unwrap_or_else(|e| panic!("{name}: reader model: {e}"));
    let wschema = ApacheSchema::parse_str(writer).expect("apache parses the writer schema");
    for seed in 0..3u64 {
        let mut rng = Rng::new(seed * 7919 + name.len() as u64);
        let values: Vec<Value> = (0..150)
            .map(|_| random_value(&mut rng, &wmodel, &wmodel.root, 3))
            .collect();
        let codec = if seed == 1 {
            apache_avro::Codec::Deflate(apache_avro::DeflateSettings::default())
        } else {
            apache_avro::Codec::Null
        };
        let file = write_file(&mut rng, &wschema, &values, codec);
        let expected = apache_resolved(&file, reader, &rmodel);
        for (batch_size, threads) in [(1024, 1), (7, 1), (5, 2)] {
            let (schema, rows) = avrow_rows(&file, reader, batch_size, threads)
                .unwrap_or_else(|e| panic!("{name}: avrow failed: {e}"));
            check_schema(&rmodel, &schema, false, None)
                .unwrap_or_else(|e| panic!("{name}: Arrow schema: {e}"));
            if let Some(d) = diff_rows(&expected, &rows) {
                panic!("{name} (seed {seed}, batch {batch_size}, threads {threads}): {d}");
            }
        }
    }
}

#[test]
fn fields_reordered_dropped_and_defaulted() {
    let writer = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":"int"},
        {"name":"gone","type":{"type":"array","items":"string"}},
        {"name":"b","type":"string"},
        {"name":"also_gone","type":["null",{"type":"record","name":"x","fields":[{"name":"q","type":"long"}]}]},
        {"name":"c","type":"double"}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[
        {"name":"c","type":"double"},
        {"name":"d_int","type":"int","default":-7},
        {"name":"a","type":"int"},
        {"name":"d_long","type":"long","default":1234567890123},
        {"name":"d_float","type":"float","default":1.5},
        {"name":"d_double","type":"double","default":-2.25},
        {"name":"d_bool","type":"boolean","default":true},
        {"name":"d_string","type":"string","default":"dé"},
        {"name":"d_bytes","type":"bytes","default":"\u0000\u007f"},
        {"name":"d_null","type":"null","default":null},
        {"name":"d_opt","type":["null","string"],"default":null},
        {"name":"d_opt2","type":["string","null"],"default":"s"},
        {"name":"d_array","type":{"type":"array","items":"long"},"default":[1,2,3]},
        {"name":"d_map","type":{"type":"map","values":"int"},"default":{"k":1}},
        {"name":"d_enum","type":{"type":"enum","name":"e","symbols":["X","Y"]},"default":"Y"},
        {"name":"d_fixed","type":{"type":"fixed","name":"f","size":2},"default":"ab"},
        {"name":"d_record","type":{"type":"record","name":"sub","fields":[
            {"name":"p","type":"int"},{"name":"q","type":"string","default":"qq"}]},"default":{"p":5}},
        {"name":"b","type":"string"}]}"#;
    check_pair("fields", writer, reader);
}

#[test]
fn promotions() {
    let writer = r#"{"type":"record","name":"r","fields":[
        {"name":"i2l","type":"int"},{"name":"i2f","type":"int"},{"name":"i2d","type":"int"},
        {"name":"l2f","type":"long"},{"name":"l2d","type":"long"},{"name":"f2d","type":"float"},
        {"name":"s2b","type":"string"},
        {"name":"ai","type":{"type":"array","items":"int"}},
        {"name":"af","type":{"type":"array","items":"float"}},
        {"name":"ml","type":{"type":"map","values":"long"}},
        {"name":"oi","type":["null","int"]},
        {"name":"of","type":["float","null"]}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[
        {"name":"i2l","type":"long"},{"name":"i2f","type":"float"},{"name":"i2d","type":"double"},
        {"name":"l2f","type":"float"},{"name":"l2d","type":"double"},{"name":"f2d","type":"double"},
        {"name":"s2b","type":"bytes"},
        {"name":"ai","type":{"type":"array","items":"long"}},
        {"name":"af","type":{"type":"array","items":"double"}},
        {"name":"ml","type":{"type":"map","values":"double"}},
        {"name":"oi","type":["null","double"]},
        {"name":"of","type":["null","double"]}]}"#;
    check_pair("promotions", writer, reader);
}

#[test]
fn unions() {
    let writer = r#"{"type":"record","name":"r","fields":[
        {"name":"to_nullable","type":"int"},
        {"name":"to_general","type":"string"},
        {"name":"general","type":["int","string",{"type":"array","items":"int"}]},
        {"name":"widened","type":["null","int","long","float"]},
        {"name":"reordered","type":["string","null","long"]}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[
        {"name":"to_nullable","type":["null","long"]},
        {"name":"to_general","type":["int","string","null"]},
        {"name":"general","type":[{"type":"array","items":"long"},"null","string","double"]},
        {"name":"widened","type":["double","null"]},
        {"name":"reordered","type":["null","long","string"]}]}"#;
    check_pair("unions", writer, reader);
}

#[test]
fn named_types_enums_and_aliases() {
    let writer = r#"{"type":"record","name":"r","namespace":"w","fields":[
        {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
        {"name":"e2","type":{"type":"enum","name":"E2","symbols":["P","Q","R","S"]}},
        {"name":"fx","type":{"type":"fixed","name":"F","size":4}},
        {"name":"inner","type":{"type":"record","name":"Inner","fields":[
            {"name":"x","type":"int"},{"name":"y","type":"string"}]}},
        {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
            {"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"junk","type":"bytes"}]}}}]}"#;
    let reader = r#"{"type":"record","name":"r","namespace":"other","fields":[
        {"name":"e","type":{"type":"enum","name":"E","symbols":["C","B","A","Z"]}},
        {"name":"e2","type":{"type":"enum","name":"E2","symbols":["S","P"],"default":"P"}},
        {"name":"fx","type":{"type":"fixed","name":"F","size":4}},
        {"name":"inner","type":{"type":"record","name":"Renamed","aliases":["w.Inner"],"fields":[
            {"name":"y","type":"string"},{"name":"z","type":"int","default":0},{"name":"x","type":"long"}]}},
        {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
            {"name":"qty","type":"double"},{"name":"sku","type":"string"},
            {"name":"price","type":["null","double"],"default":null}]}}}]}"#;
    check_pair("named", writer, reader);
}

#[test]
fn non_record_roots() {
    check_pair("int root", r#""int""#, r#""double""#);
    check_pair(
        "array root",
        r#"{"type":"array","items":"int"}"#,
        r#"{"type":"array","items":"long"}"#,
    );
}

/// Recursive types and aliases (apache-avro resolves neither correctly, so the expected rows
/// are written out).
#[test]
fn recursive_types_and_aliases() {
    let writer = r#"{"type":"record","name":"node","namespace":"w","fields":[
        {"name":"v","type":"int"},{"name":"old","type":"string"},
        {"name":"next","type":["null","node"]}]}"#;
    let reader = r#"{"type":"record","name":"item","namespace":"r","aliases":["w.node"],"fields":[
        {"name":"label","type":"string","default":"n"},
        {"name":"next","type":["null","item"]},
        {"name":"v","type":"long"},
        {"name":"new","aliases":["old"],"type":"bytes"}]}"#;
    let node = |v: i32, old: &str, next: Option<Value>| {
        record(&[
            ("v", Value::Int(v)),
            ("old", Value::String(old.into())),
            (
                "next",
                match next {
                    None => Value::Union(0, Box::new(Value::Null)),
                    Some(n) => Value::Union(1, Box::new(n)),
                },
            ),
        ])
    };
    let file = file_of(
        writer,
        vec![
            node(1, "a", None),
            node(2, "b", Some(node(3, "c", Some(node(4, "d", None))))),
        ],
    );
    let item = |v: i64, new: &str, next: N| {
        N::Struct(vec![
            ("label".into(), N::Str("n".into())),
            ("next".into(), next),
            ("v".into(), N::Long(v)),
            ("new".into(), N::Bytes(new.as_bytes().to_vec())),
        ])
    };
    let expected = vec![
        item(1, "a", N::Null),
        item(2, "b", item(3, "c", item(4, "d", N::Null))),
    ];
    for threads in [1, 2] {
        let (_, rows) = avrow_rows(&file, reader, 1, threads).unwrap();
        if let Some(d) = diff_rows(&expected, &rows) {
            panic!("{d}");
        }
    }
}

#[test]
fn identical_reader_schema_changes_nothing() {
    let schema = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":["null","int"]},{"name":"b","type":["int","string","null"]},
        {"name":"c","type":{"type":"map","values":{"type":"enum","name":"e","symbols":["x","y"]}}}]}"#;
    check_pair("identical", schema, schema);
}

/// Write `values` (already apache `Value`s of `writer`) to an uncompressed file.
fn file_of(writer: &str, values: Vec<Value>) -> Vec<u8> {
    let schema = ApacheSchema::parse_str(writer).unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
    for v in values {
        w.append_value_ref(&v).unwrap();
    }
    w.into_inner().unwrap()
}

fn record(fields: &[(&str, Value)]) -> Value {
    Value::Record(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn plan_error(writer: &str, reader: &str) -> String {
    let file = file_of(writer, vec![]);
    match avrow_rows(&file, reader, 16, 1) {
        Err(e @ Error::Plan { .. }) => e.to_string(),
        Err(e) => panic!("expected a plan error, got {e}"),
        Ok(_) => panic!("expected a plan error for reader {reader}"),
    }
}

#[test]
fn incompatible_schemas_fail_when_opened() {
    let w = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"string"}]}"#;
    let e = plan_error(
        w,
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}"#,
    );
    assert!(
        e.contains("at a:") && e.contains("string cannot be read as the reader's int"),
        "{e}"
    );
    let e = plan_error(
        w,
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"string"},{"name":"b","type":"int"}]}"#,
    );
    assert!(e.contains("at b:") && e.contains("no default"), "{e}");
    // A default of the wrong type is already an invalid schema.
    let e = Schema::parse(
        r#"{"type":"record","name":"r","fields":[{"name":"b","type":"int","default":"x"}]}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("default"), "{e}");
    let fixed = |n: u32| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"f","type":{{"type":"fixed","name":"F","size":{n}}}}}]}}"#
        )
    };
    let e = plan_error(&fixed(4), &fixed(5));
    assert!(e.contains("4 bytes in the writer's schema and 5"), "{e}");
    let dec = |s: u32| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"d","type":{{"type":"bytes","logicalType":"decimal","precision":9,"scale":{s}}}}}]}}"#
        )
    };
    let e = plan_error(&dec(2), &dec(3));
    assert!(e.contains("precision and scale must match"), "{e}");
    let named = |n: &str| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"e","type":{{"type":"enum","name":"{n}","symbols":["A"]}}}}]}}"#
        )
    };
    let e = plan_error(&named("E"), &named("Other"));
    assert!(
        e.contains("enum E cannot be read as the reader's enum Other"),
        "{e}"
    );
    // long does not narrow to int; a union with no matching branch.
    plan_error(
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}"#,
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}"#,
    );
    plan_error(
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":"boolean"}]}"#,
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":["null","string"]}]}"#,
    );
}

/// Rows before a value the reader cannot take are delivered, then an error naming the value.
fn decode_error(writer: &str, values: Vec<Value>, reader: &str) -> (usize, String) {
    let file = file_of(writer, values);
    let r = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(reader).unwrap())
        .with_threads(1)
        .read_bytes(file)
        .expect("the schemas resolve");
    let mut rows = 0;
    for batch in r {
        match batch {
            Ok(b) => rows += b.num_rows(),
            Err(e) => return (rows, e.to_string()),
        }
    }
    panic!("no error after {rows} rows");
}

#[test]
fn unmatched_symbols_and_branches_fail_when_read() {
    let w = r#"{"type":"record","name":"r","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}]}"#;
    let r = r#"{"type":"record","name":"r","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}}]}"#;
    let values = vec![
        record(&[("e", Value::Enum(0, "A".into()))]),
        record(&[("e", Value::Enum(1, "B".into()))]),
    ];
    let (rows, e) = decode_error(w, values, r);
    assert_eq!(rows, 1);
    assert!(
        e.contains(r#"enum symbol "B""#) && e.contains("record 1") && e.contains("field e"),
        "{e}"
    );

    let w = r#"{"type":"record","name":"r","fields":[{"name":"u","type":["null","string"]}]}"#;
    let r = r#"{"type":"record","name":"r","fields":[{"name":"u","type":"string"}]}"#;
    let values = vec![
        record(&[("u", Value::Union(1, Box::new(Value::String("x".into()))))]),
        record(&[("u", Value::Union(1, Box::new(Value::String("y".into()))))]),
        record(&[("u", Value::Union(0, Box::new(Value::Null)))]),
    ];
    let (rows, e) = decode_error(w, values, r);
    assert_eq!(rows, 2);
    assert!(
        e.contains("union branch 0 (null)") && e.contains("field u"),
        "{e}"
    );
}

#[test]
fn bytes_read_as_strings_are_validated() {
    let w = r#"{"type":"record","name":"r","fields":[{"name":"b","type":"bytes"}]}"#;
    let r = r#"{"type":"record","name":"r","fields":[{"name":"b","type":"string"}]}"#;
    let values = vec![
        record(&[("b", Value::Bytes(b"ok".to_vec()))]),
        record(&[("b", Value::Bytes(vec![0xff, 0xfe]))]),
    ];
    let (rows, e) = decode_error(w, values, r);
    assert_eq!(rows, 1);
    assert!(e.contains("UTF-8") && e.contains("field b"), "{e}");
}

#[test]
fn defaults_fill_records_of_zero_bytes() {
    // The writer's records take no bytes at all; the reader's field comes from its default.
    let w = r#"{"type":"record","name":"r","fields":[{"name":"n","type":"null"}]}"#;
    let r = r#"{"type":"record","name":"r","fields":[{"name":"s","type":"string","default":"d"}]}"#;
    let file = file_of(w, (0..10).map(|_| record(&[("n", Value::Null)])).collect());
    let (_, rows) = avrow_rows(&file, r, 4, 1).unwrap();
    assert_eq!(rows.len(), 10);
    let expected = N::Struct(vec![("s".into(), N::Str("d".into()))]);
    assert!(diff_rows(&vec![expected; 10], &rows).is_none());
}

#[test]
fn projection_names_reader_fields() {
    let w = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}"#;
    let r = r#"{"type":"record","name":"r","fields":[
        {"name":"b","type":"string"},{"name":"c","type":"long","default":9},{"name":"a","type":"double"}]}"#;
    let file = file_of(
        w,
        vec![record(&[
            ("a", Value::Int(3)),
            ("b", Value::String("x".into())),
        ])],
    );
    let batch = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(r).unwrap())
        .with_projection(["a", "c"])
        .read_bytes(file.clone())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let names: Vec<_> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["c", "a"]);
    let c = batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let a = batch
        .column(1)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!((c.value(0), a.value(0)), (9, 3.0));
    // A writer-only name is not a reader field.
    let e = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(r).unwrap())
        .with_projection(["zz"])
        .read_bytes(file)
        .unwrap_err();
    assert!(e.to_string().contains("zz"), "{e}");
}

#[test]
fn files_with_different_writer_schemas_read_as_one() {
    let v1 = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"int"}]}"#;
    let v2 = r#"{"type":"record","name":"r","fields":[{"name":"name","type":"string"},{"name":"id","type":"long"}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"name","type":"string","default":"?"}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, (w, values)) in [
        (
            v1,
            vec![
                record(&[("id", Value::Int(1))]),
                record(&[("id", Value::Int(2))]),
            ],
        ),
        (
            v2,
            vec![record(&[
                ("name", Value::String("c".into())),
                ("id", Value::Long(3)),
            ])],
        ),
        (v1, vec![record(&[("id", Value::Int(4))])]),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("{i}.avro"));
        std::fs::write(&path, file_of(w, values)).unwrap();
        paths.push(path);
    }
    for threads in [1, 2] {
        let reader_schema = Schema::parse(reader).unwrap();
        let batches: Vec<_> = ReaderBuilder::new()
            .with_reader_schema(reader_schema)
            .with_threads(threads)
            .open_many(&paths)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut ids = Vec::new();
        let mut names = Vec::new();
        for b in &batches {
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let name = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            ids.extend(id.values().iter().copied());
            names.extend((0..name.len()).map(|i| name.value(i).to_string()));
        }
        assert_eq!(ids, [1, 2, 3, 4]);
        assert_eq!(names, ["?", "?", "c", "?"]);
    }
    // Without a reader schema they read as their merged schema (`id` widened to long, `name`
    // nullable, null in the files without it); without merging they cannot be read together.
    for threads in [1, 2] {
        let reader = ReaderBuilder::new()
            .with_threads(threads)
            .open_many(&paths)
            .unwrap();
        let fields: Vec<_> = reader
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
            .collect();
        assert_eq!(
            fields,
            [
                ("id".to_string(), DataType::Int64, false),
                ("name".to_string(), DataType::Utf8, true)
            ]
        );
        assert_eq!(
            reader.avro_schema().canonical_form(),
            r#"{"name":"r","type":"record","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]}]}"#
        );
        let batches: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
        let mut ids = Vec::new();
        let mut names = Vec::new();
        for b in &batches {
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let name = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            ids.extend(id.values().iter().copied());
            names.extend(name.iter().map(|n| n.map(str::to_string)));
        }
        assert_eq!(ids, [1, 2, 3, 4]);
        assert_eq!(names, [None, None, Some("c".to_string()), None]);
    }
    let e = ReaderBuilder::new()
        .with_schema_merging(false)
        .open_many(&paths)
        .unwrap_err();
    assert!(e.to_string().contains("different writer schema"), "{e}");
}

/// How a reader field of a random evolution gets its value.
enum Source {
    /// The writer's field of this name, converted.
    Writer(String, Conv),
    /// A reader-only field: its default.
    Default(N),
}

#[derive(Clone, Copy)]
enum Conv {
    Same,
    IntToLong,
    ToDouble,
    FloatToDouble,
    StringToBytes,
}

fn convert(n: &N, conv: Conv) -> N {
    match (conv, n) {
        (Conv::Same, n) => n.clone(),
        (Conv::IntToLong, N::Int(v)) => N::Long(i64::from(*v)),
        (Conv::ToDouble, N::Int(v)) => N::F64(f64::from(*v)),
        (Conv::ToDouble, N::Long(v)) => N::F64(*v as f64),
        (Conv::FloatToDouble, N::F32(v)) => N::F64(f64::from(*v)),
        (Conv::StringToBytes, N::Str(s)) => N::Bytes(s.as_bytes().to_vec()),
        (_, other) => panic!("conversion of {other:?}"),
    }
}

/// Random schemas evolved at the top level (fields dropped, reordered, promoted, made
/// nullable, added with defaults): reading with the evolved schema equals the plain read
/// (checked against apache-avro by the differential suite) transformed the same way.
#[test]
fn random_evolutions_equal_the_plain_read_transformed() {
    use crate::gen::random_case;
    use crate::harness::{read_avrow, Opts};
    use serde_json::{json, Value as Json};
    let menu: Vec<(Json, Json, N)> = vec![
        (json!("int"), json!(5), N::Int(5)),
        (json!("string"), json!("x"), N::Str("x".into())),
        (json!(["null", "long"]), Json::Null, N::Null),
        (
            json!({"type": "array", "items": "int"}),
            json!([1, 2]),
            N::List(vec![N::Int(1), N::Int(2)]),
        ),
        (json!("double"), json!(1.5), N::F64(1.5)),
    ];
    let mut checked = 0;
    for seed in 0..150u64 {
        let case = random_case(seed + 7000);
        let Some(fields) = case.json.get("fields").and_then(Json::as_array) else {
            continue;
        };
        let mut rng = Rng::new(seed);
        let file = write_file(
            &mut rng,
            &case.schema,
            &case.values,
            apache_avro::Codec::Null,
        );
        let plain = read_avrow(&file, &Opts::default()).expect("plain read");
        let plain_rows: Vec<N> = plain
            .batches
            .iter()
            .flat_map(crate::oracle::batch_rows)
            .collect();
        for attempt in 0..2 {
            // The second attempt neither drops nor reorders (a named type must be defined
            // before it is used, so those can make the evolved schema invalid).
            let structural = attempt == 0;
            let mut out: Vec<(Json, Source)> = Vec::new();
            for f in fields {
                let name = f["name"].as_str().unwrap().to_string();
                if structural && rng.one_in(6) {
                    continue;
                }
                let mut f = f.clone();
                let (ty, conv) = match f["type"].as_str() {
                    Some("int") if rng.one_in(2) => {
                        if rng.one_in(2) {
                            (json!("long"), Conv::IntToLong)
                        } else {
                            (json!("double"), Conv::ToDouble)
                        }
                    }
                    Some("long") if rng.one_in(2) => (json!("double"), Conv::ToDouble),
                    Some("float") if rng.one_in(2) => (json!("double"), Conv::FloatToDouble),
                    Some("string") if rng.one_in(3) => (json!("bytes"), Conv::StringToBytes),
                    _ => (f["type"].clone(), Conv::Same),
                };
                let wrap = !ty.is_array() && ty != json!("null") && rng.one_in(4);
                f["type"] = if wrap { json!(["null", ty]) } else { ty };
                f.as_object_mut().unwrap().remove("default");
                out.push((f, Source::Writer(name, conv)));
            }
            for k in 0..rng.range(0, 3) {
                let (ty, default, value) = menu[rng.below(menu.len())].clone();
                out.push((
                    json!({"name": format!("added_{k}"), "type": ty, "default": default}),
                    Source::Default(value),
                ));
            }
            if structural {
                for i in (1..out.len()).rev() {
                    out.swap(i, rng.below(i + 1));
                }
            }
            let mut reader = case.json.clone();
            reader["fields"] = Json::Array(out.iter().map(|(f, _)| f.clone()).collect());
            let reader = reader.to_string();
            if Schema::parse(&reader).is_err() {
                assert!(
                    structural,
                    "evolved schema without drops is invalid: {reader}"
                );
                continue;
            }
            let expected: Vec<N> = plain_rows
                .iter()
                .map(|row| {
                    let N::Struct(values) = row else {
                        panic!("rows are structs")
                    };
                    N::Struct(
                        out.iter()
                            .map(|(f, source)| {
                                let value = match source {
                                    Source::Writer(name, conv) => convert(
                                        &values.iter().find(|(k, _)| k == name).unwrap().1,
                                        *conv,
                                    ),
                                    Source::Default(n) => n.clone(),
                                };
                                (f["name"].as_str().unwrap().to_string(), value)
                            })
                            .collect(),
                    )
                })
                .collect();
            let rmodel = Model::parse_str(&reader).unwrap();
            for (batch_size, threads) in [(1024, 1), (3, 2)] {
                let (schema, rows) = avrow_rows(&file, &reader, batch_size, threads)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\nreader {reader}"));
                check_schema(&rmodel, &schema, false, None)
                    .unwrap_or_else(|e| panic!("seed {seed}: Arrow schema: {e}\nreader {reader}"));
                if let Some(d) = diff_rows(&expected, &rows) {
                    panic!("seed {seed}: {d}\nreader {reader}");
                }
            }
            checked += 1;
            break;
        }
    }
    assert!(checked > 100, "only {checked} evolutions checked");
}

/// A file cut anywhere and read with a reader schema that exercises every resolution column
/// (defaults, promotions, resolved unions, remapped enums, reordered fields): an error or the
/// rows before the cut, never a panic or a hang.
#[test]
fn truncated_files_fail_cleanly_under_resolution() {
    let writer = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":"int"},{"name":"f","type":"float"},
        {"name":"u","type":["null","int","string"]},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
        {"name":"l","type":{"type":"array","items":["int","null"]}}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[
        {"name":"l","type":{"type":"array","items":["null","double"]}},
        {"name":"d","type":{"type":"map","values":"string"},"default":{"k":"v"}},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["B","A"]}},
        {"name":"u","type":["string","long","null"]},
        {"name":"f","type":"double"},{"name":"a","type":"float"}]}"#;
    let wmodel = Model::parse_str(writer).unwrap();
    let wschema = ApacheSchema::parse_str(writer).unwrap();
    let mut rng = Rng::new(99);
    let values: Vec<Value> = (0..40)
        .map(|_| random_value(&mut rng, &wmodel, &wmodel.root, 3))
        .collect();
    let file = write_file(&mut rng, &wschema, &values, apache_avro::Codec::Null);
    let full = avrow_rows(&file, reader, 64, 1).unwrap().1.len();
    assert_eq!(full, 40);
    for cut in 0..file.len() {
        let part = file[..cut].to_vec();
        let result = crate::harness::with_timeout(
            "truncated read",
            std::time::Duration::from_secs(20),
            move || std::panic::catch_unwind(|| avrow_rows(&part, reader, 8, 1).map(|r| r.1.len())),
        );
        match result {
            Ok(Ok(rows)) => assert!(rows <= full),
            Ok(Err(_)) => {}
            Err(_) => panic!("panic reading the file cut at {cut}"),
        }
    }
}

#[test]
fn files_whose_schemas_do_not_merge_are_an_error_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, (w, v)) in [
        (
            r#"{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"code","type":"int"}]}"#,
            Value::Int(1),
        ),
        (
            r#"{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"code","type":"string"}]}"#,
            Value::String("x".into()),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("{i}.avro"));
        std::fs::write(&path, file_of(w, vec![record(&[("id", Value::Long(1)), ("code", v)])]))
            .unwrap();
        paths.push(path);
    }
    let e = ReaderBuilder::new().open_many(&paths).unwrap_err();
    assert!(matches!(e, Error::SchemaMerge { .. }), "{e:?}");
    let message = e.to_string();
    for part in [
        "1.avro's writer schema cannot be merged with the schema of",
        "0.avro",
        "field \"code\" of record \"r\": int in one schema, string in the other",
        "read the files with a reader schema",
    ] {
        assert!(message.contains(part), "{message}");
    }
    assert!(e.file().unwrap().ends_with("1.avro"));
}

/// Random schemas evolved as a new writer would evolve them (fields dropped, widened, made
/// nullable, added without defaults), merged with the original ([`Schema::merge`]): random
/// values of either writer schema read with the merged schema as the reader's give the rows
/// apache-avro's resolving reader gives, so the merged schema is one both writers resolve to
/// by an independent implementation's rules.
#[test]
fn merged_schemas_read_both_writers_as_apache_avro_resolves_them() {
    use crate::gen::random_case;
    use serde_json::{json, Value as Json};
    let added = [
        json!("int"),
        json!("string"),
        json!(["null", "long"]),
        json!({"type": "array", "items": "double"}),
        json!({"type": "map", "values": ["null", "int"]}),
    ];
    let mut checked = 0;
    for seed in 0..160u64 {
        let case = random_case(seed + 9100);
        let Some(fields) = case.json.get("fields").and_then(Json::as_array) else {
            continue;
        };
        // apache-avro does not resolve decimals into a union branch ("Could not find
        // matching type"), which merging makes of fields some files lack: the Python suite
        // checks those with fastavro.
        if case.json.to_string().contains("decimal") {
            continue;
        }
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for f in fields {
            if rng.one_in(5) {
                continue;
            }
            let mut f = f.clone();
            let ty = match f["type"].as_str() {
                Some("int") if rng.one_in(2) => json!(["long", "double"][rng.below(2)]),
                Some("long") if rng.one_in(3) => json!("double"),
                Some("float") if rng.one_in(2) => json!("double"),
                _ => f["type"].clone(),
            };
            let wrap = !ty.is_array() && ty != json!("null") && rng.one_in(4);
            f["type"] = if wrap { json!(["null", ty]) } else { ty };
            f.as_object_mut().unwrap().remove("default");
            out.push(f);
        }
        for k in 0..rng.range(0, 3) {
            out.push(json!({"name": format!("new_{k}"), "type": added[rng.below(added.len())]}));
        }
        let mut evolved = case.json.clone();
        evolved["fields"] = Json::Array(out);
        let evolved = evolved.to_string();
        // Dropping the field that defines a named type can leave a later use undefined.
        let Ok(new) = Schema::parse(&evolved) else {
            continue;
        };
        let old = case.json.to_string();
        let merged = Schema::parse(&old)
            .unwrap()
            .merge(&new)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\nold {old}\nnew {evolved}"));
        let merged = merged.json().to_string();
        check_pair(&format!("seed {seed}, old"), &old, &merged);
        check_pair(&format!("seed {seed}, new"), &evolved, &merged);
        checked += 1;
    }
    assert!(checked > 60, "only {checked} merges checked");
}

/// A later schema that already reads the earlier one (a field added with a default) merges to
/// itself: the files of the earlier schema are still resolved against it.
#[test]
fn files_of_a_schema_and_of_its_reader_read_as_the_reader() {
    let new = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"n","type":"int","default":5}]}"#;
    let old = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"int"}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let paths = [dir.path().join("new.avro"), dir.path().join("old.avro")];
    std::fs::write(
        &paths[0],
        file_of(
            new,
            vec![record(&[("id", Value::Long(1)), ("n", Value::Int(2))])],
        ),
    )
    .unwrap();
    std::fs::write(
        &paths[1],
        file_of(old, vec![record(&[("id", Value::Int(3))])]),
    )
    .unwrap();
    let batches: Vec<_> = ReaderBuilder::new()
        .with_threads(1)
        .open_many(&paths)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let rows: Vec<N> = batches.iter().flat_map(crate::oracle::batch_rows).collect();
    let row = |id, n| N::Struct(vec![("id".into(), N::Long(id)), ("n".into(), N::Int(n))]);
    if let Some(d) = diff_rows(&[row(1, 2), row(3, 5)], &rows) {
        panic!("{d}");
    }
}

/// Times and timestamps read in a finer unit of their kind are scaled (milliseconds read as
/// microseconds are times 1,000, not the same number); a value that does not fit the finer
/// unit in 64 bits is an error naming the field; another kind is read as written.
#[test]
fn times_and_timestamps_read_in_a_finer_unit_are_scaled() {
    use arrow::array::{
        Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
    };
    let lt = |l: &str, p: &str| format!(r#"{{"type":"{p}","logicalType":"{l}"}}"#);
    // The record of fields ts, tn, t, o (nullable) and local, of these types.
    let schema = |[ts, tn, t, o, local]: [String; 5]| {
        format!(
            r#"{{"type":"record","name":"r","fields":[
                {{"name":"ts","type":{ts}}},{{"name":"tn","type":{tn}}},{{"name":"t","type":{t}}},
                {{"name":"o","type":["null",{o}]}},{{"name":"local","type":{local}}}]}}"#
        )
    };
    let writer = schema([
        lt("timestamp-millis", "long"),
        lt("timestamp-micros", "long"),
        lt("time-millis", "int"),
        lt("timestamp-millis", "long"),
        lt("local-timestamp-millis", "long"),
    ]);
    let reader = schema([
        lt("timestamp-micros", "long"),
        lt("timestamp-nanos", "long"),
        lt("time-micros", "long"),
        lt("timestamp-micros", "long"),
        lt("timestamp-micros", "long"),
    ]);
    let row = |ts: i64, tn: i64, t: i32, o: Option<i64>, local: i64| {
        record(&[
            ("ts", Value::TimestampMillis(ts)),
            ("tn", Value::TimestampMicros(tn)),
            ("t", Value::TimeMillis(t)),
            (
                "o",
                match o {
                    Some(v) => Value::Union(1, Box::new(Value::TimestampMillis(v))),
                    None => Value::Union(0, Box::new(Value::Null)),
                },
            ),
            ("local", Value::LocalTimestampMillis(local)),
        ])
    };
    let file = file_of(
        &writer,
        vec![
            row(
                1_700_000_000_123,
                1_700_000_000_123_456,
                86_399_999,
                Some(-5),
                7,
            ),
            row(-1, 0, 0, None, -7),
        ],
    );
    let batch = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(&reader).unwrap())
        .read_bytes(file)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let col = |i: usize| batch.column(i).as_any();
    let ts = col(0).downcast_ref::<TimestampMicrosecondArray>().unwrap();
    assert_eq!(ts.values(), &[1_700_000_000_123_000, -1_000]);
    let tn = col(1).downcast_ref::<TimestampNanosecondArray>().unwrap();
    assert_eq!(tn.values(), &[1_700_000_000_123_456_000, 0]);
    let t = col(2).downcast_ref::<Time64MicrosecondArray>().unwrap();
    assert_eq!(t.values(), &[86_399_999_000, 0]);
    let o = col(3).downcast_ref::<TimestampMicrosecondArray>().unwrap();
    assert_eq!((o.value(0), o.is_null(1)), (-5_000, true));
    // A local timestamp read as a UTC one is another kind: resolved as its underlying long.
    let local = col(4).downcast_ref::<TimestampMicrosecondArray>().unwrap();
    assert_eq!(local.values(), &[7, -7]);

    // Out of range for nanoseconds (after the year 2262).
    let w = format!(
        r#"{{"type":"record","name":"r","fields":[{{"name":"x","type":"int"}},{{"name":"ts","type":{}}}]}}"#,
        lt("timestamp-millis", "long")
    );
    let r = format!(
        r#"{{"type":"record","name":"r","fields":[{{"name":"x","type":"int"}},{{"name":"ts","type":{}}}]}}"#,
        lt("timestamp-nanos", "long")
    );
    let file = file_of(
        &w,
        vec![
            record(&[("x", Value::Int(1)), ("ts", Value::TimestampMillis(1))]),
            record(&[
                ("x", Value::Int(2)),
                ("ts", Value::TimestampMillis(i64::MAX / 10)),
            ]),
        ],
    );
    let mut reader = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(&r).unwrap())
        .read_bytes(file)
        .unwrap();
    let e = reader
        .find_map(Result::err)
        .expect("the second record fails");
    let message = e.to_string();
    assert!(message.contains("does not fit 64 bits"), "{message}");
    assert!(message.contains("ts"), "{message}");
}

/// Files whose timestamps changed unit read together in the finer one.
#[test]
fn files_whose_timestamps_changed_unit_merge_in_the_finer_one() {
    use arrow::array::TimestampMicrosecondArray;
    let schema = |l: &str| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"at","type":{{"type":"long","logicalType":"{l}"}}}}]}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let paths = [
        dir.path().join("millis.avro"),
        dir.path().join("micros.avro"),
    ];
    std::fs::write(
        &paths[0],
        file_of(
            &schema("timestamp-millis"),
            vec![record(&[("at", Value::TimestampMillis(1_500))])],
        ),
    )
    .unwrap();
    std::fs::write(
        &paths[1],
        file_of(
            &schema("timestamp-micros"),
            vec![record(&[("at", Value::TimestampMicros(2_500_001))])],
        ),
    )
    .unwrap();
    let mut values = Vec::new();
    for batch in ReaderBuilder::new()
        .with_threads(1)
        .open_many(&paths)
        .unwrap()
    {
        let batch = batch.unwrap();
        let at = batch
            .column(0)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        values.extend(at.values().iter().copied());
    }
    assert_eq!(values, [1_500_000, 2_500_001]);
}

/// Timestamps read in a coarser unit of their kind are divided, rounding down (toward the
/// past): -1 µs is -1 ms, 1,999 µs is 1 ms.
#[test]
fn timestamps_read_in_a_coarser_unit_round_down() {
    use arrow::array::TimestampMillisecondArray;
    let schema = |l: &str| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"at","type":["null",{{"type":"long","logicalType":"{l}"}}]}}]}}"#
        )
    };
    let values = [-1_000_001, -1, 0, 1_999, 1_700_000_000_123_456];
    let file = file_of(
        &schema("timestamp-micros"),
        values
            .iter()
            .map(|v| record(&[("at", Value::Union(1, Box::new(Value::TimestampMicros(*v))))]))
            .collect(),
    );
    let batch = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(&schema("timestamp-millis")).unwrap())
        .read_bytes(file)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let at = batch
        .column(0)
        .as_any()
        .downcast_ref::<TimestampMillisecondArray>()
        .unwrap();
    assert_eq!(at.values(), &[-1_001, -1, 0, 1, 1_700_000_000_123]);
}

/// A union of named types sharing a short name across namespaces (`a.X` and `b.X`, `a.E` and
/// `b.E`): each writer branch reads into the reader branch of its full name, with no reader
/// schema, the same one, or one listing the branches the other way round (each matched the
/// first branch of its short name, so the file could not be opened at all).
#[test]
fn union_branches_named_alike_in_two_namespaces_stay_apart() {
    use arrow::array::{AsArray, UnionArray};
    use arrow::util::display::array_value_to_string;
    let ax = r#"{"type":"record","name":"a.X","fields":[{"name":"v","type":"int"}]}"#;
    let bx = r#"{"type":"record","name":"b.X","fields":[{"name":"w","type":"string"}]}"#;
    let ae = r#"{"type":"enum","name":"a.E","symbols":["P","Q"]}"#;
    let be = r#"{"type":"enum","name":"b.E","symbols":["Q","R"]}"#;
    let schema = |branches: [&str; 4]| {
        format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"u","type":[{}]}}]}}"#,
            branches.join(",")
        )
    };
    let writer = schema([ax, bx, ae, be]);
    let union = |i: u32, v: Value| record(&[("u", Value::Union(i, Box::new(v)))]);
    let file = file_of(
        &writer,
        vec![
            union(0, record(&[("v", Value::Int(1))])),
            union(1, record(&[("w", Value::String("s".into()))])),
            union(2, Value::Enum(1, "Q".into())),
            union(3, Value::Enum(1, "R".into())),
        ],
    );
    let read = |reader: Option<&str>| -> Vec<(String, String)> {
        let mut b = ReaderBuilder::new();
        if let Some(r) = reader {
            b = b.with_reader_schema(Schema::parse(r).unwrap());
        }
        let batches: Vec<_> = b
            .read_bytes(file.clone())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut rows = Vec::new();
        for batch in batches {
            let u: &UnionArray = batch.column(0).as_union();
            let DataType::Union(fields, _) = u.data_type() else {
                unreachable!()
            };
            for i in 0..u.len() {
                let (_, field) = fields.iter().find(|(id, _)| *id == u.type_id(i)).unwrap();
                let value = array_value_to_string(&u.value(i), 0).unwrap();
                rows.push((field.name().clone(), value));
            }
        }
        rows
    };
    let expected: Vec<(String, String)> = [
        ("a.X", "{v: 1}"),
        ("b.X", "{w: s}"),
        ("a.E", "Q"),
        ("b.E", "R"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(read(None), expected);
    assert_eq!(read(Some(&writer)), expected);
    assert_eq!(read(Some(&schema([be, ae, bx, ax]))), expected);
}

/// Reader fields whose union default matches a branch other than the first (Avro 1.12: "one
/// element of the union"): filled with it, in the branch it matches; and a writer schema with
/// such a default reads (both were "not a valid value of this type").
#[test]
fn union_defaults_may_match_any_branch() {
    use arrow::array::{AsArray, ListArray};
    let writer = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"int"},
        {"name":"s","type":["null","string"],"default":"x"}]}"#;
    let reader = r#"{"type":"record","name":"r","fields":[{"name":"id","type":"int"},
        {"name":"s","type":["null","string"],"default":"x"},
        {"name":"n","type":["null","int"],"default":5},
        {"name":"l","type":{"type":"array","items":["null","string"]},"default":[null,"y"]}]}"#;
    let file = file_of(
        writer,
        vec![record(&[
            ("id", Value::Int(1)),
            ("s", Value::Union(0, Box::new(Value::Null))),
        ])],
    );
    let plain: Vec<_> = ReaderBuilder::new()
        .read_bytes(file.clone())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(plain[0].num_rows(), 1);
    let batch = ReaderBuilder::new()
        .with_reader_schema(Schema::parse(reader).unwrap())
        .read_bytes(file)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let n = batch.column_by_name("n").unwrap();
    assert_eq!(n.as_primitive::<arrow::datatypes::Int32Type>().value(0), 5);
    assert!(n.is_valid(0));
    let l: &ListArray = batch.column_by_name("l").unwrap().as_list();
    let items = l.value(0);
    let items = items.as_string::<i32>();
    assert_eq!(items.len(), 2);
    assert!(items.is_null(0));
    assert_eq!(items.value(1), "y");
    assert!(batch.column_by_name("s").unwrap().is_null(0));
}

/// A `date` read as a timestamp is the start of its day in the timestamp's unit (it was read
/// as that many of the unit: 2020-01-01, day 18,262, as 18.262 seconds after 1970).
#[test]
fn dates_read_as_timestamps_are_the_start_of_their_day() {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    let writer = r#"{"type":"record","name":"r","fields":[
        {"name":"d","type":{"type":"int","logicalType":"date"}}]}"#;
    let file = file_of(
        writer,
        vec![
            record(&[("d", Value::Date(18_262))]),
            record(&[("d", Value::Date(-1))]),
        ],
    );
    for (logical, day) in [
        ("timestamp-millis", 86_400_000i64),
        ("timestamp-micros", 86_400_000_000),
        ("timestamp-nanos", 86_400_000_000_000),
        ("local-timestamp-millis", 86_400_000),
    ] {
        let reader = format!(
            r#"{{"type":"record","name":"r","fields":[
                {{"name":"d","type":{{"type":"long","logicalType":"{logical}"}}}}]}}"#
        );
        let batch = ReaderBuilder::new()
            .with_reader_schema(Schema::parse(&reader).unwrap())
            .read_bytes(file.clone())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let column = arrow::compute::cast(batch.column(0), &DataType::Int64).unwrap();
        let values = column.as_primitive::<Int64Type>().values().to_vec();
        assert_eq!(values, vec![18_262 * day, -day], "{logical}");
    }
}
