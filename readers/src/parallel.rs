//! The parallel engine: consecutive blocks are grouped into work units of a few MB, units are
//! decoded by rayon workers (each with its own decoder, decompressor and buffer), and batches
//! come back in file order. At most a small window of units is in flight, so memory does not
//! grow with the file.

use crate::batches::Batches;
use crate::error::{Error, Result};
use crate::source::{BlockSource, RawBlock, SkippedBlock};
use crate::unit::{UnitOutput, WorkerState};
use arrow_array::RecordBatch;
use avrow_engine::RecordDecoder;
use rayon::ThreadPool;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex, OnceLock};

/// Work units hold about this many bytes of block data at most...
const MAX_UNIT_BYTES: u64 = 8 << 20;
/// ...and at least this many (unless the input is smaller).
const MIN_UNIT_BYTES: u64 = 256 << 10;
/// Total block bytes in flight are kept under this (the window shrinks units on many cores).
const MAX_IN_FLIGHT_BYTES: u64 = 128 << 20;
/// Unit size for streams, whose length is unknown.
const STREAM_UNIT_BYTES: u64 = 4 << 20;

/// The thread pool used when all cores are asked for: one per process, created on first use.
fn shared_pool() -> Result<Arc<ThreadPool>> {
    static POOL: OnceLock<std::result::Result<Arc<ThreadPool>, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("avrow-{i}"))
            .build()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|e| Error::InvalidArgument(format!("cannot start the decoding thread pool: {e}")))
}

/// A pool of `threads` workers (the shared one when that is every core).
pub(crate) fn pool_for(threads: usize) -> Result<Arc<ThreadPool>> {
    if threads == available_threads() {
        return shared_pool();
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("avrow-{i}"))
        .build()
        .map(Arc::new)
        .map_err(|e| {
            Error::InvalidArgument(format!("cannot start {threads} decoding threads: {e}"))
        })
}

/// Every core this process may use.
pub(crate) fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Target block bytes for the next unit for `threads` workers, with `remaining` bytes of input
/// left (unknown for streams).
///
/// Guided scheduling: a quarter of each worker's share of what is left, so units start large
/// (few short batches at unit ends, little per-unit overhead) and shrink towards the end of the
/// input, where the last units decide when the workers finish together.
pub(crate) fn unit_bytes(remaining: Option<u64>, threads: usize, window: usize) -> u64 {
    let cap = MAX_UNIT_BYTES
        .min(MAX_IN_FLIGHT_BYTES / window as u64)
        .max(MIN_UNIT_BYTES);
    match remaining {
        Some(left) => (left / (threads as u64 * 4)).clamp(MIN_UNIT_BYTES, cap),
        None => STREAM_UNIT_BYTES.min(cap),
    }
}

/// A unit's result, on its way back from a worker.
struct InFlight {
    result: Receiver<UnitOutput>,
    /// The unit's file and the end of its last block (to release memory-mapped pages).
    file_index: usize,
    end: u64,
    /// Blocks the source skipped while framing this unit (they lie before its blocks).
    skipped: Vec<SkippedBlock>,
}

pub(crate) struct Parallel {
    source: BlockSource,
    pool: Arc<ThreadPool>,
    states: Arc<Mutex<Vec<WorkerState>>>,
    /// A decoder per plan, cloned for each new worker.
    prototype: Vec<RecordDecoder>,
    window: usize,
    threads: usize,
    /// Input bytes not yet handed to a unit (`None` for streams).
    remaining: Option<u64>,
    in_flight: VecDeque<InFlight>,
    ready: Batches,
    pending_error: Option<Error>,
    /// No more units will be started (end of input, or an error was met).
    source_done: bool,
    /// Blocks skipped and not yet taken by the application.
    skipped: Vec<SkippedBlock>,
}

impl Parallel {
    pub(crate) fn new(
        source: BlockSource,
        pool: Arc<ThreadPool>,
        threads: usize,
        prototype: Vec<RecordDecoder>,
    ) -> Self {
        let window = 2 * threads.max(1);
        let remaining = source.known_len();
        Parallel {
            source,
            pool,
            states: Arc::new(Mutex::new(Vec::new())),
            prototype,
            window,
            threads: threads.max(1),
            remaining,
            in_flight: VecDeque::new(),
            ready: Batches::new(),
            pending_error: None,
            source_done: false,
            skipped: Vec::new(),
        }
    }

    /// Read the next unit's blocks: consecutive blocks of one file, up to the unit size.
    /// Returns the blocks read and the error that stopped reading, if any.
    fn next_unit(&mut self) -> (Vec<RawBlock>, Option<Error>) {
        let mut blocks: Vec<RawBlock> = Vec::new();
        let mut bytes = 0u64;
        let target = unit_bytes(self.remaining, self.threads, self.window);
        while bytes < target {
            match self.source.next_block() {
                Ok(Some(block)) => {
                    self.remaining = self
                        .remaining
                        .map(|r| r.saturating_sub(block.end - block.offset));
                    let other_file = blocks
                        .last()
                        .is_some_and(|b| b.ctx.file_index != block.ctx.file_index);
                    bytes += block.data.len() as u64;
                    blocks.push(block);
                    if other_file {
                        // Units never span files: put the new file's block back in a unit of its own.
                        let block = blocks.pop().expect("just pushed");
                        self.spawn(std::mem::take(&mut blocks));
                        blocks.push(block);
                        bytes = blocks[0].data.len() as u64;
                    }
                }
                Ok(None) => {
                    self.source_done = true;
                    break;
                }
                Err(e) => {
                    self.source_done = true;
                    return (blocks, Some(e));
                }
            }
        }
        (blocks, None)
    }

    fn spawn(&mut self, blocks: Vec<RawBlock>) {
        let Some(last) = blocks.last() else {
            // Only skipped blocks: report them in order with the units.
            let skipped = self.source.take_skipped();
            if !skipped.is_empty() {
                let (tx, rx) = sync_channel(1);
                let _ = tx.send(UnitOutput {
                    batches: Batches::new(),
                    skipped: Vec::new(),
                    error: None,
                });
                self.in_flight.push_back(InFlight {
                    result: rx,
                    file_index: usize::MAX,
                    end: 0,
                    skipped,
                });
            }
            return;
        };
        let (file_index, end) = (last.ctx.file_index, last.end);
        let (tx, rx) = sync_channel(1);
        let states = self.states.clone();
        let prototype = self.prototype.clone();
        self.pool.spawn(move || {
            let state = states.lock().map(|mut s| s.pop()).unwrap_or(None);
            let mut state = state.unwrap_or_else(|| WorkerState::new(prototype));
            let output = match catch_unwind(AssertUnwindSafe(|| state.decode_unit(&blocks))) {
                Ok(output) => {
                    if let Ok(mut s) = states.lock() {
                        s.push(state);
                    }
                    output
                }
                // A panic is a bug in avrow; the state may be half-updated, so it is dropped.
                Err(_) => UnitOutput::failed(Error::Internal(format!(
                    "a decoding worker panicked on {}",
                    blocks[0].ctx.file
                ))),
            };
            // The reader may have been dropped; then nobody wants the result.
            let _ = tx.send(output);
        });
        let skipped = self.source.take_skipped();
        self.in_flight.push_back(InFlight {
            result: rx,
            file_index,
            end,
            skipped,
        });
    }

    /// Start units until the window is full or the input is exhausted.
    fn fill_window(&mut self) {
        while !self.source_done && self.in_flight.len() < self.window {
            let (blocks, error) = self.next_unit();
            self.spawn(blocks);
            if let Some(e) = error {
                // Delivered after the units before it.
                let (tx, rx) = sync_channel(1);
                let _ = tx.send(UnitOutput::failed(e));
                self.in_flight.push_back(InFlight {
                    result: rx,
                    file_index: usize::MAX,
                    end: 0,
                    skipped: self.source.take_skipped(),
                });
            }
        }
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
            self.fill_window();
            let unit = self.in_flight.pop_front()?;
            let output = unit.result.recv().unwrap_or_else(|_| {
                UnitOutput::failed(Error::Internal(
                    "a decoding worker stopped without a result".into(),
                ))
            });
            let mut skipped = unit.skipped;
            skipped.extend(output.skipped);
            skipped.sort_by_key(|s| (s.file_index, s.block));
            self.skipped.extend(skipped);
            self.ready.append(output.batches);
            self.source.release_before(unit.file_index, unit.end);
            if let Some(e) = output.error {
                // Everything before the error is delivered, then the error, then nothing.
                self.pending_error = Some(e);
                self.source_done = true;
                self.in_flight.clear();
            }
        }
    }
}
