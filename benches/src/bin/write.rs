//! Interleaved single-core write ratios: Arrow batches in memory → an Avro container file in
//! memory (null codec, one thread), avrow's `Writer` against arrow-avro's `AvroWriter` and
//! apache-avro's `Writer`, in rounds that rotate the order (as `ratios` does for reading).
//! Each writer starts from its own in-memory form of the same file's rows: avrow's and
//! arrow-avro's readers' batches, apache-avro's `Value`s, so that only writing is timed.
//! Every output is checked once: avrow reads it back with every row. Each writer writes into
//! its own buffer, kept from round to round and touched once before the first (cleared, its
//! capacity kept): the rounds time the encoders, not the allocation and page faults of a
//! fresh 128 MiB output, which were a third of the time when every round had its own.
//!
//! `write [--rounds 7] [--shapes order,wide,telemetry,counters] [--codec null] [--threads 1]`
//! `write --profile SHAPE [--rounds N]`: only avrow's writer, N times (for `perf record`).

use apache_avro::types::Value;
use avrow_benches::args::{arg, list, number};
use avrow_benches::data;
use avrow_benches::median_min_max;
use avrow_datasets::{Codec, Shape};
use std::time::Instant;

/// An output buffer for a writer: 128 MiB, every page touched.
fn sink() -> Vec<u8> {
    let mut v = vec![1u8; 128 << 20];
    v.clear();
    v
}

fn avrow_write(
    batches: &[arrow_array::RecordBatch],
    codec: avrow::Codec,
    threads: usize,
    mut out: Vec<u8>,
) -> Vec<u8> {
    out.clear();
    let mut w = avrow::WriterBuilder::new(batches[0].schema())
        .with_codec(codec)
        .with_threads(threads)
        .build(out)
        .expect("writer");
    for b in batches {
        w.write(b).expect("write");
    }
    w.finish().expect("finish")
}

fn arrow_avro_write(batches: &[arrow_array_latest::RecordBatch], mut out: Vec<u8>) -> Vec<u8> {
    out.clear();
    let schema = batches[0].schema().as_ref().clone();
    let mut w = arrow_avro::writer::AvroWriter::new(out, schema).expect("arrow-avro writer");
    for b in batches {
        w.write(b).expect("arrow-avro write");
    }
    w.finish().expect("arrow-avro finish");
    w.into_inner()
}

fn apache_write(schema: &apache_avro::Schema, values: &[Value], mut out: Vec<u8>) -> Vec<u8> {
    out.clear();
    let mut w = apache_avro::Writer::new(schema, out).expect("apache-avro writer");
    for v in values {
        w.append_value_ref(v).expect("apache-avro append");
    }
    w.into_inner().expect("apache-avro flush")
}

fn rows_of(file: &[u8]) -> usize {
    avrow::ReaderBuilder::new()
        .read_bytes(file.to_vec())
        .expect("read back")
        .map(|b| b.expect("decode back").num_rows())
        .sum()
}

fn main() {
    avrow_benches::pin_mmap_threshold();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 7).max(1);
    let threads = number(&args, "--threads", 1);
    let codec = arg(&args, "--codec")
        .map(|c| avrow::Codec::from_name(&c).expect("codec name as in avro.codec"))
        .unwrap_or(avrow::Codec::Null);
    let shapes = list(&args, "--shapes", "order,wide,telemetry,counters", |s| {
        s.parse::<Shape>().expect("shape")
    });
    if let Some(shape) = arg(&args, "--profile") {
        let file = data::load(shape.parse().expect("shape"), Codec::Null);
        let batches: Vec<_> = avrow::ReaderBuilder::new()
            .read_bytes(file.bytes.clone())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut out = sink();
        let t = Instant::now();
        for _ in 0..rounds {
            out = avrow_write(&batches, codec, threads, out);
            assert!(!out.is_empty());
        }
        let per_row = t.elapsed().as_secs_f64() * 1e9 / (rounds as f64 * file.rows as f64);
        println!("{shape}: {per_row:.1} ns/row");
        return;
    }
    println!(
        "| shape | rows | avrow ns/row | arrow-avro ns/row | apache-avro ns/row | arrow-avro / avrow: median (min–max) | apache-avro / avrow: median (min–max) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for &shape in &shapes {
        let file = data::load(shape, Codec::Null);
        let rows = file.rows as usize;
        let ours: Vec<_> = avrow::ReaderBuilder::new()
            .with_threads(1)
            .read_bytes(file.bytes.clone())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let theirs: Vec<_> = arrow_avro::reader::ReaderBuilder::new()
            .with_batch_size(8192)
            .build(&file.bytes[..])
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let reader = apache_avro::Reader::new(&file.bytes[..]).unwrap();
        let schema = reader.writer_schema().clone();
        let values: Vec<Value> = reader.map(|v| v.unwrap()).collect();
        // Untimed: each writer once, and the outputs checked.
        let mut outs = [sink(), sink(), sink()];
        outs[0] = avrow_write(&ours, codec, threads, std::mem::take(&mut outs[0]));
        outs[1] = arrow_avro_write(&theirs, std::mem::take(&mut outs[1]));
        outs[2] = apache_write(&schema, &values, std::mem::take(&mut outs[2]));
        for out in &outs {
            assert_eq!(rows_of(out), rows);
        }
        let mut times: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(rounds)).collect();
        for round in 0..rounds {
            for k in 0..3 {
                let which = (round + k) % 3;
                let out = std::mem::take(&mut outs[which]);
                let t = Instant::now();
                let out = match which {
                    0 => avrow_write(&ours, codec, threads, out),
                    1 => arrow_avro_write(&theirs, out),
                    _ => apache_write(&schema, &values, out),
                };
                times[which].push(t.elapsed().as_secs_f64());
                assert!(!out.is_empty());
                outs[which] = out;
            }
        }
        let ns: Vec<String> = times
            .iter()
            .map(|t| format!("{:.1}", median_min_max(t.clone()).0 * 1e9 / rows as f64))
            .collect();
        let ratio = |peer: usize| {
            let r: Vec<f64> = times[peer]
                .iter()
                .zip(&times[0])
                .map(|(p, a)| p / a)
                .collect();
            let (m, lo, hi) = median_min_max(r);
            format!("{m:.2}× ({lo:.2}–{hi:.2})")
        };
        println!(
            "| {} | {rows} | {} | {} | {} |",
            shape.name(),
            ns.join(" | "),
            ratio(1),
            ratio(2)
        );
    }
}
