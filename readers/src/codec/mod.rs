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

//! `decompress.rs` holds the decompressor; this module the codec names, the error and the
//! limits both sides share.

mod decompress;
#[cfg(test)]
mod tests;

pub(crate) use decompress::{Decompressor, Pieces, PIECE};

use std::fmt;

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
                "decompressed block exceeds the limit of {limit} bytes (raise it: ReaderBuilder::with_max_block_size, max_block_size= in Python, --max-block-size in the CLI)"
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
