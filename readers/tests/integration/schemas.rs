//! Schema features: `error` records, attributes (aliases, docs, defaults, order, custom
//! properties), unknown and malformed logical types falling back to the underlying type,
//! non-record top-level schemas, empty records and zero-size fixed.
//!
//! Files are written by apache-avro with a plain schema, then the header's schema is replaced by
//! a decorated one with the same wire encoding (apache-avro cannot write some of these).

use apache_avro::types::Value;
use apache_avro::Schema;
use arrow::datatypes::DataType;

use crate::gen::rewrite_schema;
use crate::harness::{check_decode, read_avrow, read_avrow_caught, Opts};
use crate::oracle::{apache_read, expect_row, Model, N};

fn write(schema: &str, values: &[Value]) -> Vec<u8> {
    let schema = Schema::parse_str(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
    for (i, v) in values.iter().enumerate() {
        w.append_value_ref(v).unwrap();
        if i % 2 == 1 {
            w.flush().unwrap();
        }
    }
    w.into_inner().unwrap()
}

/// Write with `base`, relabel with `decorated`, decode, compare with the values read back under
/// `decorated`'s meaning.
#[track_caller]
fn check(base: &str, decorated: &str, values: &[Value]) {
    let file = rewrite_schema(&write(base, values), decorated);
    let model = Model::parse_str(decorated).unwrap();
    let plain = write(base, values);
    let expected: Vec<N> = apache_read(&plain)
        .unwrap()
        .iter()
        .map(|v| expect_row(&model, v).unwrap())
        .collect();
    for bs in [1, 1024] {
        if let Err(e) = check_decode(&model, &file, &expected, &Opts::batch(bs)) {
            panic!("schema {decorated}, batch {bs}: {e}");
        }
    }
}

fn rec1(ty: &str) -> String {
    format!(r#"{{"type":"record","name":"R","fields":[{{"name":"f","type":{ty}}}]}}"#)
}

fn row(v: Value) -> Value {
    Value::Record(vec![("f".into(), v)])
}

#[test]
fn error_type_reads_like_a_record() {
    let base = r#"{"type":"record","name":"Oops","fields":[{"name":"msg","type":"string"},
        {"name":"inner","type":{"type":"record","name":"Why","fields":[{"name":"code","type":"int"}]}}]}"#;
    let decorated = base.replace(r#""type":"record""#, r#""type":"error""#);
    let v = |m: &str, c: i32| {
        Value::Record(vec![
            ("msg".into(), Value::String(m.into())),
            (
                "inner".into(),
                Value::Record(vec![("code".into(), Value::Int(c))]),
            ),
        ])
    };
    check(base, &decorated, &[v("a", 1), v("bé", -2), v("", 3)]);
}

#[test]
fn attributes_are_accepted() {
    let base = r#"{"type":"record","name":"R","fields":[
        {"name":"x","type":"int"},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
        {"name":"n","type":["null","string"]}]}"#;
    let decorated = r#"{"type":"record","name":"R","namespace":"my.ns","doc":"dóc","aliases":["Old","other.Older"],
        "custom-prop":{"nested":[1,2]},"fields":[
        {"name":"x","type":"int","aliases":["y"],"doc":"an int","default":5,"order":"descending","extra":true},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"B","doc":"d","aliases":["EE"]},"default":"A","order":"ignore"},
        {"name":"n","type":["null","string"],"default":null,"order":"ascending"}]}"#;
    let v = |x: i32, e: u32, n: Option<&str>| {
        Value::Record(vec![
            ("x".into(), Value::Int(x)),
            ("e".into(), Value::Enum(e, ["A", "B"][e as usize].into())),
            (
                "n".into(),
                match n {
                    None => Value::Union(0, Box::new(Value::Null)),
                    Some(s) => Value::Union(1, Box::new(Value::String(s.into()))),
                },
            ),
        ])
    };
    check(
        base,
        decorated,
        &[v(1, 0, None), v(-7, 1, Some("s")), v(i32::MAX, 1, None)],
    );
}

#[test]
fn unknown_logical_types_fall_back() {
    let cases: [(&str, &str, Value); 6] = [
        (
            r#""string""#,
            r#"{"type":"string","logicalType":"my-thing"}"#,
            Value::String("x".into()),
        ),
        (
            r#""long""#,
            r#"{"type":"long","logicalType":"timestamp-picos"}"#,
            Value::Long(5),
        ),
        (
            r#""int""#,
            r#"{"type":"int","logicalType":"DATE"}"#,
            Value::Int(5),
        ),
        (
            r#""bytes""#,
            r#"{"type":"bytes","logicalType":"big-decimal-ish"}"#,
            Value::Bytes(vec![1, 2]),
        ),
        // a logical type on the wrong underlying type
        (
            r#""string""#,
            r#"{"type":"string","logicalType":"date"}"#,
            Value::String("2020-01-01".into()),
        ),
        (
            r#""int""#,
            r#"{"type":"int","logicalType":"timestamp-millis"}"#,
            Value::Int(-3),
        ),
    ];
    for (base, dec, v) in cases {
        check(&rec1(base), &rec1(dec), &[row(v.clone()), row(v)]);
    }
    // time-micros on int, uuid on bytes
    check(
        &rec1(r#""int""#),
        &rec1(r#"{"type":"int","logicalType":"time-micros"}"#),
        &[row(Value::Int(7))],
    );
    check(
        &rec1(r#""bytes""#),
        &rec1(r#"{"type":"bytes","logicalType":"uuid"}"#),
        &[row(Value::Bytes(vec![7; 16]))],
    );
}

#[test]
fn malformed_logical_types_on_fixed_fall_back() {
    let fixed = |size: usize, extra: &str| {
        rec1(&format!(
            r#"{{"type":"fixed","name":"F","size":{size}{extra}}}"#
        ))
    };
    let cases: [(usize, &str); 5] = [
        // precision too large for 2 bytes (max 4)
        (2, r#","logicalType":"decimal","precision":10,"scale":2"#),
        // uuid on a fixed that is not 16 bytes
        (8, r#","logicalType":"uuid""#),
        // duration on a fixed that is not 12 bytes
        (10, r#","logicalType":"duration""#),
        // scale greater than precision
        (4, r#","logicalType":"decimal","precision":3,"scale":5"#),
        // precision missing
        (4, r#","logicalType":"decimal","scale":1"#),
    ];
    for (size, extra) in cases {
        let vals: Vec<Value> = (0..3)
            .map(|i| row(Value::Fixed(size, vec![i as u8; size])))
            .collect();
        check(&fixed(size, ""), &fixed(size, extra), &vals);
    }
}

#[test]
fn malformed_decimals_on_bytes_fall_back() {
    for extra in [
        r#""precision":0"#,
        r#""precision":4,"scale":9"#,
        r#""precision":"5""#,
        r#""precision":5,"scale":-1"#,
    ] {
        let dec = format!(r#"{{"type":"bytes","logicalType":"decimal",{extra}}}"#);
        check(
            &rec1(r#""bytes""#),
            &rec1(&dec),
            &[row(Value::Bytes(vec![1])), row(Value::Bytes(vec![]))],
        );
    }
}

#[test]
fn valid_logical_types_on_plain_data() {
    // decimal(76, 10) on bytes: the largest Decimal256; values at the edge.
    let max76 = crate::gen::minimal_be((0..76).fold(arrow::datatypes::i256::ZERO, |a, _| {
        a.wrapping_mul(arrow::datatypes::i256::from_i128(10))
            .wrapping_add(arrow::datatypes::i256::from_i128(9))
    }));
    let neg = crate::gen::minimal_be(
        arrow::datatypes::i256::from_be_bytes({
            let mut b = [0u8; 32];
            b[32 - max76.len()..].copy_from_slice(&max76);
            b
        })
        .wrapping_neg(),
    );
    check(
        &rec1(r#""bytes""#),
        &rec1(r#"{"type":"bytes","logicalType":"decimal","precision":76,"scale":10}"#),
        &[
            row(Value::Bytes(max76)),
            row(Value::Bytes(neg)),
            row(Value::Bytes(vec![0])),
            row(Value::Bytes(vec![0xff])),
        ],
    );
    // decimal(38) vs (39): the Decimal128 / Decimal256 boundary
    for p in [38, 39] {
        check(
            &rec1(r#""bytes""#),
            &rec1(&format!(
                r#"{{"type":"bytes","logicalType":"decimal","precision":{p},"scale":0}}"#
            )),
            &[
                row(Value::Bytes(vec![0x80])),
                row(Value::Bytes(vec![0x7f, 0xff])),
            ],
        );
    }
    // decimal with redundant sign-extension bytes (valid two's complement of any length),
    // also longer than the Arrow type's 16 / 32 bytes
    let padded = |fill: u8, last: u8, len: usize| {
        let mut v = vec![fill; len - 1];
        v.push(last);
        row(Value::Bytes(v))
    };
    check(
        &rec1(r#""bytes""#),
        &rec1(r#"{"type":"bytes","logicalType":"decimal","precision":5,"scale":1}"#),
        &[
            padded(0xff, 0x85, 4),
            padded(0, 5, 4),
            padded(0xff, 0x85, 20),
            padded(0, 5, 17),
        ],
    );
    check(
        &rec1(r#""bytes""#),
        &rec1(r#"{"type":"bytes","logicalType":"decimal","precision":40,"scale":1}"#),
        &[padded(0xff, 0x85, 33), padded(0, 5, 40)],
    );
}

#[test]
fn non_record_top_level_gives_one_value_column() {
    let cases: Vec<(&str, Vec<Value>, DataType, bool)> = vec![
        (
            r#""string""#,
            vec![Value::String("a".into()), Value::String("".into())],
            DataType::Utf8,
            false,
        ),
        (
            r#""int""#,
            vec![Value::Int(1), Value::Int(i32::MIN)],
            DataType::Int32,
            false,
        ),
        (
            r#"["null","long"]"#,
            vec![
                Value::Union(0, Box::new(Value::Null)),
                Value::Union(1, Box::new(Value::Long(3))),
            ],
            DataType::Int64,
            true,
        ),
        (
            r#"{"type":"array","items":"double"}"#,
            vec![Value::Array(vec![Value::Double(1.5)]), Value::Array(vec![])],
            DataType::new_list(DataType::Float64, false),
            false,
        ),
        (
            r#"{"type":"enum","name":"E","symbols":["X","Y"]}"#,
            vec![Value::Enum(1, "Y".into()), Value::Enum(0, "X".into())],
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
    ];
    for (schema, values, dt, nullable) in cases {
        check(schema, schema, &values);
        let d = read_avrow(&write(schema, &values), &Opts::default()).unwrap();
        assert_eq!(d.schema.fields().len(), 1, "{schema}");
        let f = &d.schema.fields()[0];
        assert_eq!(f.name(), "value", "{schema}");
        assert_eq!(f.data_type(), &dt, "{schema}");
        assert_eq!(f.is_nullable(), nullable, "{schema}");
    }
}

#[test]
fn empty_records_keep_their_row_count() {
    let schema = r#"{"type":"record","name":"E","fields":[]}"#;
    let values: Vec<Value> = (0..5).map(|_| Value::Record(vec![])).collect();
    let file = write(schema, &values);
    for bs in [1, 2, 1024] {
        let d = read_avrow(&file, &Opts::batch(bs)).unwrap_or_else(|e| panic!("batch {bs}: {e}"));
        assert_eq!(d.schema.fields().len(), 0);
        assert_eq!(d.num_rows(), 5, "batch {bs}");
    }
    // nested empty record and an array of them
    let schema = r#"{"type":"record","name":"R","fields":[
        {"name":"e","type":{"type":"record","name":"E","fields":[]}},
        {"name":"l","type":{"type":"array","items":"E"}},
        {"name":"i","type":"int"}]}"#;
    let values: Vec<Value> = (0..4)
        .map(|i| {
            Value::Record(vec![
                ("e".into(), Value::Record(vec![])),
                ("l".into(), Value::Array(vec![Value::Record(vec![]); i])),
                ("i".into(), Value::Int(i as i32)),
            ])
        })
        .collect();
    check(schema, schema, &values);
}

#[test]
fn arrays_of_nulls_within_limits_decode() {
    // Zero-byte items must be bounded, but ordinary sizes must still work.
    let schema = rec1(r#"{"type":"array","items":"null"}"#);
    let values: Vec<Value> = [0usize, 1, 1000, 100_000]
        .iter()
        .map(|&n| row(Value::Array(vec![Value::Null; n])))
        .collect();
    check(&schema, &schema, &values);
}

#[test]
fn zero_size_fixed() {
    let schema = rec1(r#"{"type":"fixed","name":"Z","size":0}"#);
    let values: Vec<Value> = (0..3).map(|_| row(Value::Fixed(0, vec![]))).collect();
    check(&schema, &schema, &values);
}

/// A writer schema whose defaults do not match their types (`"abc"` for an `int`, `null` for a
/// `string`, as writers that never checked them wrote): the file reads, those defaults being
/// dropped (a writer's defaults are never used to read its own data; every read failed). As a
/// reader schema, the same text is still an error naming the field.
#[test]
fn invalid_defaults_of_a_writer_schema_are_dropped() {
    let base = r#"{"type":"record","name":"R","fields":[{"name":"f","type":"int"},
        {"name":"s","type":"string"}]}"#;
    let bad = r#"{"type":"record","name":"R","fields":[{"name":"f","type":"int","default":"abc"},
        {"name":"s","type":"string","default":null}]}"#;
    let values = [Value::Record(vec![
        ("f".into(), Value::Int(1)),
        ("s".into(), Value::String("x".into())),
    ])];
    let file = rewrite_schema(&write(base, &values), bad);
    let model = Model::parse_str(base).unwrap();
    let expected: Vec<N> = apache_read(&write(base, &values))
        .unwrap()
        .iter()
        .map(|v| expect_row(&model, v).unwrap())
        .collect();
    if let Err(e) = check_decode(&model, &file, &expected, &Opts::default()) {
        panic!("{e}");
    }
    let e = avrow::Schema::parse(bad).unwrap_err().to_string();
    assert!(e.contains("R.f") && e.contains("default"), "{e}");
    // Written back, the table keeps its record (its recorded schema read as leniently).
    let batches: Vec<_> = avrow::ReaderBuilder::new()
        .read_bytes(file)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let w = avrow::WriterBuilder::new(batches[0].schema())
        .build(Vec::new())
        .unwrap();
    assert!(
        w.avro_schema()
            .canonical_form()
            .starts_with(r#"{"name":"R","#),
        "{}",
        w.avro_schema().canonical_form()
    );
}

/// Deeply nested (non-recursive) schemas decode, or fail with an error: never a crash (a stack
/// overflow would abort the whole process). The schema is untrusted input too.
#[test]
fn deep_nesting_decodes_or_errors_without_crashing() {
    // 40 nested arrays
    let mut ty = r#""long""#.to_string();
    let mut v = Value::Long(7);
    for _ in 0..40 {
        ty = format!(r#"{{"type":"array","items":{ty}}}"#);
        v = Value::Array(vec![v.clone(), v]);
        if let Value::Array(items) = &mut v {
            items.truncate(1);
        }
    }
    let schema = rec1(&ty);
    check(
        &schema,
        &schema,
        &[row(v.clone()), row(Value::Array(vec![]))],
    );
    // 25 nested records, each with a nullable next level
    let mut ty = r#""int""#.to_string();
    let mut val = Value::Int(1);
    for i in 0..25 {
        ty = format!(
            r#"{{"type":"record","name":"N{i}","fields":[{{"name":"x","type":"int"}},{{"name":"n","type":["null",{ty}]}}]}}"#
        );
        val = Value::Record(vec![
            ("x".into(), Value::Int(i)),
            ("n".into(), Value::Union(1, Box::new(val))),
        ]);
    }
    let schema = rec1(&ty);
    check(&schema, &schema, &[row(val)]);
}

/// A hand-made schema nested far deeper than any writer produces (2000 arrays; the JSON alone
/// is 2000 levels deep): an error, not a stack overflow.
#[test]
fn absurdly_deep_schema_is_an_error_not_a_crash() {
    let mut ty = r#""long""#.to_string();
    for _ in 0..2000 {
        ty = format!(r#"{{"type":"array","items":{ty}}}"#);
    }
    let base = rec1(r#""long""#);
    let file = rewrite_schema(&write(&base, &[row(Value::Long(1))]), &rec1(&ty));
    // Run on a thread with a normal 2 MiB stack, as an application would.
    let r = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || read_avrow_caught(&file, &Opts::default()))
        .unwrap()
        .join()
        .expect("reader thread died");
    match r {
        Err(p) => panic!("panic: {p}"),
        Ok(Ok(_)) => panic!("a 2000-deep schema over data of a long was accepted"),
        Ok(Err(_)) => {}
    }
}

/// Arrow unions hold at most 128 children (type ids are i8): a wider Avro union is an error
/// naming the problem, not a panic; 127 branches work.
#[test]
fn wide_unions() {
    let branches = |n: usize| {
        (0..n)
            .map(|i| format!(r#"{{"type":"fixed","name":"F{i}","size":1}}"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    let schema = rec1(&format!("[{}]", branches(127)));
    let values: Vec<Value> = [0u32, 126, 64]
        .iter()
        .map(|&i| row(Value::Union(i, Box::new(Value::Fixed(1, vec![i as u8])))))
        .collect();
    check(&schema, &schema, &values);
    let wide = rec1(&format!("[{}]", branches(200)));
    let base = rec1(r#""int""#);
    let file = rewrite_schema(&write(&base, &[row(Value::Int(1))]), &wide);
    match read_avrow_caught(&file, &Opts::default()) {
        Err(p) => panic!("200-branch union: panic {p}"),
        Ok(Ok(_)) => panic!("200-branch union accepted though Arrow unions hold 128 children"),
        Ok(Err(e)) => assert!(e.to_lowercase().contains("union"), "{e}"),
    }
}

/// `"namespace": ""` inside a namespaced record puts a type back in the null namespace, so a
/// later short reference `F3` from the null namespace finds it (apache-avro 0.22 gets this
/// wrong, so the file is written with an equivalent schema and relabelled).
#[test]
fn explicit_null_namespace_inside_a_namespace() {
    let base = r#"{"type":"record","name":"Root","fields":[
        {"name":"a","type":{"type":"record","name":"R1","fields":[
            {"name":"b","type":{"type":"record","name":"R2","fields":[
                {"name":"f","type":{"type":"fixed","name":"F3","size":2}}]}}]}},
        {"name":"c","type":"F3"},
        {"name":"d","type":{"type":"enum","name":"E","symbols":["X","Y"]}}]}"#;
    let decorated = r#"{"type":"record","name":"Root","fields":[
        {"name":"a","type":{"type":"record","name":"R1","namespace":"ns1","fields":[
            {"name":"b","type":{"type":"record","name":"R2","namespace":"","fields":[
                {"name":"f","type":{"type":"fixed","name":"F3","size":2}}]}}]}},
        {"name":"c","type":"F3"},
        {"name":"d","type":{"type":"enum","name":"E","namespace":"","symbols":["X","Y"]}}]}"#;
    let v = |i: u8| {
        Value::Record(vec![
            (
                "a".into(),
                Value::Record(vec![(
                    "b".into(),
                    Value::Record(vec![("f".into(), Value::Fixed(2, vec![i, i]))]),
                )]),
            ),
            ("c".into(), Value::Fixed(2, vec![9, i])),
            (
                "d".into(),
                Value::Enum((i % 2) as u32, ["X", "Y"][(i % 2) as usize].into()),
            ),
        ])
    };
    check(base, decorated, &[v(0), v(1), v(2)]);
}
