//! Interleaved single-core ratios: avrow on one thread against arrow-avro and apache-avro's
//! `Value` reader, measured in rounds. Each round decodes the file once with every reader, in
//! an order that rotates from round to round, so a slow stretch of a noisy machine (another
//! tenant, frequency changes) falls on all readers alike instead of on whichever criterion
//! happened to be measuring. Each round gives one ratio per peer (peer time / avrow time); the
//! table shows their median, minimum and maximum, next to each reader's median ns per row.
//!
//! `ratios [--rounds 11] [--shapes order,wide,telemetry,counters] [--codecs null]`
//!
//! The files are the criterion bench's (`target/bench-data/`, `AVROW_BENCH_MB` MB each,
//! generated on first use); `benches/compare.sh` runs this after criterion and puts the table
//! in docs/perf/shapes.md. Every decode is checked to see every row.

use avrow_benches::args::{list, number};
use avrow_benches::data::{self, BenchFile};
use avrow_benches::median_min_max;
use avrow_benches::readers::{apache_value_rows, arrow_avro_rows, avrow_rows};
use avrow_datasets::{Codec, Shape};
use std::time::Instant;

/// A reader under test: its name in the table and one whole-file decode returning the rows.
struct Reader {
    name: &'static str,
    decode: fn(&BenchFile) -> usize,
}

const READERS: [Reader; 3] = [
    Reader {
        name: "avrow 1t",
        decode: |f| avrow_rows(f, 1),
    },
    Reader {
        name: "arrow-avro",
        decode: arrow_avro_rows,
    },
    Reader {
        name: "apache-avro Value",
        decode: apache_value_rows,
    },
];

fn main() {
    avrow_benches::pin_mmap_threshold();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 11).max(1);
    let shapes = list(&args, "--shapes", "order,wide,telemetry,counters", |s| {
        s.parse::<Shape>().expect("shape")
    });
    let codecs = list(&args, "--codecs", "null", |s| {
        s.parse::<Codec>().expect("codec")
    });
    println!(
        "| shape | codec | rows | {} | arrow-avro / avrow: median (min–max) | apache-avro Value / avrow: median (min–max) |",
        READERS
            .iter()
            .map(|r| format!("{} ns/row", r.name))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|---|---:|{}---:|---:|", "---:|".repeat(READERS.len()));
    for &shape in &shapes {
        for &codec in &codecs {
            let file = data::load(shape, codec);
            let rows = file.rows as usize;
            // One untimed decode each (page cache, allocator warm-up, the row check).
            for r in &READERS {
                assert_eq!((r.decode)(&file), rows, "{} saw every row", r.name);
            }
            let mut times = vec![Vec::with_capacity(rounds); READERS.len()];
            for round in 0..rounds {
                for k in 0..READERS.len() {
                    let which = (round + k) % READERS.len();
                    let r = &READERS[which];
                    let t = Instant::now();
                    let seen = (r.decode)(&file);
                    times[which].push(t.elapsed().as_secs_f64());
                    assert_eq!(seen, rows, "{} saw every row", r.name);
                }
            }
            let ns_per_row: Vec<String> = times
                .iter()
                .map(|t| format!("{:.1}", median_min_max(t.clone()).0 * 1e9 / rows as f64))
                .collect();
            let ratio = |peer: usize| {
                let per_round: Vec<f64> = times[peer]
                    .iter()
                    .zip(&times[0])
                    .map(|(p, a)| p / a)
                    .collect();
                let (m, lo, hi) = median_min_max(per_round);
                format!("{m:.2}× ({lo:.2}–{hi:.2})")
            };
            println!(
                "| {} | {} | {rows} | {} | {} | {} |",
                shape.name(),
                codec.name(),
                ns_per_row.join(" | "),
                ratio(1),
                ratio(2)
            );
        }
    }
}
