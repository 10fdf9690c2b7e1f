//! Projection: reading one top-level column of a file against reading all of them, avrow and
//! arrow-avro (its `with_projection`) side by side, single core, in interleaved rounds.
//!
//! `projection [--rounds 5] [--shapes order,wide,telemetry,counters] [--columns a,b] [FILE.avro ...]`
//!
//! With files, those are read instead of the shapes' benchmark files; `--columns` measures only
//! those columns. For every top-level
//! field the table gives avrow's median time reading that column alone, avrow's time reading
//! every column, arrow-avro's time reading that column alone, and the ratios (arrow-avro / avrow
//! for the same column; avrow column / avrow whole file: skipping the other columns should
//! cost less than decoding them). Every read is checked to see every row.

use avrow_benches::args::{arg, list, number, positional};
use avrow_benches::median_min_max;
use avrow_benches::readers::BATCH;
use avrow_datasets::{Codec, Shape};
use bytes::Bytes;
use std::time::Instant;

fn avrow(bytes: &Bytes, column: Option<&str>) -> usize {
    let mut b = avrow::ReaderBuilder::new()
        .with_threads(1)
        .with_batch_size(BATCH);
    if let Some(c) = column {
        b = b.with_projection([c]);
    }
    let reader = b.read_bytes(bytes.clone()).expect("avrow opens the file");
    reader.map(|b| b.expect("avrow decodes").num_rows()).sum()
}

fn arrow_avro(bytes: &Bytes, column: Option<usize>) -> usize {
    let mut b = arrow_avro::reader::ReaderBuilder::new().with_batch_size(BATCH);
    if let Some(c) = column {
        b = b.with_projection(vec![c]);
    }
    let reader = b.build(&bytes[..]).expect("arrow-avro opens the file");
    reader
        .map(|b| b.expect("arrow-avro decodes").num_rows())
        .sum()
}

fn main() {
    avrow_benches::pin_mmap_threshold();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = number(&args, "--rounds", 5).max(1);
    let only =
        arg(&args, "--columns").map(|v| v.split(',').map(str::to_string).collect::<Vec<_>>());
    let files = positional(&args);
    let inputs: Vec<(String, Bytes)> = if files.is_empty() {
        list(&args, "--shapes", "order,wide,telemetry,counters", |s| {
            s.parse::<Shape>().expect("shape")
        })
        .into_iter()
        .map(|shape| {
            let f = avrow_benches::data::load(shape, Codec::Null);
            (shape.name().to_string(), f.bytes)
        })
        .collect()
    } else {
        files
            .iter()
            .map(|p| {
                let name = std::path::Path::new(p)
                    .file_stem()
                    .map_or_else(|| p.to_string(), |s| s.to_string_lossy().into_owned());
                (name, Bytes::from(std::fs::read(p).expect("read input")))
            })
            .collect()
    };
    println!("| file | column | avrow column ms | avrow all ms | arrow-avro column ms | arrow-avro / avrow (column) | avrow column / all |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (name, bytes) in &inputs {
        let schema = avrow::ReaderBuilder::new()
            .read_bytes(bytes.clone())
            .expect("avrow opens the file")
            .schema();
        let rows = avrow(bytes, None);
        for (index, field) in schema.fields().iter().enumerate() {
            let column = field.name().as_str();
            if only
                .as_ref()
                .is_some_and(|o| !o.iter().any(|c| c == column))
            {
                continue;
            }
            assert_eq!(avrow(bytes, Some(column)), rows);
            assert_eq!(arrow_avro(bytes, Some(index)), rows);
            let mut t = [vec![], vec![], vec![]];
            for round in 0..rounds {
                for k in 0..3 {
                    let which = (round + k) % 3;
                    let start = Instant::now();
                    let seen = match which {
                        0 => avrow(bytes, Some(column)),
                        1 => avrow(bytes, None),
                        _ => arrow_avro(bytes, Some(index)),
                    };
                    t[which].push(start.elapsed().as_secs_f64());
                    assert_eq!(seen, rows);
                }
            }
            let ratio = |a: usize, b: usize| {
                let r: Vec<f64> = t[a].iter().zip(&t[b]).map(|(x, y)| x / y).collect();
                median_min_max(r).0
            };
            let ms = |i: usize| median_min_max(t[i].clone()).0 * 1e3;
            println!(
                "| {name} | {column} | {:.1} | {:.1} | {:.1} | {:.2}× | {:.2} |",
                ms(0),
                ms(1),
                ms(2),
                ratio(2, 0),
                ratio(0, 1)
            );
        }
    }
}
