//! The Avro object container format: the header (magic, metadata, sync marker) and the framing
//! of data blocks (record count, byte size, data, sync marker). Parses from a byte slice (memory
//! maps, in-memory files) or from any `Read` (streams), never trusting a count or a size further
//! than the bytes actually present.

use crate::codec::Codec;
use crate::error::{BlockErrorKind, BlockPart, Error, HeaderErrorKind, HeaderPart, Result};
use avrow_engine::varint::{unzigzag64, VarintError};
use avrow_engine::Schema;
use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

/// The four bytes every Avro container file starts with.
pub const MAGIC: [u8; 4] = *b"Obj\x01";

/// The parsed header of an Avro container file.
#[derive(Debug, Clone)]
pub struct Header {
    metadata: HashMap<String, Vec<u8>>,
    codec: Codec,
    schema: Arc<Schema>,
    sync: [u8; 16],
    len: u64,
}

impl Header {
    /// All metadata entries (`avro.schema`, `avro.codec` and user entries). Values are bytes and
    /// need not be UTF-8.
    pub fn metadata(&self) -> &HashMap<String, Vec<u8>> {
        &self.metadata
    }

    /// One metadata value.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.metadata.get(key).map(Vec::as_slice)
    }

    /// The block codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// The writer schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The 16-byte sync marker that follows every block.
    pub fn sync(&self) -> [u8; 16] {
        self.sync
    }

    /// The header's length in bytes: the offset of the first block.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the header is empty (never: it holds at least the magic and the sync marker).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A `Read` that counts the bytes it has produced.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) offset: u64,
}

impl<R: Read> Counting<R> {
    pub(crate) fn new(inner: R, offset: u64) -> Self {
        Counting { inner, offset }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// Why reading a value from a stream failed.
pub(crate) enum ReadFail {
    /// Clean end of input before the first byte.
    Eof,
    /// Input ended inside the value.
    Truncated,
    /// A malformed varint.
    Overlong,
    Io(std::io::Error),
}

fn read_byte<R: Read>(r: &mut R) -> Result<Option<u8>, std::io::Error> {
    let mut b = [0u8; 1];
    loop {
        match r.read(&mut b) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(b[0])),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Read a zigzag long from a stream.
pub(crate) fn read_long<R: Read>(r: &mut R) -> Result<i64, ReadFail> {
    let mut value = 0u64;
    for i in 0..10 {
        let b = match read_byte(r) {
            Ok(Some(b)) => b,
            Ok(None) if i == 0 => return Err(ReadFail::Eof),
            Ok(None) => return Err(ReadFail::Truncated),
            Err(e) => return Err(ReadFail::Io(e)),
        };
        if i == 9 && b > 1 {
            return Err(ReadFail::Overlong);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok(unzigzag64(value));
        }
    }
    Err(ReadFail::Overlong)
}

/// Read exactly `n` bytes, allocating only as data arrives (a hostile `n` cannot reserve
/// memory the input does not back).
pub(crate) fn read_exact_bounded<R: Read>(
    r: &mut R,
    n: u64,
    out: &mut Vec<u8>,
) -> Result<(), ReadFail> {
    out.clear();
    if n <= 1 << 20 {
        out.reserve(n as usize);
    }
    match r.take(n).read_to_end(out) {
        Ok(got) if got as u64 == n => Ok(()),
        Ok(_) => Err(ReadFail::Truncated),
        Err(e) => Err(ReadFail::Io(e)),
    }
}

/// Parse the header from a stream positioned at the start of the file.
pub(crate) fn read_header<R: Read>(r: &mut Counting<R>, file: &str) -> Result<Header> {
    let header_err = |offset: u64, kind: HeaderErrorKind| Error::Header {
        file: file.to_string(),
        offset,
        kind,
    };
    let fail = |r: &Counting<R>, part: HeaderPart, f: ReadFail| match f {
        ReadFail::Io(e) => Error::Io {
            file: file.to_string(),
            source: e,
        },
        ReadFail::Eof | ReadFail::Truncated => {
            header_err(r.offset, HeaderErrorKind::Truncated { part })
        }
        ReadFail::Overlong => header_err(r.offset, HeaderErrorKind::MalformedVarint { part }),
    };
    let meta = HeaderPart::Metadata;

    let mut magic = Vec::new();
    match read_exact_bounded(r, 4, &mut magic) {
        Ok(()) => {}
        Err(ReadFail::Io(e)) => {
            return Err(Error::Io {
                file: file.to_string(),
                source: e,
            })
        }
        Err(_) if r.offset == 0 => return Err(header_err(0, HeaderErrorKind::Empty)),
        Err(_) => {
            return Err(header_err(
                0,
                HeaderErrorKind::BadMagic {
                    found: magic.clone(),
                },
            ))
        }
    }
    if magic != MAGIC {
        return Err(header_err(0, HeaderErrorKind::BadMagic { found: magic }));
    }

    let mut metadata = HashMap::new();
    loop {
        let at = r.offset;
        let count = read_long(r).map_err(|f| fail(r, meta, f))?;
        if count == 0 {
            break;
        }
        if count < 0 {
            // A negative count is followed by the block's byte size, which we do not need.
            read_long(r).map_err(|f| fail(r, meta, f))?;
        }
        for _ in 0..count.unsigned_abs() {
            let key_at = r.offset;
            let mut key = Vec::new();
            let klen = read_long(r).map_err(|f| fail(r, meta, f))?;
            if klen < 0 {
                return Err(header_err(
                    key_at,
                    HeaderErrorKind::NegativeLength {
                        length: klen,
                        key: None,
                    },
                ));
            }
            read_exact_bounded(r, klen as u64, &mut key).map_err(|f| fail(r, meta, f))?;
            let key = String::from_utf8(key)
                .map_err(|_| header_err(key_at, HeaderErrorKind::KeyNotUtf8))?;
            let vlen = read_long(r).map_err(|f| fail(r, meta, f))?;
            if vlen < 0 {
                return Err(header_err(
                    r.offset,
                    HeaderErrorKind::NegativeLength {
                        length: vlen,
                        key: Some(key),
                    },
                ));
            }
            let mut value = Vec::new();
            read_exact_bounded(r, vlen as u64, &mut value).map_err(|f| fail(r, meta, f))?;
            metadata.insert(key, value);
        }
        if r.offset == at {
            return Err(header_err(at, HeaderErrorKind::NoProgress));
        }
    }

    let mut sync = Vec::new();
    read_exact_bounded(r, 16, &mut sync).map_err(|f| fail(r, HeaderPart::SyncMarker, f))?;
    let sync: [u8; 16] = sync.try_into().map_err(|_| {
        header_err(
            r.offset,
            HeaderErrorKind::Truncated {
                part: HeaderPart::SyncMarker,
            },
        )
    })?;

    let schema_json = metadata
        .get("avro.schema")
        .ok_or_else(|| header_err(4, HeaderErrorKind::MissingSchema))?;
    let schema_json = std::str::from_utf8(schema_json)
        .map_err(|_| header_err(4, HeaderErrorKind::SchemaNotUtf8))?;
    // (Leniently: a default that does not match its type is never used to read the file.)
    let schema = Schema::parse_writer(schema_json).map_err(|source| Error::Schema {
        file: file.to_string(),
        source,
    })?;
    let codec = match metadata.get("avro.codec") {
        None => Codec::Null,
        Some(name) => {
            let name = String::from_utf8_lossy(name);
            Codec::from_name(&name).ok_or_else(|| Error::UnknownCodec {
                file: file.to_string(),
                codec: name.into_owned(),
            })?
        }
    };
    Ok(Header {
        metadata,
        codec,
        schema: Arc::new(schema),
        sync,
        len: r.offset,
    })
}

/// Where one block lies in a contiguous file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockSpan {
    /// Index of the block among the blocks its input reads (for a byte range, counted from
    /// the range's first block; `BlockContext::block_index` gives the file's).
    pub(crate) index: u64,
    /// Offset of the block's first byte (its record count).
    pub(crate) offset: u64,
    /// Records in the block (non-negative, unchecked against the schema).
    pub(crate) count: u64,
    /// Range of the block's (possibly compressed) data.
    pub(crate) data_start: usize,
    pub(crate) data_end: usize,
    /// Offset just after the sync marker: the next block's start.
    pub(crate) end: usize,
}

fn slice_long(buf: &[u8], pos: &mut usize) -> Result<i64, VarintError> {
    use avrow_engine::varint::{Kernel, Scalar};
    Scalar.read_long(buf, pos)
}

/// A block whose framing is wrong: where it starts, what is wrong, and its record count when
/// that much of it was readable (for reports of skipped blocks).
#[derive(Debug)]
pub(crate) struct FrameError {
    pub(crate) error: Error,
    pub(crate) count: Option<u64>,
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        e.error
    }
}

/// Frame the block starting at `pos` of a contiguous file; `None` at the end of the file.
pub(crate) fn frame_block(
    buf: &[u8],
    pos: usize,
    index: u64,
    sync: &[u8; 16],
    file: &str,
) -> Result<Option<BlockSpan>, FrameError> {
    if pos >= buf.len() {
        return Ok(None);
    }
    let block_err = |kind: BlockErrorKind, count: Option<u64>| FrameError {
        error: Error::Block {
            file: file.to_string(),
            block: index,
            offset: pos as u64,
            kind,
        },
        count,
    };
    let varint_err = |part: BlockPart, e: VarintError, count: Option<u64>| match e {
        VarintError::Truncated => block_err(
            BlockErrorKind::Truncated {
                part,
                needed: None,
                available: None,
            },
            count,
        ),
        error => block_err(BlockErrorKind::MalformedVarint { part, error }, count),
    };
    let mut p = pos;
    let count = slice_long(buf, &mut p).map_err(|e| varint_err(BlockPart::RecordCount, e, None))?;
    if count < 0 {
        return Err(block_err(BlockErrorKind::NegativeCount(count), None));
    }
    let known = Some(count as u64);
    let size = slice_long(buf, &mut p).map_err(|e| varint_err(BlockPart::ByteSize, e, known))?;
    if size < 0 {
        return Err(block_err(BlockErrorKind::NegativeSize(size), known));
    }
    let left = (buf.len() - p) as u64;
    if size as u64 + 16 > left {
        return Err(block_err(
            BlockErrorKind::Truncated {
                part: BlockPart::Data,
                needed: Some(size as u64 + 16),
                available: Some(left),
            },
            known,
        ));
    }
    let data_start = p;
    let data_end = p + size as usize;
    if buf[data_end..data_end + 16] != sync[..] {
        return Err(block_err(
            BlockErrorKind::SyncMismatch {
                at: Some(data_end as u64),
            },
            known,
        ));
    }
    Ok(Some(BlockSpan {
        index,
        offset: pos as u64,
        count: count as u64,
        data_start,
        data_end,
        end: data_end + 16,
    }))
}

/// One block read from a stream (its data is in the caller's buffer).
pub(crate) struct StreamBlock {
    pub(crate) offset: u64,
    pub(crate) count: u64,
}

/// Read the next block from a stream positioned at a block boundary into `data`; `None` at a
/// clean end. A block whose stored data is over `limit` is refused before its data is read.
/// After an error, `data` holds the bytes read of the block's data and sync marker.
pub(crate) fn read_block<R: Read>(
    r: &mut Counting<R>,
    index: u64,
    sync: &[u8; 16],
    file: &str,
    limit: u64,
    data: &mut Vec<u8>,
) -> Result<Option<StreamBlock>, FrameError> {
    data.clear();
    let offset = r.offset;
    let block_err = |kind: BlockErrorKind, count: Option<u64>| FrameError {
        error: Error::Block {
            file: file.to_string(),
            block: index,
            offset,
            kind,
        },
        count,
    };
    let fail = |part: BlockPart, f: ReadFail, count: Option<u64>| match f {
        ReadFail::Io(e) => FrameError {
            error: Error::Io {
                file: file.to_string(),
                source: e,
            },
            count,
        },
        ReadFail::Eof | ReadFail::Truncated => block_err(
            BlockErrorKind::Truncated {
                part,
                needed: None,
                available: None,
            },
            count,
        ),
        ReadFail::Overlong => block_err(
            BlockErrorKind::MalformedVarint {
                part,
                error: VarintError::Overlong,
            },
            count,
        ),
    };
    let count = match read_long(r) {
        Err(ReadFail::Eof) => return Ok(None),
        other => other.map_err(|f| fail(BlockPart::RecordCount, f, None))?,
    };
    if count < 0 {
        return Err(block_err(BlockErrorKind::NegativeCount(count), None));
    }
    let known = Some(count as u64);
    let size = read_long(r).map_err(|f| fail(BlockPart::ByteSize, f, known))?;
    if size < 0 {
        return Err(block_err(BlockErrorKind::NegativeSize(size), known));
    }
    if size as u64 > limit {
        return Err(block_err(
            BlockErrorKind::TooLarge {
                size: size as u64,
                limit: usize::try_from(limit).unwrap_or(usize::MAX),
            },
            known,
        ));
    }
    read_exact_bounded(r, size as u64, data).map_err(|f| fail(BlockPart::Data, f, known))?;
    let mut marker = Vec::with_capacity(16);
    let got = read_exact_bounded(r, 16, &mut marker);
    let matches = marker[..] == sync[..];
    if !matches {
        // Kept for resynchronising: the marker may start inside these bytes.
        data.extend_from_slice(&marker);
    }
    got.map_err(|f| fail(BlockPart::SyncMarker, f, known))?;
    if !matches {
        return Err(block_err(BlockErrorKind::SyncMismatch { at: None }, known));
    }
    Ok(Some(StreamBlock {
        offset,
        count: count as u64,
    }))
}
