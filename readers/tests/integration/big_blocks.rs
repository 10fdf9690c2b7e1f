//! Blocks of millions of records (a small compressed block can expand a thousandfold): their
//! decoding pauses as batches fill, so a reader holds a few batches of them at a time. Every
//! row comes out once and in order, with one thread and many, compressed or not; a block
//! damaged after its first batches is still skipped whole by a skipping reader.

use std::io::Write;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;

use crate::harness::{open, Opts, Src};
use crate::hostile::{header_with, long, rec, SYNC};

/// Records of ids `first..first + n`.
fn ids_data(first: i64, n: i64) -> Vec<u8> {
    let mut d = Vec::new();
    for id in first..first + n {
        long(&mut d, id);
    }
    d
}

/// A block of `count` records whose data is `data`, compressed as `codec` says.
fn block(codec: &str, count: i64, data: &[u8]) -> Vec<u8> {
    let data = match codec {
        "deflate" => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        _ => data.to_vec(),
    };
    let mut b = Vec::new();
    long(&mut b, count);
    long(&mut b, data.len() as i64);
    b.extend_from_slice(&data);
    b.extend_from_slice(&SYNC);
    b
}

/// Blocks of `sizes` records of ids counting up from 0, the block at `damaged` (if any) with
/// a bad varint at its record `at`; the file and the ids a skipping reader returns.
fn file(codec: &str, sizes: &[i64], damaged: Option<(usize, i64)>) -> (Vec<u8>, Vec<i64>) {
    let schema = rec(r#"{"name":"id","type":"long"}"#);
    let mut bytes = header_with(&[
        ("avro.schema", schema.as_bytes()),
        ("avro.codec", codec.as_bytes()),
    ]);
    let mut expected = Vec::new();
    let mut first = 0;
    for (i, &n) in sizes.iter().enumerate() {
        let mut data = ids_data(first, n);
        match damaged {
            Some((b, at)) if b == i => {
                data = ids_data(first, at);
                data.extend([0xff; 11]);
                data.extend(ids_data(first + at + 1, n - at - 1));
            }
            _ => expected.extend(first..first + n),
        }
        bytes.extend(block(codec, n, &data));
        first += n;
    }
    (bytes, expected)
}

fn read(bytes: &[u8], opts: &Opts) -> (Vec<i64>, Vec<avrow::SkippedBlock>) {
    let mut reader = open(bytes, opts).expect("open");
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    while let Some(batch) = reader.next() {
        let batch: RecordBatch = batch.expect("batch");
        assert!(batch.num_rows() <= opts.batch_size);
        ids.extend_from_slice(batch.column(0).as_primitive::<Int64Type>().values());
        skipped.extend(reader.take_skipped());
    }
    skipped.extend(reader.take_skipped());
    (ids, skipped)
}

fn opts(src: Src, threads: usize, batch: usize, skip: bool) -> Opts {
    Opts {
        src,
        threads: Some(threads),
        skip_bad_blocks: skip,
        ..Opts::batch(batch)
    }
}

/// A block of 5M records (40 MB of Arrow, past the bytes a unit decodes before it pauses at 8
/// threads) between small ones: every id once, in order.
#[test]
fn blocks_of_millions_of_records_give_every_row_once_in_order() {
    const BIG: i64 = 5_000_000;
    for codec in ["null", "deflate"] {
        let (bytes, expected) = file(codec, &[700, BIG, 50, 9000], None);
        for (src, threads, batch) in [
            (Src::Bytes, 1, 8192),
            (Src::Stream, 1, 1000),
            (Src::Bytes, 2, 8192),
            (Src::Path, 8, 1000),
            (Src::Bytes, 8, 8192),
        ] {
            let what = format!("{codec}, {src:?}, {threads} threads, batch {batch}");
            let (ids, skipped) = read(&bytes, &opts(src, threads, batch, false));
            assert!(skipped.is_empty(), "{what}");
            assert_eq!(ids.len(), expected.len(), "{what}");
            assert!(ids == expected, "{what}: ids out of order");
        }
    }
}

/// A block damaged after many batches of it were decoded is checked to its end before its
/// first batch is handed out: a skipping reader drops it whole and reports it, with the
/// record and byte offset of the damage; without skipping, the rows before it come first.
#[test]
fn a_block_damaged_past_its_first_batches_is_skipped_whole() {
    const BIG: i64 = 5_000_000;
    const AT: i64 = 4_900_000;
    for codec in ["null", "deflate"] {
        let (bytes, expected) = file(codec, &[700, BIG, 50], Some((1, AT)));
        for (threads, batch) in [(1, 1000), (2, 8192), (8, 8192)] {
            let what = format!("{codec}, {threads} threads, batch {batch}");
            let (ids, skipped) = read(&bytes, &opts(Src::Bytes, threads, batch, true));
            assert!(ids == expected, "{what}: {} ids", ids.len());
            assert_eq!(skipped.len(), 1, "{what}");
            assert_eq!(skipped[0].block, 1, "{what}");
            let message = skipped[0].error.to_string();
            assert!(message.contains("record 4900000"), "{what}: {message}");

            let mut reader = open(&bytes, &opts(Src::Bytes, threads, batch, false)).unwrap();
            let mut rows = 0;
            let error = loop {
                match reader.next() {
                    Some(Ok(b)) => rows += b.num_rows() as i64,
                    Some(Err(e)) => break e,
                    None => panic!("{what}: no error"),
                }
            };
            assert_eq!(rows, 700 + AT, "{what}");
            assert!(
                error.to_string().contains("record 4900000"),
                "{what}: {error}"
            );
        }
    }
}
