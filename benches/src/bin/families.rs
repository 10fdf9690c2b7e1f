//! The type-family matrix: avrow on one and two threads against arrow-avro, per file, in
//! interleaved rounds (as `ratios` does for the shapes). The files are the type-family
//! datasets of `datasets/families.py` (fastavro-written); `benches/families.sh` generates
//! them and writes `docs/perf/families.md` from this table.
//!
//! `families [--rounds 7] [--target 3] FILE.avro...`
//!
//! Per file: rows, size, each reader's median ns per row, the median (min–max) of the per-round
//! ratios arrow-avro / avrow (one thread) and avrow one thread / two threads, and whether the
//! one-thread ratio meets `--target`. A reader that cannot read a file is reported, not timed.
//!
//! And the limit: the Arrow bytes avrow produces (every buffer's slice), and avrow's one-thread
//! time as a fraction of this machine's memory-copy bound for the bytes it reads and writes:
//! `(file bytes + Arrow bytes) / copy rate`, where the copy rate is the bytes a `memcpy` of a
//! buffer the file's size into a reused one reads and writes per second (best of 7, measured
//! per file). 100 % would be decoding at the speed of copying; the rest is the room.
//!
//! Both readers run in this one process, on glibc's allocator, whose threshold for serving
//! a buffer with `mmap` rises with the largest mapped buffer freed so far: a reader's speed
//! would then depend on the allocation history of the process (arrow-avro's `bytes` took
//! 85–105 or 180–320 ns/row from run to run). The threshold is pinned at glibc's starting
//! value before anything is timed, so every large buffer of either reader is mapped, as in a
//! fresh process reading one file.

use arrow_array::{Array, RecordBatch};
use avrow_benches::args::{arg, number};
use avrow_benches::median_min_max;
use avrow_benches::readers::{arrow_avro_bytes_rows, avrow_bytes_rows, BATCH};
use std::time::Instant;

/// The bytes of every Arrow buffer avrow's batches of `bytes` hold (slices, not capacity).
fn arrow_bytes(bytes: &bytes::Bytes) -> usize {
    let reader = avrow::ReaderBuilder::new()
        .with_threads(1)
        .with_batch_size(BATCH)
        .read_bytes(bytes.clone())
        .expect("avrow opens the file");
    reader
        .map(|b| {
            let b: RecordBatch = b.expect("avrow decodes");
            b.columns()
                .iter()
                .map(|c| c.to_data().get_slice_memory_size().expect("valid arrays"))
                .sum::<usize>()
        })
        .sum()
}

/// Bytes read plus bytes written per second by a copy of `len` bytes into a reused buffer
/// (best of 7; the destination written once first, so that no page fault is timed).
fn copy_rate(len: usize) -> f64 {
    let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let mut dst = vec![0u8; len];
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed().as_secs_f64());
    }
    2.0 * len as f64 / best
}

fn main() {
    avrow_benches::pin_mmap_threshold();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 7).max(1);
    let target: f64 = arg(&args, "--target")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    let mut files = Vec::new();
    let mut skip = false;
    for a in &args {
        if skip {
            skip = false;
        } else if a.starts_with("--") {
            skip = true;
        } else {
            files.push(a.clone());
        }
    }
    println!(
        "| file | rows | MB | avrow 1t ns/row | arrow-avro ns/row | avrow 2t ns/row \
         | arrow-avro / avrow 1t: median (min–max) | 1t / 2t | ≥ {target}× \
         | Arrow MB | avrow 1t of the copy bound |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|");
    for path in &files {
        let name = std::path::Path::new(path)
            .file_stem()
            .map_or(path.clone(), |s| s.to_string_lossy().into_owned());
        let bytes = bytes::Bytes::from(std::fs::read(path).expect("read the file"));
        let mb = bytes.len() as f64 / 1e6;
        let rows = match avrow_bytes_rows(&bytes, 1) {
            Ok(rows) => rows,
            Err(e) => {
                println!("| {name} | | {mb:.1} | avrow: {e} | | | | | | | |");
                continue;
            }
        };
        let peer_ok = match arrow_avro_bytes_rows(&bytes) {
            Ok(n) => {
                assert_eq!(n, rows, "arrow-avro saw every row of {path}");
                true
            }
            Err(e) => {
                println!("| {name} | {rows} | {mb:.1} | | arrow-avro: {e} | | | | | | |");
                false
            }
        };
        if !peer_ok {
            continue;
        }
        // avrow 1t, arrow-avro, avrow 2t, in an order that rotates every round.
        let mut times: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(rounds)).collect();
        for round in 0..rounds {
            for k in 0..3 {
                let which = (round + k) % 3;
                let t = Instant::now();
                let seen = match which {
                    0 => avrow_bytes_rows(&bytes, 1).expect("avrow decodes"),
                    1 => arrow_avro_bytes_rows(&bytes).expect("arrow-avro decodes"),
                    _ => avrow_bytes_rows(&bytes, 2).expect("avrow decodes"),
                };
                times[which].push(t.elapsed().as_secs_f64());
                assert_eq!(seen, rows, "every row of {path}");
            }
        }
        let ns = |i: usize| median_min_max(times[i].clone()).0 * 1e9 / rows as f64;
        let ratio = |num: usize, den: usize| {
            median_min_max(
                times[num]
                    .iter()
                    .zip(&times[den])
                    .map(|(n, d)| n / d)
                    .collect(),
            )
        };
        let (m, lo, hi) = ratio(1, 0);
        let (scale, _, _) = ratio(0, 2);
        let out = arrow_bytes(&bytes);
        let bound = (bytes.len() + out) as f64 / copy_rate(bytes.len());
        let avrow_1t = median_min_max(times[0].clone()).0;
        println!(
            "| {name} | {rows} | {mb:.1} | {:.1} | {:.1} | {:.1} | {m:.2}× ({lo:.2}–{hi:.2}) | {scale:.2}× | {} | {:.1} | {:.0} % |",
            ns(0),
            ns(1),
            ns(2),
            if m >= target { "yes" } else { "no" },
            out as f64 / 1e6,
            100.0 * bound / avrow_1t,
        );
    }
}
