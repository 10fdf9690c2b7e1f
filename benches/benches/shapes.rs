//! Whole-record decoding of ~100 MB files per benchmark shape (Order, WideRecord, Telemetry,
//! Counters) and codec (null, zstandard), avrow against its peers in one run:
//!
//! - `avrow-1t`: avrow on the calling thread (`with_threads(1)`);
//! - `avrow-all`: avrow on every core;
//! - `arrow-avro`: arrow-rs's reader (`arrow_avro::reader::ReaderBuilder`, batch 8192);
//! - `apache-avro-value`: apache-avro's `Reader` producing `Value`s;
//! - `apache-avro-to-arrow`: the same `Value`s turned into Arrow batches of 8192 rows with
//!   builders (the path DataFusion used before arrow-avro).
//!
//! Every function decodes the whole file from memory and consumes every batch. Throughput is
//! the file's bytes. `AVROW_BENCH_MB` sets the file size (default 100), `AVROW_BENCH_SHAPES` a
//! comma-separated subset (`order,wide`), `AVROW_BENCH_CODECS` likewise (`null,zstandard`).
//! `benches/compare.sh` runs this and writes docs/perf/shapes.md.

use avrow_benches::data;
use avrow_benches::readers::{
    apache_to_arrow_rows, apache_value_rows, arrow_avro_rows, avrow_rows,
};
use avrow_datasets::{Codec, Shape};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

fn selected<T: Copy>(all: &[T], var: &str, name: fn(T) -> &'static str) -> Vec<T> {
    match std::env::var(var) {
        Ok(list) => all
            .iter()
            .copied()
            .filter(|x| list.split(',').any(|n| n.trim() == name(*x)))
            .collect(),
        Err(_) => all.to_vec(),
    }
}

fn shapes(c: &mut Criterion) {
    let shapes = selected(&Shape::ALL, "AVROW_BENCH_SHAPES", Shape::name);
    let codecs = selected(
        &[Codec::Null, Codec::Zstandard],
        "AVROW_BENCH_CODECS",
        Codec::name,
    );
    for &shape in &shapes {
        for &codec in &codecs {
            let file = data::load(shape, codec);
            let expected = file.rows as usize;
            let schema = avrow::ReaderBuilder::new()
                .read_bytes(file.bytes.clone())
                .expect("avrow opens the file")
                .schema();
            // Every reader must see every row, or the benchmark measures the wrong thing.
            assert_eq!(avrow_rows(&file, 1), expected);
            assert_eq!(arrow_avro_rows(&file), expected);

            let mut group = c.benchmark_group(format!("{}-{}", shape.name(), codec.name()));
            group.throughput(Throughput::Bytes(file.bytes.len() as u64));
            group.sample_size(10);
            group.warm_up_time(Duration::from_secs(1));
            group.measurement_time(Duration::from_secs(8));
            group.bench_function(BenchmarkId::from_parameter("avrow-1t"), |b| {
                b.iter(|| assert_eq!(avrow_rows(&file, 1), expected))
            });
            group.bench_function(BenchmarkId::from_parameter("avrow-all"), |b| {
                b.iter(|| assert_eq!(avrow_rows(&file, 0), expected))
            });
            group.bench_function(BenchmarkId::from_parameter("arrow-avro"), |b| {
                b.iter(|| assert_eq!(arrow_avro_rows(&file), expected))
            });
            group.bench_function(BenchmarkId::from_parameter("apache-avro-value"), |b| {
                b.iter(|| assert_eq!(apache_value_rows(&file), expected))
            });
            group.bench_function(BenchmarkId::from_parameter("apache-avro-to-arrow"), |b| {
                b.iter(|| assert_eq!(apache_to_arrow_rows(&file, &schema), expected))
            });
            group.finish();
            // Leave the row count where compare.sh finds it.
            let dir = std::path::Path::new(&criterion_dir()).join(format!(
                "{}-{}",
                shape.name(),
                codec.name()
            ));
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join("rows"), expected.to_string());
        }
    }
}

fn criterion_dir() -> String {
    std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").to_string())
        + "/criterion"
}

criterion_group!(benches, shapes);
criterion_main!(benches);
