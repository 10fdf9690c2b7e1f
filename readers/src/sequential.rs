//! The single-threaded engine: blocks decoded one after another on the caller's thread, batches
//! filled across block boundaries. A block's decoding pauses once its batches take
//! [`PAUSE_BYTES`], so that the caller takes them before more of the block is decoded.

use crate::batches::Batches;
use crate::error::{Error, Result};
use crate::source::{BlockSource, RawBlock, SkippedBlock};
use crate::unit::{WorkerState, PAUSE_BYTES};
use arrow_array::RecordBatch;

pub(crate) struct Sequential {
    source: BlockSource,
    state: WorkerState,
    ready: Batches,
    /// The last block decoded (to name it if the final flush fails); while its decoding is
    /// paused ([`WorkerState::is_begun`]), the block the next step goes on with.
    last: Option<RawBlock>,
    pending_error: Option<Error>,
    finished: bool,
    /// Blocks skipped and not yet taken by the application.
    skipped: Vec<SkippedBlock>,
}

impl Sequential {
    pub(crate) fn new(source: BlockSource, state: WorkerState) -> Self {
        Sequential {
            source,
            state,
            ready: Batches::new(),
            last: None,
            pending_error: None,
            finished: false,
            skipped: Vec::new(),
        }
    }

    /// Decode the next block, or the next part of a paused one; false at the end of the input.
    fn step(&mut self) -> Result<bool> {
        let block = match self.last.take() {
            Some(block) if self.state.is_begun() => block,
            last => {
                self.last = last;
                let next = self.source.next_block();
                self.skipped.extend(self.source.take_skipped());
                let Some(block) = next? else {
                    return Ok(false);
                };
                block
            }
        };
        let mut out = Batches::pausing_at(PAUSE_BYTES);
        let result = self
            .state
            .decode_or_skip(&block, block.count, &mut out, &mut self.skipped);
        self.ready.append(out);
        if !self.state.is_begun() {
            self.state.release_large_scratch();
            self.source.release_before(block.ctx.file_index, block.end);
        }
        self.last = Some(block);
        result.map(|()| true)
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(block) = &self.last {
            let mut out = Batches::new();
            self.state.flush_into(block, &mut out)?;
            self.ready.append(out);
        }
        Ok(())
    }

    /// The blocks skipped since the last call.
    pub(crate) fn take_skipped(&mut self) -> Vec<SkippedBlock> {
        std::mem::take(&mut self.skipped)
    }

    pub(crate) fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Some(Ok(batch));
            }
            if let Some(e) = self.pending_error.take() {
                return Some(Err(e));
            }
            if self.finished {
                return None;
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => {
                    self.finished = true;
                    if let Err(e) = self.flush() {
                        self.pending_error = Some(e);
                    }
                }
                Err(e) => {
                    // Deliver the rows decoded before the error, then the error.
                    // (If that flush failed too, the original error is the one worth reporting.)
                    self.finished = true;
                    let _ = self.flush();
                    self.pending_error = Some(e);
                }
            }
        }
    }
}
