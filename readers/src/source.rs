//! Where blocks come from. Each input file is either contiguous (a memory map or bytes in
//! memory, framed in place without copying) or a stream (read block by block). A
//! [`BlockSource`] chains the files of one reader and hands out [`RawBlock`]s in file order.

use crate::codec::{Codec, Decompressor};
use crate::container::{frame_block, read_block, Counting, Header};
use crate::error::{Error, Result};
use bytes::Bytes;
use std::collections::VecDeque;
use std::io::{BufReader, Read};
use std::sync::Arc;

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
}

impl BlockContext {
    pub(crate) fn block_error(&self, block: &RawBlock, message: String) -> Error {
        Error::Block {
            file: self.file.to_string(),
            block: block.index,
            offset: block.offset,
            message,
        }
    }
}

/// One block as read from its file: where it was and its (possibly compressed) data.
#[derive(Debug, Clone)]
pub(crate) struct RawBlock {
    pub(crate) ctx: Arc<BlockContext>,
    /// Index of the block in its file.
    pub(crate) index: u64,
    /// Offset of the block's first byte in its file.
    pub(crate) offset: u64,
    /// Offset just past the block's sync marker.
    pub(crate) end: u64,
    pub(crate) count: u64,
    pub(crate) data: Bytes,
}

impl RawBlock {
    /// The block's data, decompressed into `scratch` if the file is compressed.
    pub(crate) fn decompressed<'a>(
        &'a self,
        decompressor: &mut Decompressor,
        scratch: &'a mut Vec<u8>,
    ) -> Result<&'a [u8]> {
        let codec = self.ctx.codec;
        if codec == Codec::Null {
            return Ok(&self.data);
        }
        decompressor
            .decompress(codec, &self.data, scratch, self.ctx.max_block_size)
            .map_err(|m| {
                self.ctx
                    .block_error(self, format!("{codec} decompression failed: {m}"))
            })?;
        Ok(scratch)
    }
}

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
    Stream(Counting<BufReader<Box<dyn Read + Send>>>),
}

/// Memory maps at least this far behind the reader are handed back to the kernel.
const RELEASE_CHUNK: usize = 8 << 20;

/// One input file of a reader.
pub(crate) struct FileInput {
    pub(crate) ctx: Arc<BlockContext>,
    pub(crate) header: Arc<Header>,
    pub(crate) input: Input,
    pub(crate) next_index: u64,
}

impl FileInput {
    /// Restrict a contiguous input to the blocks whose preceding sync marker starts in
    /// `start..end` (Hadoop-style splits: any partition of the file into ranges reads every
    /// block exactly once). Block indexes in errors still count from the range's first block.
    pub(crate) fn restrict(&mut self, start: u64, end: u64) -> Result<()> {
        let Input::Contiguous {
            bytes,
            pos,
            end: stop,
            ..
        } = &mut self.input
        else {
            return Err(Error::InvalidArgument(
                "byte ranges need a seekable input (a path or bytes), not a stream".into(),
            ));
        };
        *stop = end;
        let header_sync = self.header.len() - 16;
        if start <= header_sync {
            return Ok(());
        }
        // The first sync marker starting at or after `start`; the block after it is ours.
        let sync = self.header.sync();
        let from = (start as usize).min(bytes.len());
        *pos = match bytes[from..].windows(16).position(|w| w == sync) {
            Some(i) => from + i + 16,
            None => bytes.len(),
        };
        Ok(())
    }

    fn next_block(&mut self) -> Result<Option<RawBlock>> {
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
            Input::Stream(reader) => {
                let Some(block) = read_block(
                    reader,
                    index,
                    &self.header.sync(),
                    &self.ctx.file,
                    Vec::new(),
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
                    data: Bytes::from(block.data),
                }
            }
        };
        self.next_index += 1;
        Ok(Some(block))
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
        // so no live reference can observe changed data. Nothing reads before `offset` again
        // (blocks are handed out in order and decoded data is copied out of the map).
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

/// The blocks of all input files of one reader, in order.
pub(crate) struct BlockSource {
    files: VecDeque<FileInput>,
}

impl BlockSource {
    pub(crate) fn new(files: Vec<FileInput>) -> Self {
        BlockSource {
            files: files.into(),
        }
    }

    /// The next block of any file, or `None` after the last file.
    pub(crate) fn next_block(&mut self) -> Result<Option<RawBlock>> {
        while let Some(file) = self.files.front_mut() {
            if let Some(block) = file.next_block()? {
                return Ok(Some(block));
            }
            self.files.pop_front();
        }
        Ok(None)
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
                Input::Stream(_) => None,
            })
            .sum()
    }
}
