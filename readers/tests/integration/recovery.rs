//! Skip-and-report recovery (`with_skip_bad_blocks`): a bad block (framing, sync marker,
//! decompression, decoding) is skipped whole and reported; the reader resynchronises on the
//! sync marker and goes on — sequentially and in parallel, from bytes, paths and streams,
//! with byte ranges and with many files. Without the option, the rows before the error are
//! delivered, then the error.

use crate::harness::{Opts, Src};
use crate::hostile::{block, header, long, rec, string, SYNC};
use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;

fn schema() -> String {
    rec(r#"{"name":"id","type":"long"},{"name":"s","type":"string"}"#)
}

/// The data of records `ids`, each with a string of `pad` bytes.
fn records(ids: std::ops::Range<i64>, pad: usize) -> Vec<u8> {
    let mut d = Vec::new();
    for id in ids {
        long(&mut d, id);
        string(&mut d, &vec![b'a' + (id % 26) as u8; pad]);
    }
    d
}

/// A clean block of `n` records starting at id `first`.
fn good(first: i64, n: i64, pad: usize) -> Vec<u8> {
    block(n, &records(first..first + n, pad))
}

/// How a block is damaged.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Damage {
    None,
    /// The sync marker after the data.
    Sync,
    /// A string length beyond the data (a decode error in the middle of the block).
    Record,
    /// A negative record count.
    NegativeCount,
    /// A byte size larger than the data (the marker is then found inside the next block).
    Size,
}

/// A file of `n` blocks of `per` records (ids count up across blocks), damaged as `damage`
/// says; returns the bytes and the ids a skipping reader must return.
fn damaged_file(per: i64, pad: usize, damage: &[Damage]) -> (Vec<u8>, Vec<i64>) {
    let mut bytes = header(&schema());
    let mut expected = Vec::new();
    for (b, d) in damage.iter().enumerate() {
        let first = b as i64 * per;
        let mut blk = good(first, per, pad);
        match d {
            Damage::None => expected.extend(first..first + per),
            Damage::Sync => {
                let n = blk.len();
                blk[n - 3] ^= 0xff;
            }
            Damage::Record => {
                // Record 1's string says it is longer than the whole block.
                let mut data = records(first..first + 1, pad);
                long(&mut data, first + 1);
                long(&mut data, 1 << 40);
                data.extend(records(first + 2..first + per, pad));
                blk = block(per, &data);
            }
            Damage::NegativeCount => {
                let data = records(first..first + per, pad);
                let mut b = Vec::new();
                long(&mut b, -per);
                long(&mut b, data.len() as i64);
                b.extend_from_slice(&data);
                b.extend_from_slice(&SYNC);
                blk = b;
            }
            Damage::Size => {
                let data = records(first..first + per, pad);
                let mut b = Vec::new();
                long(&mut b, per);
                long(&mut b, data.len() as i64 + 40);
                b.extend_from_slice(&data);
                b.extend_from_slice(&SYNC);
                blk = b;
            }
        }
        bytes.extend_from_slice(&blk);
    }
    (bytes, expected)
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

/// Read everything with skipping on; the ids, and the skipped blocks' indexes.
fn read_skipping(bytes: &[u8], opts: &Opts) -> (Vec<i64>, Vec<avrow::SkippedBlock>) {
    let mut reader = crate::harness::open(bytes, opts).expect("open");
    let mut batches = Vec::new();
    let mut skipped = Vec::new();
    while let Some(batch) = reader.next() {
        let batch = batch.expect("skipping reader fails only on non-block errors");
        assert!(batch.num_rows() <= opts.batch_size);
        batches.push(batch);
        skipped.extend(reader.take_skipped());
    }
    skipped.extend(reader.take_skipped());
    (ids(&batches), skipped)
}

fn skip_opts(src: Src, threads: usize, batch: usize) -> Opts {
    Opts {
        src,
        threads: Some(threads),
        skip_bad_blocks: true,
        ..Opts::batch(batch)
    }
}

const MIXED: [Damage; 9] = [
    Damage::None,
    Damage::Sync,
    Damage::None,
    Damage::Record,
    Damage::None,
    Damage::NegativeCount,
    Damage::None,
    Damage::Size,
    Damage::None,
];

#[test]
fn bad_blocks_are_skipped_whole_and_reported() {
    let (bytes, expected) = damaged_file(30, 5, &MIXED);
    for src in [Src::Bytes, Src::Path, Src::Stream] {
        for batch in [7, 30, 1000] {
            let (got, skipped) = read_skipping(&bytes, &skip_opts(src, 1, batch));
            let what = format!("{src:?}, batch {batch}");
            let blocks: Vec<u64> = skipped.iter().map(|s| s.block).collect();
            match src {
                // A marker found inside the bytes already read: a stream loses no more than
                // a mapped file.
                Src::Bytes | Src::Path => {
                    assert_eq!(blocks, [1, 3, 5, 7], "{what}");
                    assert_eq!(got, expected, "{what}");
                }
                Src::Stream => {
                    // Without the look-ahead a damaged marker costs the block after it too
                    // (its start is known only from the marker).
                    assert!(blocks.starts_with(&[1]), "{what}: {blocks:?}");
                    let lost: Vec<i64> = expected
                        .iter()
                        .copied()
                        .filter(|id| !got.contains(id))
                        .collect();
                    assert!(
                        lost.iter().all(|&id| (60..90).contains(&id)),
                        "{what}: lost {lost:?}"
                    );
                    assert!(got.iter().all(|id| expected.contains(id)), "{what}");
                }
            }
            for s in &skipped {
                assert!(s.range.start < s.range.end, "{what}: {s:?}");
                assert!(s.range.end as usize <= bytes.len());
                assert_eq!(s.error.block(), Some(s.block), "{what}: {}", s.error);
            }
            // (In a stream, blocks after a lost one are counted from the marker found.)
            let record = skipped
                .iter()
                .find(|s| matches!(s.error, avrow::Error::Decode { .. }))
                .expect("the block with a bad record");
            assert_eq!(record.records, Some(30));
            assert!(
                record.error.to_string().contains("field s"),
                "{what}: {}",
                record.error
            );
            let negative = skipped
                .iter()
                .find(|s| s.records.is_none())
                .expect("the block with a negative count");
            assert_eq!(negative.records, None, "{what}");
            assert!(matches!(
                negative.error,
                avrow::Error::Block {
                    kind: avrow::BlockErrorKind::NegativeCount(-30),
                    ..
                }
            ));
        }
    }
}

/// A block whose byte size is two bytes short, in a file whose marker ends in two bytes with
/// their high bit set: those bytes and the next block's record count read as one varint, so a
/// block seems to start where the marker's last bytes are (with the next block's own size,
/// data and marker after it). The next block is good and must be read.
#[test]
fn a_short_byte_size_does_not_cost_the_next_block() {
    let marker: [u8; 16] = *b"SYNC-MARKER-01\xc4\xe8";
    let (bytes, _) = damaged_file(10, 3, &[Damage::None; 3]);
    let mut bytes = bytes;
    // Every marker (the header's and each block's) becomes `marker`.
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], &SYNC) {
        bytes[at + i..at + i + 16].copy_from_slice(&marker);
        at += i + 16;
    }
    // Block 0's header: count 10 (one byte), then its size, one byte less by 2.
    let first = memchr::memmem::find(&bytes, &marker).unwrap() + 16;
    assert_eq!(bytes[first], 20, "count 10, zigzag");
    bytes[first + 1] -= 4;
    for src in [Src::Bytes, Src::Path, Src::Stream] {
        let (got, skipped) = read_skipping(&bytes, &skip_opts(src, 1, 1000));
        let blocks: Vec<u64> = skipped.iter().map(|s| s.block).collect();
        assert_eq!(blocks, [0], "{src:?}: {skipped:?}");
        assert_eq!(got, (10..30).collect::<Vec<_>>(), "{src:?}");
    }
}

#[test]
fn without_the_option_the_first_bad_block_ends_the_read() {
    let (bytes, _) = damaged_file(30, 5, &MIXED);
    let opts = Opts {
        threads: Some(1),
        ..Opts::batch(1000)
    };
    let mut reader = crate::harness::open(&bytes, &opts).unwrap();
    let first = reader.next().unwrap().unwrap();
    assert_eq!(ids(&[first]), (0..30).collect::<Vec<_>>());
    let err = reader.next().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            avrow::Error::Block {
                block: 1,
                kind: avrow::BlockErrorKind::SyncMismatch { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(reader.next().is_none());
    assert!(reader.take_skipped().is_empty());
}

#[test]
fn parallel_skipping_matches_sequential() {
    // ~1.5 MB in 24 blocks of ~60 KB: several work units on two threads.
    let mut damage = vec![Damage::None; 24];
    for (i, d) in [
        (2, Damage::Record),
        (9, Damage::Sync),
        (10, Damage::Record),
        (17, Damage::NegativeCount),
        (23, Damage::Size),
    ] {
        damage[i] = d;
    }
    let (bytes, expected) = damaged_file(60, 1000, &damage);
    for src in [Src::Bytes, Src::Path] {
        for threads in [1, 2, 3] {
            let (got, skipped) = read_skipping(&bytes, &skip_opts(src, threads, 500));
            let blocks: Vec<u64> = skipped.iter().map(|s| s.block).collect();
            assert_eq!(blocks, [2, 9, 10, 17, 23], "{src:?} x{threads}");
            assert_eq!(got, expected, "{src:?} x{threads}");
        }
    }
}

#[test]
fn byte_ranges_skip_each_bad_block_once_with_file_global_indexes() {
    let mut damage = vec![Damage::None; 12];
    damage[3] = Damage::Record;
    damage[8] = Damage::NegativeCount;
    let (bytes, expected) = damaged_file(20, 40, &damage);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.avro");
    std::fs::write(&path, &bytes).unwrap();
    for parts in [1u64, 2, 3, 5, 8] {
        let len = bytes.len() as u64;
        let mut got = Vec::new();
        let mut blocks = Vec::new();
        for k in 0..parts {
            let range = len * k / parts..len * (k + 1) / parts;
            let mut reader = avrow::ReaderBuilder::new()
                .with_skip_bad_blocks(true)
                .with_threads(1)
                .with_range(range)
                .open(&path)
                .unwrap();
            for batch in reader.by_ref() {
                got.extend(ids(&[batch.unwrap()]));
            }
            blocks.extend(reader.take_skipped().into_iter().map(|s| s.block));
        }
        assert_eq!(got, expected, "{parts} ranges");
        assert_eq!(blocks, [3, 8], "{parts} ranges");
    }
    // Without skipping, the error of a range names the block's index in the whole file.
    let start = bytes.len() as u64 / 2;
    let mut reader = avrow::ReaderBuilder::new()
        .with_threads(1)
        .with_range(start..bytes.len() as u64)
        .open(&path)
        .unwrap();
    let err = reader.find_map(Result::err).expect("block 8 fails");
    assert_eq!(err.block(), Some(8), "{err}");
    // A record that does not decode, in a range starting after the file's first blocks
    // (whose count is made only for the error), with one thread and two asked for (a file
    // this small is one work unit: the sequential engine reads it either way).
    for threads in [1, 2] {
        let mut reader = avrow::ReaderBuilder::new()
            .with_threads(threads)
            .with_range(bytes.len() as u64 * 2 / 12..bytes.len() as u64)
            .open(&path)
            .unwrap();
        let err = reader.find_map(Result::err).expect("block 3 fails");
        assert!(matches!(err, avrow::Error::Decode { .. }), "{err}");
        assert_eq!(err.block(), Some(3), "{err}");
    }
}

#[test]
fn many_files_skip_per_file() {
    let (bad, expected_bad) = damaged_file(10, 3, &[Damage::None, Damage::Record, Damage::None]);
    let (good_file, expected_good) = damaged_file(10, 3, &[Damage::None, Damage::None]);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.avro");
    let b = dir.path().join("b.avro");
    std::fs::write(&a, &bad).unwrap();
    std::fs::write(&b, &good_file).unwrap();
    let mut reader = avrow::ReaderBuilder::new()
        .with_skip_bad_blocks(true)
        .open_many([&a, &b, &a])
        .unwrap();
    let mut got = Vec::new();
    for batch in reader.by_ref() {
        got.extend(ids(&[batch.unwrap()]));
    }
    let skipped = reader.take_skipped();
    let mut expected = expected_bad.clone();
    expected.extend(&expected_good);
    expected.extend(&expected_bad);
    assert_eq!(got, expected);
    let at: Vec<(usize, u64)> = skipped.iter().map(|s| (s.file_index, s.block)).collect();
    assert_eq!(at, [(0, 1), (2, 1)]);
    assert!(skipped[0].file.ends_with("a.avro"));
}

#[test]
fn undecompressable_blocks_are_skipped() {
    // A deflate file whose block 1 holds bytes that do not inflate.
    let schema = schema();
    let mut bytes = crate::hostile::header_with(&[
        ("avro.schema", schema.as_bytes()),
        ("avro.codec", b"deflate"),
    ]);
    let deflate = |data: &[u8]| {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    bytes.extend(block(5, &deflate(&records(0..5, 4))));
    bytes.extend(block(5, &[0xff; 40]));
    bytes.extend(block(5, &deflate(&records(10..15, 4))));
    for src in [Src::Bytes, Src::Stream] {
        let (got, skipped) = read_skipping(&bytes, &skip_opts(src, 1, 100));
        assert_eq!(got, [0, 1, 2, 3, 4, 10, 11, 12, 13, 14], "{src:?}");
        assert_eq!(skipped.len(), 1);
        assert!(
            matches!(
                skipped[0].error,
                avrow::Error::Block {
                    block: 1,
                    kind: avrow::BlockErrorKind::Decompression {
                        codec: avrow::Codec::Deflate,
                        ..
                    },
                    ..
                }
            ),
            "{}",
            skipped[0].error
        );
    }
}

#[test]
fn garbage_after_the_header_is_one_skipped_stretch() {
    let mut bytes = header(&schema());
    bytes.extend_from_slice(&[0x55; 3000]);
    for src in [Src::Bytes, Src::Stream] {
        let (got, skipped) = read_skipping(&bytes, &skip_opts(src, 1, 100));
        assert!(got.is_empty());
        assert_eq!(skipped.len(), 1, "{src:?}");
        assert_eq!(skipped[0].range.end as usize, bytes.len(), "{src:?}");
    }
}
