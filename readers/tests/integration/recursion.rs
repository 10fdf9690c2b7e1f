//! Recursive named types (a linked list, a tree, mutual recursion) are unrolled to
//! `with_max_recursion_depth`: data within the depth reads exactly; deeper data is an error that
//! names the field, never a silently truncated result.

use apache_avro::types::Value;
use apache_avro::Schema;
use arrow::datatypes::DataType;

use crate::harness::{read_avrow_caught, Opts};
use crate::oracle::{diff_rows, expect_row, Model, N};

const LIST: &str = r#"{"type":"record","name":"Node","fields":[
    {"name":"v","type":"int"},
    {"name":"next","type":["null","Node"]}]}"#;

const TREE: &str = r#"{"type":"record","name":"Tree","namespace":"t","fields":[
    {"name":"v","type":"int"},
    {"name":"children","type":{"type":"array","items":"Tree"}}]}"#;

/// A record whose field is a nullable record whose field refers back to the first.
const MUTUAL: &str = r#"{"type":"record","name":"A","fields":[
    {"name":"a","type":"string"},
    {"name":"b","type":["null",{"type":"record","name":"B","fields":[
        {"name":"x","type":"long"},
        {"name":"back","type":[{"type":"array","items":"A"},"null"]}]}]}]}"#;

fn list(len: usize, start: i32) -> Value {
    // len >= 1 nodes
    let mut v = Value::Record(vec![
        ("v".into(), Value::Int(start + len as i32 - 1)),
        ("next".into(), Value::Union(0, Box::new(Value::Null))),
    ]);
    for i in (0..len - 1).rev() {
        v = Value::Record(vec![
            ("v".into(), Value::Int(start + i as i32)),
            ("next".into(), Value::Union(1, Box::new(v))),
        ]);
    }
    v
}

/// A chain-shaped tree of `depth` levels; every level also has a leaf sibling.
fn tree(depth: usize) -> Value {
    let leaf = |v: i32| {
        Value::Record(vec![
            ("v".into(), Value::Int(v)),
            ("children".into(), Value::Array(vec![])),
        ])
    };
    let mut t = leaf(depth as i32);
    for d in (1..depth).rev() {
        t = Value::Record(vec![
            ("v".into(), Value::Int(d as i32)),
            ("children".into(), Value::Array(vec![leaf(-(d as i32)), t])),
        ]);
    }
    t
}

fn mutual(levels: usize) -> Value {
    // levels >= 1 "A" records
    let mut a = Value::Record(vec![
        ("a".into(), Value::String(format!("level{levels}"))),
        ("b".into(), Value::Union(0, Box::new(Value::Null))),
    ]);
    for l in (1..levels).rev() {
        a = Value::Record(vec![
            ("a".into(), Value::String(format!("level{l}"))),
            (
                "b".into(),
                Value::Union(
                    1,
                    Box::new(Value::Record(vec![
                        ("x".into(), Value::Long(l as i64)),
                        (
                            "back".into(),
                            Value::Union(0, Box::new(Value::Array(vec![a]))),
                        ),
                    ])),
                ),
            ),
        ]);
    }
    a
}

fn write(schema_json: &str, values: &[Value]) -> Vec<u8> {
    let schema = Schema::parse_str(schema_json).unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
    for v in values {
        w.append_value_ref(v).unwrap();
        // one record per block
        w.flush().unwrap();
    }
    w.into_inner().unwrap()
}

/// Drop from `exp` the struct fields that the unrolled Arrow type `dt` does not have. A dropped
/// field must hold null (or an empty list): otherwise data was lost, and that is reported.
fn prune(exp: &N, dt: &DataType, path: &str) -> Result<N, String> {
    match (exp, dt) {
        (N::Struct(fields), DataType::Struct(af)) => {
            let mut out = Vec::new();
            for (name, v) in fields {
                match af.iter().find(|f| f.name() == name) {
                    Some(f) => out.push((
                        name.clone(),
                        prune(v, f.data_type(), &format!("{path}.{name}"))?,
                    )),
                    None => match v {
                        N::Null => {}
                        N::List(l) if l.is_empty() => {}
                        _ => {
                            return Err(format!(
                                "{path}.{name} holds {v:?} but the unrolled type has no such field"
                            ))
                        }
                    },
                }
            }
            Ok(N::Struct(out))
        }
        (N::List(items), DataType::List(f)) => Ok(N::List(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| prune(x, f.data_type(), &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        (v, DataType::Null) => match v {
            N::Null => Ok(N::Null),
            N::List(l) if l.is_empty() => Ok(N::Null),
            _ => Err(format!("{path} holds {v:?} but the unrolled type is Null")),
        },
        _ => Ok(exp.clone()),
    }
}

/// (Ok(rows), or Err(message)) for one file at one depth.
fn decode(bytes: &[u8], depth: usize, bs: usize) -> Result<Vec<N>, String> {
    let opts = Opts {
        max_depth: Some(depth),
        ..Opts::batch(bs)
    };
    match read_avrow_caught(bytes, &opts) {
        Err(p) => panic!("avrow panicked at depth {depth}: {p}"),
        Ok(Err(e)) => Err(e),
        Ok(Ok(d)) => {
            let rows = d.rows();
            // compare in the unrolled shape
            Ok(rows)
        }
    }
}

/// Run one recursive schema: every data depth in 1..=max_data with reader depth `depth`.
/// Returns the largest data depth that decoded.
fn check_schema_at_depth(
    name: &str,
    schema_json: &str,
    make: &dyn Fn(usize) -> Value,
    field: &str,
    depth: usize,
    max_data: usize,
) -> usize {
    let model = Model::parse_str(schema_json).unwrap();
    let mut last_ok = 0;
    let mut first_err = None;
    for levels in 1..=max_data {
        let values = vec![make(levels), make(1.max(levels / 2))];
        let bytes = write(schema_json, &values);
        let expected: Vec<N> = crate::oracle::apache_read(&bytes)
            .unwrap()
            .iter()
            .map(|v| expect_row(&model, v).unwrap())
            .collect();
        match decode(&bytes, depth, 1 + levels % 3) {
            Ok(rows) => {
                assert!(
                    first_err.is_none(),
                    "{name}: depth {depth}: {levels} levels decoded after {first_err:?} levels failed"
                );
                let d = crate::harness::read_avrow(
                    &bytes,
                    &Opts {
                        max_depth: Some(depth),
                        ..Opts::default()
                    },
                )
                .unwrap();
                let row_type = DataType::Struct(d.schema.fields().clone());
                let pruned: Vec<N> = expected
                    .iter()
                    .map(|e| prune(e, &row_type, name))
                    .collect::<Result<_, _>>()
                    .unwrap_or_else(|e| {
                        panic!("{name}: depth {depth}, {levels} levels silently truncated: {e}")
                    });
                if let Some(m) = diff_rows(&pruned, &rows) {
                    panic!("{name}: depth {depth}, {levels} levels: {m}");
                }
                last_ok = levels;
            }
            Err(e) => {
                assert!(
                    e.contains(field),
                    "{name}: depth {depth}, {levels} levels: the error does not name the field {field:?}: {e}"
                );
                first_err.get_or_insert(levels);
            }
        }
    }
    last_ok
}

#[test]
fn linked_list_within_depth_reads_and_deeper_is_an_error() {
    for depth in [2, 4, 16] {
        let ok = check_schema_at_depth("Node", LIST, &|l| list(l, 10), "next", depth, depth + 3);
        assert!(
            ok + 1 >= depth && ok <= depth + 1,
            "linked list, depth {depth}: data of {ok} nodes was the deepest that read (expected about {depth})"
        );
    }
}

#[test]
fn linked_list_default_depth_is_16() {
    let ok = check_schema_at_depth("Node", LIST, &|l| list(l, 0), "next", 16, 19);
    let model = Model::parse_str(LIST).unwrap();
    let bytes = write(LIST, &[list(ok, 0)]);
    // Without with_max_recursion_depth: the default must behave as 16.
    let d = crate::harness::read_avrow(&bytes, &Opts::default())
        .unwrap_or_else(|e| panic!("{ok} nodes fail with the default depth: {e}"));
    assert_eq!(d.num_rows(), 1);
    let bytes = write(LIST, &[list(ok + 1, 0)]);
    let e = crate::harness::read_avrow(&bytes, &Opts::default());
    assert!(
        e.is_err(),
        "{} nodes decode with the default depth (16)",
        ok + 1
    );
    let _ = model;
}

#[test]
fn tree_within_depth_reads_and_deeper_is_an_error() {
    for depth in [3, 6] {
        let ok = check_schema_at_depth("Tree", TREE, &tree, "children", depth, depth + 3);
        assert!(
            ok + 1 >= depth && ok <= depth + 1,
            "tree, depth {depth}: {ok} levels was the deepest that read"
        );
    }
}

#[test]
fn mutual_recursion_within_depth_reads_and_deeper_is_an_error() {
    for depth in [3, 5] {
        let ok = check_schema_at_depth("A", MUTUAL, &mutual, "b", depth, depth + 3);
        assert!(
            ok >= 1,
            "mutual recursion, depth {depth}: not even one level reads"
        );
        assert!(
            ok <= depth + 1,
            "mutual recursion, depth {depth}: {ok} levels read"
        );
    }
}

/// The unrolled Arrow type really is nested `depth`-ish levels deep (not cut at 1).
#[test]
fn unrolled_type_has_the_configured_depth() {
    let bytes = write(LIST, &[list(1, 0)]);
    for depth in [1, 3, 8] {
        let d = crate::harness::read_avrow(
            &bytes,
            &Opts {
                max_depth: Some(depth),
                ..Opts::default()
            },
        )
        .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        let mut levels = 0;
        let mut dt = d
            .schema
            .field_with_name("next")
            .unwrap()
            .data_type()
            .clone();
        while let DataType::Struct(f) = &dt {
            levels += 1;
            match f.iter().find(|f| f.name() == "next") {
                Some(n) => dt = n.data_type().clone(),
                None => break,
            }
        }
        assert!(
            levels + 2 >= depth && levels <= depth + 1,
            "depth {depth}: the next field unrolls {levels} struct levels"
        );
    }
}

/// A type that refers to itself twice doubles its columns at each level (2^16 copies at the
/// default depth 16, more than a plan holds): it is unrolled as deep as fits, quickly whatever
/// depth is asked for (it was refused at the default depth, so such schemas read only with a
/// hand-lowered depth); data nested deeper than that is an error naming the depth used.
#[test]
fn a_type_that_refers_to_itself_twice_is_unrolled_as_deep_as_fits() {
    // Found by the `schema` fuzz target: 2^16 copies at depth 16, per path.
    let json = r#"{"type":"record","name":"Tree","fields":[{"name":"label","type":"string"},
        {"name":"kids","type":{"type":"array","items":"Tree"}},
        {"name":"named","type":{"type":"map","values":"Tree"}}]}"#;
    let schema = avrow::Schema::parse(json).unwrap();
    for depth in [16, 1000, 100_000] {
        // (1,000 levels of one path also nest deeper than a plan holds.)
        let start = std::time::Instant::now();
        let options = avrow::avrow_engine::DecodeOptions {
            max_recursion_depth: depth,
            ..Default::default()
        };
        avrow::avrow_engine::DecodePlan::new(&schema, &options)
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        assert!(
            start.elapsed() < std::time::Duration::from_secs(2),
            "depth {depth} took {:?}",
            start.elapsed()
        );
    }
    // A projected column has the type it has in the whole table (the depth is the whole
    // schema's, not the deeper one the projection alone would fit).
    let whole = avrow::avrow_engine::DecodePlan::new(&schema, &Default::default()).unwrap();
    let projected = avrow::avrow_engine::DecodePlan::new(
        &schema,
        &avrow::avrow_engine::DecodeOptions {
            projection: Some(vec!["kids".into()]),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        projected.arrow_schema().field(0),
        whole.arrow_schema().field_with_name("kids").unwrap()
    );
    let chain = |levels: usize| {
        let mut t = Value::Record(vec![
            ("label".into(), Value::String("leaf".into())),
            ("kids".into(), Value::Array(vec![])),
            ("named".into(), Value::Map(Default::default())),
        ]);
        for _ in 0..levels {
            t = Value::Record(vec![
                ("label".into(), Value::String("node".into())),
                ("kids".into(), Value::Array(vec![t])),
                ("named".into(), Value::Map(Default::default())),
            ]);
        }
        t
    };
    let shallow = write(json, &[chain(3)]);
    match read_avrow_caught(&shallow, &Opts::default()) {
        Ok(Ok(d)) => assert_eq!(d.rows().len(), 1),
        Ok(Err(e)) => panic!("three levels: {e}"),
        Err(p) => panic!("three levels panicked: {p}"),
    }
    let deep = write(json, &[chain(40)]);
    match read_avrow_caught(&deep, &Opts::default()) {
        Ok(Err(e)) => assert!(
            e.contains("maximum recursion depth") && !e.contains("depth 16"),
            "{e}"
        ),
        Ok(Ok(_)) => panic!("forty levels read"),
        Err(p) => panic!("forty levels panicked: {p}"),
    }
}

/// Asking for more levels never reads fewer: a type that refers to itself twice (a nullable
/// child and an array of children) is unrolled to the depth given while a plan holds it, and
/// past that as deep as a plan holds (not the 4,096 columns the default depth fits, which read
/// fewer levels than a smaller depth given). Quickly, whatever depth is given.
#[test]
fn a_deeper_depth_given_never_reads_fewer_levels() {
    let json = r#"{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},
        {"name":"next","type":["null","Node"]},
        {"name":"kids","type":{"type":"array","items":"Node"}}]}"#;
    let chain = |levels: usize| {
        let node = |next: Value| {
            Value::Record(vec![
                ("v".into(), Value::Int(1)),
                ("next".into(), next),
                ("kids".into(), Value::Array(vec![])),
            ])
        };
        let mut t = node(Value::Union(0, Box::new(Value::Null)));
        for _ in 1..levels {
            t = node(Value::Union(1, Box::new(t)));
        }
        t
    };
    // 40 levels are more than any depth here reads: the error names the depth read.
    let deep = write(json, &[chain(40)]);
    let depth_read = |e: &str| -> usize {
        let at = e.find("maximum recursion depth ").expect(e) + 24;
        e[at..].split(' ').next().unwrap().parse().expect(e)
    };
    let by_default = match read_avrow_caught(&deep, &Opts::default()) {
        Ok(Err(e)) => depth_read(&e),
        _ => panic!("forty levels read, or panicked, at the default depth"),
    };
    let mut last = 0;
    for depth in [2, 10, 12, 13, 14, 16, 1000] {
        let levels = depth_read(&decode(&deep, depth, 64).unwrap_err());
        assert!(
            levels >= last,
            "depth {depth} reads {levels} levels, less than {last}"
        );
        assert!(
            levels >= depth.min(12),
            "depth {depth} reads {levels} levels"
        );
        // And that many levels do read.
        let within = write(json, &[chain(levels)]);
        assert!(
            decode(&within, depth, 64).is_ok(),
            "depth {depth}: {levels} levels"
        );
        last = levels;
    }
    assert!(
        by_default < last,
        "the default reads {by_default} levels, a depth given {last}"
    );
    let schema = avrow::Schema::parse(json).unwrap();
    for depth in [16, 1000, 100_000] {
        let start = std::time::Instant::now();
        let options = avrow::avrow_engine::DecodeOptions {
            max_recursion_depth: depth,
            max_unrolled_columns: usize::MAX,
            ..Default::default()
        };
        avrow::avrow_engine::DecodePlan::new(&schema, &options)
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "depth {depth} took {:?}",
            start.elapsed()
        );
    }
}

/// A type that refers to itself once keeps the full depth beside one that branches, which
/// is unrolled only as deep as fits: a 12-deep linked list reads at the default depth 16.
#[test]
fn a_linked_list_beside_a_tree_keeps_the_full_depth() {
    let json = r#"{"type":"record","name":"Top","fields":[
        {"name":"l","type":{"type":"record","name":"Node","fields":[
            {"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}},
        {"name":"t","type":{"type":"record","name":"Tree","fields":[
            {"name":"id","type":"int"},
            {"name":"kids","type":{"type":"array","items":"Tree"}},
            {"name":"left","type":["null","Tree"]}]}}]}"#;
    let leaf = Value::Record(vec![
        ("id".into(), Value::Int(1)),
        ("kids".into(), Value::Array(vec![])),
        ("left".into(), Value::Union(0, Box::new(Value::Null))),
    ]);
    let top =
        |len: usize| Value::Record(vec![("l".into(), list(len, 0)), ("t".into(), leaf.clone())]);
    let bytes = write(json, &[top(12), top(3)]);
    match read_avrow_caught(&bytes, &Opts::default()) {
        Ok(Ok(d)) => assert_eq!(d.rows().len(), 2),
        Ok(Err(e)) => panic!("a 12-deep list: {e}"),
        Err(p) => panic!("a 12-deep list panicked: {p}"),
    }
    // Deeper than the depth asked for: the error names that depth, for the list.
    let deep = write(json, &[top(20)]);
    match read_avrow_caught(&deep, &Opts::default()) {
        Ok(Err(e)) => assert!(
            e.contains("Node") && e.contains("maximum recursion depth 16"),
            "{e}"
        ),
        Ok(Ok(_)) => panic!("twenty levels read"),
        Err(p) => panic!("twenty levels panicked: {p}"),
    }
}

/// A table read from a recursive schema is written back with that schema (its `avro.schema`
/// metadata), recursion through arrays included: the unrolled type's innermost items are a
/// Null column that is always empty. Apache's reader reads back the values written first.
#[test]
fn recursive_tables_are_written_with_their_recursive_schema() {
    for (schema_json, values, name) in [
        (TREE, vec![tree(4), tree(1), tree(3)], "t.Tree"),
        (LIST, vec![list(3, 0), list(1, 7)], "Node"),
        (MUTUAL, vec![mutual(3), mutual(1)], "A"),
    ] {
        let bytes = write(schema_json, &values);
        let d = crate::harness::read_avrow(
            &bytes,
            &Opts {
                max_depth: Some(6),
                ..Opts::default()
            },
        )
        .unwrap();
        let mut writer = avrow::WriterBuilder::new(d.schema.clone())
            .build(Vec::new())
            .unwrap();
        for b in &d.batches {
            writer.write(b).unwrap();
        }
        let written = writer.finish().unwrap();
        let avsc = apache_avro::Reader::new(&written[..])
            .unwrap()
            .writer_schema()
            .clone();
        let original = Schema::parse_str(schema_json).unwrap();
        assert_eq!(
            avsc.canonical_form(),
            original.canonical_form(),
            "{name}: written with another schema"
        );
        assert_eq!(
            crate::oracle::apache_read(&written).unwrap(),
            values,
            "{name}: values differ"
        );
    }
}

/// A depth of 0 reads as 1: every record is read once (a nested record that is not recursive
/// reads; a linked list reads one node, and two are an error), where 0 refused every nested
/// record as "nested deeper than the maximum recursion depth 0".
#[test]
fn depth_zero_reads_every_record_once() {
    let nested = r#"{"type":"record","name":"R","fields":[
        {"name":"b","type":{"type":"record","name":"B","fields":[{"name":"x","type":"int"}]}}]}"#;
    let row = Value::Record(vec![(
        "b".into(),
        Value::Record(vec![("x".into(), Value::Int(7))]),
    )]);
    let read = |bytes: Vec<u8>| {
        avrow::ReaderBuilder::new()
            .with_max_recursion_depth(0)
            .read_bytes(bytes)
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
    };
    let batches = read(write(nested, &[row])).expect("a record that is not recursive reads");
    assert_eq!(batches[0].num_rows(), 1);
    assert_eq!(
        read(write(LIST, &[list(1, 0)])).expect("one node")[0].num_rows(),
        1
    );
    let e = read(write(LIST, &[list(2, 0)])).expect_err("two nodes at depth 1");
    assert!(e.to_string().contains("next"), "{e}");
}
