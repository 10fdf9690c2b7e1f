//! Tests of merging and projecting schemas.
use super::*;

fn s(json: &str) -> Schema {
    Schema::parse(json).unwrap()
}

fn merged(a: &str, b: &str) -> String {
    s(a).merge(&s(b)).unwrap().canonical_form()
}

fn record(fields: &str) -> String {
    format!(r#"{{"type":"record","name":"r","fields":[{fields}]}}"#)
}

#[test]
fn a_schema_merged_with_itself_is_itself() {
    for json in [
        r#""long""#,
        r#"["null","string"]"#,
        r#"{"type":"record","name":"n.r","fields":[
            {"name":"a","type":{"type":"enum","name":"E","symbols":["X","Y"]}},
            {"name":"b","type":{"type":"fixed","name":"F","size":4}},
            {"name":"c","type":{"type":"array","items":"E"}},
            {"name":"d","type":["null","n.r"]},
            {"name":"e","type":{"type":"long","logicalType":"timestamp-micros"}},
            {"name":"f","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
            {"name":"g","type":{"type":"map","values":{"type":"record","name":"Inner","namespace":"","fields":[{"name":"x","type":"int"}]}}},
            {"name":"h","type":"Inner"}]}"#,
    ] {
        let a = s(json);
        let m = a.merge(&a).unwrap();
        assert_eq!(m.canonical_form(), a.canonical_form(), "{json}");
        assert_eq!(m.root(), a.root(), "{json}");
    }
}

#[test]
fn numbers_widen_as_avro_promotes_them() {
    assert_eq!(merged(r#""int""#, r#""long""#), r#""long""#);
    assert_eq!(merged(r#""long""#, r#""int""#), r#""long""#);
    assert_eq!(merged(r#""float""#, r#""double""#), r#""double""#);
    assert_eq!(merged(r#""int""#, r#""float""#), r#""double""#);
    assert_eq!(merged(r#""long""#, r#""double""#), r#""double""#);
    assert_eq!(
        merged(r#"["null","int"]"#, r#"["null","long"]"#),
        r#"["null","long"]"#
    );
    assert_eq!(
        merged(r#"["null","float"]"#, r#""long""#),
        r#"["null","double"]"#
    );
    // A union holding both stays as it is: each branch reads its own.
    assert_eq!(
        merged(r#"["int","long"]"#, r#"["long","int"]"#),
        r#"["int","long"]"#
    );
    assert_eq!(
        merged(
            &record(r#"{"name":"a","type":{"type":"array","items":"int"}}"#),
            &record(r#"{"name":"a","type":{"type":"array","items":"long"}}"#)
        ),
        r#"{"name":"r","type":"record","fields":[{"name":"a","type":{"type":"array","items":"long"}}]}"#
    );
}

#[test]
fn times_and_timestamps_of_one_kind_merge_in_the_finer_unit() {
    let t = |l: &str, p: &str| format!(r#"{{"type":"{p}","logicalType":"{l}"}}"#);
    for (a, b, want) in [
        (
            t("timestamp-millis", "long"),
            t("timestamp-micros", "long"),
            "timestamp-micros",
        ),
        (
            t("timestamp-nanos", "long"),
            t("timestamp-millis", "long"),
            "timestamp-nanos",
        ),
        (
            t("local-timestamp-millis", "long"),
            t("local-timestamp-micros", "long"),
            "local-timestamp-micros",
        ),
        (
            t("time-millis", "int"),
            t("time-micros", "long"),
            "time-micros",
        ),
    ] {
        let m = s(&a).merge(&s(&b)).unwrap();
        assert_eq!(m.root(), s(&t(want, "long")).root(), "{a} {b}");
    }
    assert!(s(&t("time-millis", "int"))
        .merge(&s(&t("timestamp-micros", "long")))
        .is_err());
}

#[test]
fn fields_one_schema_lacks_are_nullable_or_keep_their_default() {
    let old = record(r#"{"name":"id","type":"long"}"#);
    let new = record(
        r#"{"name":"id","type":"long"},
           {"name":"tag","type":"string"},
           {"name":"n","type":"int","default":7},
           {"name":"u","type":["string","null"]},
           {"name":"v","type":"null"}"#,
    );
    let m = s(&old).merge(&s(&new)).unwrap();
    assert_eq!(
        m.canonical_form(),
        r#"{"name":"r","type":"record","fields":[{"name":"id","type":"long"},{"name":"tag","type":["null","string"]},{"name":"n","type":"int"},{"name":"u","type":["null","string"]},{"name":"v","type":"null"}]}"#
    );
    let NamedDef::Record(r) = &m.named(0).def else {
        panic!()
    };
    let defaults: Vec<_> = r.fields.iter().map(|f| f.default.clone()).collect();
    assert_eq!(
        defaults,
        [
            None,
            Some(Json::Null),
            Some(json!(7)),
            Some(Json::Null),
            Some(Json::Null)
        ]
    );
    // The other way round: the old file's field missing from the new one.
    assert_eq!(
        merged(&new, &old),
        r#"{"name":"r","type":"record","fields":[{"name":"id","type":"long"},{"name":"tag","type":["null","string"]},{"name":"n","type":"int"},{"name":"u","type":["null","string"]},{"name":"v","type":"null"}]}"#
    );
}

#[test]
fn renamed_fields_namespaces_and_roots_match_by_alias_and_name() {
    let old = r#"{"type":"record","name":"a.Order","fields":[{"name":"amount","type":"int"}]}"#;
    let new = r#"{"type":"record","name":"b.Order","fields":[
        {"name":"total","aliases":["amount"],"type":"long"}]}"#;
    let m = s(old).merge(&s(new)).unwrap();
    assert_eq!(
        m.canonical_form(),
        r#"{"name":"a.Order","type":"record","fields":[{"name":"total","type":"long"}]}"#
    );
    let NamedDef::Record(r) = &m.named(0).def else {
        panic!()
    };
    assert_eq!(r.fields[0].aliases, ["amount"]);
    assert_eq!(
        m.named(0).aliases,
        [FullName::new("Order".into(), Some("b".into()))]
    );
    // Records of other names are other types, as in resolution.
    let e = s(&record(r#"{"name":"x","type":"int"}"#))
        .merge(&s(
            r#"{"type":"record","name":"other","fields":[{"name":"x","type":"int"}]}"#,
        ))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the root type: record r in one schema, record other in the other"
    );
}

#[test]
fn an_alias_does_not_take_a_field_that_keeps_its_name() {
    // The second record's `total` is the first's `total`, though it lists `amount` as an
    // alias: `amount` is a field only the first has.
    assert_eq!(
        merged(
            &record(r#"{"name":"amount","type":"int"},{"name":"total","type":"int"}"#),
            &record(r#"{"name":"total","aliases":["amount"],"type":"long"}"#)
        ),
        r#"{"name":"r","type":"record","fields":[{"name":"amount","type":["null","int"]},{"name":"total","type":"long"}]}"#
    );
}

#[test]
fn unions_enums_and_nested_records_merge() {
    let a = record(
        r#"{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},
           {"name":"u","type":["null","int","string"]},
           {"name":"s","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}}"#,
    );
    let b = record(
        r#"{"name":"e","type":{"type":"enum","name":"E","symbols":["C","A"]}},
           {"name":"u","type":["null","long",{"type":"array","items":"int"}]},
           {"name":"s","type":{"type":"record","name":"S","fields":[{"name":"y","type":"string"}]}}"#,
    );
    assert_eq!(
        merged(&a, &b),
        r#"{"name":"r","type":"record","fields":[{"name":"e","type":{"name":"E","type":"enum","symbols":["A","B","C"]}},{"name":"u","type":["null","long","string",{"type":"array","items":"int"}]},{"name":"s","type":{"name":"S","type":"record","fields":[{"name":"x","type":["null","int"]},{"name":"y","type":["null","string"]}]}}]}"#
    );
    // "null" and a type.
    assert_eq!(merged(r#""null""#, r#""string""#), r#"["null","string"]"#);
}

#[test]
fn types_no_reader_reads_both_of_are_errors_naming_the_field() {
    let cases = [
        (
            r#"{"name":"a","type":"string"}"#,
            r#"{"name":"a","type":"long"}"#,
            "field \"a\" of record \"r\"",
            "string in one schema, long in the other",
        ),
        (
            r#"{"name":"a","type":"bytes"}"#,
            r#"{"name":"a","type":"string"}"#,
            "field \"a\"",
            "bytes in one schema, string in the other",
        ),
        (
            r#"{"name":"a","type":{"type":"long","logicalType":"timestamp-millis"}}"#,
            r#"{"name":"a","type":{"type":"long","logicalType":"local-timestamp-micros"}}"#,
            "field \"a\"",
            "long (timestamp-millis) in one schema, long (local-timestamp-micros) in the other",
        ),
        (
            r#"{"name":"a","type":{"type":"long","logicalType":"timestamp-millis"}}"#,
            r#"{"name":"a","type":"long"}"#,
            "field \"a\"",
            "long (timestamp-millis) in one schema, long in the other",
        ),
        (
            r#"{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}"#,
            r#"{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":3}}"#,
            "field \"a\"",
            "decimal(9, 2)",
        ),
        (
            r#"{"name":"a","type":{"type":"fixed","name":"F","size":4}}"#,
            r#"{"name":"a","type":{"type":"fixed","name":"F","size":8}}"#,
            "type \"F\"",
            "fixed of 4 bytes in one schema, 8 in the other",
        ),
        (
            r#"{"name":"a","type":{"type":"array","items":"int"}}"#,
            r#"{"name":"a","type":{"type":"array","items":"boolean"}}"#,
            "field \"a\" of record \"r\" (array items)",
            "int in one schema, boolean",
        ),
        (
            r#"{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}}"#,
            r#"{"name":"a","type":{"type":"fixed","name":"E","size":1}}"#,
            "type \"E\"",
            "an enum in one schema, a fixed in the other",
        ),
        (
            r#"{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}}"#,
            r#"{"name":"a","type":{"type":"enum","name":"G","symbols":["X"]}}"#,
            "field \"a\"",
            "enum E in one schema, enum G in the other",
        ),
        (
            r#"{"name":"a","type":["null","int"]}"#,
            r#"{"name":"a","type":["null",{"type":"int","logicalType":"date"}]}"#,
            "(union branch int (date))",
            "int in one schema, int (date) in the other",
        ),
    ];
    for (a, b, place, reason) in cases {
        let e = s(&record(a)).merge(&s(&record(b))).unwrap_err();
        assert!(e.place().contains(place), "{a} {b}: {e}");
        assert!(e.to_string().contains(reason), "{a} {b}: {e}");
    }
}

#[test]
fn projected_records_keep_their_types_and_refuse_what_they_lack() {
    let list = s(r#"{"type":"record","name":"Node","namespace":"x","fields":[
        {"name":"label","type":"string","doc":"what"},
        {"name":"next","type":["null","Node"],"default":null},
        {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"],"default":"A"}},
        {"name":"again","type":"Kind"}]}"#);
    // A recursive record keeps its reference to itself; an enum defined in a dropped field
    // is defined at its next use, with its default.
    let p = list.project_fields(&["next", "again"]).unwrap();
    assert_eq!(
        p.canonical_form(),
        r#"{"name":"x.Node","type":"record","fields":[{"name":"next","type":["null","x.Node"]},{"name":"again","type":{"name":"x.Kind","type":"enum","symbols":["A","B"]}}]}"#
    );
    assert!(p.json().contains(r#""default":"A""#), "{}", p.json());
    assert!(list
        .project_fields(&["label"])
        .unwrap()
        .json()
        .contains("what"));
    assert!(list.project_fields(&["label", "nope"]).is_none());
    assert!(s(r#""int""#).project_fields(&[]).is_none());
    assert!(s(r#"{"type":"array","items":"int"}"#)
        .project_fields(&[])
        .is_none());
}
