//! A global allocator that counts huge allocation requests, so hostile-input tests can assert
//! that avrow never sizes a buffer from an unchecked count or length.
//!
//! Requests of [`LIMIT`] bytes or more are counted (and reported on stderr, since a request far
//! beyond memory aborts the process before any assertion can run). No test here legitimately
//! allocates that much, so any count is a finding.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const LIMIT: usize = 256 << 20;

static HUGE: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

struct Guard;

#[global_allocator]
static GLOBAL: Guard = Guard;

/// The size the self-test requests; counted apart so it cannot disturb other tests.
const PROBE: usize = LIMIT + 12_345;
static PROBES: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    if size == PROBE {
        PROBES.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if size >= LIMIT {
        HUGE.fetch_add(1, Ordering::SeqCst);
        LARGEST.fetch_max(size, Ordering::SeqCst);
        // Format without allocating.
        let mut buf = [0u8; 96];
        let prefix = b"alloc_guard: allocation request of ";
        buf[..prefix.len()].copy_from_slice(prefix);
        let mut n = prefix.len();
        let mut digits = [0u8; 20];
        let mut d = 0;
        let mut v = size;
        loop {
            digits[d] = b'0' + (v % 10) as u8;
            d += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        for i in (0..d).rev() {
            buf[n] = digits[i];
            n += 1;
        }
        let suffix = b" bytes\n";
        buf[n..n + suffix.len()].copy_from_slice(suffix);
        n += suffix.len();
        let _ = std::io::stderr().write_all(&buf[..n]);
    }
}

// SAFETY: every method forwards to `System` with its arguments unchanged, so the guard keeps
// `System`'s guarantees; `note` only counts (atomics) and writes to stderr from a stack buffer,
// without allocating.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's guarantees for `alloc` (a non-zero-sized layout) are passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: `ptr` was allocated by this allocator, that is by `System` (every method
        // forwards to it), with `layout`; the caller's guarantees on `new_size` are passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (see `realloc`).
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// How many huge requests were made so far (process-wide), and the largest.
pub fn huge() -> (usize, usize) {
    (HUGE.load(Ordering::SeqCst), LARGEST.load(Ordering::SeqCst))
}

/// The guard works: a deliberate huge request is counted (the memory is never touched).
#[test]
fn guard_counts_huge_requests() {
    let before = PROBES.load(Ordering::SeqCst);
    let v: Vec<u8> = Vec::with_capacity(PROBE);
    assert!(v.capacity() >= PROBE);
    drop(v);
    assert!(PROBES.load(Ordering::SeqCst) > before);
}
