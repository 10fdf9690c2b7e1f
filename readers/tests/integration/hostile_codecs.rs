//! Hostile compressed blocks, every codec: sizes that compressed data declares about itself
//! (lying preambles and frame headers), blocks that expand far past their compressed size,
//! the block size limit, and block sizes that lie about where a block's data ends.

use crate::alloc_guard;
use crate::harness::{read_avrow, read_avrow_caught, Opts, Src};
use crate::hostile::{block, expect_err_with, header_with, long, long_rec, SYNC};
use arrow::array::AsArray;
use arrow::datatypes::Int64Type;

/// A zstd frame of `data` whose header declares `declared` bytes of content.
fn zstd_frame_declaring(data: &[u8], declared: u64) -> Vec<u8> {
    use std::io::Write;
    let mut frame = Vec::new();
    {
        let mut e = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
        e.set_pledged_src_size(Some(data.len() as u64)).unwrap();
        e.include_contentsize(true).unwrap();
        e.include_checksum(false).unwrap();
        e.write_all(data).unwrap();
        e.finish().unwrap();
    }
    // Magic (4 bytes), the descriptor, an optional window byte, then the content size
    // (1 byte here): rewrite it as an 8-byte field, not single-segment (window byte added).
    let descriptor = frame[4];
    assert_eq!(descriptor >> 6, 0, "a one-byte content size");
    let single_segment = descriptor & 0x20 != 0;
    let fcs_at = 5 + usize::from(!single_segment);
    let mut out = frame[..4].to_vec();
    out.push((descriptor & 0x1f) | 0xc0);
    out.push(if single_segment { 0x50 } else { frame[5] }); // window: 2^20 bytes
    out.extend_from_slice(&declared.to_le_bytes());
    out.extend_from_slice(&frame[fcs_at + 1..]);
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&out).unwrap(),
        Some(declared)
    );
    out
}

#[test]
fn lying_sizes_in_compressed_data_commit_no_memory() {
    let data = {
        let mut d = Vec::new();
        for i in 0..10 {
            long(&mut d, i);
        }
        d
    };
    let codec_file = |codec: &str, blocks: &[Vec<u8>]| {
        let mut f = header_with(&[
            ("avro.schema", long_rec().as_bytes()),
            ("avro.codec", codec.as_bytes()),
        ]);
        for b in blocks {
            f.extend_from_slice(&block(10, b));
        }
        f
    };
    // snappy: 64 blocks of a few bytes, each declaring 1 GiB (its length preamble).
    let mut lying_snappy = vec![0x80, 0x80, 0x80, 0x80, 0x04];
    lying_snappy.extend_from_slice(&[0x00, 0x00]);
    lying_snappy.extend_from_slice(&crc32fast::hash(&[]).to_be_bytes());
    let snappy = codec_file("snappy", &vec![lying_snappy; 64]);
    assert!(snappy.len() < 4096);
    // zstandard: a frame declaring 1 GiB (the default limit) around 10 bytes.
    let zstd = codec_file("zstandard", &[zstd_frame_declaring(&data, 1 << 30)]);
    for (what, bytes, needle) in [
        ("snappy length preamble", &snappy, "can hold at most"),
        ("zstd frame content size", &zstd, ""),
    ] {
        for src in [Src::Bytes, Src::Stream, Src::Path] {
            let opts = Opts {
                src,
                ..Opts::batch(4)
            };
            let (huge_before, _) = alloc_guard::huge();
            let r = read_avrow_caught(bytes, &opts).expect("no panic");
            let (huge_after, largest) = alloc_guard::huge();
            assert_eq!(
                huge_before, huge_after,
                "{what} via {src:?}: a huge allocation ({largest} bytes)"
            );
            match r {
                Err(m) => assert!(m.contains(needle), "{what}: {m}"),
                // A wrong declared size that the decoder corrects is fine, if the data is
                // right: the zstd frame's 10 bytes are.
                Ok(d) => assert_eq!(d.num_rows(), 10, "{what}"),
            }
        }
    }
}

#[test]
fn every_codec_and_the_null_codec_are_held_to_the_block_size_limit() {
    // 100 KB of records that compress well, and a 16 KB limit.
    let mut data = Vec::new();
    for _ in 0..100_000 {
        long(&mut data, 0);
    }
    let records = 100_000;
    for codec in ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"] {
        let compressed = compressed(codec, &data);
        let mut f = header_with(&[
            ("avro.schema", long_rec().as_bytes()),
            ("avro.codec", codec.as_bytes()),
        ]);
        f.extend_from_slice(&block(records, &compressed));
        for src in [Src::Bytes, Src::Stream, Src::Path] {
            let what = format!("{codec} via {src:?}");
            let opts = Opts {
                src,
                ..Opts::batch(1024)
            };
            let limited = match src {
                Src::Bytes => opts
                    .builder()
                    .with_max_block_size(16 << 10)
                    .read_bytes(f.clone()),
                Src::Stream => opts
                    .builder()
                    .with_max_block_size(16 << 10)
                    .read_stream(std::io::Cursor::new(f.clone())),
                Src::Path => {
                    let dir = tempfile::tempdir().unwrap();
                    let path = dir.path().join("f.avro");
                    std::fs::write(&path, &f).unwrap();
                    opts.builder().with_max_block_size(16 << 10).open(&path)
                }
            }
            .unwrap();
            let err = limited
                .into_iter()
                .find_map(Result::err)
                .unwrap_or_else(|| panic!("{what}: the limit was not enforced"));
            let m = err.to_string();
            assert!(m.contains("limit of 16384 bytes"), "{what}: {m}");
            assert_eq!(err.block(), Some(0), "{what}");
            // The same file reads with the default limit.
            let full = read_avrow(&f, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(full.num_rows(), records as usize, "{what}");
        }
    }
}

#[test]
fn blocks_that_expand_far_are_checked_as_they_stream() {
    // 32 Mi one-byte records, `i % 64`, far beyond 16 times their compressed size, so each
    // block is checked as it streams before it is decompressed whole, in room of the size
    // the check measured.
    let pattern: Vec<u8> = (0..32u32 << 20).map(|i| (i % 64 * 2) as u8).collect();
    let mut small = Vec::new();
    for v in [1, 2, 3] {
        long(&mut small, v);
    }
    for codec in ["deflate", "zstandard", "bzip2", "xz"] {
        let (big, tail) = (compressed(codec, &pattern), compressed(codec, &small));
        let file = |count: i64| {
            let mut f = header_with(&[
                ("avro.schema", long_rec().as_bytes()),
                ("avro.codec", codec.as_bytes()),
            ]);
            f.extend_from_slice(&block(count, &big));
            f.extend_from_slice(&block(3, &tail));
            f
        };
        for src in [Src::Bytes, Src::Stream] {
            let what = format!("{codec} via {src:?}");
            let opts = Opts {
                src,
                ..Opts::batch(1 << 20)
            };
            // Valid: every row, in order (more than the harness reads).
            let valid = file(32 << 20);
            let reader = match src {
                Src::Bytes => opts.builder().read_bytes(valid),
                _ => opts.builder().read_stream(std::io::Cursor::new(valid)),
            };
            // Each value checked as its batch arrives (collecting them all would be an
            // allocation the guard counts as huge).
            let expected = |i: usize| match i.checked_sub(32 << 20) {
                None => (i % 64) as i64,
                Some(tail) => tail as i64 + 1,
            };
            let mut rows = 0usize;
            for batch in reader.unwrap() {
                let batch = batch.unwrap_or_else(|e| panic!("{what}: {e}"));
                let column = batch.column(0).as_primitive::<Int64Type>();
                let wrong =
                    (column.values().iter().enumerate()).find(|&(j, &v)| v != expected(rows + j));
                assert_eq!(wrong, None, "{what}: the first wrong row after {rows}");
                rows += column.len();
            }
            assert_eq!(rows, (32 << 20) + 3, "{what}");
            // One record and 32 MiB - 1 trailing bytes: the error decoding would give.
            let bad = file(1);
            let msg = expect_err_with(&what, &bad, &["block 0", "left over", "at byte 1 "], &opts);
            assert!(
                msg.contains(&format!("{}", (32 << 20) - 1)),
                "{what}: {msg}"
            );
            // Too few records for the data: the record that is not there.
            let short = file((32 << 20) + 1);
            expect_err_with(&what, &short, &["block 0", "record 33554432"], &opts);
            // Skipped whole with skip_bad_blocks, the next block read.
            let mut reader = opts
                .builder()
                .with_skip_bad_blocks(true)
                .read_bytes(bad.clone())
                .unwrap();
            let rows: usize = reader.by_ref().map(|b| b.unwrap().num_rows()).sum();
            assert_eq!(rows, 3, "{what}");
            let skipped = reader.take_skipped();
            assert_eq!(skipped.len(), 1, "{what}");
            assert_eq!(skipped[0].block, 0, "{what}");
        }
    }
}

/// `data` compressed the way Avro writers do for `codec`.
fn compressed(codec: &str, data: &[u8]) -> Vec<u8> {
    let c = match codec {
        "null" => apache_avro::Codec::Null,
        "deflate" => apache_avro::Codec::Deflate(Default::default()),
        "snappy" => apache_avro::Codec::Snappy,
        "zstandard" => apache_avro::Codec::Zstandard(Default::default()),
        "bzip2" => apache_avro::Codec::Bzip2(Default::default()),
        _ => apache_avro::Codec::Xz(Default::default()),
    };
    let mut out = data.to_vec();
    c.compress(&mut out).unwrap();
    out
}

fn longs(values: std::ops::Range<i64>) -> Vec<u8> {
    let mut d = Vec::new();
    for v in values {
        long(&mut d, v);
    }
    d
}

#[test]
fn a_block_size_that_swallows_the_next_block_is_an_error() {
    // Block 0's byte size covers its data, its sync marker and all of block 1, ending just
    // before block 1's marker: the framing checks pass, so only the codec (or, uncompressed,
    // the decoder) can tell that block 0's data ends early. Block 1's rows must never vanish
    // quietly: every codec, every source, one thread and several.
    for codec in ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"] {
        let (c0, c1, c2) = (
            compressed(codec, &longs(0..10)),
            compressed(codec, &longs(10..15)),
            compressed(codec, &longs(15..18)),
        );
        let mut framing1 = Vec::new();
        long(&mut framing1, 5);
        long(&mut framing1, c1.len() as i64);
        let swallowed = c0.len() + SYNC.len() + framing1.len() + c1.len();
        let mut f = header_with(&[
            ("avro.schema", long_rec().as_bytes()),
            ("avro.codec", codec.as_bytes()),
        ]);
        long(&mut f, 10);
        long(&mut f, swallowed as i64);
        for part in [&c0[..], &SYNC, &framing1, &c1, &SYNC] {
            f.extend_from_slice(part);
        }
        f.extend_from_slice(&block(3, &c2));
        for src in [Src::Bytes, Src::Stream, Src::Path] {
            for threads in [1, 2] {
                let what = format!("{codec} via {src:?}, {threads} threads");
                let opts = Opts {
                    src,
                    threads: Some(threads),
                    ..Opts::batch(4)
                };
                let msg = expect_err_with(&what, &f, &["block 0"], &opts);
                if codec == "deflate" {
                    assert!(msg.contains("size is wrong"), "{what}: {msg}");
                }
            }
        }
    }
}

#[test]
fn deflate_blocks_with_python_writers_checksum_bytes_read() {
    // fastavro and Apache's Python writer store `zlib.compress(data)[2:-1]`: the raw stream
    // followed by 3 bytes of zlib's checksum, which are not an error.
    use std::io::Write;
    let blocks: Vec<Vec<u8>> = [0..100, 100..150]
        .into_iter()
        .map(|r| {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&longs(r)).unwrap();
            let z = e.finish().unwrap();
            z[2..z.len() - 1].to_vec()
        })
        .collect();
    let mut f = header_with(&[
        ("avro.schema", long_rec().as_bytes()),
        ("avro.codec", b"deflate"),
    ]);
    f.extend_from_slice(&block(100, &blocks[0]));
    f.extend_from_slice(&block(50, &blocks[1]));
    for src in [Src::Bytes, Src::Stream, Src::Path] {
        let opts = Opts {
            src,
            ..Opts::batch(64)
        };
        let d = read_avrow(&f, &opts).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(d.num_rows(), 150, "{src:?}");
    }
}
