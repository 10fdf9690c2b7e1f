//! The Avro writer: random schemas and data (the differential generator's), written by
//! apache-avro, read by avrow, written again by avrow under every codec, block size and thread
//! count, and read back by apache-avro — which must see the rows it wrote in the first place;
//! avrow reads its own files back to the same batches. Values the Avro schema cannot hold are
//! errors naming the column and row.

use crate::differential::seeds;
use crate::gen::{random_case, write_file, Rng};
use crate::oracle::{apache_rows, diff_rows};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use avrow::{Codec, ReaderBuilder, WriterBuilder};
use std::sync::Arc;

fn read_all(file: &[u8]) -> Vec<RecordBatch> {
    ReaderBuilder::new()
        .with_threads(1)
        .read_bytes(file.to_vec())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn write_all(batches: &[RecordBatch], codec: Codec, block_size: usize, threads: usize) -> Vec<u8> {
    let mut w = WriterBuilder::new(batches[0].schema())
        .with_codec(codec)
        .with_block_size(block_size)
        .with_threads(threads)
        .build(Vec::new())
        .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn written_files_read_back_unchanged_by_apache_avro() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let codecs = [
        Codec::Null,
        Codec::Deflate,
        Codec::Snappy,
        Codec::Zstandard,
        Codec::Bzip2,
        Codec::Xz,
    ];
    for seed in seeds(5000).into_iter().take(120) {
        let case = random_case(seed);
        let mut rng = Rng::new(seed);
        let original = write_file(
            &mut rng,
            &case.schema,
            &case.values,
            apache_avro::Codec::Null,
        );
        let expected = apache_rows(&case.model, &original).unwrap();
        let batches = read_all(&original);
        if batches.is_empty() {
            continue;
        }
        checked += 1;
        let codec = codecs[seed as usize % codecs.len()];
        let (block, threads) =
            [(1usize << 20, 1usize), (64, 2), (1, 1), (300, 3)][seed as usize % 4];
        let written = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            write_all(&batches, codec, block, threads)
        })) {
            Ok(w) => w,
            Err(_) => {
                failures.push(format!("seed {seed}: writing panicked ({})", case.json));
                continue;
            }
        };
        match apache_rows(&case.model, &written) {
            Ok(rows) => {
                if let Some(d) = diff_rows(&expected, &rows) {
                    failures.push(format!("seed {seed} {codec}: apache-avro reads {d}"));
                }
            }
            Err(e) => failures.push(format!(
                "seed {seed} {codec}: apache-avro cannot read it: {e}"
            )),
        }
        // avrow reads its own file to the same batches, with the same writer schema.
        let again = read_all(&written);
        let (a, b) = (
            arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap(),
            arrow::compute::concat_batches(&again[0].schema(), &again).unwrap(),
        );
        if a != b {
            failures.push(format!(
                "seed {seed} {codec}: avrow reads different batches back"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 100 || std::env::var("AVROW_SEED").is_ok(),
        "only {checked} cases"
    );
}

#[test]
fn bad_values_are_errors_naming_column_and_row() {
    let schema = avrow::Schema::parse(
        r#"{"type":"record","name":"r","fields":[
            {"name":"small","type":"int"},
            {"name":"kind","type":{"type":"enum","name":"K","symbols":["A","B"]}}]}"#,
    )
    .unwrap();
    let batch = |small: Vec<i64>, kind: Vec<Option<&str>>| {
        RecordBatch::try_from_iter([
            ("small", Arc::new(Int64Array::from(small)) as ArrayRef),
            ("kind", Arc::new(StringArray::from(kind)) as ArrayRef),
        ])
        .unwrap()
    };
    let good = batch(vec![1, 2], vec![Some("A"), Some("B")]);
    for (bad, column, row, what) in [
        (
            batch(vec![1, 1 << 40], vec![Some("A"), Some("B")]),
            "small",
            3,
            "out of range",
        ),
        (
            batch(vec![1, 2], vec![Some("A"), Some("C")]),
            "kind",
            3,
            "\"C\" is not a symbol",
        ),
        (
            batch(vec![1, 2], vec![None, Some("A")]),
            "kind",
            2,
            "null value",
        ),
    ] {
        let mut w = WriterBuilder::new(good.schema())
            .with_avro_schema(schema.clone())
            .build(Vec::new())
            .unwrap();
        w.write(&good).unwrap();
        // The bad value is found when its block is encoded: at a later write or at finish.
        let e = match w.write(&bad).and_then(|()| w.write(&good)) {
            Err(e) => e,
            Ok(()) => w.finish().unwrap_err(),
        };
        let m = e.to_string();
        assert!(
            m.contains(&format!("column {column}, row {row}")) && m.contains(what),
            "{m}"
        );
    }
    // A schema the Arrow schema cannot be written as: refused when the writer is built.
    let ints =
        RecordBatch::try_from_iter([("small", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    let e = WriterBuilder::new(ints.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("kind"), "{e}");
    // After an error, nothing more is written.
    let mut w = WriterBuilder::new(good.schema()).build(Vec::new()).unwrap();
    let bad = RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
        .unwrap();
    assert!(w.write(&bad).is_err());
    assert!(w.write(&good).is_err());
    assert!(good.column(0).len() == 2);
}

#[test]
fn levels_and_metadata_are_checked() {
    let b = RecordBatch::try_from_iter([("a", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
        .unwrap();
    let e = WriterBuilder::new(b.schema())
        .with_codec(Codec::Zstandard)
        .with_level(40)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("levels -7 to 22"), "{e}");
    let e = WriterBuilder::new(b.schema())
        .with_codec(Codec::Snappy)
        .with_level(1)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("no compression levels"), "{e}");
    let e = WriterBuilder::new(b.schema())
        .with_metadata("avro.codec", "x")
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("reserved"), "{e}");
    let mut w = WriterBuilder::new(b.schema())
        .with_metadata("origin", "test")
        .with_sync_marker(*b"0123456789abcdef")
        .build(Vec::new())
        .unwrap();
    w.write(&b).unwrap();
    let file = w.finish().unwrap();
    assert!(file.ends_with(b"0123456789abcdef"));
    let header = avrow::BlockReader::from_bytes(file).unwrap();
    assert_eq!(
        header.header().metadata().get("origin").map(|v| &v[..]),
        Some(&b"test"[..])
    );
}

#[test]
fn many_blocks_on_several_threads_keep_row_order() {
    // 1.5 MB of records with nested arrays, maps, unions, decimals: blocks of 16 KiB on 1, 2
    // and 4 threads, every codec; apache-avro reads the rows in order.
    let (model, original, expected) =
        crate::parallel::big_file(21, 3 << 19, apache_avro::Codec::Null);
    let batches: Vec<RecordBatch> = ReaderBuilder::new()
        .with_batch_size(1000)
        .read_bytes(original)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (codec, threads) in [
        (Codec::Null, 1),
        (Codec::Zstandard, 2),
        (Codec::Deflate, 4),
        (Codec::Snappy, 2),
    ] {
        let written = write_all(&batches, codec, 16 << 10, threads);
        let blocks = avrow::BlockReader::from_bytes(written.clone())
            .unwrap()
            .count();
        assert!(blocks > 20, "{codec}: {blocks} blocks");
        let rows = apache_rows(&model, &written).unwrap();
        assert!(
            diff_rows(&expected, &rows).is_none(),
            "{codec} on {threads} threads"
        );
    }
}
