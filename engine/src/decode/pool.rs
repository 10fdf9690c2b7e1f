//! Recycled column buffers: the large buffers of the batches an application has dropped are
//! handed to the next batches instead of new memory.
//!
//! Every batch needs fresh column buffers (its arrays own them), and large allocations come
//! straight from the operating system: glibc serves them with `mmap` and returns them with
//! `munmap`, so each batch pays a page fault (and the kernel zeroing a page) for every 4 KiB
//! it writes, and on several threads the mapping changes contend on the kernel's lock for the
//! address space. For Counters (256 longs a record, 16 MiB of values a batch) that was three
//! quarters of the decoding time.
//!
//! A [`BufferPool`] is shared by the decoders of one reader (a decoder's clones share it).
//! [`BufferPool::buffer`] turns a builder's `Vec` into an Arrow [`Buffer`] that owns the `Vec`
//! and, when the last reference to the buffer is dropped (on any thread), gives the `Vec` back
//! to the pool if the pool still exists and holds less than [`MAX_RETAINED_BYTES`].
//! [`BufferPool::reserve`] grows a builder's small or empty `Vec` into a recycled one when
//! one of about the right size is there. Applications that keep their batches never return
//! anything, and decoding then allocates as it would without the pool.
//!
//! When a reader is gone, its pool's buffers (and those of its batches dropped later) go to
//! one spare pool of the process, which keeps at most [`MAX_SPARE_BYTES`] of them for the
//! next readers: a query over many small files, or a program reading file after file, opens
//! a reader per file, and each one's first batches would otherwise be fresh memory (on a
//! 16 MB file of long strings, most of the decoding time).
//!
//! Nothing is read from a recycled allocation before it is written: the `Vec`s come back
//! empty and builders only append.

use arrow_buffer::{i256, ArrowNativeType, Buffer, IntervalMonthDayNano, ScalarBuffer};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// Buffers smaller than this are left to the allocator (which recycles small blocks itself).
const MIN_POOLED_BYTES: usize = 16 << 10;
/// The pool keeps at most about this many bytes of returned buffers; beyond it they are freed.
const MAX_RETAINED_BYTES: usize = 256 << 20;
/// The spare pool (readers that are gone) keeps at most about this many bytes.
const MAX_SPARE_BYTES: usize = 64 << 20;
/// A recycled buffer is used for a request only if it is at most this many times larger.
const MAX_OVERSIZE: usize = 4;
/// [`BufferPool::reserve`] replaces a growing `Vec` by a recycled one only while its contents
/// (copied over) are at most this many bytes or a quarter of the room asked for: copying a
/// byte costs far less than faulting in a fresh page's worth of them (a batch that began in
/// the middle of a block asks for its room at the next block, holding that block's rows).
const MAX_COPIED_BYTES: usize = 4 << 10;

/// `n` rounded up to its size class: a multiple of an eighth of the largest power of two not
/// above it (at most 12.5 % more). Batches ask for room by the last batch's size, which
/// varies by a few percent from batch to batch; a recycled buffer of the exact size of an
/// earlier request fits only about half of the next ones, and each miss is a new allocation
/// whose pages fault in.
fn size_class(n: usize) -> usize {
    if n < 16 {
        return n;
    }
    let step = 1usize << (usize::BITS - 1 - n.leading_zeros() - 3);
    n.div_ceil(step).saturating_mul(step)
}

/// One kind of element's returned buffers (empty `Vec`s with their capacity).
type Shelf<T> = Mutex<Vec<Vec<T>>>;

/// Returned column buffers of one reader, by element type. See the module documentation.
#[derive(Debug)]
pub(crate) struct BufferPool {
    bytes: Shelf<u8>,
    i8s: Shelf<i8>,
    i32s: Shelf<i32>,
    i64s: Shelf<i64>,
    f32s: Shelf<f32>,
    f64s: Shelf<f64>,
    i128s: Shelf<i128>,
    i256s: Shelf<i256>,
    intervals: Shelf<IntervalMonthDayNano>,
    /// Capacity in bytes of all the buffers on the shelves.
    retained: AtomicUsize,
}

/// Buffers of readers that are gone, for the readers to come.
#[cfg(not(test))]
static SPARE: BufferPool = BufferPool::new();

/// `f` on the spare pool.
#[cfg(not(test))]
fn with_spare<R>(f: impl FnOnce(&BufferPool) -> R) -> Option<R> {
    Some(f(&SPARE))
}

// One spare pool per test thread: tests that run at once must not take each other's buffers.
#[cfg(test)]
thread_local! {
    static SPARE: BufferPool = const { BufferPool::new() };
}

#[cfg(test)]
fn with_spare<R>(f: impl FnOnce(&BufferPool) -> R) -> Option<R> {
    // (At a thread's exit the spare pool itself may be gone.)
    SPARE.try_with(f).ok()
}

impl Default for BufferPool {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for BufferPool {
    /// The buffers go to the spare pool, as far as it has room.
    fn drop(&mut self) {
        self.hand_over::<u8>();
        self.hand_over::<i8>();
        self.hand_over::<i32>();
        self.hand_over::<i64>();
        self.hand_over::<f32>();
        self.hand_over::<f64>();
        self.hand_over::<i128>();
        self.hand_over::<i256>();
        self.hand_over::<IntervalMonthDayNano>();
    }
}

/// Element types whose buffers the pool recycles.
pub(crate) trait Pooled: ArrowNativeType + std::panic::RefUnwindSafe {
    fn shelf(pool: &BufferPool) -> &Shelf<Self>;
}

macro_rules! pooled {
    ($($t:ty => $field:ident),*) => {$(
        impl Pooled for $t {
            fn shelf(pool: &BufferPool) -> &Shelf<Self> {
                &pool.$field
            }
        }
    )*};
}
pooled!(
    u8 => bytes,
    i8 => i8s,
    i32 => i32s,
    i64 => i64s,
    f32 => f32s,
    f64 => f64s,
    i128 => i128s,
    i256 => i256s,
    IntervalMonthDayNano => intervals
);

fn bytes_of<T>(elements: usize) -> usize {
    elements.saturating_mul(std::mem::size_of::<T>())
}

impl BufferPool {
    const fn new() -> Self {
        Self {
            bytes: Mutex::new(Vec::new()),
            i8s: Mutex::new(Vec::new()),
            i32s: Mutex::new(Vec::new()),
            i64s: Mutex::new(Vec::new()),
            f32s: Mutex::new(Vec::new()),
            f64s: Mutex::new(Vec::new()),
            i128s: Mutex::new(Vec::new()),
            i256s: Mutex::new(Vec::new()),
            intervals: Mutex::new(Vec::new()),
            retained: AtomicUsize::new(0),
        }
    }

    /// Move this pool's buffers of `T` to the spare pool (those it has no room for are freed).
    fn hand_over<T: Pooled>(&self) {
        let Ok(mut shelf) = T::shelf(self).lock() else {
            return;
        };
        for v in shelf.drain(..) {
            with_spare(|spare| spare.give(v, MAX_SPARE_BYTES));
        }
    }

    /// A recycled empty `Vec` with room for `min` elements (and not much more), from this
    /// pool or else the spare one.
    fn take<T: Pooled>(&self, min: usize) -> Option<Vec<T>> {
        self.take_here(min)
            .or_else(|| with_spare(|spare| spare.take_here(min)).flatten())
    }

    /// [`BufferPool::take`] from this pool only.
    fn take_here<T: Pooled>(&self, min: usize) -> Option<Vec<T>> {
        let mut shelf = T::shelf(self).lock().ok()?;
        let (i, _) = shelf
            .iter()
            .enumerate()
            .filter(|(_, v)| v.capacity() >= min && v.capacity() / MAX_OVERSIZE <= min)
            .min_by_key(|(_, v)| v.capacity())?;
        let v = shelf.swap_remove(i);
        self.retained
            .fetch_sub(bytes_of::<T>(v.capacity()), Ordering::Relaxed);
        Some(v)
    }

    /// Take back a buffer whose Arrow arrays are all gone, if the pool then holds at most
    /// `max` bytes.
    fn give<T: Pooled>(&self, mut v: Vec<T>, max: usize) {
        let bytes = bytes_of::<T>(v.capacity());
        // Counted before it is shelved, so that buffers given at once on many threads
        // cannot all pass the bound.
        if bytes < MIN_POOLED_BYTES
            || self
                .retained
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                    r.checked_add(bytes).filter(|&t| t <= max)
                })
                .is_err()
        {
            return;
        }
        v.clear();
        match T::shelf(self).lock() {
            Ok(mut shelf) => shelf.push(v),
            Err(_) => {
                self.retained.fetch_sub(bytes, Ordering::Relaxed);
            }
        }
    }

    /// `v.reserve(additional)`, except that a `Vec` which must grow from a small (or empty)
    /// allocation to a large one gets a recycled allocation, when the pool has one of about
    /// the right size, with its few elements copied over.
    pub(crate) fn reserve<T: Pooled>(&self, v: &mut Vec<T>, additional: usize) {
        let need = v.len().saturating_add(additional);
        if need > v.capacity()
            && bytes_of::<T>(v.len()) <= MAX_COPIED_BYTES.max(bytes_of::<T>(need) / 4)
            && bytes_of::<T>(need) >= MIN_POOLED_BYTES
        {
            let need = size_class(need);
            if let Some(mut recycled) = self.take::<T>(need) {
                recycled.extend_from_slice(v);
                *v = recycled;
                return;
            }
            // A new buffer as large as its class: when it comes back, a next batch's request
            // a little larger than this one still fits it.
            v.reserve_exact(need - v.len());
            return;
        }
        v.reserve(additional);
    }

    /// An Arrow buffer holding `v`'s elements. A large one returns `v`'s allocation to this
    /// pool when the last reference to it is dropped; a small one is a plain buffer.
    pub(crate) fn buffer<T: Pooled>(self: &Arc<Self>, v: Vec<T>) -> Buffer {
        if bytes_of::<T>(v.capacity()) < MIN_POOLED_BYTES {
            return Buffer::from_vec(v);
        }
        let len = bytes_of::<T>(v.len());
        let ptr = NonNull::from(v.as_slice()).cast::<u8>();
        let owner = Arc::new(Lent {
            vec: v,
            home: Arc::downgrade(self),
        });
        // SAFETY: `ptr` is the start of the `Vec`'s heap allocation, whose first `len` bytes
        // are its initialised elements (plain numbers: any bytes are valid `u8`s). Moving the
        // `Vec` into `owner` did not move that allocation, and `owner` keeps it alive and
        // unmodified (`Lent` has no method that touches it; only its `Drop` takes it back)
        // for as long as the buffer or any clone or slice of it exists, since they all hold
        // `owner`.
        unsafe { Buffer::from_custom_allocation(ptr, len, owner) }
    }

    /// [`BufferPool::buffer`] as a typed buffer of all of `v`'s elements.
    pub(crate) fn scalar<T: Pooled>(self: &Arc<Self>, v: Vec<T>) -> ScalarBuffer<T> {
        let len = v.len();
        ScalarBuffer::new(self.buffer(v), 0, len)
    }

    /// Bytes of returned buffers the pool holds now.
    #[cfg(test)]
    pub(crate) fn retained_bytes(&self) -> usize {
        self.retained.load(Ordering::Relaxed)
    }
}

/// A builder's `Vec` lent to Arrow arrays: given back to its pool (or the spare pool, if its
/// own is gone) when the arrays are gone.
struct Lent<T: Pooled> {
    vec: Vec<T>,
    home: Weak<BufferPool>,
}

impl<T: Pooled> Drop for Lent<T> {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.vec);
        match self.home.upgrade() {
            Some(pool) => pool.give(v, MAX_RETAINED_BYTES),
            None => {
                with_spare(|spare| spare.give(v, MAX_SPARE_BYTES));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_buffers_come_back_and_are_reused() {
        let pool = Arc::new(BufferPool::default());
        let mut v: Vec<i64> = Vec::new();
        pool.reserve(&mut v, 10_000);
        v.extend(0..10_000);
        let ptr = v.as_ptr();
        let buffer = pool.scalar(v);
        assert_eq!(buffer.len(), 10_000);
        assert_eq!(buffer[9_999], 9_999);
        let slice = buffer.slice(5, 10);
        drop(buffer);
        // A slice still holds the allocation.
        assert_eq!(pool.retained_bytes(), 0);
        assert_eq!(slice[0], 5);
        drop(slice);
        assert!(pool.retained_bytes() >= 80_000);
        // The next batch of about the same size gets the same allocation, empty.
        let mut next: Vec<i64> = Vec::new();
        pool.reserve(&mut next, 9_000);
        assert_eq!(next.as_ptr(), ptr);
        assert!(next.is_empty());
        assert_eq!(pool.retained_bytes(), 0);
    }

    /// Requests are rounded up to a size class, at most an eighth larger: a batch asking for
    /// a few percent more than the one before gets that one's buffer.
    #[test]
    fn slightly_larger_requests_reuse_the_last_buffer() {
        for n in (0..5000).chain([1 << 20, (1 << 20) + 1, 3 << 30]) {
            let c = size_class(n);
            assert!(c >= n && c - n <= n / 8, "{n} -> {c}");
        }
        let pool = Arc::new(BufferPool::default());
        let mut v: Vec<u8> = Vec::new();
        pool.reserve(&mut v, 100_000);
        let ptr = v.as_ptr();
        v.resize(100_000, 1);
        drop(pool.buffer(v));
        let mut next: Vec<u8> = Vec::new();
        pool.reserve(&mut next, 103_000);
        assert_eq!(next.as_ptr(), ptr);
    }

    #[test]
    fn leading_elements_are_kept_and_sizes_must_fit() {
        let pool = Arc::new(BufferPool::default());
        let mut big: Vec<i32> = Vec::with_capacity(100_000);
        big.push(1);
        drop(pool.buffer(big));
        // Far larger than needed: not used for a small request.
        let mut small = vec![0i32];
        pool.reserve(&mut small, 5_000);
        assert!(small.capacity() < 100_000);
        // About the right size: used, with the leading 0 copied over.
        let mut offsets = vec![0i32];
        pool.reserve(&mut offsets, 60_000);
        assert_eq!(offsets, [0]);
        assert_eq!(offsets.capacity(), 100_000);
    }

    #[test]
    fn small_buffers_are_not_kept_and_orphans_are_spare() {
        let pool = Arc::new(BufferPool::default());
        drop(pool.buffer(vec![1u8; 100]));
        assert_eq!(pool.retained_bytes(), 0);
        let orphan = pool.buffer(vec![i256::ZERO; 12_345]);
        let ptr = orphan.as_ptr();
        drop(pool);
        assert_eq!(orphan.len(), 32 * 12_345);
        drop(orphan);
        // Its pool is gone: the allocation went to the spare pool, for the next reader.
        let next = Arc::new(BufferPool::default());
        let mut v: Vec<i256> = Vec::new();
        next.reserve(&mut v, 12_000);
        assert_eq!(v.as_ptr().cast::<u8>(), ptr);
        // A pool that is dropped hands its buffers over too.
        drop(next.buffer(v));
        assert!(next.retained_bytes() > 0);
        drop(next);
        let last = BufferPool::default();
        let mut w: Vec<i256> = Vec::new();
        last.reserve(&mut w, 12_000);
        assert_eq!(w.as_ptr().cast::<u8>(), ptr);
    }
}
