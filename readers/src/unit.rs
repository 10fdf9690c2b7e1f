//! Decoding a run of consecutive blocks (a work unit) on one thread, with state that a worker
//! reuses from unit to unit: its record decoder, its decompressor and its decompression buffer.

use crate::batches::Batches;
use crate::codec::Decompressor;
use crate::error::{Error, Result};
use crate::source::{RawBlock, SkippedBlock};
use avrow_engine::{BatchSink, DecodeError, RecordDecoder};

/// What a worker keeps between units.
pub(crate) struct WorkerState {
    /// One decoder per decode plan (one plan per distinct writer schema among the files; all
    /// produce the same Arrow schema).
    decoders: Vec<RecordDecoder>,
    /// The decoder that may hold buffered rows.
    current: usize,
    decompressor: Decompressor,
    scratch: Vec<u8>,
}

/// A decompression buffer grown past this by one large block is freed after it, so that an
/// idle worker does not keep it.
const MAX_KEPT_SCRATCH: usize = 64 << 20;

impl WorkerState {
    /// `decoders` holds one decoder per plan (at least one).
    pub(crate) fn new(decoders: Vec<RecordDecoder>) -> Self {
        assert!(!decoders.is_empty(), "a worker needs a decoder");
        WorkerState {
            decoders,
            current: 0,
            decompressor: Decompressor::default(),
            scratch: Vec::new(),
        }
    }

    fn decode_error(block: &RawBlock, source: DecodeError) -> Error {
        Error::Decode {
            file: block.ctx.file.to_string(),
            block: block.ctx.block_index(block.index),
            offset: block.offset,
            source,
        }
    }

    /// Free a decompression buffer that one large block grew past [`MAX_KEPT_SCRATCH`].
    pub(crate) fn release_large_scratch(&mut self) {
        if self.scratch.capacity() > MAX_KEPT_SCRATCH {
            self.scratch = Vec::new();
        }
    }

    /// Flush the buffered rows, if any, into `out`.
    pub(crate) fn flush_into(&mut self, block: &RawBlock, out: &mut Batches) -> Result<()> {
        if let Some(batch) = self.decoders[self.current]
            .flush()
            .map_err(|e| Self::decode_error(block, e))?
        {
            out.push(batch);
        }
        Ok(())
    }

    /// Decode `block` as [`WorkerState::decode_block`] does; if it fails and the file skips
    /// bad blocks, remove every row of the block (from `out` and from the decoder) and report
    /// it in `skipped` instead.
    pub(crate) fn decode_or_skip(
        &mut self,
        block: &RawBlock,
        rows_ahead: u64,
        out: &mut Batches,
        skipped: &mut Vec<SkippedBlock>,
    ) -> Result<()> {
        if !block.ctx.skip_bad_blocks {
            return self.decode_block(block, rows_ahead, out);
        }
        if block.ctx.plan != self.current {
            self.flush_into(block, out)?;
            self.current = block.ctx.plan.min(self.decoders.len() - 1);
        }
        let rows_before = self.decoders[self.current].buffered_rows();
        let mark = out.mark();
        let Err(error) = self.decode_block(block, rows_ahead, out) else {
            return Ok(());
        };
        if let Some(first) = out.first_since(mark) {
            // Batches filled inside the bad block: keep only the rows of earlier blocks.
            if rows_before > 0 {
                out.push(first.slice(0, rows_before));
            }
            self.decoders[self.current].truncate(0);
        } else {
            self.decoders[self.current].truncate(rows_before);
        }
        skipped.push(block.skipped(error));
        Ok(())
    }

    /// Decode every record of `block`, pushing each batch that fills up to `out`. Rows of a
    /// partial batch stay buffered in the decoder. On error, the rows decoded before the bad
    /// record stay buffered (so they can still be flushed) and the error is returned.
    ///
    /// `rows_ahead` is how many records are still to come into the current batch from this
    /// block and the ones after it in the same unit (at least this block's count): each new
    /// batch reserves room for that many rows, up to the batch size.
    pub(crate) fn decode_block(
        &mut self,
        block: &RawBlock,
        rows_ahead: u64,
        out: &mut Batches,
    ) -> Result<()> {
        if block.ctx.plan != self.current {
            // Rows of another writer schema are buffered: they end their batch here.
            self.flush_into(block, out)?;
            self.current = block.ctx.plan.min(self.decoders.len() - 1);
        }
        self.release_large_scratch();
        let decoder = &mut self.decoders[self.current];
        let data = block.decompressed_for(decoder, &mut self.decompressor, &mut self.scratch)?;
        decoder
            .decode_block_into(data, block.count, rows_ahead, out)
            .map_err(|e| Self::decode_error(block, e))
    }

    /// Decode a whole unit into batches (the last one may be short). Rows before an error are
    /// delivered, then the error.
    pub(crate) fn decode_unit(&mut self, blocks: &[RawBlock]) -> UnitOutput {
        let mut batches = Batches::new();
        let mut skipped = Vec::new();
        let mut error = None;
        let mut rows_ahead: u64 = blocks.iter().map(|b| b.count).sum();
        for block in blocks {
            let result = self.decode_or_skip(block, rows_ahead, &mut batches, &mut skipped);
            rows_ahead = rows_ahead.saturating_sub(block.count);
            if let Err(e) = result {
                error = Some(e);
                break;
            }
        }
        if let Some(last) = blocks.last() {
            if let Err(e) = self.flush_into(last, &mut batches) {
                error.get_or_insert(e);
            }
        }
        self.release_large_scratch();
        UnitOutput {
            batches,
            skipped,
            error,
        }
    }
}

/// The result of decoding one unit: its batches in order, the blocks it skipped, then
/// possibly an error.
pub(crate) struct UnitOutput {
    pub(crate) batches: Batches,
    pub(crate) skipped: Vec<SkippedBlock>,
    pub(crate) error: Option<Error>,
}

impl UnitOutput {
    /// A unit that produced nothing but `error`.
    pub(crate) fn failed(error: Error) -> Self {
        UnitOutput {
            batches: Batches::new(),
            skipped: Vec::new(),
            error: Some(error),
        }
    }
}
