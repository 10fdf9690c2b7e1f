//! Decompression of every codec: limits, bombs, trailing data, reuse of the buffer.

use super::decompress::*;
use super::*;
use std::io::Write;

fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::Null => data.to_vec(),
        Codec::Deflate => {
            let mut e =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Codec::Snappy => {
            let mut v = snap::raw::Encoder::new().compress_vec(data).unwrap();
            v.extend_from_slice(&crc32fast::hash(data).to_be_bytes());
            v
        }
        Codec::Zstandard => zstd::bulk::compress(data, 3).unwrap(),
        Codec::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Codec::Xz => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
    }
}

#[test]
fn round_trips_and_reuses_buffers() {
    let data: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect();
    let mut d = Decompressor::default();
    let mut out = Vec::new();
    for codec in Codec::ALL {
        for payload in [&data[..], &data[..10], &[][..]] {
            let compressed = compress(codec, payload);
            d.decompress(codec, &compressed, &mut out, usize::MAX / 2)
                .unwrap();
            assert_eq!(out, payload, "{codec}");
        }
    }
}

#[test]
fn enforces_the_size_limit() {
    let data = vec![7u8; 100_000];
    let mut d = Decompressor::default();
    let mut out = Vec::new();
    for codec in Codec::ALL {
        let compressed = compress(codec, &data);
        let err = d
            .decompress(codec, &compressed, &mut out, 1000)
            .unwrap_err();
        assert_eq!(err, DecompressError::OverLimit { limit: 1000 }, "{codec}");
    }
}

#[test]
fn the_limit_is_exact_for_every_codec() {
    // Output grows in chunks: a block of exactly the limit passes, one byte more fails,
    // with buffers that start empty or already large.
    let data: Vec<u8> = (0..300_001u32).map(|i| (i % 7 + i / 5000) as u8).collect();
    for codec in Codec::ALL {
        let compressed = compress(codec, &data);
        for start_capacity in [0, 10, 1 << 20] {
            let mut out = Vec::with_capacity(start_capacity);
            let mut d = Decompressor::default();
            d.decompress(codec, &compressed, &mut out, data.len())
                .unwrap_or_else(|e| panic!("{codec}: {e}"));
            assert!(out == data, "{codec} from capacity {start_capacity}");
            let err = d
                .decompress(codec, &compressed, &mut out, data.len() - 1)
                .unwrap_err();
            assert_eq!(
                err,
                DecompressError::OverLimit {
                    limit: data.len() - 1
                },
                "{codec}"
            );
        }
    }
}

#[test]
fn rejects_corrupt_data() {
    let data = vec![1u8; 10_000];
    let mut d = Decompressor::default();
    let mut out = Vec::new();
    for codec in [
        Codec::Deflate,
        Codec::Zstandard,
        Codec::Bzip2,
        Codec::Xz,
        Codec::Snappy,
    ] {
        let compressed = compress(codec, &data);
        let truncated = &compressed[..compressed.len() / 2];
        assert!(
            d.decompress(codec, truncated, &mut out, 1 << 20).is_err(),
            "{codec} truncated"
        );
    }
    let mut bad_crc = compress(Codec::Snappy, &data);
    let n = bad_crc.len();
    bad_crc[n - 1] ^= 1;
    let err = d
        .decompress(Codec::Snappy, &bad_crc, &mut out, 1 << 20)
        .unwrap_err();
    assert!(
        matches!(err, DecompressError::ChecksumMismatch { .. }),
        "{err}"
    );
}

#[test]
fn libdeflate_agrees_with_zlib_rs_as_blocks_grow_and_shrink() {
    // Blocks of changing sizes through one decompressor: the first guess (the last
    // block's size) is too small, right, or too large; a reference from zlib-rs alone.
    let mut d = Decompressor::default();
    let mut out = Vec::new();
    for (i, len) in [10usize, 70_000, 1_000, 5_000_000, 4_999_999, 0, 300_000]
        .into_iter()
        .enumerate()
    {
        let data: Vec<u8> = (0..len)
            .map(|j| ((j * 31 + i) % 253) as u8 ^ (j / 1000) as u8)
            .collect();
        let compressed = compress(Codec::Deflate, &data);
        d.decompress(Codec::Deflate, &compressed, &mut out, usize::MAX / 2)
            .unwrap();
        assert!(out == data, "block {i} of {len} bytes");
        let mut reference = Vec::new();
        Decompressor::default()
            .inflate(&compressed, &mut reference, usize::MAX / 2)
            .unwrap();
        assert!(reference == data, "zlib-rs, block {i}");
    }
    // A block that expands far more than its predecessors: past libdeflate's two tries,
    // zlib-rs; the next block then starts from its size.
    for _ in 0..2 {
        let zeros = vec![0u8; 10 << 20];
        let compressed = compress(Codec::Deflate, &zeros);
        assert!(compressed.len() < 100 << 10);
        d.decompress(Codec::Deflate, &compressed, &mut out, usize::MAX / 2)
            .unwrap();
        assert!(out == zeros);
        assert_eq!(d.last_inflated, 10 << 20);
    }
    // Truncated data: libdeflate only says "bad data"; zlib-rs says truncated.
    let compressed = compress(Codec::Deflate, &vec![5u8; 100_000]);
    let err = d
        .decompress(
            Codec::Deflate,
            &compressed[..compressed.len() - 1],
            &mut out,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err, DecompressError::Truncated);
    let mut garbage = compressed.clone();
    garbage[0] = 0xff;
    assert!(d
        .decompress(Codec::Deflate, &garbage, &mut out, 1 << 20)
        .is_err());
}

#[test]
fn bytes_after_the_deflate_stream_beyond_a_checksum_are_an_error() {
    // fastavro and Apache's Python writer leave 3 bytes of zlib's checksum after the raw
    // stream: read. A block size that swallows more (a sync marker, the next block) is
    // an error, from libdeflate and from zlib-rs (a block libdeflate rejects, or no
    // libdeflate), and the block's bytes are intact.
    let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    let stream = compress(Codec::Deflate, &data);
    for extra in [0usize, 1, 3, 4, 5, 16, 40_000] {
        let mut input = stream.clone();
        input.extend((0..extra).map(|i| (i * 7) as u8));
        type Inflate = fn(&mut Decompressor, &[u8], &mut Vec<u8>) -> Result<(), DecompressError>;
        let engines: [(&str, Inflate); 2] = [
            ("libdeflate", |d, i, o| {
                d.decompress(Codec::Deflate, i, o, 1 << 20)
            }),
            ("zlib-rs", |d, i, o| d.inflate(i, o, 1 << 20)),
        ];
        for (name, run) in engines {
            let mut out = Vec::new();
            let result = run(&mut Decompressor::default(), &input, &mut out);
            if extra <= DEFLATE_TRAILING_SLACK {
                result.unwrap_or_else(|e| panic!("{name}, {extra} bytes after: {e}"));
                assert!(out == data, "{name}, {extra} bytes after");
            } else {
                let err = result.expect_err(name);
                assert_eq!(
                    err,
                    DecompressError::TrailingData {
                        used: stream.len(),
                        len: input.len()
                    },
                    "{name}"
                );
                assert!(err.to_string().contains("size is wrong"), "{err}");
            }
        }
    }
    // Without libdeflate (its tables not allocated), zlib-rs does the same.
    let mut d = Decompressor {
        libdeflate: super::decompress::Tables::Missing,
        ..Decompressor::default()
    };
    let mut out = Vec::new();
    let mut input = stream.clone();
    input.extend_from_slice(&[0; 20]);
    assert!(matches!(
        d.decompress(Codec::Deflate, &input, &mut out, 1 << 20),
        Err(DecompressError::TrailingData { .. })
    ));
    d.decompress(Codec::Deflate, &stream, &mut out, 1 << 20)
        .unwrap();
    assert!(out == data);
}

#[test]
fn zstd_frames_without_a_content_size_decode_in_one_pass_or_stream() {
    // As Avro writers make them: no declared size, so the first pass guesses from the
    // last block; too small a guess falls back to the streaming path.
    let frame = |data: &[u8]| {
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        e.include_contentsize(false).unwrap();
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let mut d = Decompressor::default();
    let mut out = Vec::with_capacity(1 << 20);
    for (i, len) in [10usize, 70_000, 1_000, 3_000_000, 2_999_999, 0, 300_000]
        .into_iter()
        .enumerate()
    {
        let data: Vec<u8> = (0..len).map(|j| (j % 7 + j / 100_000) as u8).collect();
        let compressed = frame(&data);
        assert!(matches!(
            zstd::zstd_safe::get_frame_content_size(&compressed),
            Ok(None)
        ));
        d.decompress(Codec::Zstandard, &compressed, &mut out, usize::MAX / 2)
            .unwrap();
        assert!(out == data, "block {i} of {len} bytes");
        // The limit holds even where the buffer is larger than it.
        if len > 1 {
            let err = d
                .decompress(Codec::Zstandard, &compressed, &mut out, len - 1)
                .unwrap_err();
            assert_eq!(err, DecompressError::OverLimit { limit: len - 1 });
        }
    }
}

#[test]
fn a_lying_snappy_length_is_refused_before_allocating() {
    // 1 GiB declared (varint preamble), then a few bytes: no such output can come of them.
    let mut input = vec![0x80, 0x80, 0x80, 0x80, 0x04, 0x00, 0x61];
    input.extend_from_slice(&[0, 0, 0, 0]);
    let mut out = Vec::new();
    let err = Decompressor::default()
        .decompress(Codec::Snappy, &input, &mut out, usize::MAX / 2)
        .unwrap_err();
    assert!(
        matches!(err, DecompressError::ImplausibleSize { declared, .. } if declared == 1 << 30),
        "{err}"
    );
    assert_eq!(out.capacity(), 0);
    // The densest real stream is within the bound.
    let zeros = vec![0u8; 1 << 20];
    let compressed = compress(Codec::Snappy, &zeros);
    assert!(snappy_max_output(compressed.len() - 4) >= zeros.len() as u64);
}

#[test]
fn a_lying_zstd_content_size_does_not_reserve_it() {
    // A frame that declares 512 MiB but holds 100 bytes of data.
    let data = vec![5u8; 100];
    let mut frame = Vec::new();
    {
        let mut e = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
        e.set_pledged_src_size(Some(100)).unwrap();
        e.include_contentsize(true).unwrap();
        e.write_all(&data).unwrap();
        e.finish().unwrap();
    }
    // Frame header: magic (4), descriptor (1), then the content size. Rewrite it as an
    // 8-byte field holding 512 MiB.
    let descriptor = frame[4];
    assert_eq!(descriptor >> 6, 0, "single-byte content size expected");
    let single_segment = descriptor & 0x20 != 0;
    let header_end = 5 + usize::from(!single_segment) + 1;
    let mut lying = frame[..4].to_vec();
    lying.push((descriptor & 0x3f) | 0xc0);
    lying.extend_from_slice(&frame[5..5 + usize::from(!single_segment)]);
    lying.extend_from_slice(&(512u64 << 20).to_le_bytes());
    lying.extend_from_slice(&frame[header_end..]);
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&lying).unwrap(),
        Some(512 << 20)
    );
    let mut out = Vec::new();
    let result = Decompressor::default().decompress(Codec::Zstandard, &lying, &mut out, 1 << 30);
    assert!(
        out.capacity() < 8 << 20,
        "reserved {} bytes for a lie",
        out.capacity()
    );
    if result.is_ok() {
        assert_eq!(out, data);
    }
}

#[test]
fn an_xz_dictionary_beyond_the_memory_limit_is_refused() {
    let compressed = compress(Codec::Xz, b"some data to compress, a few times over");
    // Stream header (12 bytes), then the block header: size byte, flags, then the LZMA2
    // filter flags (id 0x21, one property byte: the dictionary size).
    let mut patched = compressed.clone();
    let header_len = (usize::from(patched[12]) + 1) * 4;
    let filter = (12..12 + header_len - 3)
        .find(|&i| patched[i] == 0x21 && patched[i + 1] == 0x01)
        .expect("LZMA2 filter flags");
    patched[filter + 2] = 40; // 4 GiB - 1, the largest dictionary
    let crc_at = 12 + header_len - 4;
    let crc = crc32fast::hash(&patched[12..crc_at]);
    patched[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    let mut out = Vec::new();
    let err = Decompressor::default()
        .decompress(Codec::Xz, &patched, &mut out, 1 << 30)
        .unwrap_err();
    assert_eq!(err, DecompressError::DecoderMemory { limit: XZ_MEMLIMIT });
}
