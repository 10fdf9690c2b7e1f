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
//! plain increment; two-byte values by the writer too, longer ones by
//! [`Kernel::encode_u64`], whose length branches predict when the stream's lengths are
//! steady. When lengths change at random those branches mispredict (one- and two-byte
//! values alternating: the one-byte compare on half the values; lengths 1 to 10: about one
//! branch a value), so the writer also has a **branch-free mode** (`one == 0`,
//! `wide == u64::MAX`): every value goes to the kernel's branch-free encoder (ten bytes
//! written, the length from the leading zeros). Outside that mode, two-byte values pay one
//! predictable branch for it, and other values none.
//!
//! The mode is chosen out of the hot path: `end` is also where the next check of the
//! stream's mix is due, so the capacity test that every write makes anyway brings the
//! writer into the cold [`refresh`] every [`CHECK_EVERY`] bytes, which reads back the last
//! [`CHECK_WINDOW`] bytes written and picks the mode for the next stretch
//! ([`branch_free_pays`]). Bookkeeping on the hot paths would cost the rows where the
//! branches predict: a writer that counted alternations on its multi-byte path measured
//! 20-55 % slower there (see `docs/perf/varint.md`).

use std::mem::MaybeUninit;

use super::word::pin;
use super::{zigzag64, Kernel, MAX_LEN};

/// Bytes written between two checks of the stream's mix (after the first, [`FIRST_CHECK`]).
const CHECK_EVERY: usize = 32 * 1024;
/// Bytes written through a new writer before the first check.
const FIRST_CHECK: usize = 512;
/// Bytes read back by a check.
const CHECK_WINDOW: usize = 256;
/// Values below this have at most two bytes.
const TWO: u64 = 1 << 14;

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
    /// Writes take the fast path while `len < end`: the smaller of `out`'s capacity less
    /// `MAX_LEN - 1` (0 when smaller) and `check`.
    end: usize,
    /// Bytes of `out` initialised so far: its length plus everything written since. Always
    /// at most `out`'s capacity.
    len: usize,
    /// Values below this are stored as one byte by one compare: 0x80, or 0 in the
    /// branch-free mode.
    one: u64,
    /// Values from `one` up to below this are stored by the writer itself: two bytes
    /// ([`TWO`]), or in the branch-free mode any length (`u64::MAX`).
    wide: u64,
    /// Where the next check of the stream's mix is due.
    check: usize,
}

impl<'a, K: Kernel> Writer<'a, K> {
    /// A writer appending to `out` with `kernel`'s encoder.
    pub fn new(kernel: K, out: &'a mut Vec<u8>) -> Self {
        let check = out.len().saturating_add(FIRST_CHECK);
        Writer {
            kernel,
            ptr: out.as_mut_ptr(),
            end: end_of(out.capacity()).min(check),
            len: out.len(),
            one: 0x80,
            wide: TWO,
            check,
            out,
        }
    }

    /// Append the raw varint encoding of `v`.
    #[inline(always)]
    pub fn write_u64(&mut self, v: u64) {
        if self.len >= self.end {
            // By value, not `&mut self`: the writer's address must not escape the caller's
            // loop, or its fields would live in memory instead of registers.
            (self.ptr, self.end, self.one, self.wide, self.check) =
                refresh(self.out, self.len, self.one, self.wide, self.check);
        }
        // SAFETY: `len < end <= capacity - (MAX_LEN - 1)` (checked, or reserved by
        // `refresh`), so the `MAX_LEN` bytes at `ptr + len` are within `out`'s allocation;
        // they are spare capacity, which nothing else refers to while `self` holds `out`
        // mutably borrowed.
        let dst = unsafe { self.ptr.add(self.len) };
        if v < self.one {
            // One-byte values here rather than through `encode_u64`, so that the length
            // update is a plain increment on their path.
            // SAFETY: as above.
            unsafe { dst.write(v as u8) };
            self.len += 1;
        } else if v < self.wide {
            if self.one == 0 {
                // The branch-free mode: every value but `u64::MAX` (which takes the
                // `encode_u64` path below).
                // SAFETY: as above. `encode_any` initialises the bytes it counts (at most
                // `MAX_LEN`): the trait is sealed, and every kernel's does.
                let dst = unsafe { &mut *dst.cast::<[MaybeUninit<u8>; MAX_LEN]>() };
                self.len = pin(self.len + self.kernel.encode_any(v, dst));
            } else {
                // Two bytes (`0x80 = one <= v < wide = 2^14` outside the branch-free mode).
                debug_assert!((0x80..TWO).contains(&v));
                let pair = (v + (v & (TWO - 0x80))) | 0x80;
                // SAFETY: as above.
                unsafe {
                    dst.cast::<[u8; 2]>()
                        .write_unaligned((pair as u16).to_le_bytes())
                };
                self.len = pin(self.len + 2);
            }
        } else {
            // SAFETY: as above. `encode_u64` initialises the bytes it counts (at most
            // `MAX_LEN`): the trait is sealed, and every kernel's encoder does.
            let dst = unsafe { &mut *dst.cast::<[MaybeUninit<u8>; MAX_LEN]>() };
            // `v >= wide >= TWO` here; `max` (a conditional move, never taken) tells the
            // compiler so, and it drops `encode_u64`'s one- and two-byte branches.
            let v = v.max(TWO);
            // Pinned, so that the compiler does not merge the paths' additions into one
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

/// The writer's slow path, when `len` reached its `end`: make room for one more varint and,
/// if a check of the stream's mix is due (`len >= check`), pick the mode for the next
/// [`CHECK_EVERY`] bytes. Returns the writer's new buffer pointer, `end`, `one`, `wide` and
/// `check`.
#[cold]
#[inline(never)]
fn refresh(
    out: &mut Vec<u8>,
    len: usize,
    one: u64,
    wide: u64,
    check: usize,
) -> (*mut u8, usize, u64, u64, usize) {
    // SAFETY: the caller's first `len <= capacity` bytes are initialised: `out`'s own, then
    // the varints written since, each initialised up to its length (and no further:
    // `encode_u64` may write past it, but `len` is not moved past it).
    unsafe { out.set_len(len) };
    let (one, wide, check) = if len >= check {
        let window = &out[len.saturating_sub(CHECK_WINDOW)..];
        let (one, wide) = if branch_free_pays(window) {
            (0, u64::MAX)
        } else {
            (0x80, TWO)
        };
        (one, wide, len.saturating_add(CHECK_EVERY))
    } else {
        (one, wide, check)
    };
    if end_of(out.capacity()) <= len {
        out.reserve(MAX_LEN);
    }
    (
        out.as_mut_ptr(),
        end_of(out.capacity()).min(check),
        one,
        wide,
        check,
    )
}

/// Whether the varints in `window` (bytes just written; the first, partial one is skipped)
/// change length from one value to the next often enough (on at least a quarter of the
/// values) that the length branches of the normal mode would mispredict more than the
/// branch-free store costs.
fn branch_free_pays(window: &[u8]) -> bool {
    let Some(first) = window.iter().position(|&b| b < 0x80) else {
        return false;
    };
    let (mut values, mut switches) = (0usize, 0usize);
    let (mut run, mut last) = (0usize, 0usize);
    for &b in &window[first + 1..] {
        run += 1;
        if b >= 0x80 {
            continue;
        }
        values += 1;
        switches += usize::from(last != 0 && last != run);
        last = run;
        run = 0;
    }
    values >= 16 && switches * 4 >= values
}

/// [`Writer::end`] for a capacity: a varint (up to `MAX_LEN` bytes) fits at every `len` below
/// it.
fn end_of(capacity: usize) -> usize {
    // `capacity <= isize::MAX`: no overflow.
    (capacity + 1).saturating_sub(MAX_LEN)
}

impl<K: Kernel> Drop for Writer<'_, K> {
    fn drop(&mut self) {
        // SAFETY: as in `refresh`: the first `len <= cap` bytes are initialised.
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
        let mut next = crate::varint::test_rng(0x2545_f491_4f6c_dd1d);
        for i in 0..5000 {
            let x = next();
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

    /// A stream whose mix changes: one- and two-byte values at random (the branch-free
    /// mode), then three-byte values (normal), then lengths 1 to 10 at random with
    /// `u64::MAX` among them (branch-free; `u64::MAX` takes `encode_u64` there), then
    /// one-byte values (normal). Every kernel's writer writes what `Scalar::write_u64`
    /// writes, and uses both modes.
    #[test]
    fn both_modes_write_what_write_u64_writes() {
        let mut next = crate::varint::test_rng(0x9e37_79b9_7f4a_7c15u64);
        let mut values = vec![u64::MAX, 0, 1 << 63];
        // A tenth as many values under Miri, which interprets every instruction.
        let total: u64 = if cfg!(miri) { 20_000 } else { 200_000 };
        for i in 0..total {
            let r = next();
            values.push(match i / (total / 4) {
                0 => r & if r & 1 == 0 { 0x7f } else { 0x3fff },
                1 => (r & 0x1f_ffff) | (1 << 14),
                2 if r.is_multiple_of(64) => u64::MAX,
                2 => r >> (r % 64),
                _ => r & 0x7f,
            });
        }
        let mut expected = Vec::new();
        for &v in &values {
            Scalar.write_u64(v, &mut expected);
        }
        for kind in available_kernels() {
            let mut out = Vec::new();
            let modes = crate::dispatch_kernel!(kind, k => {
                let mut w = Writer::new(k, &mut out);
                let mut modes = [false; 2];
                for &v in &values {
                    w.write_u64(v);
                    modes[usize::from(w.one == 0)] = true;
                }
                modes
            });
            assert_eq!(out, expected, "{kind:?}");
            assert_eq!(modes, [true, true], "{kind:?}");
        }
    }

    #[test]
    fn branch_free_pays_only_when_lengths_change_often() {
        let encode = |values: &[u64]| {
            let mut out = vec![0x80u8]; // the end of a varint cut by the window
            for &v in values {
                Scalar.write_u64(v, &mut out);
            }
            out
        };
        let cycle = |pattern: &[u64]| -> Vec<u64> {
            (0..100).map(|i| pattern[i % pattern.len()]).collect()
        };
        // Lengths changing on half the values, or on every one.
        assert!(branch_free_pays(&encode(&cycle(&[5, 300, 300, 7, 9]))));
        assert!(branch_free_pays(&encode(&cycle(&[
            5,
            1 << 20,
            1 << 40,
            u64::MAX
        ]))));
        // No change: all two bytes, all one byte.
        assert!(!branch_free_pays(&encode(&[300; 100])));
        assert!(!branch_free_pays(&encode(&[3; 100])));
        // One value in ten is two bytes: the length changes on a fifth of the values.
        assert!(!branch_free_pays(&encode(&cycle(&[
            1, 2, 3, 4, 5, 6, 7, 8, 9, 300
        ]))));
        // Too few values to tell, and no complete varint at all.
        assert!(!branch_free_pays(&encode(&[5, 300, 5, 300])));
        assert!(!branch_free_pays(&[0x80; 64]));
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
