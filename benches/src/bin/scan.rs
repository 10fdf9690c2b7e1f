//! A query engine's scan of a local file: open it by path, read some columns on one thread and
//! drop each batch (what `avrow-datafusion` does under a filter or an aggregate), memory-mapped
//! or read through the file, or (`memory`) from a copy already in memory, in interleaved rounds.
//!
//! `scan [--rounds 5] [--columns a,b] [--ways mmap,read,memory] FILE.avro` prints, for each way of reading the file, the
//! median seconds (min–max) and the rows seen.

use avrow_benches::args::{arg, list, number, positional};
use avrow_benches::median_min_max;
use std::time::Instant;

fn scan(path: &str, columns: Option<&[String]>, way: &str, bytes: &bytes::Bytes) -> usize {
    let mut b = avrow::ReaderBuilder::new()
        .with_threads(1)
        .with_mmap(way == "mmap");
    if let Some(c) = columns {
        b = b.with_projection(c.iter().map(String::as_str));
    }
    let reader = match way {
        "memory" => b.read_bytes(bytes.clone()),
        _ => b.open(path),
    }
    .expect("avrow opens the file");
    reader.map(|b| b.expect("avrow decodes").num_rows()).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 5).max(1);
    let columns =
        arg(&args, "--columns").map(|v| v.split(',').map(str::to_string).collect::<Vec<_>>());
    for path in positional(&args) {
        let ways = list(&args, "--ways", "mmap,read,memory", str::to_string);
        let bytes = bytes::Bytes::from(std::fs::read(path).expect("read the file"));
        let mut times = vec![Vec::new(); ways.len()];
        let mut rows = vec![0; ways.len()];
        for round in 0..=rounds {
            for k in 0..ways.len() {
                let i = (round + k) % ways.len();
                let start = Instant::now();
                rows[i] = scan(path, columns.as_deref(), &ways[i], &bytes);
                // The first round warms the page cache and the allocator.
                if round > 0 {
                    times[i].push(start.elapsed().as_secs_f64());
                }
            }
        }
        for (i, name) in ways.iter().enumerate() {
            let (median, lo, hi) = median_min_max(times[i].clone());
            println!(
                "{path}\t{name}\t{median:.4} s ({lo:.4}–{hi:.4})\t{} rows",
                rows[i]
            );
        }
    }
}
