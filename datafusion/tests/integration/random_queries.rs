//! Random queries: projections of nested struct fields, filters, group-bys, aggregates and
//! limits, generated from each file's schema, answer through avrow's format (at 1, 2 and 3
//! partitions, so with byte ranges, nested projection and limit pushed into the scan) as
//! they answer over the same file read whole by avrow's reader into a `MemTable` (no split,
//! no pushdown). Files: the real fixtures, the benchmark samples and random schemas written
//! by fastavro (`python/tests/random_avro.py`), each rewritten in small blocks so that
//! every partitioning cuts through blocks.

use std::sync::Arc;

use arrow::array::{Array, RecordBatch};
use arrow::datatypes::{DataType, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::common::*;

/// SplitMix64: seeded, reproducible, enough for picking.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    /// One of `exprs`, a struct field path half the time where there are any (they are
    /// what nested projection prunes, and few among a file's columns).
    fn expr<'a>(&mut self, exprs: &'a [Expr]) -> &'a Expr {
        let nested: Vec<&Expr> = exprs.iter().filter(|e| e.sql.ends_with(']')).collect();
        if !nested.is_empty() && self.chance(50) {
            return nested[self.below(nested.len())];
        }
        self.pick(exprs)
    }
}

/// A column or a struct field path of one, as SQL, with its type.
#[derive(Clone, Debug)]
struct Expr {
    sql: String,
    data_type: DataType,
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Every top-level column and every path through struct fields below one.
fn exprs(schema: &Schema) -> Vec<Expr> {
    fn walk(sql: String, data_type: &DataType, out: &mut Vec<Expr>) {
        out.push(Expr {
            sql: sql.clone(),
            data_type: data_type.clone(),
        });
        if let DataType::Struct(fields) = data_type {
            for f in fields {
                walk(
                    format!("{sql}[{}]", string_literal(f.name())),
                    f.data_type(),
                    out,
                );
            }
        }
    }
    let mut out = Vec::new();
    for f in schema.fields() {
        walk(ident(f.name()), f.data_type(), &mut out);
    }
    out
}

/// Types whose values this test writes back as SQL literals for comparisons.
fn comparable(t: &DataType) -> bool {
    t.is_integer() || t.is_floating() || matches!(t, DataType::Utf8 | DataType::Boolean)
}

/// Types DataFusion groups by.
fn groupable(t: &DataType) -> bool {
    t.is_primitive()
        || matches!(
            t,
            DataType::Utf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::FixedSizeBinary(_)
                | DataType::Boolean
        )
        || matches!(t, DataType::Dictionary(_, v) if v.as_ref() == &DataType::Utf8)
}

/// The value at `row` of `array` as a SQL literal, where the test writes one.
fn literal(array: &dyn Array, row: usize) -> Option<String> {
    if array.is_null(row) {
        return None;
    }
    let text = ArrayFormatter::try_new(array, &FormatOptions::default())
        .ok()?
        .value(row)
        .to_string();
    let t = array.data_type();
    if t.is_integer() {
        Some(text)
    } else if t.is_floating() {
        // NaN and the infinities as well as finite values.
        Some(format!("CAST({} AS DOUBLE)", string_literal(&text)))
    } else if t == &DataType::Boolean {
        Some(text)
    } else if t == &DataType::Utf8 {
        Some(string_literal(&text))
    } else {
        None
    }
}

/// A random predicate over one of `exprs`, its literal one of that expression's values in
/// the reference table `r`.
async fn predicate(rng: &mut Rng, exprs: &[Expr], reference: &SessionContext) -> String {
    let e = rng.expr(exprs).clone();
    if comparable(&e.data_type) && rng.chance(70) {
        let values = query(
            reference,
            &format!("SELECT {} AS v FROM r WHERE {} IS NOT NULL", e.sql, e.sql),
        )
        .await;
        let rows: usize = values.iter().map(|b| b.num_rows()).sum();
        if rows > 0 {
            let mut pick = rng.below(rows);
            for batch in &values {
                if pick < batch.num_rows() {
                    if let Some(lit) = literal(batch.column(0).as_ref(), pick) {
                        let op = if e.data_type == DataType::Boolean {
                            *rng.pick(&["=", "<>"])
                        } else {
                            *rng.pick(&["=", "<>", "<", "<=", ">", ">="])
                        };
                        let mut p = format!("{} {op} {lit}", e.sql);
                        if rng.chance(30) {
                            p = format!("({p}) OR {} IS NULL", e.sql);
                        }
                        return p;
                    }
                    break;
                }
                pick -= batch.num_rows();
            }
        }
    }
    format!(
        "{} IS {}NULL",
        e.sql,
        if rng.chance(50) { "NOT " } else { "" }
    )
}

/// A random query over table `{T}` of `exprs`.
async fn random_query(rng: &mut Rng, exprs: &[Expr], reference: &SessionContext) -> String {
    let filter = if rng.chance(60) {
        format!(" WHERE {}", predicate(rng, exprs, reference).await)
    } else {
        String::new()
    };
    let mut chosen: Vec<&Expr> = Vec::new();
    for _ in 0..1 + rng.below(4) {
        let e = rng.expr(exprs);
        if !chosen.iter().any(|c| c.sql == e.sql) {
            chosen.push(e);
        }
    }
    let list = chosen
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{} AS c{i}", e.sql))
        .collect::<Vec<_>>()
        .join(", ");
    match rng.below(5) {
        0 | 1 => format!("SELECT {list} FROM {{T}}{filter}"),
        2 => {
            let e = rng.expr(exprs);
            format!("SELECT count(*), count({}) FROM {{T}}{filter}", e.sql)
        }
        3 => {
            let keys: Vec<&Expr> = exprs.iter().filter(|e| groupable(&e.data_type)).collect();
            if keys.is_empty() {
                return format!("SELECT count(*) FROM {{T}}{filter}");
            }
            let key = keys[rng.below(keys.len())];
            // Integers only: DataFusion 55's grouped `min` of a float group whose only
            // value is +inf answers the type's largest finite value, so float answers
            // depend on how rows meet in partial aggregates (an upstream bug, not the scan).
            let numbers: Vec<&Expr> = exprs.iter().filter(|e| e.data_type.is_integer()).collect();
            let aggregate = match numbers.get(rng.below(numbers.len().max(1))) {
                Some(n) if rng.chance(70) => format!(", min({0}), max({0}), count({0})", n.sql),
                _ => String::new(),
            };
            format!(
                "SELECT {} AS k, count(*){aggregate} FROM {{T}}{filter} GROUP BY {}",
                key.sql, key.sql
            )
        }
        _ => format!(
            "SELECT count(*) FROM (SELECT {list} FROM {{T}}{filter} LIMIT {})",
            rng.below(40)
        ),
    }
}

/// Every row of the answer as one line, sorted (queries here have no order).
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut out: Vec<String> = rows(batches)
        .unwrap()
        .into_iter()
        .map(|cells| cells.join(" | "))
        .collect();
    out.sort();
    out
}

/// `batch` with every struct's nulls added to its fields' (through nested structs): what the
/// scan hands DataFusion, whose `get_field` in 55 does not add them (the reference would
/// answer a placeholder for a field of a null struct). Written apart from the scan's
/// version: each array rebuilt through `ArrayData`, validated.
fn struct_nulls_in_fields(batch: &RecordBatch) -> RecordBatch {
    use arrow::array::{make_array, ArrayRef, StructArray};
    use arrow::buffer::NullBuffer;
    fn push(array: &ArrayRef, parent: Option<&NullBuffer>) -> ArrayRef {
        let array = match (parent, array.data_type()) {
            (None, _) | (_, DataType::Union(..) | DataType::Null) => Arc::clone(array),
            (Some(parent), _) => {
                let nulls = NullBuffer::union(Some(parent), array.nulls());
                make_array(array.to_data().into_builder().nulls(nulls).build().unwrap())
            }
        };
        let Some(s) = array.as_any().downcast_ref::<StructArray>() else {
            return array;
        };
        let children = s.columns().iter().map(|c| push(c, s.nulls())).collect();
        Arc::new(StructArray::new(
            s.fields().clone(),
            children,
            s.nulls().cloned(),
        ))
    }
    let columns = batch.columns().iter().map(|c| push(c, None)).collect();
    RecordBatch::try_new(batch.schema(), columns).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_queries_answer_as_the_whole_file_read_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut sources = fixtures();
    for s in ["order.avro", "wide.avro", "telemetry.avro", "counters.avro"] {
        sources.push(sample(s));
    }
    sources.extend(fastavro_files(dir.path(), 16));
    let queries_per_file = 12;
    let mut compared = 0;
    for (index, source) in sources.iter().enumerate() {
        let mut rng = Rng(index as u64 * 7919 + 17);
        let block = *rng.pick(&[300usize, 2000, 16_000]);
        let path = dir.path().join(format!("f{index}.avro"));
        rewrite(source, &path, block, avrow::Codec::Null);
        let batches: Vec<RecordBatch> = avrow::ReaderBuilder::new()
            .open(&path)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .iter()
            .map(struct_nulls_in_fields)
            .collect();
        let schema = avrow::ReaderBuilder::new().open(&path).unwrap().schema();
        let reference =
            SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        reference
            .register_table(
                "r",
                Arc::new(MemTable::try_new(schema.clone(), vec![batches]).unwrap()),
            )
            .unwrap();
        let contexts: Vec<SessionContext> = {
            let mut out = Vec::new();
            for partitions in [1, 2, 3] {
                let ctx = SessionContext::new_with_config(
                    config(partitions).set_bool("datafusion.execution.collect_statistics", false),
                );
                avrow_datafusion::register(&ctx).unwrap();
                create(&ctx, "t", &path).await;
                out.push(ctx);
            }
            out
        };
        let exprs = exprs(&schema);
        for _ in 0..queries_per_file {
            let q = random_query(&mut rng, &exprs, &reference).await;
            let want = match reference.sql(&q.replace("{T}", "r")).await {
                Ok(df) => match df.collect().await {
                    Ok(b) => lines(&b),
                    // A query DataFusion itself cannot run on these types.
                    Err(_) => continue,
                },
                Err(_) => continue,
            };
            for (i, ctx) in contexts.iter().enumerate() {
                let sql = q.replace("{T}", "t");
                let got = lines(&query(ctx, &sql).await);
                assert_eq!(
                    got,
                    want,
                    "{} (from {}), {} partitions: {sql}",
                    path.display(),
                    source.display(),
                    i + 1
                );
            }
            compared += 1;
        }
    }
    assert!(
        compared >= sources.len() * queries_per_file * 3 / 4,
        "only {compared} queries compared"
    );
}
