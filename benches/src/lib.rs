//! Shared pieces of avrow's benchmarks: the binaries' flag helpers, the varint benchmarks' data
//! and operations, the benchmark files (generated once, cached under `target/bench-data/`) and
//! the apache-avro `Value` → Arrow conversion that stands for the path DataFusion used before
//! arrow-avro (read `Value`s, then fill Arrow builders column by column).

pub mod args;
pub mod data;
pub mod readers;
pub mod value_to_arrow;
pub mod varint_data;

/// The median of `v` (the upper one of an even count), with its minimum and maximum: what the
/// interleaved ratio binaries report per reader and per ratio.
///
/// # Panics
/// If `v` is empty.
pub fn median_min_max(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}
