//! Test-only counters of the paths the decoder took on this thread. A test of a fast path
//! checks with them that the path read the rows itself: one that failed every row would still
//! give the reference's batches, decoded again value by value.

use std::cell::Cell;
use std::thread::LocalKey;

/// A counter of this thread.
pub(crate) type Counter = LocalKey<Cell<u64>>;

thread_local! {
    /// Records [`StructCol::decode_slow`](super::column::StructCol) decoded again.
    pub(crate) static SLOW_RECORDS: Cell<u64> = const { Cell::new(0) };
    /// Records [`StructCol::decode_flat`](super::column::StructCol) decoded, the chunks
    /// before a failure included.
    pub(crate) static FLAT_RECORDS: Cell<u64> = const { Cell::new(0) };
    /// Map blocks [`ListCol::map_values_sticky`](super::column::ListCol) read.
    pub(crate) static MAP_ARRAY_BLOCKS: Cell<u64> = const { Cell::new(0) };
    /// The form of row loop [`RecordDecoder::decode_rows_with`](super::RecordDecoder) last
    /// ran (`SCALAR_ROWS`, `STRING_ROWS`, ...).
    pub(crate) static LAST_LOOP: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Add `n` to `counter`.
pub(crate) fn add(counter: &'static Counter, n: u64) {
    counter.with(|c| c.set(c.get() + n));
}

/// Set `counter` to `value`.
pub(crate) fn set(counter: &'static Counter, value: u64) {
    counter.with(|c| c.set(value));
}

/// `counter`'s value.
pub(crate) fn get(counter: &'static Counter) -> u64 {
    counter.with(Cell::get)
}

/// What `f` returns, and how much it added to `counter`.
pub(crate) fn counting<R>(counter: &'static Counter, f: impl FnOnce() -> R) -> (R, u64) {
    let before = get(counter);
    let out = f();
    (out, get(counter) - before)
}
