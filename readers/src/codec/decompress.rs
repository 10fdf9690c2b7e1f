//! The decompressor a worker reuses block after block, and the streaming pieces of a block
//! checked as it streams.

use super::{
    snappy_max_output, zstd_eager_size, Codec, DecompressError, DEFLATE_TRAILING_SLACK, XZ_MEMLIMIT,
};
use crate::libdeflate::{Inflated, Libdeflate};
use std::io::Read;

/// The most bytes one of [`Pieces`] holds.
pub(crate) const PIECE: usize = 256 << 10;

/// A block's data decompressed as a stream, in pieces of at most [`PIECE`] bytes, for checking a block
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
        let room = (self.limit - self.total.min(self.limit) + 1).min(PIECE);
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

    /// The bytes the pieces have held so far: once they are all read, the block's size.
    pub(crate) fn total(&self) -> usize {
        self.total
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

/// Per-worker decompression state, reused across blocks. Each codec's state is made on its
/// first block: a reader opens one a worker, and a small uncompressed file (one of thousands
/// a query reads) should not pay for inflate tables it never uses.
pub(crate) struct Decompressor {
    /// libdeflate's tables: `Unmade` until the first deflate block, `Missing` if they could
    /// not be allocated (zlib-rs inflates every block then).
    pub(super) libdeflate: Tables,
    /// The output size of the last deflate block: the next block of a file is likely alike.
    pub(super) last_inflated: usize,
    pub(super) inflate: Option<flate2::Decompress>,
    pub(super) zstd: Option<zstd::bulk::Decompressor<'static>>,
    /// The output size of the last zstd block.
    pub(super) last_zstd: usize,
    /// The exact output size of the block being decompressed, where a streaming check has
    /// measured it ([`Decompressor::decompress_sized`]): the output is then made once, in
    /// room of that size.
    pub(super) known: Option<usize>,
}

impl Default for Decompressor {
    fn default() -> Self {
        Decompressor {
            libdeflate: Tables::Unmade,
            last_inflated: 0,
            inflate: None,
            zstd: None,
            last_zstd: 0,
            known: None,
        }
    }
}

/// libdeflate's state in a [`Decompressor`].
pub(super) enum Tables {
    Unmade,
    Made(Libdeflate),
    Missing,
}

impl Tables {
    /// The tables, made on the first call.
    fn get(&mut self) -> Option<&mut Libdeflate> {
        if let Tables::Unmade = self {
            *self = Libdeflate::new().map_or(Tables::Missing, Tables::Made);
        }
        match self {
            Tables::Made(tables) => Some(tables),
            _ => None,
        }
    }
}

impl Decompressor {
    /// Decompress a block that is known to decompress to `size` bytes (its pieces were
    /// counted as they streamed) as [`Decompressor::decompress`] does, in one pass into room of
    /// that size rather than room guessed and grown.
    pub(crate) fn decompress_sized(
        &mut self,
        codec: Codec,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
        size: usize,
    ) -> Result<(), DecompressError> {
        self.known = Some(size);
        let result = self.decompress(codec, input, out, limit);
        self.known = None;
        result
    }

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
            Codec::Bzip2 => read_all(
                bzip2::read::MultiBzDecoder::new(input),
                out,
                limit,
                self.room_for(64 << 10, limit),
            ),
            Codec::Xz => read_all(
                liblzma::read::XzDecoder::new_stream(input, xz_stream()?),
                out,
                limit,
                self.room_for(64 << 10, limit),
            ),
        }
    }

    /// Inflate with libdeflate, which needs room for the whole block's output: first the
    /// block's size where it is known, else a quarter more than the last block's output (at
    /// least 4 times the input), then four times as much, never more than `limit`. The room
    /// is reserved, not zeroed, so only the pages the output fills are touched. A block
    /// larger than that, and data libdeflate rejects, are inflated by zlib-rs, whose output
    /// grows in chunks as bytes are produced (a bomb touches no more than it produces) and
    /// which says what is wrong with bad data.
    fn libdeflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), DecompressError> {
        let Some(libdeflate) = self.libdeflate.get() else {
            out.clear();
            self.inflate(input, out, limit)?;
            self.last_inflated = out.len();
            return Ok(());
        };
        let last = self.last_inflated;
        let first = match self.known {
            Some(size) => size,
            None => (last + last / 4)
                .max(input.len().saturating_mul(4))
                .max(4096),
        }
        .min(limit);
        let second = first.saturating_mul(4).min(limit);
        // The second size only where it is larger: the same room would fail the same way.
        for size in [Some(first), (second > first).then_some(second)]
            .into_iter()
            .flatten()
        {
            match libdeflate.inflate(input, out, size) {
                Inflated::Done { used, produced } => {
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

    /// The room to reserve before a streaming decoder's first byte: one byte more than the
    /// known size (the decoder's last read, which finds the end, then needs no new chunk),
    /// else `guess`; at least 4 KiB, never much beyond `limit`.
    fn room_for(&self, guess: usize, limit: usize) -> usize {
        match self.known {
            Some(size) => size.min(limit).saturating_add(1),
            None => guess.clamp(4096, limit.max(4096)),
        }
    }

    pub(super) fn inflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), DecompressError> {
        use flate2::{FlushDecompress, Status};
        out.reserve(self.room_for(input.len().saturating_mul(4), limit));
        let inflate = self
            .inflate
            .get_or_insert_with(|| flate2::Decompress::new(false));
        inflate.reset(false);
        let mut growth = Growth::new(out, limit);
        loop {
            let consumed = inflate.total_in() as usize;
            let buf = growth.room()?;
            let produced = buf.len();
            let status = inflate
                .decompress_vec(&input[consumed..], buf, FlushDecompress::Finish)
                .map_err(|e| DecompressError::Corrupt(e.to_string()))?;
            let written = buf.len() - produced;
            let full = buf.len() == buf.capacity();
            growth.wrote(written);
            let progressed = inflate.total_in() as usize != consumed || written > 0;
            match status {
                Status::StreamEnd => {
                    growth.finish()?;
                    return check_trailing(inflate.total_in() as usize, input.len());
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
        // Room for the output of a one-pass decode: the size a streaming check measured; a
        // declared size as far as the buffer already reaches or the input could plausibly
        // expand; without one (Avro writers rarely declare it), a quarter more than the last
        // block gave, at least twice the input, as far as the input could plausibly expand.
        // Anything larger, several frames and bad data are decoded by the streaming path,
        // whose buffer grows only as the frame produces bytes.
        let plausible = zstd_eager_size(input.len()).max(out.capacity() as u64);
        let room = match (self.known, declared) {
            (Some(size), _) => Some(size.min(limit) as u64),
            (None, Some(size)) => (size <= plausible).then_some(size),
            (None, None) => {
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
        read_all(decoder, out, limit, self.room_for(64 << 10, limit))?;
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
/// `room` is reserved first.
fn read_all(
    mut reader: impl Read,
    out: &mut Vec<u8>,
    limit: usize,
    room: usize,
) -> Result<(), DecompressError> {
    out.reserve(room);
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
