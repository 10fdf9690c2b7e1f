//! Where blocks come from. Each input file is either contiguous (a memory map or bytes in
//! memory, framed in place without copying) or a stream (read block by block). A
//! [`BlockSource`] chains the files of one reader and hands out [`RawBlock`]s in file order.
//!
//! With `skip_bad_blocks`, a block whose framing is wrong is recorded as a [`SkippedBlock`]
//! and the source resynchronises on the file's sync marker: it scans forward from the bad
//! block (in a stream, first through the bytes it already read) to the next marker and goes on
//! with the block after it.

use crate::codec::{
    expansion_cap, Codec, DecompressError, Decompressor, Pieces, CHECK_WINDOW, PIECE,
};
use crate::container::{frame_block, read_block, read_header, Counting, FrameError, Header};
use crate::error::{BlockErrorKind, Error, HeaderErrorKind, Result};
use avrow_engine::{RecordDecoder, StreamCheckError};
use bytes::Bytes;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The default limit on one block's decompressed size (1 GiB).
pub const DEFAULT_MAX_BLOCK_SIZE: usize = 1 << 30;

/// What opening an input takes from its reader's settings.
#[derive(Debug, Clone)]
pub(crate) struct OpenOptions {
    /// The limit on one block's decompressed size.
    pub(crate) max_block_size: usize,
    /// Skip blocks that cannot be read instead of stopping at the first.
    pub(crate) skip_bad_blocks: bool,
    /// Map files into memory; without, a file is read as a stream.
    pub(crate) use_mmap: bool,
    /// Read only the blocks whose preceding sync marker starts in this byte range.
    pub(crate) range: Option<Range<u64>>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            max_block_size: DEFAULT_MAX_BLOCK_SIZE,
            skip_bad_blocks: false,
            use_mmap: true,
            range: None,
        }
    }
}

/// Open the file at `path` for reading (`name` for errors). Every reader and
/// [`split_ranges`](crate::split_ranges) opens files here.
pub(crate) fn open_path(path: &Path, name: &str) -> Result<File> {
    let io = |source| Error::Io {
        file: name.to_string(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // A directory opens on Unix; mapping or reading it then fails as "No such device" or
    // "Is a directory", which says less than this.
    if file.metadata().map_err(io)?.is_dir() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "a directory, not an Avro file (list its files, or a glob: DIR/*.avro)",
        )));
    }
    Ok(file)
}

/// Map an opened file into memory: its bytes (zero-copy) and the map behind them.
pub(crate) fn map_file(file: &File, name: &str) -> Result<(Bytes, Arc<memmap2::Mmap>)> {
    let io = |source| Error::Io {
        file: name.to_string(),
        source,
    };
    if file.metadata().map_err(io)?.len() == 0 {
        return Err(Error::Header {
            file: name.to_string(),
            offset: 0,
            kind: HeaderErrorKind::Empty,
        });
    }
    // SAFETY: the map is read-only. Like every reader of memory-mapped files we rely on the
    // file not being truncated or modified by another process while it is mapped (the
    // builder documents this; `with_mmap(false)` avoids it).
    let map = Arc::new(unsafe { memmap2::Mmap::map(file) }.map_err(io)?);
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok((Bytes::from_owner(SharedMap(map.clone())), map))
}

/// Files up to this size are read into memory rather than mapped: mapping costs two system
/// calls, a page fault every 16 pages and, at `munmap`, a TLB flush on every core the process
/// runs on, more than copying a small file (a query over a directory of thousands of small
/// files opens each several times).
const READ_BELOW: u64 = 256 << 10;

/// The whole of a nonempty file under [`READ_BELOW`] bytes, read; `None` for a larger or empty
/// one (mapping it reports an empty file).
fn read_small(file: &File, name: &str) -> Result<Option<Bytes>> {
    let io = |source| Error::Io {
        file: name.to_string(),
        source,
    };
    let len = file.metadata().map_err(io)?.len();
    if len == 0 || len >= READ_BELOW {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(len as usize + 1);
    // The `+ 1` finds the end without growing the buffer. A file that has grown past the
    // bound since (or shrunk to nothing) is mapped instead, as a large one is.
    let read = file.take(READ_BELOW).read_to_end(&mut bytes).map_err(io)?;
    if read == 0 || read as u64 >= READ_BELOW {
        return Ok(None);
    }
    Ok(Some(Bytes::from(bytes)))
}

/// A shared memory map as the owner of a `Bytes`.
struct SharedMap(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// What every block of one input file shares: its name (for errors), codec and limits.
#[derive(Debug, Clone)]
pub(crate) struct BlockContext {
    pub(crate) file: Arc<str>,
    pub(crate) file_index: usize,
    /// Which of the reader's decode plans reads this file (files with different writer
    /// schemas, resolved to one reader schema, have different plans).
    pub(crate) plan: usize,
    pub(crate) codec: Codec,
    pub(crate) max_block_size: usize,
    /// Skip blocks that cannot be read instead of stopping at the first.
    pub(crate) skip_bad_blocks: bool,
    /// The file's count of blocks before the first block this input reads.
    first_index: Arc<FirstIndex>,
}

/// How many blocks of its file come before the first block an input reads: none for a whole
/// file; for a byte range, counted from the file's first block only when an error or a
/// skipped block names a block. Counting walks every block before the range, so a split far
/// into a large file would pay for all of them when it opens (each split of a file cut in
/// `n` would walk its share of `n / 2` files' blocks), for indexes most reads never use.
/// When it does walk, the earlier blocks' header pages are mapped again (clean pages of the
/// file, which the progressive release does not drop a second time).
#[derive(Default)]
struct FirstIndex {
    walk: Option<IndexWalk>,
    counted: OnceLock<u64>,
}

/// The walk [`FirstIndex`] makes if asked: the file's bytes, where its first block starts
/// and where the input's first block starts.
struct IndexWalk {
    bytes: Bytes,
    first: usize,
    target: usize,
    sync: [u8; 16],
}

impl FirstIndex {
    fn get(&self) -> u64 {
        match &self.walk {
            None => 0,
            Some(w) => *self
                .counted
                .get_or_init(|| block_index_at(&w.bytes, w.first, w.target, &w.sync)),
        }
    }
}

impl std::fmt::Debug for FirstIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstIndex")
            .field("from_byte", &self.walk.as_ref().map(|w| w.target))
            .field("counted", &self.counted.get())
            .finish()
    }
}

impl BlockContext {
    fn new(name: String, index: usize, header: &Header, opts: &OpenOptions) -> Arc<Self> {
        Arc::new(BlockContext {
            file: name.into(),
            file_index: index,
            plan: 0,
            codec: header.codec(),
            max_block_size: opts.max_block_size,
            skip_bad_blocks: opts.skip_bad_blocks,
            first_index: Arc::default(),
        })
    }

    /// The index in the whole file of this input's block `index` (counted from the input's
    /// first block, as [`RawBlock::index`] is).
    pub(crate) fn block_index(&self, index: u64) -> u64 {
        self.first_index.get().saturating_add(index)
    }

    /// `e` (an error of this input's block `index`, as framing reports it) with the block's
    /// index in the whole file.
    fn in_file(&self, mut e: Error) -> Error {
        if let Error::Block { block, .. } | Error::Decode { block, .. } = &mut e {
            *block = self.block_index(*block);
        }
        e
    }

    pub(crate) fn block_error(&self, block: &RawBlock, kind: BlockErrorKind) -> Error {
        Error::Block {
            file: self.file.to_string(),
            block: self.block_index(block.index),
            offset: block.offset,
            kind,
        }
    }
}

/// A block that could not be read and was skipped whole (`with_skip_bad_blocks`).
#[derive(Debug)]
#[non_exhaustive]
pub struct SkippedBlock {
    /// The input's name.
    pub file: String,
    /// The input's position among the reader's inputs (0 for a single input).
    pub file_index: usize,
    /// Index of the block in its file (0-based). A damaged stretch of a file that hides
    /// several blocks' framing counts as one block.
    pub block: u64,
    /// The bytes skipped: from the block's start to the end of the sync marker the reader
    /// resynchronised on (or to the end of the input).
    pub range: Range<u64>,
    /// Records the block's header declared, when the header was readable.
    pub records: Option<u64>,
    /// Why the block could not be read.
    pub error: Error,
}

/// One block as read from its file: where it was and its (possibly compressed) data.
#[derive(Debug, Clone)]
pub(crate) struct RawBlock {
    pub(crate) ctx: Arc<BlockContext>,
    /// Index of the block among the blocks its input reads (the file's for a whole file; a
    /// byte range's count from its first block: [`BlockContext::block_index`] gives the
    /// file's).
    pub(crate) index: u64,
    /// Offset of the block's first byte in its file.
    pub(crate) offset: u64,
    /// Offset just past the block's sync marker.
    pub(crate) end: u64,
    pub(crate) count: u64,
    pub(crate) data: Bytes,
}

impl RawBlock {
    /// The block's data, decompressed into `scratch` if the file is compressed. Every codec,
    /// the null codec included, is held to the block size limit.
    pub(crate) fn decompressed<'a>(
        &'a self,
        decompressor: &mut Decompressor,
        scratch: &'a mut Vec<u8>,
    ) -> Result<&'a [u8]> {
        let codec = self.ctx.codec;
        if codec == Codec::Null {
            if self.data.len() > self.ctx.max_block_size {
                return Err(self.ctx.block_error(
                    self,
                    BlockErrorKind::TooLarge {
                        size: self.data.len() as u64,
                        limit: self.ctx.max_block_size,
                    },
                ));
            }
            return Ok(&self.data);
        }
        decompressor
            .decompress(codec, &self.data, scratch, self.ctx.max_block_size)
            .map_err(|error| {
                self.ctx
                    .block_error(self, BlockErrorKind::Decompression { codec, error })
            })?;
        Ok(scratch)
    }

    /// The block's data decompressed as [`RawBlock::decompressed`] does, for `decoder`. A block
    /// that expands past [`expansion_cap`] (a possible decompression bomb) is first checked
    /// as it streams ([`RecordDecoder::check_stream`]), holding a window of it, and only
    /// decompressed whole if it is a valid block: an invalid one fails with the error
    /// decoding it would give, having used little memory.
    pub(crate) fn decompressed_for<'a>(
        &'a self,
        decoder: &RecordDecoder,
        decompressor: &mut Decompressor,
        scratch: &'a mut Vec<u8>,
    ) -> Result<&'a [u8]> {
        let codec = self.ctx.codec;
        let limit = self.ctx.max_block_size;
        let decompression = |error| {
            self.ctx
                .block_error(self, BlockErrorKind::Decompression { codec, error })
        };
        if let Some(cap) = expansion_cap(codec, self.data.len()).filter(|&cap| cap < limit) {
            match decompressor.decompress(codec, &self.data, scratch, cap) {
                Ok(()) => return Ok(scratch),
                Err(DecompressError::OverLimit { .. }) => {}
                Err(error) => return Err(decompression(error)),
            }
            scratch.clear();
            scratch.shrink_to(CHECK_WINDOW);
            let mut pieces = Pieces::new(codec, &self.data, limit).map_err(decompression)?;
            decoder
                .check_stream(self.count, CHECK_WINDOW, limit, &mut |out: &mut Vec<u8>| {
                    pieces.next_into(out)
                })
                .map_err(|e| match e {
                    StreamCheckError::Source(error) => decompression(error),
                    StreamCheckError::Decode(source) => Error::Decode {
                        file: self.ctx.file.to_string(),
                        block: self.ctx.block_index(self.index),
                        offset: self.offset,
                        source,
                    },
                    other => Error::Internal(format!("unexpected check result: {other:?}")),
                })?;
            // The check read the block to its end, so its size is known: one pass makes it.
            decompressor
                .decompress_sized(codec, &self.data, scratch, limit, pieces.total())
                .map_err(decompression)?;
            return Ok(scratch);
        }
        self.decompressed(decompressor, scratch)
    }

    /// The size of this block's data once decompressed, counted without holding a block that
    /// expands past [`expansion_cap`] whole: such a block is counted as it streams, a piece
    /// at a time, in `scratch` (left holding at most one piece). Held to the block size limit
    /// as [`RawBlock::decompressed`] is.
    pub(crate) fn decompressed_len(
        &self,
        decompressor: &mut Decompressor,
        scratch: &mut Vec<u8>,
    ) -> Result<u64> {
        let codec = self.ctx.codec;
        let limit = self.ctx.max_block_size;
        let decompression = |error| {
            self.ctx
                .block_error(self, BlockErrorKind::Decompression { codec, error })
        };
        if let Some(cap) = expansion_cap(codec, self.data.len()).filter(|&cap| cap < limit) {
            match decompressor.decompress(codec, &self.data, scratch, cap) {
                Ok(()) => return Ok(scratch.len() as u64),
                Err(DecompressError::OverLimit { .. }) => {}
                Err(error) => return Err(decompression(error)),
            }
            scratch.clear();
            scratch.shrink_to(PIECE);
            let mut pieces = Pieces::new(codec, &self.data, limit).map_err(decompression)?;
            loop {
                scratch.clear();
                if pieces.next_into(scratch).map_err(decompression)? == 0 {
                    return Ok(pieces.total() as u64);
                }
            }
        }
        Ok(self.decompressed(decompressor, scratch)?.len() as u64)
    }

    /// The data of this block once [`RawBlock::decompressed_for`] has given it: the block's
    /// own bytes in an uncompressed file, else what it decompressed into `scratch`.
    pub(crate) fn held<'a>(&'a self, scratch: &'a [u8]) -> &'a [u8] {
        if self.ctx.codec == Codec::Null {
            &self.data
        } else {
            scratch
        }
    }

    /// This block as skipped because of `error`.
    pub(crate) fn skipped(&self, error: Error) -> SkippedBlock {
        SkippedBlock {
            file: self.ctx.file.to_string(),
            file_index: self.ctx.file_index,
            block: self.ctx.block_index(self.index),
            range: self.offset..self.end,
            records: Some(self.count),
            error,
        }
    }
}

/// A reader with bytes pushed back in front of it: after a bad block in a stream, the bytes
/// read past the sync marker found inside them are read again as the next block.
pub(crate) struct PushBack<R> {
    front: Vec<u8>,
    at: usize,
    inner: R,
}

impl<R> PushBack<R> {
    pub(crate) fn new(inner: R) -> Self {
        PushBack {
            front: Vec::new(),
            at: 0,
            inner,
        }
    }

    /// Read `bytes` again before the rest of the input.
    fn unread(&mut self, bytes: &[u8]) {
        let mut front = bytes.to_vec();
        front.extend_from_slice(&self.front[self.at..]);
        self.front = front;
        self.at = 0;
    }
}

impl<R: Read> Read for PushBack<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at < self.front.len() {
            let n = buf.len().min(self.front.len() - self.at);
            buf[..n].copy_from_slice(&self.front[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

impl<R: BufRead> BufRead for PushBack<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at < self.front.len() {
            return Ok(&self.front[self.at..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if self.at < self.front.len() {
            self.at += amt;
        } else {
            self.inner.consume(amt);
        }
    }
}

/// A stream input: buffered, with push-back, counting its offset.
pub(crate) type StreamReader = Counting<PushBack<BufReader<Box<dyn Read + Send>>>>;

/// The bytes of one input file.
pub(crate) enum Input {
    Contiguous {
        bytes: Bytes,
        /// The memory map behind `bytes`, if any (to release pages already read).
        map: Option<Arc<memmap2::Mmap>>,
        /// Offset of the next block.
        pos: usize,
        /// Read only blocks whose preceding sync marker starts before this offset.
        end: u64,
        /// Pages before this offset were released.
        released: usize,
    },
    Stream {
        reader: StreamReader,
        /// The bytes of the block being read (kept to resynchronise inside them).
        scratch: Vec<u8>,
    },
}

/// Memory maps at least this far behind the reader are handed back to the kernel.
const RELEASE_CHUNK: usize = 8 << 20;

/// The largest stored block a stream may hold: the decompressed limit, plus what compression
/// can add to incompressible data.
fn stored_limit(ctx: &BlockContext) -> u64 {
    let limit = ctx.max_block_size as u64;
    match ctx.codec {
        Codec::Null => limit,
        _ => limit.saturating_add(limit / 16).saturating_add(4096),
    }
}

/// One input file of a reader.
pub(crate) struct FileInput {
    pub(crate) ctx: Arc<BlockContext>,
    pub(crate) header: Arc<Header>,
    pub(crate) input: Input,
    pub(crate) next_index: u64,
}

impl FileInput {
    /// Open the file at `path`: memory-mapped (read into memory under [`READ_BELOW`] bytes),
    /// or read as a stream without `use_mmap`.
    pub(crate) fn open(path: &Path, index: usize, opts: &OpenOptions) -> Result<FileInput> {
        let name = path.display().to_string();
        let file = open_path(path, &name)?;
        if !opts.use_mmap {
            return Self::stream(name, index, Box::new(file), None, opts);
        }
        if let Some(bytes) = read_small(&file, &name)? {
            return Self::contiguous(name, index, bytes, None, opts);
        }
        let (bytes, map) = map_file(&file, &name)?;
        Self::contiguous(name, index, bytes, Some(map), opts)
    }

    /// A file whose bytes are all in memory (`map`: the memory map behind them, if any).
    pub(crate) fn contiguous(
        name: String,
        index: usize,
        bytes: Bytes,
        map: Option<Arc<memmap2::Mmap>>,
        opts: &OpenOptions,
    ) -> Result<FileInput> {
        let mut counting = Counting::new(&bytes[..], 0);
        let header = read_header(&mut counting, &name)?;
        let pos = counting.offset as usize;
        let mut file = FileInput {
            ctx: BlockContext::new(name, index, &header, opts),
            header: Arc::new(header),
            input: Input::Contiguous {
                bytes,
                map,
                pos,
                end: u64::MAX,
                released: 0,
            },
            next_index: 0,
        };
        if let Some(range) = &opts.range {
            file.restrict(range.start, range.end)?;
        }
        Ok(file)
    }

    /// A file read from a stream. With `blocks_at`, the stream holds the header and then the
    /// file's blocks from byte `blocks_at` on (one split fetched from an object store).
    pub(crate) fn stream(
        name: String,
        index: usize,
        reader: Box<dyn Read + Send>,
        blocks_at: Option<u64>,
        opts: &OpenOptions,
    ) -> Result<FileInput> {
        if opts.range.is_some() {
            return Err(Error::NotSeekable { file: name });
        }
        let buffered = PushBack::new(BufReader::with_capacity(1 << 16, reader));
        let mut counting = Counting::new(buffered, 0);
        let header = read_header(&mut counting, &name)?;
        if let Some(at) = blocks_at {
            counting.offset = counting.offset.max(at);
        }
        Ok(FileInput {
            ctx: BlockContext::new(name, index, &header, opts),
            header: Arc::new(header),
            input: Input::Stream {
                reader: counting,
                scratch: Vec::new(),
            },
            next_index: 0,
        })
    }

    /// Restrict a contiguous input to the blocks whose preceding sync marker starts in
    /// `start..end` (Hadoop-style splits: any partition of the file into ranges reads every
    /// block exactly once). Block indexes stay those of the whole file.
    pub(crate) fn restrict(&mut self, start: u64, end: u64) -> Result<()> {
        let Input::Contiguous {
            bytes,
            pos,
            end: stop,
            ..
        } = &mut self.input
        else {
            return Err(Error::NotSeekable {
                file: self.ctx.file.to_string(),
            });
        };
        *stop = end;
        let header_sync = self.header.len() - 16;
        if start <= header_sync {
            return Ok(());
        }
        // The first sync marker starting at or after `start`; the block after it is ours.
        let sync = self.header.sync();
        let from = (start as usize).min(bytes.len());
        let first = match memchr::memmem::find(&bytes[from..], &sync) {
            Some(i) => from + i + 16,
            None => bytes.len(),
        };
        *pos = first;
        let walk = IndexWalk {
            bytes: bytes.clone(),
            first: self.header.len() as usize,
            target: first,
            sync,
        };
        Arc::make_mut(&mut self.ctx).first_index = Arc::new(FirstIndex {
            walk: Some(walk),
            counted: OnceLock::new(),
        });
        Ok(())
    }

    fn next_block(&mut self, skipped: &mut Vec<SkippedBlock>) -> Result<Option<RawBlock>> {
        loop {
            let start = match &self.input {
                Input::Contiguous { pos, .. } => *pos as u64,
                Input::Stream { reader, .. } => reader.offset,
            };
            match self.try_next_block() {
                Ok(block) => return Ok(block),
                Err(e) if !self.ctx.skip_bad_blocks || matches!(e.error, Error::Io { .. }) => {
                    return Err(self.ctx.in_file(e.error))
                }
                Err(e) => {
                    let index = self.ctx.block_index(self.next_index);
                    let (start, end) = self.resync(start, &e.error);
                    skipped.push(SkippedBlock {
                        file: self.ctx.file.to_string(),
                        file_index: self.ctx.file_index,
                        block: index,
                        range: start..end,
                        records: e.count,
                        error: self.ctx.in_file(e.error),
                    });
                    self.next_index += 1;
                }
            }
        }
    }

    fn try_next_block(&mut self) -> Result<Option<RawBlock>, FrameError> {
        let index = self.next_index;
        let block = match &mut self.input {
            Input::Contiguous {
                bytes, pos, end, ..
            } => {
                // The sync marker before the block at `pos` starts at `pos - 16`.
                if (*pos as u64).saturating_sub(16) >= *end {
                    return Ok(None);
                }
                let Some(span) =
                    frame_block(bytes, *pos, index, &self.header.sync(), &self.ctx.file)?
                else {
                    return Ok(None);
                };
                *pos = span.end;
                RawBlock {
                    ctx: self.ctx.clone(),
                    index,
                    offset: span.offset,
                    end: span.end as u64,
                    count: span.count,
                    data: bytes.slice(span.data_start..span.data_end),
                }
            }
            Input::Stream { reader, scratch } => {
                let Some(block) = read_block(
                    reader,
                    index,
                    &self.header.sync(),
                    &self.ctx.file,
                    stored_limit(&self.ctx),
                    scratch,
                )?
                else {
                    return Ok(None);
                };
                RawBlock {
                    ctx: self.ctx.clone(),
                    index,
                    offset: block.offset,
                    end: reader.offset,
                    count: block.count,
                    data: Bytes::from(std::mem::take(scratch)),
                }
            }
        };
        self.next_index += 1;
        Ok(Some(block))
    }

    /// After a bad block starting at `start`: move to the block after the next sync marker.
    /// Returns the byte range skipped.
    fn resync(&mut self, start: u64, error: &Error) -> (u64, u64) {
        let sync = self.header.sync();
        match &mut self.input {
            Input::Contiguous { bytes, pos, .. } => {
                // Only the marker damaged: if a well-framed block (its own marker intact)
                // starts where the next block should, go on there rather than lose it too.
                // Not when the marker is intact a few bytes off (the byte size was wrong): its
                // last bytes and the next block's header, or the next block's first bytes,
                // may frame a block too.
                if let Error::Block {
                    kind: BlockErrorKind::SyncMismatch { at: Some(at) },
                    ..
                } = error
                {
                    let at = *at as usize;
                    let next = at + 16;
                    let near = (at.saturating_sub(15).max(start as usize + 1))
                        ..(next + 15).min(bytes.len());
                    let moved = bytes
                        .get(near)
                        .is_some_and(|w| memchr::memmem::find(w, &sync).is_some());
                    if moved {
                        // The scan below finds it.
                    } else if let Ok(Some(_)) = frame_block(bytes, next, 0, &sync, "") {
                        *pos = next;
                        return (start, next as u64);
                    }
                }
                // The marker cannot start before the block's first byte + 1.
                let from = (start as usize + 1).min(bytes.len());
                *pos = match memchr::memmem::find(&bytes[from..], &sync) {
                    Some(i) => from + i + 16,
                    None => bytes.len(),
                };
                (start, *pos as u64)
            }
            Input::Stream { reader, scratch } => {
                // First inside the bytes already read (a wrong byte size may have read past
                // the marker), then onwards in the stream.
                if let Some(i) = memchr::memmem::find(scratch, &sync) {
                    let after = i + 16;
                    let rest = scratch.len() - after;
                    reader.inner.unread(&scratch[after..]);
                    reader.offset -= rest as u64;
                } else {
                    let keep = scratch.len().min(15);
                    let tail = scratch[scratch.len() - keep..].to_vec();
                    // An I/O error ends the scan like the end of the input; the next read
                    // reports it.
                    let _ = scan_to_sync(reader, &tail, &sync);
                }
                scratch.clear();
                (start, reader.offset)
            }
        }
    }

    /// Hand the pages of a memory map before `offset` back to the kernel: decoded data never
    /// points into the map, so resident memory stays bounded however large the file.
    fn release_before(&mut self, offset: u64) {
        let Input::Contiguous {
            map: Some(map),
            released,
            ..
        } = &mut self.input
        else {
            return;
        };
        let page = 4096;
        let upto = (offset as usize).min(map.len()) / page * page;
        if upto < *released + RELEASE_CHUNK {
            return;
        }
        // SAFETY: the map is a read-only, shared mapping of a file. MADV_DONTNEED only drops
        // the pages from this process; reading them again faults them back in from the file,
        // so no live reference can observe changed data. Blocks are handed out in order and
        // decoded data is copied out of the map; what reads before `offset` again (a range's
        // count of earlier blocks, `FirstIndex`) reads the file's same bytes back.
        let result = unsafe {
            map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                *released,
                upto - *released,
            )
        };
        if result.is_ok() {
            *released = upto;
        }
    }
}

/// Consume a stream up to and including the next `sync` marker (`tail`: the last bytes read
/// before, up to 15, which the marker may start in). At the end of the input, everything is
/// consumed.
fn scan_to_sync(reader: &mut StreamReader, tail: &[u8], sync: &[u8; 16]) -> std::io::Result<()> {
    let mut window = tail.to_vec();
    loop {
        let buf = reader.inner.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        let old = window.len();
        window.extend_from_slice(buf);
        let (consumed, found) = match memchr::memmem::find(&window, sync) {
            Some(i) => (i + 16 - old, true),
            None => (buf.len(), false),
        };
        reader.inner.consume(consumed);
        reader.offset += consumed as u64;
        if found {
            return Ok(());
        }
        let keep = window.len().min(15);
        window.drain(..window.len() - keep);
    }
}

/// The file-global index of the block starting at `target`: the blocks framed from the first
/// one at `first` (only their headers are read). If the framing before `target` is damaged,
/// the sync markers from there on are counted instead.
fn block_index_at(bytes: &[u8], first: usize, target: usize, sync: &[u8; 16]) -> u64 {
    let mut pos = first;
    let mut index = 0;
    while pos < target {
        match frame_block(bytes, pos, index, sync, "") {
            Ok(Some(span)) => {
                pos = span.end;
                index += 1;
            }
            _ => {
                let between = &bytes[pos..target.min(bytes.len())];
                return index + memchr::memmem::find_iter(between, sync).count() as u64;
            }
        }
    }
    index
}

/// The blocks of all input files of one reader, in order.
pub(crate) struct BlockSource {
    files: VecDeque<FileInput>,
    /// Blocks skipped while framing, not yet taken by the engine.
    skipped: Vec<SkippedBlock>,
}

impl BlockSource {
    pub(crate) fn new(files: Vec<FileInput>) -> Self {
        BlockSource {
            files: files.into(),
            skipped: Vec::new(),
        }
    }

    /// Hold the blocks read from now on to `limit` bytes decompressed.
    pub(crate) fn set_max_block_size(&mut self, limit: usize) {
        for file in &mut self.files {
            Arc::make_mut(&mut file.ctx).max_block_size = limit;
        }
    }

    /// The next block of any file, or `None` after the last file.
    pub(crate) fn next_block(&mut self) -> Result<Option<RawBlock>> {
        while let Some(file) = self.files.front_mut() {
            if let Some(block) = file.next_block(&mut self.skipped)? {
                return Ok(Some(block));
            }
            self.files.pop_front();
        }
        Ok(None)
    }

    /// The blocks skipped while framing since the last call.
    pub(crate) fn take_skipped(&mut self) -> Vec<SkippedBlock> {
        std::mem::take(&mut self.skipped)
    }

    /// Everything of file `file_index` before `offset` has been decoded.
    pub(crate) fn release_before(&mut self, file_index: usize, offset: u64) {
        if let Some(file) = self.files.front_mut() {
            if file.ctx.file_index == file_index {
                file.release_before(offset);
            }
        }
    }

    /// Total bytes of the contiguous inputs (for sizing work units); `None` for streams.
    pub(crate) fn known_len(&self) -> Option<u64> {
        self.files
            .iter()
            .map(|f| match &f.input {
                Input::Contiguous { bytes, .. } => Some(bytes.len() as u64),
                Input::Stream { .. } => None,
            })
            .sum()
    }
}
