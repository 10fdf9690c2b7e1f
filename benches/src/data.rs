//! Benchmark files: one per shape and codec, about `AVROW_BENCH_MB` (default 100) MB of
//! uncompressed record data, written once by `avrow-datasets` (apache-avro's encoder) and kept
//! in `target/bench-data/` with their row counts beside them.

use avrow_datasets::{Codec, GenOptions, Shape};
use std::path::PathBuf;

/// A benchmark input.
pub struct BenchFile {
    /// The shape of its records.
    pub shape: Shape,
    /// Its codec.
    pub codec: Codec,
    /// The whole file.
    pub bytes: bytes::Bytes,
    /// How many records it holds.
    pub rows: u64,
}

/// Megabytes of record data per file (`AVROW_BENCH_MB`, default 100).
pub fn target_mb() -> u64 {
    std::env::var("AVROW_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("bench-data")
}

/// Load (generating on first use) the benchmark file for `shape` and `codec`.
///
/// # Panics
/// If the file cannot be generated or read: benchmarks cannot run without their input.
pub fn load(shape: Shape, codec: Codec) -> BenchFile {
    let mb = target_mb();
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("create target/bench-data");
    let stem = format!("{}-{}-{mb}mb", shape.name(), codec.name());
    let path = dir.join(format!("{stem}.avro"));
    let rows_path = dir.join(format!("{stem}.rows"));
    let rows = avrow_datasets::rows_for_bytes(shape, mb << 20);
    if !path.exists() || !rows_path.exists() {
        let opts = GenOptions {
            rows,
            codec,
            ..GenOptions::default()
        };
        let tmp = dir.join(format!("{stem}.tmp"));
        let file = std::fs::File::create(&tmp).expect("create bench file");
        avrow_datasets::write(shape, &opts, std::io::BufWriter::new(file))
            .expect("generate bench file");
        std::fs::rename(&tmp, &path).expect("rename bench file");
        std::fs::write(&rows_path, rows.to_string()).expect("write row count");
    }
    let rows = std::fs::read_to_string(&rows_path)
        .expect("read row count")
        .trim()
        .parse()
        .expect("row count");
    let bytes = bytes::Bytes::from(std::fs::read(&path).expect("read bench file"));
    BenchFile {
        shape,
        codec,
        bytes,
        rows,
    }
}
