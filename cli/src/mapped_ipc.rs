//! Arrow IPC files read in place: the file is memory-mapped and each batch's buffers point
//! into the map (arrow-ipc's `FileDecoder` over slices of one `Buffer`), instead of
//! `FileReader`'s copy of every block into zeroed memory read with `read(2)`. The checks are
//! `FileReader`'s: the trailing magic and footer length, the footer's flatbuffer, the schema's
//! endianness, and (added here, where `FileReader` would fail its read) every block inside the
//! file; arrays are validated as `FileReader` validates them. arrow-ipc's decoding panics on
//! some damaged files (an unknown type in the footer's schema): its calls here are guarded
//! and such a panic is an error naming the file. arrow-ipc allocates a compressed buffer's
//! declared uncompressed length before decompressing it (a failed allocation aborts the
//! process), so the lengths a compressed batch or dictionary declares are checked first:
//! together at most [`MAX_RATIO`] times the message's body, or [`FLOOR`] whatever the body,
//! and never more than [`CEILING`].
//!
//! Arrow IPC streams are read from a map too ([`MappedIpcStream`]): a stream's messages are
//! framed as a file's blocks are, so after the schema each goes to the same `FileDecoder`,
//! its framing and body length checked against the file and its compressed lengths as above
//! first (`StreamReader` allocates the body length a message declares before reading it, so
//! one damaged length aborted the process).

use anyhow::{anyhow, Context, Result};
use arrow::array::RecordBatch;
use arrow::buffer::Buffer;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow_ipc::reader::{read_footer_length, FileDecoder};
use arrow_ipc::Block;
use std::sync::Arc;

/// The uncompressed bytes a compressed message may declare per byte of its body. LZ4 frames
/// expand at most ~255 times; zstd more, on runs of one value, which [`FLOOR`] admits.
const MAX_RATIO: u64 = 1024;
/// Uncompressed bytes any compressed message may declare, whatever its body.
const FLOOR: u64 = 256 << 20;
/// Uncompressed bytes no message may declare.
const CEILING: u64 = 16 << 30;

/// An Arrow IPC file, mapped, with its schema and the blocks of its record batches.
pub struct MappedIpcFile {
    name: String,
    data: Buffer,
    schema: SchemaRef,
    decoder: FileDecoder,
    blocks: Vec<Block>,
}

impl MappedIpcFile {
    /// Maps `file` (named `name` in errors) and reads its footer, schema and dictionaries.
    pub fn open(name: &str, file: &std::fs::File) -> Result<Self> {
        let name = name.to_string();
        // SAFETY: the map is read-only. As for the Avro inputs avrow maps (`avrow::Reader`),
        // we rely on the file not being truncated or modified by another process while it
        // is mapped: the batches' buffers point into the map and are validated once, when
        // decoded.
        let map =
            unsafe { memmap2::Mmap::map(file) }.with_context(|| format!("cannot map {name}"))?;
        let data = Buffer::from(bytes::Bytes::from_owner(map));
        let bad = |what: String| anyhow!("{name}: not a readable Arrow IPC file: {what}");
        let len = data.len();
        if len < 10 {
            return Err(bad(format!("{len} bytes, too short for a footer")));
        }
        let trailer: [u8; 10] = data[len - 10..].try_into().expect("10 bytes");
        let footer_len = read_footer_length(trailer).map_err(|e| bad(e.to_string()))?;
        if footer_len > len - 10 {
            return Err(bad(format!(
                "footer of {footer_len} bytes in a file of {len}"
            )));
        }
        let footer = arrow_ipc::root_as_footer(&data[len - 10 - footer_len..len - 10])
            .map_err(|e| bad(format!("footer: {e}")))?;
        let fb_schema = footer
            .schema()
            .ok_or_else(|| bad("the footer has no schema".into()))?;
        if !fb_schema.endianness().equals_to_target_endianness() {
            return Err(bad(
                "the file's endianness is not this machine's".to_string()
            ));
        }
        let schema = Arc::new(
            guarded(|| Ok(arrow_ipc::convert::fb_to_schema(fb_schema)))
                .map_err(|e| bad(format!("schema: {e}")))?,
        );
        let mut decoder = FileDecoder::new(schema.clone(), footer.version());
        for block in footer.dictionaries().into_iter().flatten() {
            let bytes = slice(&data, block).map_err(&bad)?;
            check_declared(block, &bytes)
                .map_err(|e| bad(format!("dictionary at byte {}: {e}", block.offset())))?;
            guarded(|| decoder.read_dictionary(block, &bytes))
                .map_err(|e| bad(format!("dictionary at byte {}: {e}", block.offset())))?;
        }
        let blocks = footer
            .recordBatches()
            .ok_or_else(|| bad("the footer lists no record batches".into()))?
            .iter()
            .copied()
            .collect();
        Ok(MappedIpcFile {
            name,
            data,
            schema,
            decoder,
            blocks,
        })
    }

    /// The file's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The record batches, in file order, decoded as they are asked for. A message that is not
    /// a batch ends them, as with `FileReader`.
    pub fn into_batches(self) -> impl Iterator<Item = Result<RecordBatch>> {
        let MappedIpcFile {
            name,
            data,
            decoder,
            blocks,
            ..
        } = self;
        let mut blocks = blocks.into_iter();
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let block = blocks.next()?;
            let batch = slice(&data, &block)
                .map_err(|what| anyhow!("{name}: not a readable Arrow IPC file: {what}"))
                .and_then(|bytes| {
                    check_declared(&block, &bytes)
                        .and_then(|()| guarded(|| decoder.read_record_batch(&block, &bytes)))
                        .map_err(|e| {
                            anyhow!("{name}: record batch at byte {}: {e}", block.offset())
                        })
                });
            match batch {
                Ok(Some(b)) => Some(Ok(b)),
                Ok(None) => {
                    done = true;
                    None
                }
                Err(e) => {
                    done = true;
                    Some(Err(e))
                }
            }
        })
    }
}

/// An Arrow IPC stream file, mapped, with its schema: its batches decoded in place.
pub struct MappedIpcStream {
    name: String,
    data: Buffer,
    /// Where the next message starts.
    at: usize,
    decoder: FileDecoder,
    schema: SchemaRef,
}

/// One message of a stream: where it lies (its prefix and flatbuffer, then its body, framed
/// as an IPC file's blocks are), what it is, and its bytes.
struct Framed {
    block: Block,
    kind: arrow_ipc::MessageHeader,
    bytes: Buffer,
}

/// The message at `at` in `data`: `Ok(None)` at the end of the stream (the end-of-stream
/// marker, or the end of the data between messages, where fewer than 4 bytes end it as
/// `StreamReader` ends it); an error when its framing or body lies outside the data, or its
/// compressed buffers declare too much.
fn frame(data: &Buffer, at: usize) -> std::result::Result<Option<Framed>, String> {
    let rest = &data[at..];
    if rest.len() < 4 {
        return Ok(None);
    }
    let word = |i: usize| -> std::result::Result<u32, String> {
        rest.get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .ok_or_else(|| format!("the message at byte {at} is cut short"))
    };
    // A continuation marker and the flatbuffer's length (before format 0.15: the length).
    let (len, start) = match word(0)? {
        u32::MAX => (word(4)?, 8),
        len => (len, 4),
    };
    if len == 0 {
        return Ok(None);
    }
    let meta_len = i32::try_from(len)
        .ok()
        .and_then(|len| len.checked_add(start as i32))
        .filter(|&end| end as usize <= rest.len())
        .ok_or_else(|| {
            format!(
                "the message at byte {at} declares {len} bytes of metadata, more than the {} left",
                rest.len().saturating_sub(start)
            )
        })?;
    let message = arrow_ipc::root_as_message(&rest[start..meta_len as usize])
        .map_err(|e| format!("the message at byte {at} is not readable: {e}"))?;
    let body = message.bodyLength();
    let end = usize::try_from(body)
        .ok()
        .and_then(|b| b.checked_add(meta_len as usize))
        .filter(|&end| end <= rest.len())
        .ok_or_else(|| {
            format!(
                "the message at byte {at} declares a body of {body} bytes, more than the {} left",
                rest.len() - meta_len as usize
            )
        })?;
    let block = Block::new(at as i64, meta_len, body);
    let bytes = data.slice_with_length(at, end);
    check_declared(&block, &bytes).map_err(|e| format!("the message at byte {at}: {e}"))?;
    Ok(Some(Framed {
        block,
        kind: message.header_type(),
        bytes,
    }))
}

impl MappedIpcStream {
    /// Maps `file` (named `name` in errors) and reads the stream's schema.
    pub fn open(name: &str, file: &std::fs::File) -> Result<Self> {
        let name = name.to_string();
        // SAFETY: as for `MappedIpcFile::open`: the map is read-only and the file is not
        // expected to change while mapped; batches are validated when decoded.
        let map =
            unsafe { memmap2::Mmap::map(file) }.with_context(|| format!("cannot map {name}"))?;
        let data = Buffer::from(bytes::Bytes::from_owner(map));
        let bad = |what: String| anyhow!("{name}: not a readable Arrow IPC stream: {what}");
        let first = frame(&data, 0)
            .map_err(&bad)?
            .ok_or_else(|| bad("it holds no messages".into()))?;
        // (`frame` read this flatbuffer already.)
        let meta = &first.bytes[..first.block.metaDataLength() as usize];
        let start = if meta[..4] == [0xff; 4] { 8 } else { 4 };
        let message = arrow_ipc::root_as_message(&meta[start..]).map_err(|e| bad(e.to_string()))?;
        let fb_schema = message
            .header_as_schema()
            .ok_or_else(|| bad("it does not start with a schema".into()))?;
        if !fb_schema.endianness().equals_to_target_endianness() {
            return Err(bad("the stream's endianness is not this machine's".into()));
        }
        let schema = Arc::new(
            guarded(|| Ok(arrow_ipc::convert::fb_to_schema(fb_schema)))
                .map_err(|e| bad(format!("schema: {e}")))?,
        );
        Ok(MappedIpcStream {
            decoder: FileDecoder::new(schema.clone(), message.version()),
            at: first.bytes.len(),
            data,
            schema,
            name,
        })
    }

    /// The stream's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Decodes the next message: `Ok(Some(None))` for one that is not a batch (a dictionary,
    /// or a message without a header, skipped as `StreamReader` skips it), `Ok(None)` at the
    /// end of the stream. Messages are held to the schema message's metadata version
    /// (`FileDecoder`'s check).
    fn next_message(&mut self) -> std::result::Result<Option<Option<RecordBatch>>, String> {
        let Some(Framed { block, kind, bytes }) = frame(&self.data, self.at)? else {
            return Ok(None);
        };
        self.at += bytes.len();
        let decoder = &mut self.decoder;
        let batch = guarded(|| match kind {
            arrow_ipc::MessageHeader::DictionaryBatch => {
                decoder.read_dictionary(&block, &bytes).map(|()| None)
            }
            _ => decoder.read_record_batch(&block, &bytes),
        })
        .map_err(|e| format!("message at byte {}: {e}", block.offset()))?;
        Ok(Some(batch))
    }

    /// The record batches, in stream order, decoded as they are asked for.
    pub fn into_batches(mut self) -> impl Iterator<Item = Result<RecordBatch>> {
        let mut done = false;
        std::iter::from_fn(move || {
            while !done {
                match self.next_message() {
                    Ok(Some(Some(batch))) => return Some(Ok(batch)),
                    Ok(Some(None)) => {}
                    Ok(None) => done = true,
                    Err(e) => {
                        done = true;
                        return Some(Err(anyhow!("{}: {e}", self.name)));
                    }
                }
            }
            None
        })
    }
}

/// `f`'s result, or its panic as an error (arrow-ipc panics on some damaged input).
fn guarded<T>(f: impl FnOnce() -> Result<T, ArrowError>) -> std::result::Result<T, String> {
    crate::error::catch_quietly(f)?.map_err(|e| e.to_string())
}

/// The uncompressed bytes the compressed buffers of `block`'s message (a record batch or a
/// dictionary batch; `bytes` its message and body) declare together: `None` when the message
/// is not compressed, or when it cannot be read here (arrow-ipc then reports it).
fn declared_bytes(block: &Block, bytes: &[u8]) -> Option<u64> {
    let meta_len = usize::try_from(block.metaDataLength()).ok()?;
    let (meta, body) = (bytes.get(..meta_len)?, bytes.get(meta_len..)?);
    // The encapsulated message: a continuation marker (absent before format 0.15) and the
    // flatbuffer's length, then the flatbuffer.
    let (len_at, start): (usize, usize) = if meta.get(..4)? == [0xff; 4] {
        (4, 8)
    } else {
        (0, 4)
    };
    let len = u32::from_le_bytes(meta.get(len_at..len_at + 4)?.try_into().ok()?) as usize;
    let message = arrow_ipc::root_as_message(meta.get(start..start.checked_add(len)?)?).ok()?;
    let batch = match message.header_as_record_batch() {
        Some(batch) => batch,
        None => message.header_as_dictionary_batch()?.data()?,
    };
    batch.compression()?;
    let declared = batch.buffers()?.iter().filter_map(|b| {
        // A compressed buffer starts with its uncompressed length (-1: stored as is).
        let at = usize::try_from(b.offset()).ok()?;
        let prefix = body.get(at..at.checked_add(8)?)?;
        u64::try_from(i64::from_le_bytes(prefix.try_into().ok()?)).ok()
    });
    Some(declared.fold(0u64, u64::saturating_add))
}

/// Refuses a message whose compressed buffers declare more uncompressed bytes than its body
/// can hold (see the module docs), before arrow-ipc allocates them.
fn check_declared(block: &Block, bytes: &[u8]) -> std::result::Result<(), String> {
    let Some(declared) = declared_bytes(block, bytes) else {
        return Ok(());
    };
    let body = u64::try_from(block.bodyLength()).unwrap_or(0);
    let limit = body.saturating_mul(MAX_RATIO).clamp(FLOOR, CEILING);
    if declared > limit {
        return Err(format!(
            "its compressed buffers declare {declared} uncompressed bytes, more than the \
             {limit} a body of {body} bytes may hold here"
        ));
    }
    Ok(())
}

/// The bytes of `block` (its message and body) in `data`, or why they are not all there.
fn slice(data: &Buffer, block: &Block) -> std::result::Result<Buffer, String> {
    let offset = usize::try_from(block.offset()).ok();
    let meta = usize::try_from(block.metaDataLength()).ok();
    let body = usize::try_from(block.bodyLength()).ok();
    let span = match (offset, meta, body) {
        (Some(o), Some(m), Some(b)) => m
            .checked_add(b)
            .and_then(|n| Some((o, n, o.checked_add(n)?))),
        _ => None,
    };
    match span {
        Some((offset, n, end)) if end <= data.len() => Ok(data.slice_with_length(offset, n)),
        _ => Err(format!(
            "a block at byte {} of {} + {} bytes lies outside the file of {} bytes",
            block.offset(),
            block.metaDataLength(),
            block.bodyLength(),
            data.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, DictionaryArray, Int64Array, StringArray};
    use arrow::datatypes::Int32Type;

    fn write_ipc(batches: &[RecordBatch]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &batches[0].schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        out
    }

    fn batch(start: i64) -> RecordBatch {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter((start..start + 100).map(Some)));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values(
            (start..start + 100).map(|i| format!("n{i}")),
        ));
        let kinds: ArrayRef = Arc::new(
            (0..100)
                .map(|i| ["a", "b", "c"][i % 3])
                .collect::<DictionaryArray<Int32Type>>(),
        );
        RecordBatch::try_from_iter([("id", ids), ("name", names), ("kind", kinds)]).unwrap()
    }

    #[test]
    fn reads_what_file_reader_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.arrow");
        let bytes = write_ipc(&[batch(0), batch(100), batch(200)]);
        std::fs::write(&path, &bytes).unwrap();
        let want: Vec<RecordBatch> =
            arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect();
        let file = std::fs::File::open(&path).unwrap();
        let mapped = MappedIpcFile::open(&path.display().to_string(), &file).unwrap();
        assert_eq!(mapped.schema(), want[0].schema());
        let got: Vec<RecordBatch> = mapped.into_batches().map(|b| b.unwrap()).collect();
        assert_eq!(got, want);
    }

    /// Streams in every framing arrow-ipc writes (the continuation marker or the legacy
    /// one, compressed or not, with dictionaries, with and without the end-of-stream marker)
    /// read as `StreamReader` reads them.
    #[test]
    fn streams_read_what_stream_reader_reads() {
        use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
        use arrow_ipc::{CompressionType, MetadataVersion};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.arrows");
        let batches = [batch(0), batch(100), batch(200)];
        let legacy = IpcWriteOptions::try_new(8, true, MetadataVersion::V4).unwrap();
        let compressed = |c| {
            IpcWriteOptions::default()
                .try_with_compression(Some(c))
                .unwrap()
        };
        let options = [
            IpcWriteOptions::default(),
            legacy,
            compressed(CompressionType::LZ4_FRAME),
            compressed(CompressionType::ZSTD),
        ];
        for (i, options) in options.into_iter().enumerate() {
            let mut bytes = Vec::new();
            let mut w =
                StreamWriter::try_new_with_options(&mut bytes, &batches[0].schema(), options)
                    .unwrap();
            for b in &batches {
                w.write(b).unwrap();
            }
            w.finish().unwrap();
            drop(w);
            let want: Vec<RecordBatch> =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&bytes), None)
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
            assert_eq!(want.len(), 3);
            // With the end-of-stream marker, and without it (8 bytes, or 4 in legacy framing).
            let eos = if i == 1 { 4 } else { 8 };
            for end in [bytes.len(), bytes.len() - eos] {
                std::fs::write(&path, &bytes[..end]).unwrap();
                let file = std::fs::File::open(&path).unwrap();
                let mapped = MappedIpcStream::open(&path.display().to_string(), &file).unwrap();
                assert_eq!(mapped.schema(), want[0].schema());
                let got: Vec<RecordBatch> = mapped.into_batches().map(|b| b.unwrap()).collect();
                assert_eq!(got, want, "{i}");
            }
            // Cut inside its last message: the batches before it, then an error.
            std::fs::write(&path, &bytes[..bytes.len() - eos - 3]).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let read: Vec<Result<RecordBatch>> =
                MappedIpcStream::open(&path.display().to_string(), &file)
                    .unwrap()
                    .into_batches()
                    .collect();
            assert_eq!(read.len(), 3);
            let e = format!("{:#}", read[2].as_ref().unwrap_err());
            assert!(e.contains("t.arrows") && e.contains("more than the"), "{e}");
        }
    }

    /// A stream message declaring a body far past the file, or compressed buffers far past
    /// its body, is an error naming the file and the message's offset.
    #[test]
    fn lying_stream_lengths_are_errors() {
        use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lying.arrows");
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|i| i / 100)));
        let b = RecordBatch::try_from_iter([("id", ids)]).unwrap();
        let options = IpcWriteOptions::default()
            .try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))
            .unwrap();
        let mut good = Vec::new();
        let mut w = StreamWriter::try_new_with_options(&mut good, &b.schema(), options).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        drop(w);
        // The batch message follows the schema message and its body (none).
        let schema_len = 8 + u32::from_le_bytes(good[4..8].try_into().unwrap()) as usize;
        let at = schema_len;
        let meta_len = u32::from_le_bytes(good[at + 4..at + 8].try_into().unwrap()) as usize;
        let message = arrow_ipc::root_as_message(&good[at + 8..at + 8 + meta_len]).unwrap();
        let body_len = message.bodyLength() as usize;
        let rb = message.header_as_record_batch().unwrap();
        let body = at + 8 + meta_len;
        // Each compressed buffer declares 2^50 bytes.
        let mut bad = good.clone();
        for buffer in rb.buffers().unwrap().iter().filter(|b| b.length() >= 8) {
            let p = body + buffer.offset() as usize;
            if i64::from_le_bytes(bad[p..p + 8].try_into().unwrap()) >= 0 {
                bad[p..p + 8].copy_from_slice(&(1i64 << 50).to_le_bytes());
            }
        }
        // The body length, found in the flatbuffer by its value, made 2^50.
        let mut far = good.clone();
        let needle = (body_len as i64).to_le_bytes();
        let found = far[at + 8..body]
            .windows(8)
            .position(|w| w == needle)
            .unwrap();
        far[at + 8 + found..at + 16 + found].copy_from_slice(&(1i64 << 50).to_le_bytes());
        for (bytes, says) in [
            (bad, "uncompressed bytes, more than"),
            (far, "declares a body"),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let e = MappedIpcStream::open(&path.display().to_string(), &file)
                .and_then(|m| m.into_batches().collect::<Result<Vec<_>>>())
                .unwrap_err();
            let e = format!("{e:#}");
            assert!(e.contains("lying.arrows") && e.contains(says), "{e}");
            assert!(e.contains(&format!("byte {at}")), "{e}");
        }
    }

    #[test]
    fn damaged_files_are_errors_that_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = write_ipc(&[batch(0), batch(100)]);
        let path = dir.path().join("bad.arrow");
        let mut cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"ARROW1".to_vec(),
            good[..good.len() - 3].to_vec(),
            good[..good.len() / 2].to_vec(),
        ];
        // Every byte of the footer and of the first block's message, flipped in turn.
        let footer_len =
            i32::from_le_bytes(good[good.len() - 10..good.len() - 6].try_into().unwrap());
        let footer_start = good.len() - 10 - footer_len as usize;
        for at in (footer_start..good.len() - 6).chain(8..200) {
            let mut b = good.clone();
            b[at] ^= 0xa5;
            cases.push(b);
        }
        for bytes in cases {
            std::fs::write(&path, &bytes).unwrap();
            // Never a panic; an error names the file.
            let file = std::fs::File::open(&path).unwrap();
            let result = MappedIpcFile::open(&path.display().to_string(), &file)
                .and_then(|m| m.into_batches().collect::<Result<Vec<_>>>());
            if let Err(e) = result {
                assert!(format!("{e:#}").contains("bad.arrow"), "{e:#}");
            }
        }
    }

    /// A compressed batch or dictionary whose buffers declare a huge uncompressed length is an
    /// error naming the file, not an allocation that aborts the process.
    #[test]
    fn lying_compressed_lengths_are_errors() {
        use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
        use arrow_ipc::CompressionType;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lying.arrow");
        // Values that compress (a buffer that would not is stored as is, declaring nothing).
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|i| i / 100)));
        let words = ["a".repeat(500), "b".repeat(500), "c".repeat(500)];
        let kinds: ArrayRef = Arc::new(
            (0..10_000)
                .map(|i| words[i / 1000 % 3].as_str())
                .collect::<DictionaryArray<Int32Type>>(),
        );
        let b = RecordBatch::try_from_iter([("id", ids), ("kind", kinds)]).unwrap();
        for codec in [CompressionType::LZ4_FRAME, CompressionType::ZSTD] {
            let options = IpcWriteOptions::default()
                .try_with_compression(Some(codec))
                .unwrap();
            let mut good = Vec::new();
            let mut w = FileWriter::try_new_with_options(&mut good, &b.schema(), options).unwrap();
            w.write(&b).unwrap();
            w.finish().unwrap();
            drop(w);
            std::fs::write(&path, &good).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let mapped = MappedIpcFile::open(&path.display().to_string(), &file).unwrap();
            let batches: Vec<RecordBatch> = mapped.into_batches().map(|b| b.unwrap()).collect();
            assert_eq!(batches, std::slice::from_ref(&b));

            // The footer's blocks: the dictionary's, then the batch's.
            let footer_len =
                i32::from_le_bytes(good[good.len() - 10..good.len() - 6].try_into().unwrap());
            let footer = arrow_ipc::root_as_footer(
                &good[good.len() - 10 - footer_len as usize..good.len() - 10],
            )
            .unwrap();
            let blocks: Vec<Block> = footer
                .dictionaries()
                .into_iter()
                .flatten()
                .chain(footer.recordBatches().into_iter().flatten())
                .copied()
                .collect();
            assert_eq!(blocks.len(), 2);
            for (i, block) in blocks.iter().enumerate() {
                let start = block.offset() as usize;
                let bytes = &good
                    [start..start + block.metaDataLength() as usize + block.bodyLength() as usize];
                assert!(declared_bytes(block, bytes).unwrap() > 0, "{codec:?}");
                // Every compressed buffer of this block declares 2^50 bytes.
                let meta = &bytes[..block.metaDataLength() as usize];
                let len = u32::from_le_bytes(meta[4..8].try_into().unwrap()) as usize;
                let message = arrow_ipc::root_as_message(&meta[8..8 + len]).unwrap();
                let rb = match message.header_as_record_batch() {
                    Some(rb) => rb,
                    None => message
                        .header_as_dictionary_batch()
                        .unwrap()
                        .data()
                        .unwrap(),
                };
                let mut bad = good.clone();
                let body = start + block.metaDataLength() as usize;
                for buffer in rb.buffers().unwrap().iter().filter(|b| b.length() >= 8) {
                    let at = body + buffer.offset() as usize;
                    if i64::from_le_bytes(bad[at..at + 8].try_into().unwrap()) >= 0 {
                        bad[at..at + 8].copy_from_slice(&(1i64 << 50).to_le_bytes());
                    }
                }
                std::fs::write(&path, &bad).unwrap();
                let file = std::fs::File::open(&path).unwrap();
                let e = MappedIpcFile::open(&path.display().to_string(), &file)
                    .and_then(|m| m.into_batches().collect::<Result<Vec<_>>>())
                    .unwrap_err();
                let e = format!("{e:#}");
                assert!(e.contains("lying.arrow"), "{e}");
                assert!(e.contains("uncompressed bytes, more than"), "{i}: {e}");
            }
        }
    }
}
