//! Multi-core scaling and memory of avrow's parallel reader.
//!
//! `scaling sweep [--mb 100] [--threads 1,2,4,8,16] [--shapes order,telemetry,wide]
//! [--codecs null,zstandard] [--iters 5] [--block-kb 64]`: generates each file in memory
//! (avrow-datasets; blocks of 4096 rows, or of about `--block-kb` KiB of records),
//! then prints a markdown table of decode throughput per thread count (median of `--iters`;
//! the thread counts take turns within each iteration), the speed-up over one avrow thread,
//! arrow-avro (one thread, batch 8192) in the same run, and, as the machine's ceiling for the
//! shape, N independent one-thread decodes of the file at once (N the largest thread count).
//!
//! `scaling rss FILE [--threads N]`: reads FILE with default settings (memory-mapped, every
//! core unless `--threads`), dropping each batch, and prints rows and the process's peak
//! resident memory (VmHWM) before and after.
//!
//! `scaling generate SHAPE MB FILE [--codec C]`: writes a benchmark file of about MB megabytes.
//!
//! Built with `--features mimalloc`, the binary uses mimalloc as its global allocator.

use avrow_benches::args::{arg, list};
use avrow_datasets::{Codec, GenOptions, Shape};
use std::time::Instant;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn avrow_seconds(bytes: &bytes::Bytes, threads: usize, rows: usize) -> f64 {
    avrow_wall_and_cpu(bytes, threads, rows).0
}

/// Wall and process CPU seconds of one whole-file decode.
fn avrow_wall_and_cpu(bytes: &bytes::Bytes, threads: usize, rows: usize) -> (f64, f64) {
    let cpu = avrow_benches::process_cpu_seconds().unwrap_or(0.0);
    let t = Instant::now();
    let reader = avrow::ReaderBuilder::new()
        .with_threads(threads)
        .read_bytes(bytes.clone())
        .expect("open");
    let n: usize = reader.map(|b| b.expect("decode").num_rows()).sum();
    assert_eq!(n, rows, "avrow saw every row");
    let wall = t.elapsed().as_secs_f64();
    (
        wall,
        avrow_benches::process_cpu_seconds().unwrap_or(0.0) - cpu,
    )
}

fn arrow_avro_seconds(bytes: &bytes::Bytes, rows: usize) -> f64 {
    let t = Instant::now();
    let reader = arrow_avro::reader::ReaderBuilder::new()
        .with_batch_size(8192)
        .build(&bytes[..])
        .expect("open");
    let n: usize = reader.map(|b| b.expect("decode").num_rows()).sum();
    assert_eq!(n, rows, "arrow-avro saw every row");
    t.elapsed().as_secs_f64()
}

fn sweep(args: &[String]) {
    let mb: u64 = arg(args, "--mb")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let iters: usize = arg(args, "--iters")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let threads = list(args, "--threads", "1,2", |s| {
        s.parse::<usize>().expect("thread count")
    });
    let shapes = list(args, "--shapes", "order,telemetry,wide", |s| {
        s.parse::<Shape>().expect("shape")
    });
    let codecs = list(args, "--codecs", "null,zstandard", |s| {
        s.parse::<Codec>().expect("codec")
    });
    // Blocks of about this many KiB of records (default: avrow-datasets' 4096 rows).
    let block_kb: Option<u64> = arg(args, "--block-kb").and_then(|v| v.parse().ok());
    let most = threads.iter().copied().max().unwrap_or(1);
    println!(
        "| shape | codec | MB | block KiB | arrow-avro MB/s | {} | {most} independent 1t decodes (×1t) | {most}t CPU / 1t CPU |",
        threads
            .iter()
            .map(|t| format!("avrow {t}t MB/s (×1t)"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!(
        "|---|---|---:|---:|---:|{}---:|---:|",
        "---:|".repeat(threads.len())
    );
    for &shape in &shapes {
        for &codec in &codecs {
            let rows = avrow_datasets::rows_for_bytes(shape, mb << 20);
            let block_rows = block_kb.map_or(GenOptions::default().block_rows, |kb| {
                ((kb << 10) * rows as u64 / (mb << 20)).max(1) as usize
            });
            let opts = GenOptions {
                rows,
                codec,
                block_rows,
                ..GenOptions::default()
            };
            let bytes =
                bytes::Bytes::from(avrow_datasets::generate(shape, &opts).expect("generate"));
            let size_mb = bytes.len() as f64 / (1u64 << 20) as f64;
            // Warm up (page cache, allocator, pools).
            avrow_seconds(&bytes, 1, rows);
            let peer = median(
                (0..iters.min(3))
                    .map(|_| arrow_avro_seconds(&bytes, rows))
                    .collect(),
            );
            // Thread counts take turns within each iteration, so that a slow phase of the
            // machine slows them all rather than one of them.
            let mut times = vec![Vec::new(); threads.len()];
            let mut cpus = vec![Vec::new(); threads.len()];
            let mut independent = Vec::new();
            for _ in 0..iters {
                for (k, &t) in threads.iter().enumerate() {
                    let (wall, cpu) = avrow_wall_and_cpu(&bytes, t, rows);
                    times[k].push(wall);
                    cpus[k].push(cpu);
                }
                independent.push(independent_seconds(&bytes, most, rows));
            }
            let cpu_ratio = median(cpus[cpus.len() - 1].clone()) / median(cpus[0].clone());
            let blocks = rows.div_ceil(block_rows);
            let block_kib = bytes.len() as f64 / blocks as f64 / 1024.0;
            let one = median(times[0].clone());
            let cells: Vec<String> = times
                .into_iter()
                .map(|t| {
                    let s = median(t);
                    format!("{:.0} ({:.2}×)", size_mb / s, one / s)
                })
                .collect();
            // `most` whole-file decodes at once, one thread each: the speed-up the machine
            // gives perfectly parallel work of this shape (memory bandwidth, shared caches).
            let both = median(independent);
            println!(
                "| {} | {} | {:.0} | {:.0} | {:.0} | {} | {:.0} ({:.2}×) | {:.2} |",
                shape.name(),
                codec.name(),
                size_mb,
                block_kib,
                size_mb / peer,
                cells.join(" | "),
                most as f64 * size_mb / both,
                most as f64 * one / both,
                cpu_ratio
            );
        }
    }
}

/// Wall time of `n` one-thread decodes of the whole file running at once on `n` threads.
fn independent_seconds(bytes: &bytes::Bytes, n: usize, rows: usize) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| avrow_seconds(bytes, 1, rows));
        }
    });
    t.elapsed().as_secs_f64()
}

fn rss(args: &[String]) {
    let file = args.get(2).expect("scaling rss FILE");
    let threads: usize = arg(args, "--threads")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let before = peak_rss_kib();
    let t = Instant::now();
    let reader = avrow::ReaderBuilder::new()
        .with_threads(threads)
        .open(file)
        .expect("open");
    let used = reader.threads();
    let mut rows = 0usize;
    for batch in reader {
        rows += batch.expect("decode").num_rows();
    }
    let secs = t.elapsed().as_secs_f64();
    let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!(
        "file {file}: {:.0} MB, {rows} rows, {used} threads, {secs:.2} s; peak RSS before {:.0} MB, after {:.0} MB",
        len as f64 / 1e6,
        before as f64 / 1024.0,
        peak_rss_kib() as f64 / 1024.0
    );
}

fn generate(args: &[String]) {
    let shape: Shape = args.get(2).expect("SHAPE").parse().expect("shape");
    let mb: u64 = args.get(3).expect("MB").parse().expect("MB");
    let path = args.get(4).expect("FILE");
    let codec: Codec = arg(args, "--codec").map_or(Codec::Null, |c| c.parse().expect("codec"));
    let rows = avrow_datasets::rows_for_bytes(shape, mb << 20);
    let opts = GenOptions {
        rows,
        codec,
        ..GenOptions::default()
    };
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    avrow_datasets::write(shape, &opts, file).expect("write");
    println!("wrote {path}: {rows} rows");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("sweep") => sweep(&args),
        Some("rss") => rss(&args),
        Some("generate") => generate(&args),
        _ => eprintln!(
            "usage: scaling sweep|rss FILE|generate SHAPE MB FILE (see the source's doc comment)"
        ),
    }
}
