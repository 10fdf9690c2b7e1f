//! Appending to a block's buffer: varints and fixed-size values written into capacity
//! reserved first (one capacity check, the length set once), the record encoder's primitives.

use crate::varint::{Fast, Kernel};

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

/// The plain encoder the fast ones are tested against.
#[cfg(test)]
pub(crate) fn put_long_reference(out: &mut Vec<u8>, v: i64) {
    crate::varint::Scalar.write_long(v, out);
}
