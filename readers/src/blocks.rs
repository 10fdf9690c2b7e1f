//! [`BlockReader`]: the blocks of a container file without decoding records — for counting
//! rows, inspecting files, or custom pipelines that decode with [`avrow_engine`] themselves.

use crate::codec::{Codec, Decompressor};
use crate::container::Header;
use crate::error::Result;
use crate::source::{BlockSource, FileInput, OpenOptions, RawBlock};
use avrow_engine::{DecodeOptions, DecodePlan};
use bytes::Bytes;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// One block of a container file, as stored.
#[derive(Debug, Clone)]
pub struct Block {
    raw: RawBlock,
}

impl Block {
    /// Index of the block in its file (0-based).
    pub fn index(&self) -> u64 {
        self.raw.ctx.block_index(self.raw.index)
    }

    /// Byte offset of the block's start (its record count) in the file.
    pub fn offset(&self) -> u64 {
        self.raw.offset
    }

    /// Number of records in the block, from its header.
    pub fn record_count(&self) -> u64 {
        self.raw.count
    }

    /// The block's data as stored (compressed with [`Block::codec`]).
    pub fn data(&self) -> &Bytes {
        &self.raw.data
    }

    /// The codec of the block's data.
    pub fn codec(&self) -> Codec {
        self.raw.ctx.codec
    }

    /// The block's record count, checked against its size as decoding checks it: `count`
    /// records of at least `min_record_size` bytes each (see
    /// [`avrow_engine::RecordDecoder::min_record_size`]) must fit the block's data (its
    /// stored bytes with the null codec, else the block size limit its data may decompress
    /// to), and a block holds at most 2^31 - 1 records of no bytes. A count no decoding could
    /// read is an error, so a count from the headers agrees with reading the records.
    ///
    /// # Errors
    /// [`crate::Error::Decode`] naming the file and block when the count cannot be right.
    pub fn checked_record_count(&self, min_record_size: usize) -> Result<u64> {
        let count = self.raw.count;
        let bytes = match self.codec() {
            Codec::Null => self.raw.data.len(),
            _ => self.raw.ctx.max_block_size,
        };
        avrow_engine::Limit::check_records(count, bytes, min_record_size)
            .map(|_| count)
            .map_err(|limit| crate::Error::Decode {
                file: self.raw.ctx.file.to_string(),
                block: self.index(),
                offset: self.offset(),
                source: avrow_engine::DecodeError::new(
                    avrow_engine::DecodeErrorKind::TooLarge(limit),
                    0,
                ),
            })
    }

    /// The block's data decompressed into `out` (replacing its contents).
    ///
    /// # Errors
    /// The data does not decompress, or exceeds the reader's block size limit.
    pub fn decompress_into(&self, out: &mut Vec<u8>) -> Result<()> {
        let mut decompressor = Decompressor::default();
        let data = self.raw.decompressed(&mut decompressor, out)?;
        if self.codec() == Codec::Null {
            let data = data.to_vec();
            *out = data;
        }
        Ok(())
    }

    /// The size of the block's data once decompressed, without holding it whole where it
    /// expands past 16 MiB and 16 times its stored size (a possible decompression bomb): such
    /// a block is decompressed as a stream and its bytes counted, `scratch` holding one
    /// 256 KiB piece at a time. Smaller blocks are decompressed into `scratch` whole (reuse
    /// it from block to block).
    ///
    /// # Errors
    /// The data does not decompress, or exceeds the reader's block size limit
    /// ([`BlockReader::with_max_block_size`]).
    pub fn decompressed_size(&self, scratch: &mut Vec<u8>) -> Result<u64> {
        self.raw
            .decompressed_len(&mut Decompressor::default(), scratch)
    }
}

/// Iterates over the blocks of one container file without decoding their records.
///
/// ```no_run
/// let blocks = avrow::BlockReader::open("data.avro")?;
/// println!("codec: {}", blocks.header().codec());
/// let mut rows = 0;
/// for block in blocks {
///     rows += block?.record_count();
/// }
/// println!("{rows} rows");
/// # Ok::<(), avrow::Error>(())
/// ```
pub struct BlockReader {
    header: Arc<Header>,
    source: BlockSource,
    failed: bool,
}

impl BlockReader {
    /// Open a file (memory-mapped).
    ///
    /// # Errors
    /// The file cannot be opened, or its header is invalid.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let file = FileInput::open(path.as_ref(), 0, &OpenOptions::default())?;
        Ok(Self::new(file))
    }

    /// Read a file held in memory.
    ///
    /// # Errors
    /// The header is invalid.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Result<Self> {
        let opts = OpenOptions::default();
        let file = FileInput::contiguous("<bytes>".into(), 0, bytes.into(), None, &opts)?;
        Ok(Self::new(file))
    }

    /// Read a file from a stream.
    ///
    /// # Errors
    /// Reading fails, or the header is invalid.
    pub fn from_stream<R: Read + Send + 'static>(reader: R) -> Result<Self> {
        let opts = OpenOptions::default();
        let file = FileInput::stream("<stream>".into(), 0, Box::new(reader), None, &opts)?;
        Ok(Self::new(file))
    }

    fn new(file: FileInput) -> Self {
        BlockReader {
            header: file.header.clone(),
            source: BlockSource::new(vec![file]),
            failed: false,
        }
    }

    /// Refuse blocks larger than `limit` bytes after decompression (default 1 GiB), as
    /// [`crate::ReaderBuilder::with_max_block_size`] does: [`Block::decompress_into`] and
    /// [`Block::decompressed_size`] of a larger block fail, and a stream never holds a stored
    /// block that could not fit.
    pub fn with_max_block_size(mut self, limit: usize) -> Self {
        self.source.set_max_block_size(limit);
        self
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's records, counted from its block headers without decompressing or decoding,
    /// each block's count checked as [`Block::checked_record_count`] checks it against the
    /// smallest record the writer schema allows.
    ///
    /// # Errors
    /// A block that cannot be read, or whose count cannot be right; a total over `u64`.
    pub fn count_records(self) -> Result<u64> {
        // (A schema avrow cannot decode still has counts: they are then checked only as
        // records of no bytes would be.)
        let min_record_size = DecodePlan::new(self.header.schema(), &DecodeOptions::default())
            .map(|plan| plan.decoder().min_record_size())
            .unwrap_or(0);
        let mut records = 0u64;
        for block in self {
            let block = block?;
            let count = block.checked_record_count(min_record_size)?;
            records = records.checked_add(count).ok_or_else(|| {
                crate::Error::InvalidArgument(format!(
                    "{}: the blocks declare more than {} records",
                    block.raw.ctx.file,
                    u64::MAX
                ))
            })?;
        }
        Ok(records)
    }
}

impl Iterator for BlockReader {
    type Item = Result<Block>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.source.next_block() {
            Ok(Some(raw)) => Some(Ok(Block { raw })),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

impl std::fmt::Debug for BlockReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockReader")
            .field("codec", &self.header.codec())
            .finish_non_exhaustive()
    }
}
