//! [`BlockReader`]: the blocks of a container file without decoding records — for counting
//! rows, inspecting files, or custom pipelines that decode with [`avrow_engine`] themselves.

use crate::codec::{Codec, Decompressor};
use crate::container::Header;
use crate::error::Result;
use crate::source::{BlockSource, FileInput, OpenOptions, RawBlock};
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

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
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
