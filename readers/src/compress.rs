//! Block compression, for the writer: one [`Compressor`] per thread, its contexts (libdeflate,
//! zstd) kept from block to block; the levels each codec takes.

use crate::codec::Codec;

impl Codec {
    /// The compression levels `codec` accepts (`None` where it has none) and its default.
    pub fn levels(self) -> Option<(std::ops::RangeInclusive<i32>, i32)> {
        match self {
            Codec::Null | Codec::Snappy => None,
            Codec::Deflate => Some((0..=12, 6)),
            Codec::Zstandard => Some((-7..=22, 3)),
            Codec::Bzip2 => Some((1..=9, 9)),
            Codec::Xz => Some((0..=9, 6)),
        }
    }
}

/// Per-writer compression state, reused across blocks.
pub(crate) struct Compressor {
    codec: Codec,
    level: i32,
    deflate: Option<libdeflater::Compressor>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl Compressor {
    /// A compressor for `codec` at `level` (checked against [`Codec::levels`] by the caller).
    pub(crate) fn new(codec: Codec, level: Option<i32>) -> Self {
        let level = level.or(codec.levels().map(|(_, d)| d)).unwrap_or(0);
        Compressor {
            codec,
            level,
            deflate: None,
            zstd: None,
        }
    }

    /// Whether blocks are stored as they are.
    pub(crate) fn is_null(&self) -> bool {
        self.codec == Codec::Null
    }

    /// Compress one block's data into `out` (cleared first).
    pub(crate) fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        use std::io::Write;
        out.clear();
        let other = |e: String| std::io::Error::other(e);
        match self.codec {
            Codec::Null => out.extend_from_slice(input),
            Codec::Deflate => {
                let level = self.level;
                let c = self.deflate.get_or_insert_with(|| {
                    libdeflater::Compressor::new(
                        libdeflater::CompressionLvl::new(level).unwrap_or_default(),
                    )
                });
                out.resize(c.deflate_compress_bound(input.len()), 0);
                let n = c
                    .deflate_compress(input, out)
                    .map_err(|e| other(format!("deflate: {e:?}")))?;
                out.truncate(n);
            }
            Codec::Snappy => {
                out.resize(snap::raw::max_compress_len(input.len()), 0);
                let n = snap::raw::Encoder::new()
                    .compress(input, out)
                    .map_err(|e| other(format!("snappy: {e}")))?;
                out.truncate(n);
                out.extend_from_slice(&crc32fast::hash(input).to_be_bytes());
            }
            Codec::Zstandard => {
                let c = match &mut self.zstd {
                    Some(c) => c,
                    None => {
                        let mut c = zstd::bulk::Compressor::new(self.level)?;
                        // Each frame ends with a checksum of its content (4 bytes a block), so
                        // that a damaged block is an error, not other rows: Avro's zstandard
                        // codec has no check of its own (snappy's has a CRC-32), and readers
                        // verify it where present.
                        c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
                        self.zstd.insert(c)
                    }
                };
                out.reserve(zstd::zstd_safe::compress_bound(input.len()));
                c.compress_to_buffer(input, out)?;
            }
            Codec::Bzip2 => {
                let level = bzip2::Compression::new(self.level.clamp(1, 9) as u32);
                let mut e = bzip2::write::BzEncoder::new(std::mem::take(out), level);
                e.write_all(input)?;
                *out = e.finish()?;
            }
            Codec::Xz => {
                let mut e = liblzma::write::XzEncoder::new(
                    std::mem::take(out),
                    self.level.clamp(0, 9) as u32,
                );
                e.write_all(input)?;
                *out = e.finish()?;
            }
        }
        Ok(())
    }
}
