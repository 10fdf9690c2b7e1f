//! Appending to a block's buffer: varints and fixed-size values written into capacity
//! reserved first (one capacity check, the length set once), the record encoder's primitives.

use crate::varint::{Fast, Kernel, MAX_LEN};

/// Append a zigzag varint with the `fast` kernel's writer (every target): one capacity check,
/// one store for values of up to three bytes, longer ones spread from one word.
#[inline(always)]
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    Fast.write_long(v, out)
}

/// Append `N` bytes (a float, a double) with one capacity check and a fixed-size copy.
#[inline(always)]
pub(crate) fn put_fixed<const N: usize>(out: &mut Vec<u8>, bytes: [u8; N]) {
    out.reserve(N);
    let len = out.len();
    // SAFETY: `reserve(N)` leaves room for `N` bytes past `len`; exactly `N` bytes are copied
    // there from a local array (no overlap), and the length then covers them.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().add(len), N);
        out.set_len(len + N);
    }
}

/// Bytes a short value is moved with by [`put_bytes`]: one fixed-size copy.
const SHORT: usize = 16;

/// Append a string or bytes value, `values[start..end]`: its length as a varint, then its
/// bytes, with one capacity check; a value of at most [`SHORT`] bytes is moved by one
/// fixed-size copy (no `memcpy` call) where `values` holds that many bytes from `start`.
///
/// # Panics
/// If `start..end` is not a range of `values` (as slicing would).
#[inline(always)]
pub(crate) fn put_bytes(out: &mut Vec<u8>, values: &[u8], start: usize, end: usize) {
    let value = &values[start..end];
    let len = value.len();
    out.reserve(MAX_LEN + len.max(SHORT));
    let at = out.len();
    let short = len <= SHORT && values.len() - start >= SHORT;
    // SAFETY: `reserve` left room for `MAX_LEN` bytes of varint and `max(len, SHORT)` bytes
    // after it at `at`. The varint writes at most `MAX_LEN` bytes; the copy reads either
    // `SHORT` bytes of `values` from `start` (checked to be there) or the value itself, and
    // writes as many after the varint. The length then covers the varint and the value's
    // `len` bytes, all written (bytes a short copy writes past them are beyond the length).
    unsafe {
        let dst = out.as_mut_ptr().add(at);
        let n = crate::varint::Kernel::encode_u64(
            Fast,
            crate::varint::zigzag64(len as i64),
            &mut *dst.cast::<[std::mem::MaybeUninit<u8>; MAX_LEN]>(),
        );
        if short {
            std::ptr::copy_nonoverlapping(values.as_ptr().add(start), dst.add(n), SHORT);
        } else {
            std::ptr::copy_nonoverlapping(value.as_ptr(), dst.add(n), len);
        }
        out.set_len(at + n + len);
    }
}

/// The plain encoder the fast ones are tested against.
#[cfg(test)]
pub(crate) fn put_long_reference(out: &mut Vec<u8>, v: i64) {
    crate::varint::Scalar.write_long(v, out);
}
