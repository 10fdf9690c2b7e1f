//! The Rust reader's time for what a Python `read_avro` does: open a file by path (memory
//! mapped), decode it on one thread and keep every batch (a whole table in memory), in rounds.
//! `benches/python.py` compares the Python call with it.
//!
//! `read_table [--rounds 5] [--threads 1] FILE.avro` prints the median seconds.

use avrow_benches::args::{number, positional};
use avrow_benches::median_min_max;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 5).max(1);
    let threads = number(&args, "--threads", 1);
    let path = positional(&args)
        .first()
        .map(|s| s.to_string())
        .expect("a file");
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..=rounds {
        let start = Instant::now();
        let reader = avrow::ReaderBuilder::new()
            .with_threads(threads)
            .open(&path)
            .expect("avrow opens the file");
        let batches: Vec<_> = reader.map(|b| b.expect("avrow decodes")).collect();
        times.push(start.elapsed().as_secs_f64());
        std::hint::black_box(&batches);
        drop(batches);
    }
    // The first round warms the page cache and the allocator.
    times.remove(0);
    println!("{:.4}", median_min_max(times).0);
}
