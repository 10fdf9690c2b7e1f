//! The parallel engine: consecutive blocks are grouped into work units of up to 2 MB, units are
//! decoded by rayon workers (each with its own decoder, decompressor and buffer), and batches
//! come back in file order. At most a small window of units is in flight, so memory does not
//! grow with the file.
//!
//! Units are small because everything in flight is memory the workers touch for the first
//! time: with units of 8 MB, the first window of a 100 MB file cost two threads a quarter more
//! CPU than one in page faults, and often all of their speed-up (docs/perf/scaling.md). A unit
//! ends where a batch does: it holds whole blocks of about `batch_size` rows, or a power-of-two
//! fraction of that where a batch would be much more than a unit's bytes, so that batches cut
//! at unit ends are still nearly full and alike.
//!
//! A unit whose batches grow past [`unit_pause_bytes`] (a block that decodes to far more than
//! its size) pauses inside the block; when the reader takes its batches it starts the rest of
//! the unit, ahead of the units after it, so what is decoded and not handed out stays bounded.

use crate::batches::Batches;
use crate::error::{Error, Result};
use crate::source::{BlockSource, RawBlock, SkippedBlock};
use crate::unit::{Rest, UnitOutput, WorkerState, PAUSE_BYTES};
use arrow_array::RecordBatch;
use avrow_engine::RecordDecoder;
use rayon::ThreadPool;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex, OnceLock};

/// Work units hold about this many bytes of block data at most (up to twice as many to end
/// on a batch boundary)...
const MAX_UNIT_BYTES: u64 = 2 << 20;
/// ...and at least this many (unless the input is smaller).
const MIN_UNIT_BYTES: u64 = 256 << 10;
/// Total block bytes in flight are kept under this (the window shrinks units on many cores).
const MAX_IN_FLIGHT_BYTES: u64 = 128 << 20;
/// Unit size for streams, whose length is unknown.
const STREAM_UNIT_BYTES: u64 = 2 << 20;
/// The decoded batches a window of units holds before they pause, shared among its units (at
/// least 32 MiB each: a window of 16 units or more may hold more).
const MAX_IN_FLIGHT_DECODED: usize = 256 << 20;

/// The decoded bytes after which a unit pauses inside a block, for a window of `window`
/// units: a share of [`MAX_IN_FLIGHT_DECODED`], from 32 MiB to 64 MiB. Ordinary units rarely
/// pause: they hold about 4 MB of block data (twice [`MAX_UNIT_BYTES`]) and most data grows
/// less than eightfold into Arrow (one-byte longs do), and that matters because a paused
/// unit's rest waits for the reader to reach it, which costs parallelism.
pub(crate) fn unit_pause_bytes(window: usize) -> usize {
    (MAX_IN_FLIGHT_DECODED / window.max(1)).clamp(2 * PAUSE_BYTES, 64 << 20)
}

/// The thread pool used when all cores are asked for: one per process, created on first use.
fn shared_pool() -> Result<Arc<ThreadPool>> {
    // The error keeps the threads rayon was to start (RAYON_NUM_THREADS, else every core).
    static POOL: OnceLock<std::result::Result<Arc<ThreadPool>, (usize, String)>> = OnceLock::new();
    POOL.get_or_init(|| {
        let builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("avrow-{i}"));
        let threads = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|&n: &usize| n > 0)
            .unwrap_or_else(available_threads);
        builder
            .build()
            .map(Arc::new)
            .map_err(|e| (threads, e.to_string()))
    })
    .clone()
    .map_err(|(threads, reason)| Error::ThreadPool { threads, reason })
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
        .map_err(|e| Error::ThreadPool {
            threads,
            reason: e.to_string(),
        })
}

/// The most threads a reader or writer starts: eight a core, at least 16 (a pool thread is
/// started for each: `threads=2**40` from Python never returned, 4000 took 27 s).
pub(crate) fn max_threads() -> usize {
    available_threads().saturating_mul(8).max(16)
}

/// Every core this process may use, asked once: the standard library reads the cgroup's
/// quota from `/proc` and `/sys` on every call (three files opened), which a query over
/// thousands of small files paid at every reader it opened. A later change of the process's
/// CPU affinity or quota is not seen (as rayon's pool, sized once, does not see it).
pub(crate) fn available_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
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
    /// Rows per batch of the decoders.
    batch_size: u64,
    /// Block data bytes and records framed so far: the bytes a row takes, for unit sizes.
    seen_bytes: u64,
    seen_rows: u64,
    /// A block read for a unit it did not fit in: the first of the next unit.
    pending: Option<RawBlock>,
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
        batch_size: usize,
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
            batch_size: batch_size as u64,
            seen_bytes: 0,
            seen_rows: 0,
            pending: None,
            in_flight: VecDeque::new(),
            ready: Batches::new(),
            pending_error: None,
            source_done: false,
            skipped: Vec::new(),
        }
    }

    /// Rows a unit of about `target` bytes should hold: a multiple of the batch size, or the
    /// largest power-of-two fraction of it that takes at most twice `target`, from the bytes a
    /// row has taken so far. `None` before any row is seen.
    fn unit_rows(&self, target: u64) -> Option<u64> {
        if self.seen_rows == 0 {
            return None;
        }
        let fit = (target as u128 * self.seen_rows as u128 / self.seen_bytes.max(1) as u128)
            .clamp(1, u64::MAX as u128) as u64;
        let batch = self.batch_size.max(1);
        if fit >= batch {
            return Some(fit / batch * batch);
        }
        let mut rows = batch;
        while rows > 1 && rows > fit.saturating_mul(2) {
            rows /= 2;
        }
        Some(rows)
    }

    /// Read the next unit's blocks: consecutive blocks of one file, about the unit size, ending
    /// on a batch boundary where the blocks allow (see [`Parallel::unit_rows`]). Returns the
    /// blocks read and the error that stopped reading, if any.
    fn next_unit(&mut self) -> (Vec<RawBlock>, Option<Error>) {
        let mut blocks: Vec<RawBlock> = Vec::new();
        let (mut bytes, mut rows) = (0u64, 0u64);
        let target = unit_bytes(self.remaining, self.threads, self.window);
        loop {
            let block = match self.pending.take() {
                Some(block) => block,
                None => match self.source.next_block() {
                    Ok(Some(block)) => {
                        self.remaining = self
                            .remaining
                            .map(|r| r.saturating_sub(block.end - block.offset));
                        self.seen_bytes += block.data.len() as u64;
                        self.seen_rows += block.count;
                        block
                    }
                    Ok(None) => {
                        self.source_done = true;
                        break;
                    }
                    Err(e) => {
                        self.source_done = true;
                        return (blocks, Some(e));
                    }
                },
            };
            let unit_rows = self.unit_rows(target);
            if let Some(first) = blocks.first() {
                // Units never span files, and end before the block that would pass their
                // row count.
                let other_file = first.ctx.file_index != block.ctx.file_index;
                let past_rows = unit_rows.is_some_and(|n| rows + block.count > n);
                if other_file || past_rows {
                    self.pending = Some(block);
                    break;
                }
            }
            bytes += block.data.len() as u64;
            rows += block.count;
            blocks.push(block);
            let full = match unit_rows {
                // Blocks of few, large rows: also bound the bytes.
                Some(n) => rows >= n || bytes >= 2 * target,
                None => bytes >= target,
            };
            if full {
                break;
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
                    paused_at: None,
                    rest: None,
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
        let result = self.run_unit(None, blocks);
        let skipped = self.source.take_skipped();
        self.in_flight.push_back(InFlight {
            result,
            file_index,
            end,
            skipped,
        });
    }

    /// Decode `blocks` on a worker, with `state` (the rest of a paused unit) or a pooled one.
    fn run_unit(
        &self,
        state: Option<WorkerState>,
        mut blocks: Vec<RawBlock>,
    ) -> Receiver<UnitOutput> {
        let (tx, rx) = sync_channel(1);
        let states = self.states.clone();
        let prototype = self.prototype.clone();
        let pause_bytes = unit_pause_bytes(self.window);
        self.pool.spawn(move || {
            let mut state = state.unwrap_or_else(|| {
                let pooled = states.lock().map(|mut s| s.pop()).unwrap_or(None);
                pooled.unwrap_or_else(|| WorkerState::new(prototype))
            });
            let run = catch_unwind(AssertUnwindSafe(|| state.decode_unit(&blocks, pause_bytes)));
            let output = match run {
                Ok(mut output) => {
                    match output.paused_at {
                        Some(at) => {
                            let blocks = blocks.split_off(at);
                            output.rest = Some(Rest { state, blocks });
                        }
                        None => {
                            if let Ok(mut s) = states.lock() {
                                s.push(state);
                            }
                        }
                    }
                    output
                }
                // A panic is a bug in avrow; the state may be half-updated, so it is dropped.
                Err(_) => UnitOutput::failed(Error::Internal(format!(
                    "a decoding worker panicked on {}",
                    blocks[0].ctx.file
                ))),
            };
            // The blocks go before the output is sent: they hold the source's buffer, which
            // may be a caller's (a Python `bytes` object), and the reader may drop its own
            // hold as soon as it has the output.
            drop(blocks);
            // The reader may have been dropped; then nobody wants the result.
            let _ = tx.send(output);
        });
        rx
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
            let mut output = unit.result.recv().unwrap_or_else(|_| {
                UnitOutput::failed(Error::Internal(
                    "a decoding worker stopped without a result".into(),
                ))
            });
            let mut skipped = unit.skipped;
            skipped.extend(output.skipped);
            skipped.sort_by_key(|s| (s.file_index, s.block));
            self.ready.append(output.batches);
            if let Some(Rest { state, blocks }) = output.rest.take() {
                // The rest of the unit comes next, started as its first part is handed out
                // (its blocks' memory is released when it is done). Blocks the source
                // skipped between the rest's blocks are reported with the rest.
                let at = blocks.first().map_or((usize::MAX, u64::MAX), |b| {
                    (b.ctx.file_index, b.ctx.block_index(b.index))
                });
                let later =
                    skipped.split_off(skipped.partition_point(|s| (s.file_index, s.block) < at));
                self.skipped.extend(skipped);
                let result = self.run_unit(Some(state), blocks);
                self.in_flight.push_front(InFlight {
                    result,
                    skipped: later,
                    ..unit
                });
                continue;
            }
            self.skipped.extend(skipped);
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
