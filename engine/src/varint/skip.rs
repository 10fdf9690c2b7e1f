//! Stepping over varints without decoding them: the end of a varint is its first byte with the
//! high bit clear, so skipping needs only those bytes' positions, eight or sixteen bytes at a
//! time. Used by projection (`decode/skip.rs`) for the values of columns nobody asked for.
//!
//! Both functions accept exactly what [`Scalar::read_u64`](super::Scalar) accepts, read for
//! read, and leave the position where it would (on failure the position is unspecified: the
//! caller reads again with a kernel to get the error).

use super::word::HIGH;
use super::{Kernel, Scalar};

/// Step over one varint at `*pos`. `false` if [`Scalar`] would fail to read it there.
#[inline(always)]
pub(crate) fn skip_one(buf: &[u8], pos: &mut usize) -> bool {
    if let Some(chunk) = buf.get(*pos..).and_then(|rest| rest.first_chunk::<8>()) {
        let ends = !u64::from_le_bytes(*chunk) & HIGH;
        if ends != 0 {
            *pos += (ends.trailing_zeros() / 8) as usize + 1;
            return true;
        }
    }
    Scalar.read_u64(buf, pos).is_ok()
}

/// Step over `n` consecutive varints at `*pos`. `false` if [`Scalar`] would fail to read
/// them all there.
///
/// A few that end within 8 or 16 bytes are found at once (`skip_in_16`); else eight bytes
/// at a time: a word's clear high bits are the ends of the varints in it, so a
/// word ends its popcount of them; the first of those may have started in an earlier word
/// and is checked to be at most ten bytes long, the tenth 0 or 1 (any shorter varint is
/// valid, and the ones that start in the word are shorter). A longer or overflowing one, and
/// the last few bytes of the data, go to the reference kernel, one varint at a time.
#[inline(always)]
pub(crate) fn skip_n(buf: &[u8], pos: &mut usize, n: u64) -> bool {
    // A few varints that end in the next word (a record's adjacent fields): their ends found
    // inline, by clearing the ends before the n-th (none of them can be too long: the first
    // starts in the word).
    if (1..=8).contains(&n) {
        if let Some(chunk) = buf.get(*pos..).and_then(|rest| rest.first_chunk::<8>()) {
            let mut e = !u64::from_le_bytes(*chunk) & HIGH;
            for _ in 1..n {
                e &= e.wrapping_sub(1);
            }
            if e != 0 {
                *pos += (e.trailing_zeros() / 8) as usize + 1;
                return true;
            }
        }
    }
    // (Up to eight: more, an array's items, rarely fit in 16 bytes, and the try would be
    // wasted before the word-by-word steps.)
    if (1..=8).contains(&n) && skip_in_16(buf, pos, n) {
        return true;
    }
    skip_words(buf, pos, n)
}

/// One bit per byte of `word`: bit `i` set when byte `i` has its high bit set (continues a
/// varint). The high bits moved to the bottom of their bytes are gathered into the top byte by
/// one multiply (each lands on its own bit: no carries).
#[inline(always)]
fn continuations(word: u64) -> u32 {
    let low = (word >> 7) & 0x0101_0101_0101_0101;
    (low.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// [`skip_n`] for `n` (1 to 16) varints that end within the next 16 bytes, none of them ten
/// bytes long or more (a record's adjacent fields of timestamps and ids, too long together
/// for one word): their ends as 16 bits, the `n`-th found by clearing the ones before it.
/// `false`, with `*pos` unchanged, when they do not (the caller steps word by word).
///
/// Every varint of at most nine bytes is valid, so the only check is that no nine
/// consecutive bytes before the `n`-th end all continue a varint.
#[inline(always)]
fn skip_in_16(buf: &[u8], pos: &mut usize, n: u64) -> bool {
    let Some(chunk) = buf.get(*pos..).and_then(|rest| rest.first_chunk::<16>()) else {
        return false;
    };
    let (low, high) = chunk.split_at(8);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let cont = continuations(word(low)) | continuations(word(high)) << 8;
    let mut ends = !cont & 0xffff;
    for _ in 1..n {
        ends &= ends.wrapping_sub(1);
    }
    if ends == 0 {
        return false;
    }
    let end = ends.trailing_zeros();
    // Bit i: bytes i to i + 8 all continue a varint (bytes past the 16 count as ends).
    let mut runs = cont & (cont >> 1);
    runs &= runs >> 2;
    runs &= runs >> 4;
    runs &= cont >> 8;
    if runs & ((1 << end) - 1) != 0 {
        return false;
    }
    *pos += end as usize + 1;
    true
}

/// The ends in a word of them (one bit per byte, each its high bit): its bytes' high bits
/// summed into the top byte by one multiply. `count_ones` is a dozen instructions on the
/// baseline x86-64 this module is compiled for (no `popcnt`), and this runs on every word.
#[inline(always)]
fn ends_in(ends: u64) -> u64 {
    (ends >> 7).wrapping_mul(0x0101_0101_0101_0101) >> 56
}

/// [`skip_n`] word by word.
fn skip_words(buf: &[u8], pos: &mut usize, mut n: u64) -> bool {
    // `start`: where the varint being stepped over began; `p`: the next word to look at.
    let mut start = *pos;
    let mut p = start;
    while n > 0 {
        let Some(chunk) = buf.get(p..).and_then(|rest| rest.first_chunk::<8>()) else {
            // The tail: varint by varint.
            *pos = start;
            return (0..n).all(|_| Scalar.read_u64(buf, pos).is_ok());
        };
        let ends = !u64::from_le_bytes(*chunk) & HIGH;
        // (`p + 8` when the word holds no end.)
        let first_end = p + (ends.trailing_zeros() / 8) as usize;
        // A varint of ten bytes (random longs, hashes) is valid when its last byte is 0 or
        // 1, and its nine bytes so far are no reason to stop when the word holds no end.
        let span = first_end - start;
        let ten = span == 9 && (ends == 0 || buf[first_end] <= 1);
        if span >= 9 && !ten {
            // Ten bytes or more: the reference decides, then on with the words after it.
            *pos = start;
            if Scalar.read_u64(buf, pos).is_err() {
                return false;
            }
            n -= 1;
            start = *pos;
            p = start;
            continue;
        }
        let count = ends_in(ends);
        if count >= n {
            // The n-th end in this word: clear the n - 1 ends before it.
            let mut e = ends;
            for _ in 1..n {
                e &= e - 1;
            }
            *pos = p + (e.trailing_zeros() / 8) as usize + 1;
            return true;
        }
        n -= count;
        if ends != 0 {
            start = p + ((63 - ends.leading_zeros()) / 8) as usize + 1;
        }
        p += 8;
    }
    *pos = start;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::test_rng;

    /// Read `n` varints with the reference: success and end position.
    fn reference(buf: &[u8], at: usize, n: u64) -> Option<usize> {
        let mut pos = at;
        (0..n)
            .all(|_| Scalar.read_u64(buf, &mut pos).is_ok())
            .then_some(pos)
    }

    fn check(buf: &[u8]) {
        for at in 0..buf.len().min(12) {
            for n in 0..=(buf.len() as u64 + 1) {
                let want = reference(buf, at, n);
                let mut pos = at;
                let got = skip_n(buf, &mut pos, n).then_some(pos);
                assert_eq!(got, want, "skip_n({n}) at {at} of {buf:02x?}");
                if n == 1 {
                    let mut pos = at;
                    let got = skip_one(buf, &mut pos).then_some(pos);
                    assert_eq!(got, want, "skip_one at {at} of {buf:02x?}");
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_reference_on_random_bytes() {
        let mut rng = test_rng(7);
        for _ in 0..3000 {
            let len = (rng() % 40) as usize;
            // Mostly continuation bytes in some inputs (long and overlong varints), mostly
            // ends in others, and 0x01/0x02 often (the tenth byte's limit).
            let bias = rng() % 4;
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    let r = rng();
                    match (bias, r % 8) {
                        (0, _) => r as u8,
                        (1, 0) | (2, 0..=5) => (r >> 8) as u8 & 0x7f,
                        (3, 0) => 1 + (r >> 8) as u8 % 2,
                        _ => (r >> 8) as u8 | 0x80,
                    }
                })
                .collect();
            check(&buf);
        }
    }

    #[test]
    fn agrees_with_the_reference_on_encoded_values() {
        let mut rng = test_rng(11);
        for _ in 0..500 {
            let mut buf = Vec::new();
            for _ in 0..(rng() % 30) {
                // Values of every length, ten-byte ones included.
                let v = rng() >> (rng() % 64);
                let mut x = v;
                while x >= 0x80 {
                    buf.push(x as u8 | 0x80);
                    x >>= 7;
                }
                buf.push(x as u8);
            }
            check(&buf);
            // A tenth byte above 1 somewhere.
            if let Some(i) = buf.iter().position(|&b| b == 1) {
                let mut bad = buf.clone();
                bad[i] = 2;
                check(&bad);
            }
        }
    }

    #[test]
    fn continuations_gather_each_bytes_high_bit() {
        let mut rng = test_rng(13);
        for _ in 0..100_000 {
            let word = rng();
            let want = (0..8)
                .filter(|i| (word >> (8 * i + 7)) & 1 == 1)
                .fold(0u32, |m, i| m | 1 << i);
            assert_eq!(continuations(word), want, "{word:#x}");
        }
    }

    #[test]
    fn ends_are_counted_as_count_ones_does() {
        let mut rng = test_rng(3);
        for _ in 0..100_000 {
            let ends = rng() & rng() & HIGH;
            assert_eq!(ends_in(ends), u64::from(ends.count_ones()), "{ends:#x}");
        }
        assert_eq!(ends_in(HIGH), 8);
        assert_eq!(ends_in(0), 0);
    }

    #[test]
    fn long_runs() {
        let buf: Vec<u8> = (0..10_000u32).map(|i| (i % 128) as u8).collect();
        let mut pos = 0;
        assert!(skip_n(&buf, &mut pos, 10_000));
        assert_eq!(pos, 10_000);
        let mut pos = 0;
        assert!(!skip_n(&buf, &mut pos, 10_001));
        let two: Vec<u8> = [0x80u8, 0x01].repeat(5000);
        let mut pos = 1;
        assert!(skip_n(&two, &mut pos, 4999));
        assert_eq!(pos, 1 + 1 + 2 * 4998);
    }
}
