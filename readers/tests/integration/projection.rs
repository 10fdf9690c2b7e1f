//! Projection: the projected output equals the oracle with the other fields removed, for
//! top-level subsets, nested record paths (`a.b`) and paths through list items (`lines.sku`),
//! on a hand-written schema and on random schemas.

use apache_avro::types::Value;
use apache_avro::Schema;

use crate::gen::{all_codecs, random_case, write_file, Rng};
use crate::harness::{read_avrow, read_avrow_caught, Opts};
use crate::oracle::{apache_rows, check_schema, diff_rows, Model, N, S};

/// A selection tree built from dotted paths.
#[derive(Clone, Debug)]
pub enum Sel {
    All,
    Fields(Vec<(String, Sel)>),
}

pub fn selection(paths: &[&str]) -> Sel {
    let mut root = Sel::Fields(Vec::new());
    for p in paths {
        let mut node = &mut root;
        let parts: Vec<&str> = p.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            let Sel::Fields(fields) = node else { break };
            let idx = match fields.iter().position(|f| f.0 == *part) {
                Some(i) => i,
                None => {
                    fields.push((
                        part.to_string(),
                        if last {
                            Sel::All
                        } else {
                            Sel::Fields(Vec::new())
                        },
                    ));
                    fields.len() - 1
                }
            };
            if last {
                fields[idx].1 = Sel::All;
            }
            node = &mut fields[idx].1;
        }
    }
    root
}

fn get<'a>(fields: &'a [(String, Sel)], name: &str) -> Option<&'a Sel> {
    fields.iter().find(|f| f.0 == name).map(|f| &f.1)
}

/// The value with unselected fields removed (struct field order kept).
pub fn project_n(n: &N, sel: &Sel) -> N {
    match (n, sel) {
        (_, Sel::All) => n.clone(),
        (N::Struct(fs), Sel::Fields(sel)) => N::Struct(
            fs.iter()
                .filter_map(|(k, v)| get(sel, k).map(|s| (k.clone(), project_n(v, s))))
                .collect(),
        ),
        (N::List(items), sel) => N::List(items.iter().map(|x| project_n(x, sel)).collect()),
        _ => n.clone(),
    }
}

/// The schema with unselected fields removed.
pub fn project_s(m: &Model, s: &S, sel: &Sel) -> S {
    let Sel::Fields(fsel) = sel else {
        return s.clone();
    };
    match m.resolve(s) {
        S::Record { name, fields } => S::Record {
            name: format!("{name}#projected"),
            fields: fields
                .iter()
                .filter_map(|(k, t)| get(fsel, k).map(|x| (k.clone(), project_s(m, t, x))))
                .collect(),
        },
        S::Array(items) => S::Array(Box::new(project_s(m, items, sel))),
        S::Union(b) => S::Union(b.iter().map(|x| project_s(m, x, sel)).collect()),
        other => other.clone(),
    }
}

pub fn project_model(m: &Model, paths: &[&str]) -> Model {
    let sel = selection(paths);
    Model {
        root: project_s(m, &m.root, &sel),
        named: m.named.clone(),
        json: m.json.clone(),
    }
}

const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"customer","type":{"type":"record","name":"Customer","fields":[
     {"name":"name","type":"string"},
     {"name":"address","type":{"type":"record","name":"Address","fields":[
        {"name":"city","type":"string"},{"name":"zip","type":["null","int"]}]}}]}},
  {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
     {"name":"sku","type":"string"},
     {"name":"qty","type":"int"},
     {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
     {"name":"attrs","type":{"type":"map","values":"string"}}]}}},
  {"name":"tags","type":{"type":"map","values":"long"}},
  {"name":"note","type":["null",{"type":"record","name":"Note","fields":[
     {"name":"text","type":"string"},{"name":"lang","type":"string"}]}]},
  {"name":"batches","type":{"type":"array","items":{"type":"array","items":"Line"}}}
]}"#;

fn order_file() -> (Model, Vec<u8>) {
    let model = Model::parse_str(ORDER).unwrap();
    let schema = Schema::parse_str(ORDER).unwrap();
    let mut rng = Rng::new(99);
    let values: Vec<Value> = (0..40)
        .map(|_| crate::gen::random_value(&mut rng, &model, &model.root, 3))
        .collect();
    let file = write_file(&mut rng, &schema, &values, apache_avro::Codec::Null);
    (model, file)
}

fn check_projection(model: &Model, file: &[u8], paths: &[&str], bs: usize) -> Result<(), String> {
    let expected: Vec<N> = apache_rows(model, file)?
        .iter()
        .map(|r| project_n(r, &selection(paths)))
        .collect();
    let pm = project_model(model, paths);
    let opts = Opts {
        projection: Some(paths.iter().map(|s| s.to_string()).collect()),
        ..Opts::batch(bs)
    };
    let d = match read_avrow_caught(file, &opts) {
        Err(p) => return Err(format!("avrow panicked: {p}")),
        Ok(Err(e)) => return Err(format!("avrow error: {e}")),
        Ok(Ok(d)) => d,
    };
    let header = crate::oracle::Container::parse(file)?.schema_json()?;
    check_schema(&pm, &d.schema, false, Some(&header))?;
    if let Some(m) = diff_rows(&expected, &d.rows()) {
        return Err(m);
    }
    Ok(())
}

#[test]
fn projection_top_level_subset() {
    let (model, file) = order_file();
    for paths in [
        vec!["id"],
        vec!["id", "tags"],
        vec!["customer", "note"],
        vec!["lines", "batches"],
    ] {
        for bs in [1, 7, 1024] {
            check_projection(&model, &file, &paths, bs)
                .unwrap_or_else(|e| panic!("projection {paths:?}, batch {bs}: {e}"));
        }
    }
}

#[test]
fn projection_nested_record_paths() {
    let (model, file) = order_file();
    for paths in [
        vec!["customer.name"],
        vec!["customer.address.city"],
        vec!["id", "customer.address.zip", "tags"],
        vec!["customer.name", "customer.address.city"],
    ] {
        check_projection(&model, &file, &paths, 7)
            .unwrap_or_else(|e| panic!("projection {paths:?}: {e}"));
    }
}

#[test]
fn projection_through_list_items() {
    let (model, file) = order_file();
    for paths in [
        vec!["id", "lines.sku"],
        vec!["lines.price", "lines.attrs"],
        vec!["lines.qty", "batches.sku"],
    ] {
        check_projection(&model, &file, &paths, 7)
            .unwrap_or_else(|e| panic!("projection {paths:?}: {e}"));
    }
}

#[test]
fn projection_through_nullable_record() {
    let (model, file) = order_file();
    check_projection(&model, &file, &["id", "note.lang"], 5)
        .unwrap_or_else(|e| panic!("projection [id, note.lang]: {e}"));
}

#[test]
fn projection_order_does_not_lose_columns() {
    let (model, file) = order_file();
    let d = read_avrow(
        &file,
        &Opts {
            projection: Some(vec!["tags".into(), "id".into()]),
            ..Opts::default()
        },
    )
    .unwrap();
    let mut names: Vec<_> = d.schema.fields().iter().map(|f| f.name().clone()).collect();
    names.sort();
    assert_eq!(names, ["id", "tags"]);
    assert_eq!(d.num_rows(), 40);
    let _ = model;
}

#[test]
fn projection_of_unknown_field_is_an_error_naming_it() {
    let (_, file) = order_file();
    for (with, bad) in [
        ("id", "nosuch"),
        ("id", "customer.nosuch"),
        ("id", "lines.nosuch"),
        ("tags", "id.deeper"),
        ("id", "tags.deeper"),
        ("id", "customer.name.deeper"),
    ] {
        let opts = Opts {
            projection: Some(vec![with.into(), bad.into()]),
            ..Opts::default()
        };
        match read_avrow_caught(&file, &opts) {
            Err(p) => panic!("projection {bad}: panic {p}"),
            Ok(Ok(_)) => panic!("projection {bad} was accepted"),
            Ok(Err(e)) => {
                let last = bad.rsplit('.').next().unwrap();
                assert!(
                    e.contains(last),
                    "projection {bad}: error does not name it: {e}"
                );
            }
        }
    }
}

/// Every dotted path through records and (possibly nested) list items, up to a few levels.
fn candidate_paths(m: &Model, s: &S, prefix: &str, out: &mut Vec<String>, depth: usize) {
    if depth == 0 {
        return;
    }
    match m.resolve(s) {
        S::Record { fields, .. } => {
            for (k, t) in fields {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(p.clone());
                candidate_paths(m, t, &p, out, depth - 1);
            }
        }
        S::Array(items) => candidate_paths(m, items, prefix, out, depth),
        _ => {}
    }
}

/// Random schemas and random projections of paths through records and list items: the output
/// equals apache-avro's reading with the other fields removed. Files from apache-avro's Writer
/// and, for `chunked`, from the test encoder with arrays and maps in blocks carrying byte sizes
/// (which skipping may use).
fn random_projections(base: u64, chunked: bool) {
    let mut failures = Vec::new();
    let mut tried = 0;
    for seed in crate::differential::seeds(base).into_iter().take(120) {
        let case = random_case(seed);
        if !case.model.is_record_root() {
            continue;
        }
        let mut rng = Rng::new(seed);
        let mut cands = Vec::new();
        candidate_paths(&case.model, &case.model.root, "", &mut cands, 4);
        let n = rng.range(1, 3.min(cands.len()));
        let mut paths: Vec<String> = (0..n).map(|_| rng.pick(&cands).clone()).collect();
        // Drop paths under another chosen path, and duplicates.
        paths.sort();
        paths.dedup();
        let all = paths.clone();
        paths.retain(|p| {
            !all.iter()
                .any(|q| q != p && p.starts_with(&format!("{q}.")))
        });
        // Keep schema order (the order of the candidates).
        paths.sort_by_key(|p| cands.iter().position(|c| c == p));
        let codec = *rng.pick(&all_codecs());
        let file = if chunked {
            let style = crate::encoder::Style {
                chunk_collections: true,
                pad_varints: rng.one_in(2),
                pad_decimals: true,
                upper_uuids: true,
            };
            crate::encoder::write_file_styled(
                &mut rng,
                &case.schema,
                &case.model,
                &case.values,
                codec,
                style,
            )
        } else {
            write_file(&mut rng, &case.schema, &case.values, codec)
        };
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        tried += 1;
        if let Err(e) = check_projection(&case.model, &file, &refs, *rng.pick(&[1, 7, 1024])) {
            failures.push(format!(
                "seed {seed} projection {paths:?} schema {}\n    {e}",
                case.json
            ));
        }
    }
    assert!(
        tried > 50 || std::env::var("AVROW_SEED").is_ok(),
        "only {tried} random projection cases"
    );
    assert!(
        failures.is_empty(),
        "{} of {tried} failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn random_projections_match_the_oracle() {
    random_projections(10_000, false);
}

#[test]
fn random_projections_over_chunked_collections_match_the_oracle() {
    random_projections(30_000, true);
}

/// A path through a primitive is invalid even when that primitive is also selected whole.
#[test]
fn projection_path_below_a_selected_primitive_is_an_error() {
    let (_, file) = order_file();
    let opts = Opts {
        projection: Some(vec!["id".into(), "id.deeper".into()]),
        ..Opts::default()
    };
    match read_avrow_caught(&file, &opts) {
        Err(p) => panic!("panic {p}"),
        Ok(Ok(d)) => panic!(
            "projection [id, id.deeper] was accepted (columns {:?})",
            d.schema
                .fields()
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
        ),
        Ok(Err(e)) => assert!(e.contains("deeper"), "{e}"),
    }
}
