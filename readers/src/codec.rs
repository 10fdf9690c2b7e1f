//! Block compression codecs. Each is the fastest well-kept Rust-usable library for its format
//! (see docs/architecture.md): zlib-rs through flate2 for deflate, snap for snappy (plus the
//! Avro CRC-32 check with crc32fast), libzstd through zstd, libbz2-rs through bzip2, liblzma
//! through liblzma. Decompression writes into a caller-owned buffer that is reused block after
//! block.

use std::fmt;
use std::io::Read;

/// An Avro block codec (`avro.codec` in the file header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// No compression.
    Null,
    /// Raw deflate (RFC 1951).
    Deflate,
    /// Snappy, followed by the big-endian CRC-32 of the uncompressed data.
    Snappy,
    /// Zstandard.
    Zstandard,
    /// bzip2.
    Bzip2,
    /// xz (LZMA2).
    Xz,
}

impl Codec {
    /// All codecs.
    pub const ALL: [Codec; 6] = [
        Codec::Null,
        Codec::Deflate,
        Codec::Snappy,
        Codec::Zstandard,
        Codec::Bzip2,
        Codec::Xz,
    ];

    /// The codec's name as written in `avro.codec`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstandard => "zstandard",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
        }
    }

    /// The codec for an `avro.codec` value.
    pub fn from_name(name: &str) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Per-worker decompression state, reused across blocks.
pub(crate) struct Decompressor {
    inflate: flate2::Decompress,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl Default for Decompressor {
    fn default() -> Self {
        Decompressor {
            inflate: flate2::Decompress::new(false),
            zstd: None,
        }
    }
}

impl Decompressor {
    /// Decompress one block into `out` (cleared first), refusing to produce more than `limit`
    /// bytes.
    pub(crate) fn decompress(
        &mut self,
        codec: Codec,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), String> {
        out.clear();
        match codec {
            Codec::Null => {
                check_limit(input.len(), limit)?;
                out.extend_from_slice(input);
                Ok(())
            }
            Codec::Deflate => self.inflate(input, out, limit),
            Codec::Snappy => snappy(input, out, limit),
            Codec::Zstandard => self.zstd(input, out, limit),
            Codec::Bzip2 => read_all(bzip2::read::MultiBzDecoder::new(input), out, limit, "bzip2"),
            Codec::Xz => read_all(
                liblzma::read::XzDecoder::new_multi_decoder(input),
                out,
                limit,
                "xz",
            ),
        }
    }

    fn inflate(&mut self, input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), String> {
        use flate2::{FlushDecompress, Status};
        self.inflate.reset(false);
        out.reserve(input.len().saturating_mul(4).clamp(4096, limit.max(4096)));
        loop {
            if out.len() == out.capacity() {
                check_limit(out.len() + 1, limit)?;
                let grow = out.len().max(4096).min(limit - out.len());
                out.reserve(grow);
            }
            let consumed = self.inflate.total_in() as usize;
            let produced = out.len();
            let status = self
                .inflate
                .decompress_vec(&input[consumed..], out, FlushDecompress::Finish)
                .map_err(|e| format!("deflate data is corrupt: {e}"))?;
            match status {
                Status::StreamEnd => return Ok(()),
                Status::Ok | Status::BufError => {
                    let progressed =
                        self.inflate.total_in() as usize != consumed || out.len() != produced;
                    if !progressed && out.len() < out.capacity() {
                        return Err("deflate data ends before the end of its stream".to_string());
                    }
                }
            }
        }
    }

    fn zstd(&mut self, input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), String> {
        if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(input) {
            if size <= limit as u64 {
                out.reserve(size as usize);
                let dctx = match &mut self.zstd {
                    Some(d) => d,
                    None => self
                        .zstd
                        .insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
                };
                if dctx.decompress_to_buffer(input, out).is_ok() {
                    return Ok(());
                }
                // Several frames, or a wrong declared size: fall back to streaming.
                out.clear();
            }
        }
        let decoder =
            zstd::stream::read::Decoder::with_buffer(input).map_err(|e| format!("zstd: {e}"))?;
        read_all(decoder, out, limit, "zstandard")
    }
}

fn check_limit(size: usize, limit: usize) -> Result<(), String> {
    if size > limit {
        return Err(format!(
            "decompressed block exceeds the limit of {limit} bytes (raise it with with_max_block_size)"
        ));
    }
    Ok(())
}

fn snappy(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), String> {
    let Some(split) = input.len().checked_sub(4) else {
        return Err("snappy block shorter than its 4-byte checksum".to_string());
    };
    let (data, crc) = input.split_at(split);
    let len =
        snap::raw::decompress_len(data).map_err(|e| format!("snappy data is corrupt: {e}"))?;
    check_limit(len, limit)?;
    out.resize(len, 0);
    let n = snap::raw::Decoder::new()
        .decompress(data, out)
        .map_err(|e| format!("snappy data is corrupt: {e}"))?;
    out.truncate(n);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let actual = crc32fast::hash(out);
    if expected != actual {
        return Err(format!(
            "snappy checksum mismatch: the block says {expected:#010x}, the data gives {actual:#010x}"
        ));
    }
    Ok(())
}

fn read_all(reader: impl Read, out: &mut Vec<u8>, limit: usize, name: &str) -> Result<(), String> {
    let mut limited = reader.take(limit as u64 + 1);
    limited
        .read_to_end(out)
        .map_err(|e| format!("{name} data is corrupt: {e}"))?;
    check_limit(out.len(), limit)
}

#[cfg(test)]
mod tests {
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
            assert!(err.contains("exceeds the limit"), "{codec}: {err}");
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
        assert!(err.contains("checksum"), "{err}");
    }
}
