//! [`Writer`]: appends single varints to a `Vec<u8>` through a local cursor.
//!
//! [`Kernel::write_u64`] must leave the vector's length updated after every value: a load of
//! the length and capacity and a store of the new length per call, and since a byte store may
//! alias the vector's own fields, the compiler cannot keep them in registers across a loop of
//! calls. A `Writer` holds the vector's buffer pointer, where its capacity ends and the bytes
//! written so far itself; inlined into the caller's loop they stay in registers, and the
//! vector's length is set once, when the writer is dropped.
//!
//! One-byte values are stored after one compare, and the length update on their path is a
//! plain increment. (When one- and two-byte values alternate at random that compare
//! mispredicts on half the values; a writer that switched to a branch-free one-or-two-byte
//! store for such streams measured 2.3x prost on them but cost 20-55 % on the other rows
//! measured, from the bookkeeping on the multi-byte path, so it was not kept: see
//! `docs/perf/varint.md`.)

use std::mem::MaybeUninit;

use super::generic::pin;
use super::{zigzag64, Kernel, MAX_LEN};

/// Appends varints to a `Vec<u8>`; the vector's length is updated when the writer is
/// dropped (or by [`Writer::finish`]).
///
/// ```
/// use avrow_engine::varint::{Fast, Kernel, Writer};
/// let mut out = vec![0xff];
/// {
///     let mut w = Writer::new(Fast, &mut out);
///     w.write_long(-1);
///     w.write_long(300);
///     w.write_int(i32::MIN);
///     assert_eq!(w.len(), 1 + 1 + 2 + 5);
/// }
/// assert_eq!(out, [0xff, 0x01, 0xd8, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0f]);
/// let (mut pos, mut got) = (1, Vec::new());
/// while pos < out.len() {
///     got.push(Fast.read_long(&out, &mut pos).unwrap());
/// }
/// assert_eq!(got, [-1, 300, i64::from(i32::MIN)]);
/// ```
#[derive(Debug)]
pub struct Writer<'a, K: Kernel> {
    kernel: K,
    out: &'a mut Vec<u8>,
    /// `out`'s buffer (re-read after every reallocation).
    ptr: *mut u8,
    /// A varint fits while `len < end`: `out`'s capacity less `MAX_LEN - 1` (0 when smaller).
    end: usize,
    /// Bytes of `out` initialised so far: its length plus everything written since. Always
    /// at most `out`'s capacity.
    len: usize,
}

impl<'a, K: Kernel> Writer<'a, K> {
    /// A writer appending to `out` with `kernel`'s encoder.
    pub fn new(kernel: K, out: &'a mut Vec<u8>) -> Self {
        Writer {
            kernel,
            ptr: out.as_mut_ptr(),
            end: end_of(out.capacity()),
            len: out.len(),
            out,
        }
    }

    /// Append the raw varint encoding of `v`.
    #[inline(always)]
    pub fn write_u64(&mut self, v: u64) {
        if self.len >= self.end {
            // By value, not `&mut self`: the writer's address must not escape the caller's
            // loop, or its fields would live in memory instead of registers.
            (self.ptr, self.end) = grow(self.out, self.len);
        }
        // SAFETY: `len < end = capacity - (MAX_LEN - 1)` (checked, or reserved by `grow`), so
        // the `MAX_LEN` bytes at `ptr + len` are within `out`'s allocation; they are spare
        // capacity, which nothing else refers to while `self` holds `out` mutably borrowed.
        let dst = unsafe { self.ptr.add(self.len) };
        if v < 0x80 {
            // One-byte values here rather than through `encode_u64`, so that the length
            // update is a plain increment on their path.
            // SAFETY: as above.
            unsafe { dst.write(v as u8) };
            self.len += 1;
        } else {
            // SAFETY: as above. `encode_u64` initialises the bytes it counts (at most
            // `MAX_LEN`): the trait is sealed, and every kernel's encoder does.
            let dst = unsafe { &mut *dst.cast::<[MaybeUninit<u8>; MAX_LEN]>() };
            // Pinned, so that the compiler does not merge the two paths' additions into one
            // after them (a `mov` of the constant 1 and an `add` on the one-byte path).
            self.len = pin(self.len + self.kernel.encode_u64(v, dst));
        }
    }

    /// Append the zigzag varint encoding of an Avro `long`.
    #[inline(always)]
    pub fn write_long(&mut self, v: i64) {
        self.write_u64(zigzag64(v));
    }

    /// Append the zigzag varint encoding of an Avro `int`.
    #[inline(always)]
    pub fn write_int(&mut self, v: i32) {
        self.write_long(i64::from(v));
    }

    /// The vector's length so far (including everything written through this writer).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the vector is still empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Set the vector's length and release it (the same as dropping the writer).
    pub fn finish(self) {}
}

/// Make room for at least one more varint in `out`, whose first `len` bytes are initialised
/// (the rare case of [`Writer::write_u64`]); returns the new buffer and end.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u8>, len: usize) -> (*mut u8, usize) {
    // SAFETY: the caller's first `len <= capacity` bytes are initialised: `out`'s own, then
    // the varints written since, each initialised up to its length (and no further:
    // `encode_u64` may write past it, but `len` is not moved past it).
    unsafe { out.set_len(len) };
    out.reserve(MAX_LEN);
    (out.as_mut_ptr(), end_of(out.capacity()))
}

/// [`Writer::end`] for a capacity: a varint (up to `MAX_LEN` bytes) fits at every `len` below
/// it.
fn end_of(capacity: usize) -> usize {
    // `capacity <= isize::MAX`: no overflow.
    (capacity + 1).saturating_sub(MAX_LEN)
}

impl<K: Kernel> Drop for Writer<'_, K> {
    fn drop(&mut self) {
        // SAFETY: as in `grow`: the first `len <= cap` bytes are initialised.
        unsafe { self.out.set_len(self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::{available_kernels, KernelKind, Scalar};

    #[test]
    fn writes_what_write_u64_writes_with_every_kernel() {
        let mut values = vec![
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::MAX,
            1 << 63,
            1 << 56,
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64) >> (i % 2));
        }
        let mut expected = vec![7u8; 3];
        for &v in &values {
            Scalar.write_u64(v, &mut expected);
        }
        for kind in available_kernels() {
            // Start from a small capacity so that the writer grows many times.
            let mut out = vec![7u8; 3];
            out.shrink_to_fit();
            let n = crate::dispatch_kernel!(kind, k => {
                let mut w = Writer::new(k, &mut out);
                for &v in &values {
                    w.write_u64(v);
                }
                w.len()
            });
            assert_eq!(n, expected.len(), "{kind:?}");
            assert_eq!(out, expected, "{kind:?}");
        }
        assert_ne!(available_kernels(), [KernelKind::Scalar]);
    }

    #[test]
    fn dropping_without_writing_keeps_the_vector() {
        let mut out = vec![1u8, 2, 3];
        drop(Writer::new(Scalar, &mut out));
        assert_eq!(out, [1, 2, 3]);
        let mut empty = Vec::new();
        let w = Writer::new(Scalar, &mut empty);
        assert!(w.is_empty());
        w.finish();
        assert!(empty.is_empty());
    }
}
