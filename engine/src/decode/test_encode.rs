//! Avro encoding for the decoder's tests: the few values they write by hand (longs, strings,
//! branch indexes written plainly or padded to two bytes, which is legal and fails the fast
//! paths on purpose).

use crate::varint::{Kernel, Scalar};

/// A long (or int, or an array block's count) as its zigzag varint.
pub(crate) fn zigzag(v: i64, out: &mut Vec<u8>) {
    Scalar.write_long(v, out);
}

/// A string (or bytes): its length, then its bytes.
pub(crate) fn string(s: &str, out: &mut Vec<u8>) {
    zigzag(s.len() as i64, out);
    out.extend(s.as_bytes());
}

/// A union's branch index `b` (0 to 63); with `pad`, as a two-byte varint (a redundant
/// continuation byte), which the fast paths do not take and the reference path accepts.
pub(crate) fn branch(b: i64, pad: bool, out: &mut Vec<u8>) {
    if pad {
        debug_assert!((0..64).contains(&b));
        out.extend([0x80 | (b as u8 * 2), 0]);
    } else {
        zigzag(b, out);
    }
}
