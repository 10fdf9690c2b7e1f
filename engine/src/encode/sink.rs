//! Appending to a block's buffer: varints and fixed-size values written into capacity
//! reserved first (one capacity check, the length set once), the record encoder's primitives.

/// Append a zigzag varint: capacity for its longest form reserved, then the bytes written
/// and the length set once (no capacity check or length update per byte).
#[inline(always)]
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    out.reserve(10);
    let len = out.len();
    // SAFETY: `reserve(10)` leaves room for at least 10 bytes past `len`. A u64 has at most
    // ten 7-bit groups, so the loop writes at most 10 bytes, all inside that room, and the
    // length then covers exactly the bytes written (initialised).
    unsafe {
        let p = out.as_mut_ptr().add(len);
        let mut n = 0;
        while z >= 0x80 {
            p.add(n).write(z as u8 | 0x80);
            z >>= 7;
            n += 1;
        }
        p.add(n).write(z as u8);
        out.set_len(len + n + 1);
    }
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
    crate::varint::Kernel::write_long(crate::varint::Scalar, v, out);
}
