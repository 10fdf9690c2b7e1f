//! Block codecs and decompression (compression for the writer: `compress.rs`). Each is the
//! fastest well-kept Rust-usable library for its format
//! (see docs/architecture.md): libdeflate for deflate (a whole-buffer inflate; zlib-rs through
//! flate2 names the errors and streams what is checked as it streams), snap for snappy (plus the
//! Avro CRC-32 check with crc32fast), libzstd through zstd, libbz2-rs through bzip2, liblzma
//! through liblzma. Decompression writes into a caller-owned buffer that is reused block after
//! block.
//!
//! Sizes that compressed data declares about itself (snappy's length preamble, a zstd frame's
//! content size, an xz dictionary) are hints, never allocation orders: output buffers grow as
//! bytes are actually produced, a declared size is believed only as far as the compressed
//! bytes present could produce it, and every codec stops at the caller's limit.

use std::fmt;
use std::io::Read;

use crate::libdeflate::{Inflated, Libdeflate};

/// An Avro block codec (`avro.codec` in the file header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

/// Why a block's data did not decompress.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecompressError {
    /// The compression library rejected the data (its message).
    Corrupt(String),
    /// The compressed data ends before its stream does.
    Truncated,
    /// A snappy block shorter than its 4-byte CRC-32.
    MissingChecksum,
    /// The snappy CRC-32 of the decompressed data is not the one the block holds.
    ChecksumMismatch {
        /// The checksum stored in the block.
        expected: u32,
        /// The checksum of the decompressed data.
        actual: u32,
    },
    /// The data declares an uncompressed size that its compressed bytes cannot produce.
    ImplausibleSize {
        /// The declared size.
        declared: u64,
        /// The most the compressed bytes present can decompress to.
        max: u64,
    },
    /// The data decompresses (or declares that it decompresses) to more than the limit.
    OverLimit {
        /// The limit in bytes (`ReaderBuilder::with_max_block_size`).
        limit: usize,
    },
    /// The xz data needs more decoder memory (its dictionary) than avrow grants.
    DecoderMemory {
        /// The decoder memory limit in bytes.
        limit: u64,
    },
    /// The deflate stream ends before the block does, by more than the few bytes some
    /// writers leave there: the block's byte size says more than its data holds (a size that
    /// lies this way can swallow the blocks after it).
    TrailingData {
        /// The compressed bytes the stream used.
        used: usize,
        /// The block's compressed bytes.
        len: usize,
    },
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecompressError::Corrupt(m) => write!(f, "the data is corrupt: {m}"),
            DecompressError::Truncated => f.write_str("the data ends before the end of its stream"),
            DecompressError::MissingChecksum => {
                f.write_str("snappy block shorter than its 4-byte checksum")
            }
            DecompressError::ChecksumMismatch { expected, actual } => write!(
                f,
                "snappy checksum mismatch: the block says {expected:#010x}, the data gives {actual:#010x}"
            ),
            DecompressError::ImplausibleSize { declared, max } => write!(
                f,
                "the data declares {declared} uncompressed bytes, but its compressed bytes can hold at most {max}"
            ),
            DecompressError::OverLimit { limit } => write!(
                f,
                "decompressed block exceeds the limit of {limit} bytes (raise it with with_max_block_size)"
            ),
            DecompressError::DecoderMemory { limit } => write!(
                f,
                "the xz data needs more than {limit} bytes of decoder memory (its dictionary)"
            ),
            DecompressError::TrailingData { used, len } => write!(
                f,
                "the deflate stream ends after {used} of the block's {len} bytes: the block's size is wrong"
            ),
        }
    }
}

impl std::error::Error for DecompressError {}

/// Bytes a deflate block may hold after its stream ends. fastavro and Apache's Python writer
/// store `zlib.compress(data)[2:-1]`: the raw stream and the first 3 bytes of zlib's 4-byte
/// checksum. More is a wrong block size: swallowing even one following block takes its
/// 16-byte sync marker and two varints.
const DEFLATE_TRAILING_SLACK: usize = 4;

/// The most decoder memory an xz block may ask for. xz's strongest preset (`-9`) uses a
/// 64 MiB dictionary; Avro writers use the default (8 MiB).
pub(crate) const XZ_MEMLIMIT: u64 = 256 << 20;

/// The most output a snappy stream of `n` bytes can describe: its densest element is a
/// 3-byte copy of 64 bytes.
fn snappy_max_output(n: usize) -> u64 {
    (n as u64 / 3 + 1) * 64
}

/// The largest zstd frame content size believed before any output exists, beyond the
/// capacity the buffer already has: more than this grows as the frame is decoded.
fn zstd_eager_size(input_len: usize) -> u64 {
    (input_len as u64).saturating_mul(32).max(4 << 20)
}

/// The most a block may decompress to before its data is checked as it streams
/// ([`RecordDecoder::check_stream`](avrow_engine::RecordDecoder::check_stream)) rather than
/// held whole: 16 MiB, or 16 times its compressed size. `None` where the codec cannot expand
/// beyond that much more than the bytes present (null; snappy: at most ~21×, bounded before
/// it allocates).
pub(crate) fn expansion_cap(codec: Codec, input_len: usize) -> Option<usize> {
    match codec {
        Codec::Null | Codec::Snappy => None,
        Codec::Deflate | Codec::Zstandard | Codec::Bzip2 | Codec::Xz => {
            Some(input_len.saturating_mul(16).max(16 << 20))
        }
    }
}

/// The bytes a window of [`RecordDecoder::check_stream`](avrow_engine::RecordDecoder::check_stream)
/// holds while it checks a block that expands past [`expansion_cap`].
pub(crate) const CHECK_WINDOW: usize = 8 << 20;

/// A block's data decompressed as a stream, in pieces of at most 256 KiB, for checking a block
/// that expands past [`expansion_cap`]. Never more than `limit` bytes in all.
pub(crate) struct Pieces<'a> {
    reader: Box<dyn Read + 'a>,
    total: usize,
    limit: usize,
}

impl<'a> Pieces<'a> {
    /// The pieces of `input` under `codec` (null and snappy are not streamed: see
    /// [`expansion_cap`]).
    pub(crate) fn new(
        codec: Codec,
        input: &'a [u8],
        limit: usize,
    ) -> Result<Self, DecompressError> {
        let reader: Box<dyn Read + 'a> = match codec {
            Codec::Null | Codec::Snappy => Box::new(input),
            Codec::Deflate => Box::new(flate2::read::DeflateDecoder::new(input)),
            Codec::Zstandard => Box::new(
                zstd::stream::read::Decoder::with_buffer(input)
                    .map_err(|e| DecompressError::Corrupt(e.to_string()))?,
            ),
            Codec::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(input)),
            Codec::Xz => Box::new(liblzma::read::XzDecoder::new_stream(input, xz_stream()?)),
        };
        Ok(Pieces {
            reader,
            total: 0,
            limit,
        })
    }

    /// Append the next piece to `out`; its length, 0 at the end.
    pub(crate) fn next_into(&mut self, out: &mut Vec<u8>) -> Result<usize, DecompressError> {
        // One byte more than the limit allows, to find out whether there is more.
        let room = (self.limit - self.total.min(self.limit) + 1).min(256 << 10);
        let n = (&mut self.reader)
            .take(room as u64)
            .read_to_end(out)
            .map_err(io_error)?;
        self.total += n;
        if self.total > self.limit {
            return Err(DecompressError::OverLimit { limit: self.limit });
        }
        Ok(n)
    }
}

fn xz_stream() -> Result<liblzma::stream::Stream, DecompressError> {
    liblzma::stream::Stream::new_stream_decoder(XZ_MEMLIMIT, liblzma::stream::CONCATENATED)
        .map_err(|e| DecompressError::Corrupt(e.to_string()))
}

/// A decoder's I/O error as a decompression error.
fn io_error(e: std::io::Error) -> DecompressError {
    let memory = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<liblzma::stream::Error>())
        .is_some_and(|inner| matches!(inner, liblzma::stream::Error::MemLimit));
    if memory {
        DecompressError::DecoderMemory { limit: XZ_MEMLIMIT }
    } else if e.kind() == std::io::ErrorKind::UnexpectedEof {
        DecompressError::Truncated
    } else {
        DecompressError::Corrupt(e.to_string())
    }
}

/// Per-worker decompression state, reused across blocks.
pub(crate) struct Decompressor {
    /// `None` only if libdeflate could not allocate its tables: zlib-rs inflates every block.
    libdeflate: Option<Libdeflate>,
    /// The output size of the last deflate block: the next block of a file is likely alike.
    last_inflated: usize,
    inflate: flate2::Decompress,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    /// The output size of the last zstd block.
    last_zstd: usize,
}

impl Default for Decompressor {
    fn default() -> Self {
        Decompressor {
            libdeflate: Libdeflate::new(),
            last_inflated: 0,
            inflate: flate2::Decompress::new(false),
            zstd: None,
            last_zstd: 0,
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
    ) -> Result<(), DecompressError> {
        if codec == Codec::Deflate {
            return self.libdeflate(input, out, limit);
        }
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
            Codec::Bzip2 => read_all(bzip2::read::MultiBzDecoder::new(input), out, limit),
            Codec::Xz => read_all(
                liblzma::read::XzDecoder::new_stream(input, xz_stream()?),
                out,
                limit,
            ),
        }
    }

    /// Inflate with libdeflate, which needs an output buffer large enough for the whole block:
    /// first a quarter more than the last block's output (at least 4 times the input), then
    /// four times as much, never more than `limit`. The buffer keeps its length from block to
    /// block, so only new bytes are zeroed. A block larger than that, and data libdeflate
    /// rejects, are inflated by zlib-rs, whose output grows in chunks as bytes are produced
    /// (a bomb touches no more than it produces) and which says what is wrong with bad data.
    fn libdeflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), DecompressError> {
        let Some(libdeflate) = self.libdeflate.as_mut() else {
            out.clear();
            self.inflate(input, out, limit)?;
            self.last_inflated = out.len();
            return Ok(());
        };
        let last = self.last_inflated;
        let first = (last + last / 4)
            .max(input.len().saturating_mul(4))
            .max(4096)
            .min(limit);
        for size in [first, first.saturating_mul(4).min(limit)] {
            if out.len() < size {
                out.resize(size, 0);
            }
            match libdeflate.inflate(input, &mut out[..size]) {
                Inflated::Done { used, produced } => {
                    out.truncate(produced);
                    self.last_inflated = produced;
                    return check_trailing(used, input.len());
                }
                Inflated::NoSpace if size < limit => {}
                Inflated::NoSpace => {
                    out.clear();
                    return Err(DecompressError::OverLimit { limit });
                }
                Inflated::BadData => break,
            }
        }
        out.clear();
        self.inflate(input, out, limit)?;
        self.last_inflated = out.len();
        Ok(())
    }

    fn inflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), DecompressError> {
        use flate2::{FlushDecompress, Status};
        self.inflate.reset(false);
        out.reserve(input.len().saturating_mul(4).clamp(4096, limit.max(4096)));
        let mut growth = Growth::new(out, limit);
        loop {
            let consumed = self.inflate.total_in() as usize;
            let buf = growth.room()?;
            let produced = buf.len();
            let status = self
                .inflate
                .decompress_vec(&input[consumed..], buf, FlushDecompress::Finish)
                .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
            let written = buf.len() - produced;
            let full = buf.len() == buf.capacity();
            growth.wrote(written);
            let progressed = self.inflate.total_in() as usize != consumed || written > 0;
            match status {
                Status::StreamEnd => {
                    growth.finish()?;
                    return check_trailing(self.inflate.total_in() as usize, input.len());
                }
                Status::Ok | Status::BufError => {
                    if !progressed && !full {
                        return Err(DecompressError::Truncated);
                    }
                }
            }
        }
    }

    fn zstd(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), DecompressError> {
        let declared = match zstd::zstd_safe::get_frame_content_size(input) {
            Ok(Some(size)) if size > limit as u64 => {
                return Err(DecompressError::OverLimit { limit });
            }
            Ok(Some(size)) => Some(size),
            _ => None,
        };
        // Room for the output of a one-pass decode: a declared size as far as the buffer
        // already reaches or the input could plausibly expand; without one (Avro writers
        // rarely declare it), a quarter more than the last block gave, at least twice the
        // input, as far as the input could plausibly expand. Anything larger, several frames
        // and bad data are decoded by the streaming path, whose buffer grows only as the frame
        // produces bytes.
        let plausible = zstd_eager_size(input.len()).max(out.capacity() as u64);
        let room = match declared {
            Some(size) => (size <= plausible).then_some(size),
            None => {
                let last = self.last_zstd as u64;
                let guess = (last + last / 4).max(input.len() as u64 * 2);
                Some(guess.min(plausible).min(limit as u64))
            }
        };
        if let Some(room) = room {
            out.reserve(room as usize);
            let dctx = match &mut self.zstd {
                Some(d) => d,
                None => self.zstd.insert(
                    zstd::bulk::Decompressor::new()
                        .map_err(|e| DecompressError::Corrupt(e.to_string()))?,
                ),
            };
            // The buffer may hold more than `limit` (a larger earlier block): checked after.
            if dctx.decompress_to_buffer(input, out).is_ok() && out.len() <= limit {
                self.last_zstd = out.len();
                return Ok(());
            }
            out.clear();
        }
        let decoder = zstd::stream::read::Decoder::with_buffer(input)
            .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
        read_all(decoder, out, limit)?;
        self.last_zstd = out.len();
        Ok(())
    }
}

/// A deflate stream that used `used` of the block's `len` bytes: more than
/// [`DEFLATE_TRAILING_SLACK`] left over is an error.
fn check_trailing(used: usize, len: usize) -> Result<(), DecompressError> {
    if len.saturating_sub(used) > DEFLATE_TRAILING_SLACK {
        return Err(DecompressError::TrailingData { used, len });
    }
    Ok(())
}

fn check_limit(size: usize, limit: usize) -> Result<(), DecompressError> {
    if size > limit {
        return Err(DecompressError::OverLimit { limit });
    }
    Ok(())
}

fn snappy(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), DecompressError> {
    let Some(split) = input.len().checked_sub(4) else {
        return Err(DecompressError::MissingChecksum);
    };
    let (data, crc) = input.split_at(split);
    let len =
        snap::raw::decompress_len(data).map_err(|e| DecompressError::Corrupt(e.to_string()))?;
    let max = snappy_max_output(data.len());
    if len as u64 > max {
        return Err(DecompressError::ImplausibleSize {
            declared: len as u64,
            max,
        });
    }
    check_limit(len, limit)?;
    out.resize(len, 0);
    let n = snap::raw::Decoder::new()
        .decompress(data, out)
        .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
    out.truncate(n);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let actual = crc32fast::hash(out);
    if expected != actual {
        return Err(DecompressError::ChecksumMismatch { expected, actual });
    }
    Ok(())
}

/// Read a decoder to its end into `out`, which grows as bytes arrive, stopping past `limit`.
fn read_all(mut reader: impl Read, out: &mut Vec<u8>, limit: usize) -> Result<(), DecompressError> {
    out.reserve(64 << 10);
    let mut growth = Growth::new(out, limit);
    loop {
        let buf = growth.room()?;
        let before = buf.len();
        let room = (buf.capacity() - before) as u64;
        // Reads into the spare capacity, never past it (the probe at a full buffer is a
        // read of the exhausted `Take`).
        let n = (&mut reader)
            .take(room)
            .read_to_end(buf)
            .map_err(io_error)?;
        growth.wrote(n);
        if (n as u64) < room {
            return growth.finish();
        }
    }
}

/// An output that grows as a decoder produces bytes, in chunks rather than by reallocating
/// (an allocator such as mimalloc keeps the pages of freed buffers resident for a while, so
/// doubling one buffer would hold about twice its size): first the caller's reused buffer,
/// then chunks as large as everything so far, joined once at the end. Never more than `limit`
/// bytes; the first byte past it is an error.
struct Growth<'a> {
    out: &'a mut Vec<u8>,
    chunks: Vec<Vec<u8>>,
    total: usize,
    limit: usize,
}

impl<'a> Growth<'a> {
    fn new(out: &'a mut Vec<u8>, limit: usize) -> Self {
        let total = out.len();
        Growth {
            out,
            chunks: Vec::new(),
            total,
            limit,
        }
    }

    fn current(&mut self) -> &mut Vec<u8> {
        match self.chunks.last_mut() {
            Some(chunk) => chunk,
            None => self.out,
        }
    }

    /// A buffer with spare capacity to decode into: the current one, or a new chunk. Past
    /// the limit, an error.
    fn room(&mut self) -> Result<&mut Vec<u8>, DecompressError> {
        let full = {
            let current = self.current();
            current.len() == current.capacity()
        };
        if full {
            if self.total >= self.limit {
                // The decoder has more to give only if it writes again: allow one byte
                // beyond the limit to find out.
                if self.total > self.limit {
                    return Err(DecompressError::OverLimit { limit: self.limit });
                }
                self.chunks.push(Vec::with_capacity(1));
            } else {
                let size = self.total.max(64 << 10).min(self.limit - self.total);
                self.chunks.push(Vec::with_capacity(size));
            }
        }
        Ok(self.current())
    }

    /// The decoder appended `n` bytes to the buffer [`Growth::room`] gave.
    fn wrote(&mut self, n: usize) {
        self.total += n;
    }

    /// Join the chunks into the caller's buffer.
    fn finish(self) -> Result<(), DecompressError> {
        check_limit(self.total, self.limit)?;
        if self.chunks.is_empty() {
            return Ok(());
        }
        let mut whole = Vec::with_capacity(self.total);
        whole.extend_from_slice(self.out);
        for chunk in &self.chunks {
            whole.extend_from_slice(chunk);
        }
        drop(self.chunks);
        *self.out = whole;
        Ok(())
    }
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
            type Inflate =
                fn(&mut Decompressor, &[u8], &mut Vec<u8>) -> Result<(), DecompressError>;
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
            libdeflate: None,
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
        let result =
            Decompressor::default().decompress(Codec::Zstandard, &lying, &mut out, 1 << 30);
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
}
