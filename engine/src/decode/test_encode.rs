//! Avro encoding for the decoder's tests: the few values they write by hand (longs, strings,
//! branch indexes written plainly or padded to two bytes, which is legal and fails the fast
//! paths on purpose, collections cut into random blocks), and the random numbers they draw.

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

/// One collection's encoded items (or entries) in blocks of 1 to `max` items at random
/// (`cuts(m)`: a random number below `m`), a third with byte sizes, then the end of the
/// collection.
pub(crate) fn blocks(
    out: &mut Vec<u8>,
    items: &[Vec<u8>],
    max: u64,
    cuts: &mut dyn FnMut(u64) -> u64,
) {
    let mut rest = items;
    while !rest.is_empty() {
        let n = (1 + cuts(max) as usize).min(rest.len());
        let (block, after) = rest.split_at(n);
        let bytes = block.concat();
        if cuts(3) == 0 {
            zigzag(-(n as i64), out);
            zigzag(bytes.len() as i64, out);
        } else {
            zigzag(n as i64, out);
        }
        out.extend(bytes);
        rest = after;
    }
    out.push(0);
}

/// The tests' random numbers: xorshift64, the same sequence from the same (non-zero) seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift stays at 0");
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let x = &mut self.0;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// A number below `m`.
    pub(crate) fn below(&mut self, m: u64) -> u64 {
        self.next() % m
    }
}

/// A decimal's big-endian two's-complement bytes kept to their last `keep` significant
/// bytes (those before set to the sign), so that it stays within its schema's precision
/// while its length, sign bytes included, stays what the test chose.
pub(crate) fn within(v: &mut [u8], keep: usize) {
    if v.len() > keep && keep > 0 {
        let cut = v.len() - keep;
        let fill = if v[cut] & 0x80 != 0 { 0xff } else { 0 };
        v[..cut].fill(fill);
    }
}
