//! Decoding a run of consecutive blocks (a work unit) on one thread, with state that a worker
//! reuses from unit to unit: its record decoder, its decompressor and its decompression buffer.
//!
//! A block is decoded into batches that are handed out as they fill: when the queue they go to
//! is full ([`Batches::pausing_at`], [`PAUSE_BYTES`]), decoding pauses inside the block, the state keeps where
//! it stands and the block's decompressed data, and the caller hands the batches out before
//! it resumes. So a block of millions of records (a small compressed block can expand a
//! thousandfold) costs a few batches of memory, not all of its rows at once.

use crate::batches::Batches;
use crate::codec::{Decompressor, CHECK_WINDOW};
use crate::error::{Error, Result};
use crate::source::{RawBlock, SkippedBlock};
use avrow_engine::{BatchSink, BlockProgress, DecodeError, RecordDecoder, StreamCheckError};

/// What a worker keeps between units.
pub(crate) struct WorkerState {
    /// One decoder per decode plan (one plan per distinct writer schema among the files; all
    /// produce the same Arrow schema).
    decoders: Vec<RecordDecoder>,
    /// The decoder that may hold buffered rows.
    current: usize,
    decompressor: Decompressor,
    scratch: Vec<u8>,
    /// Where the block being decoded stands when its decoding paused (its decompressed data
    /// is in `scratch` for a compressed file).
    begun: Option<BlockProgress>,
}

/// Batches of this many bytes waiting to be handed out pause a block's decoding on one thread
/// (a parallel unit pauses at its share of the window, at least twice this). Ordinary blocks
/// (tens of kilobytes to a few megabytes) rarely pause, so a skipping reader rarely checks a
/// block ahead ([`WorkerState::decode_or_skip`]).
pub(crate) const PAUSE_BYTES: usize = 16 << 20;

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
            begun: None,
        }
    }

    /// Whether decoding paused inside a block: the next call decodes the same block on.
    pub(crate) fn is_begun(&self) -> bool {
        self.begun.is_some()
    }

    fn decode_error(block: &RawBlock, source: DecodeError) -> Error {
        Error::Decode {
            file: block.ctx.file.to_string(),
            block: block.ctx.block_index(block.index),
            offset: block.offset,
            source,
        }
    }

    /// Free a decompression buffer that one large block grew past [`MAX_KEPT_SCRATCH`] (not
    /// while a block whose data it holds is begun).
    pub(crate) fn release_large_scratch(&mut self) {
        if self.begun.is_none() && self.scratch.capacity() > MAX_KEPT_SCRATCH {
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
    /// it in `skipped` instead. A block that pauses is first checked to its end, so that no row
    /// of a bad block is handed out; one that fails after that is an error.
    pub(crate) fn decode_or_skip(
        &mut self,
        block: &RawBlock,
        rows_ahead: u64,
        out: &mut Batches,
        skipped: &mut Vec<SkippedBlock>,
    ) -> Result<()> {
        if !block.ctx.skip_bad_blocks || self.begun.is_some() {
            return self.decode_block(block, rows_ahead, out);
        }
        if block.ctx.plan != self.current {
            self.flush_into(block, out)?;
            self.current = block.ctx.plan.min(self.decoders.len() - 1);
        }
        let rows_before = self.decoders[self.current].buffered_rows();
        let mark = out.mark();
        let error = match self.decode_block(block, rows_ahead, out) {
            Ok(()) if self.begun.is_none() => return Ok(()),
            Ok(()) => match self.check_rest(block) {
                Ok(()) => return Ok(()),
                Err(error) => {
                    self.begun = None;
                    error
                }
            },
            Err(error) => error,
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

    /// Check the records of the begun block that are not decoded yet, without keeping them.
    fn check_rest(&mut self, block: &RawBlock) -> Result<()> {
        let Some(progress) = self.begun else {
            return Ok(());
        };
        let data = block.held(&self.scratch);
        let rest = &data[progress.offset().min(data.len())..];
        let mut at = 0;
        let mut fill = |buf: &mut Vec<u8>| -> std::result::Result<usize, std::convert::Infallible> {
            let piece = &rest[at..rest.len().min(at + CHECK_WINDOW / 2)];
            at += piece.len();
            buf.extend_from_slice(piece);
            Ok(piece.len())
        };
        let count = block.count.saturating_sub(progress.records());
        self.decoders[self.current]
            .check_stream(count, CHECK_WINDOW, rest.len(), &mut fill)
            .map_err(|e| match e {
                StreamCheckError::Decode(e) => Self::decode_error(
                    block,
                    e.with_offset_base(progress.offset())
                        .with_record_base(progress.records()),
                ),
                other => Error::Internal(format!("unexpected check result: {other:?}")),
            })
    }

    /// Decode the records of `block` (from where it paused, if it is begun), pushing each
    /// batch that fills up to `out`, until the block ends or `out` is full: then the block is
    /// begun ([`WorkerState::is_begun`]) and the next call goes on with it. Rows of a partial
    /// batch stay buffered in the decoder. On error, the rows decoded before the bad record
    /// stay buffered (so they can still be flushed) and the error is returned.
    ///
    /// `rows_ahead` is how many records are still to come into the current batch from this
    /// block and the ones after it in the same unit (at least this block's count; the same
    /// for every call on one block): each new batch reserves room for that many rows, up to
    /// the batch size.
    pub(crate) fn decode_block(
        &mut self,
        block: &RawBlock,
        rows_ahead: u64,
        out: &mut Batches,
    ) -> Result<()> {
        let (mut progress, resumed) = match self.begun.take() {
            Some(progress) => (progress, true),
            None => {
                if block.ctx.plan != self.current {
                    // Rows of another writer schema are buffered: they end their batch here.
                    self.flush_into(block, out)?;
                    self.current = block.ctx.plan.min(self.decoders.len() - 1);
                }
                self.release_large_scratch();
                (BlockProgress::default(), false)
            }
        };
        let decoder = &mut self.decoders[self.current];
        let data = if resumed {
            block.held(&self.scratch)
        } else {
            block.decompressed_for(decoder, &mut self.decompressor, &mut self.scratch)?
        };
        let done = decoder
            .decode_block_part(data, block.count, rows_ahead, out, &mut progress)
            .map_err(|e| Self::decode_error(block, e))?;
        if !done {
            self.begun = Some(progress);
        }
        Ok(())
    }

    /// Decode a unit into batches (the last one may be short), or the rest of a unit whose
    /// first block is begun. Rows before an error are delivered, then the error. Decoding
    /// pauses inside a block once the unit's batches take `pause_bytes` (see the module docs):
    /// then the output says at which block, and this state goes on from there.
    pub(crate) fn decode_unit(&mut self, blocks: &[RawBlock], pause_bytes: usize) -> UnitOutput {
        let mut batches = Batches::pausing_at(pause_bytes);
        let mut skipped = Vec::new();
        let mut error = None;
        let mut paused_at = None;
        let mut rows_ahead: u64 = blocks.iter().map(|b| b.count).sum();
        for (i, block) in blocks.iter().enumerate() {
            let result = self.decode_or_skip(block, rows_ahead, &mut batches, &mut skipped);
            if let Err(e) = result {
                error = Some(e);
                break;
            }
            if self.is_begun() {
                paused_at = Some(i);
                break;
            }
            rows_ahead = rows_ahead.saturating_sub(block.count);
        }
        if let (None, Some(last)) = (paused_at, blocks.last()) {
            if let Err(e) = self.flush_into(last, &mut batches) {
                error.get_or_insert(e);
            }
        }
        self.release_large_scratch();
        UnitOutput {
            batches,
            skipped,
            error,
            paused_at,
            rest: None,
        }
    }
}

/// What is left of a unit that paused inside a block: the state that holds where the block
/// stands, and the blocks from that one on.
pub(crate) struct Rest {
    pub(crate) state: WorkerState,
    pub(crate) blocks: Vec<RawBlock>,
}

/// The result of decoding one unit: its batches in order, the blocks it skipped, then
/// possibly an error, or where it paused.
pub(crate) struct UnitOutput {
    pub(crate) batches: Batches,
    pub(crate) skipped: Vec<SkippedBlock>,
    pub(crate) error: Option<Error>,
    /// The index among the unit's blocks of the one decoding paused in.
    pub(crate) paused_at: Option<usize>,
    /// For a unit that paused, what is left of it (set by the engine that ran it).
    pub(crate) rest: Option<Rest>,
}

impl UnitOutput {
    /// A unit that produced nothing but `error`.
    pub(crate) fn failed(error: Error) -> Self {
        UnitOutput {
            batches: Batches::new(),
            skipped: Vec::new(),
            error: Some(error),
            paused_at: None,
            rest: None,
        }
    }
}
