//! SQL over Avro: avrow's DataFusion format (`avrow-datafusion`) against DataFusion's own Avro
//! source (arrow-avro), the same queries at the same target partitions, in interleaved rounds
//! (each engine once per round, the order rotating). A fresh `SessionContext` per run: the
//! time covers registering the table (schema inference, statistics) and running the query,
//! what a user pays. Answers of the two engines are checked equal once.
//!
//! `sql [--rounds 5] [--partitions 1,2] FILE.avro|DIR...` prints one JSON object per (file, query,
//! partitions) with the medians; `benches/sql.py` adds DuckDB and writes the table.
//! `--only avrow` runs avrow's rounds alone (no comparison, no answer check): a process to
//! profile (`perf record`) that holds nothing but avrow's queries.
//!
//! The queries are chosen from each file's schema, so any file works: `count(*)`, a filtered
//! sum of the first floating-point (else integer) column, and a group-by on the first
//! boolean or dictionary (else integer, else string) column.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow_schema::{DataType, Schema};
use avrow_benches::args::{arg, list, number, positional};
use avrow_benches::median_min_max;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
use datafusion::prelude::{AvroReadOptions, SessionConfig, SessionContext};

fn queries(schema: &Schema) -> Vec<String> {
    let pick = |want: &dyn Fn(&DataType) -> bool| {
        schema
            .fields()
            .iter()
            .find(|f| want(f.data_type()))
            .map(|f| format!("\"{}\"", f.name()))
    };
    let number = pick(&|t| matches!(t, DataType::Float64 | DataType::Float32))
        .or_else(|| pick(&|t| matches!(t, DataType::Int64 | DataType::Int32)))
        .expect("a numeric column");
    let key = pick(&|t| matches!(t, DataType::Boolean | DataType::Dictionary(..)))
        .or_else(|| pick(&|t| matches!(t, DataType::Int32)))
        .or_else(|| pick(&|t| matches!(t, DataType::Utf8)))
        .expect("a grouping column");
    vec![
        "SELECT count(*) FROM t".to_string(),
        format!("SELECT sum({number}) FROM t WHERE {number} > 0"),
        format!("SELECT {key}, count(*), sum({number}) FROM t GROUP BY {key} ORDER BY {key}"),
    ]
}

fn session(partitions: usize) -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions))
}

async fn run_avrow(path: &str, sql: &str, partitions: usize) -> String {
    let ctx = session(partitions);
    ctx.register_avrow("t", path, AvrowReadOptions::default())
        .await
        .expect("register");
    answer(&ctx, sql).await
}

async fn run_datafusion(path: &str, sql: &str, partitions: usize) -> String {
    let ctx = session(partitions);
    ctx.register_avro("t", path, AvroReadOptions::default())
        .await
        .expect("register");
    answer(&ctx, sql).await
}

async fn answer(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx
        .sql(sql)
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string()
}

/// The same table, floating-point sums equal to 1e-9 relative (partitions add in another
/// order).
fn same_answer(a: &str, b: &str) -> bool {
    let cells = |t: &str| -> Vec<String> {
        t.split(['|', '\n', ' '])
            .filter(|c| !c.is_empty() && !c.starts_with('+'))
            .map(String::from)
            .collect()
    };
    let (a, b) = (cells(a), cells(b));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x == y
                || matches!((x.parse::<f64>(), y.parse::<f64>()),
                    (Ok(x), Ok(y)) if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()))
        })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 5).max(1);
    let partitions = list(&args, "--partitions", "1,2", |s| {
        s.parse::<usize>().expect("partitions")
    });
    let files = positional(&args);
    let only_avrow = match arg(&args, "--only").as_deref() {
        None if args.iter().any(|a| a == "--only") => panic!("--only takes `avrow`"),
        None => false,
        Some("avrow") => true,
        Some(other) => panic!("--only takes `avrow`, not {other:?}"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(partitions.iter().copied().max().unwrap_or(1))
        .enable_all()
        .build()
        .expect("runtime");
    for file in files {
        // A directory is one table of its files (the queries are chosen from the first's
        // schema).
        let first = match Path::new(file).is_dir() {
            true => {
                let mut avro: Vec<_> = std::fs::read_dir(file)
                    .expect("directory")
                    .map(|e| e.expect("entry").path())
                    .filter(|p| p.extension().is_some_and(|e| e == "avro"))
                    .collect();
                avro.sort();
                avro.into_iter()
                    .next()
                    .expect("an .avro file in the directory")
            }
            false => Path::new(file).to_path_buf(),
        };
        let schema = Arc::new(
            avrow::ReaderBuilder::new()
                .open(&first)
                .expect("open")
                .schema()
                .as_ref()
                .clone(),
        );
        let name = Path::new(file).file_name().unwrap().to_string_lossy();
        for sql in queries(&schema) {
            for &p in &partitions {
                if only_avrow {
                    // (A first run untimed, as the comparison's answer check is.)
                    runtime.block_on(run_avrow(file, &sql, p));
                    let times: Vec<f64> = (0..rounds)
                        .map(|_| {
                            let t = Instant::now();
                            runtime.block_on(run_avrow(file, &sql, p));
                            t.elapsed().as_secs_f64()
                        })
                        .collect();
                    let (avrow_s, lo, hi) = median_min_max(times);
                    println!(
                        "{{\"file\": \"{name}\", \"path\": \"{file}\", \"query\": {sql:?}, \"partitions\": {p}, \"avrow_s\": {avrow_s:.4}, \"avrow_min_s\": {lo:.4}, \"avrow_max_s\": {hi:.4}}}"
                    );
                    continue;
                }
                let ours = runtime.block_on(run_avrow(file, &sql, p));
                let theirs = runtime.block_on(run_datafusion(file, &sql, p));
                assert!(
                    same_answer(&ours, &theirs),
                    "{file}: {sql}\n{ours}\n{theirs}"
                );
                let mut times = [Vec::new(), Vec::new()];
                for round in 0..rounds {
                    for k in 0..2 {
                        let which = (round + k) % 2;
                        let t = Instant::now();
                        match which {
                            0 => runtime.block_on(run_avrow(file, &sql, p)),
                            _ => runtime.block_on(run_datafusion(file, &sql, p)),
                        };
                        times[which].push(t.elapsed().as_secs_f64());
                    }
                }
                let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(d, a)| d / a).collect();
                let (ratio, lo, hi) = median_min_max(ratios);
                let (avrow_s, _, _) = median_min_max(times[0].clone());
                let (datafusion_s, _, _) = median_min_max(times[1].clone());
                println!(
                    "{{\"file\": \"{name}\", \"path\": \"{file}\", \"query\": {sql:?}, \"partitions\": {p}, \"avrow_s\": {avrow_s:.4}, \"datafusion_s\": {datafusion_s:.4}, \"ratio\": {ratio:.2}, \"ratio_min\": {lo:.2}, \"ratio_max\": {hi:.2}}}"
                );
            }
        }
    }
}
