//! The word-level primitives of the [`Fast`](super::Fast) and [`Bmi2`](super::Bmi2) kernels,
//! shared by the value-at-a-time loops ([`super::generic`]) and the block decoder
//! ([`super::block`]): the byte masks of a 64-bit word, [`Bits`] (moving 7-bit groups between a
//! word and a value) with its shift-and-mask implementation [`Swar`], the output [`Lane`]s, and
//! the small helpers they use. A leaf: it imports neither of the two.

use super::MAX_LEN;

/// The high (continuation) bit of every byte of a word.
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;
/// The low seven (payload) bits of every byte of a word.
pub(crate) const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Moves 7-bit groups between the bytes of a little-endian word and a contiguous value.
///
/// (`pub` in this private module: it bounds the sealed kernel trait's associated type.)
pub trait Bits: Copy {
    /// Gathers the low seven bits of each byte of `w` into the low 56 bits of the result
    /// (byte 0 lands in bits 0..7, byte 7 in bits 49..56). High bits of the bytes are ignored.
    fn compact(self, w: u64) -> u64;
    /// [`Bits::compact`] of the groups selected by `mask` (a subset of [`LOW`]): the bits of
    /// `w` under `mask`, gathered from the bottom up.
    #[inline(always)]
    fn compact_masked(self, w: u64, mask: u64) -> u64 {
        self.compact(w & mask)
    }
    /// The inverse of [`Bits::compact`] for `v < 2^56`: byte `k` of the result holds bits
    /// `7k..7k+7` of `v`, and every high bit is clear.
    fn spread(self, v: u64) -> u64;
    /// Whether [`Bits::compact`] and [`Bits::spread`] are one instruction each (PEXT, PDEP).
    /// Then [`write_longs`](super::generic::write_longs) spreads groups of one- to three-byte
    /// values with PDEP, where shift-and-mask has a branch-free 32-bit-store path for them.
    const ONE_OP: bool = false;
    /// The varint (1 to 10 bytes) at the start of `c` (position `p`), decoded without a branch
    /// on its length: its value, the position after it, and a word that is nonzero if it has
    /// a 10th byte above 1 (then the value and position are meaningless). `high` and `low`
    /// must be [`HIGH`] and [`LOW`] (passed in so that registers the caller holds serve).
    ///
    /// This is the reference arithmetic; the `bmi2` kernel runs the same steps as one block
    /// of assembly (where the flags of TZCNT and BT stand in for compares).
    #[inline(always)]
    fn decode_any(self, c: &[u8; MAX_LEN], p: usize, high: u64, low: u64) -> (u64, usize, u64) {
        let w = first_word(c);
        let stops = !w & high;
        // Every bit up to and including the lowest stop bit; all bits when the word has none.
        let keep = stops ^ stops.wrapping_sub(1);
        let lo = self.compact_masked(w, keep & low);
        // `trailing_zeros` is 64 without a stop bit, which makes 9 bytes.
        let tz = stops.trailing_zeros() as usize;
        // Bytes 8 and 9 when the word has no stop byte (a varint of 9 or 10 bytes), else 0.
        // Pinned: computed from the flags, never a branch (which mispredicts when lengths
        // are random).
        let long = 0u64.wrapping_sub(pin(usize::from(stops == 0)) as u64);
        let t = u64::from(u16::from_le_bytes([c[8], c[9]])) & long;
        // 10 bytes: byte 8 continued. Arithmetic, not `&&`: byte 9 is the next value's byte
        // for most varints, so a branch on it would mispredict.
        let more = (t >> 7) & 1;
        let bad = (t >> 9) & more.wrapping_neg();
        let top = self.compact_masked(t, 0x7f | (more << 8)) << 56;
        // The next position depends on this one through the load and `trailing_zeros`,
        // which come last: add them last, to a base summed while they are computed.
        let base = pin(p + 1) + more as usize;
        (lo | top, base + (tz >> 3), bad)
    }
    /// `x.leading_zeros()` (BSR is slow on AMD: the `bmi2` kernel uses LZCNT).
    #[inline(always)]
    fn lzcnt(self, x: u64) -> u32 {
        x.leading_zeros()
    }
}

/// Shift-and-mask [`Bits`]: three rounds that halve the number of groups each time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Swar;

impl Bits for Swar {
    #[inline(always)]
    fn compact(self, w: u64) -> u64 {
        let x = w & LOW;
        // 8 x 7 bits -> 4 x 14 bits (in 16-bit lanes): a lane `lo + hi << 8` becomes
        // `lo + hi << 7` by subtracting `hi << 7` (no borrow: it is part of the lane).
        let x = x - ((x & 0x7f00_7f00_7f00_7f00) >> 1);
        // 4 x 14 bits -> 2 x 28 bits (in 32-bit lanes).
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
        // 2 x 28 bits -> 56 bits.
        (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
    }

    #[inline(always)]
    fn spread(self, v: u64) -> u64 {
        let x = (v & 0x0fff_ffff) | ((v & 0x00ff_ffff_f000_0000) << 4);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
        (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
    }
}

/// An element type the bulk decoder writes: `i64` for longs, `i32` for ints.
pub(crate) trait Lane: Copy {
    /// The value of a one-byte varint (`b < 0x80`): zigzag decoded.
    fn from_byte(b: u8) -> Self;
    /// The value of a raw varint: truncated to the lane (ints are range-checked separately on
    /// the raw values) and zigzag decoded.
    fn from_raw(v: u64) -> Self;
    /// [`Lane::from_raw`] of a raw varint of at most four bytes (`v < 2^28`), computed in 32
    /// bits (twice as many values per vector register as in 64).
    fn from_raw32(v: u32) -> Self;
}

impl Lane for i64 {
    #[inline(always)]
    fn from_byte(b: u8) -> Self {
        i64::from(b >> 1) ^ -i64::from(b & 1)
    }
    #[inline(always)]
    fn from_raw(v: u64) -> Self {
        ((v >> 1) as i64) ^ -((v & 1) as i64)
    }
    #[inline(always)]
    fn from_raw32(v: u32) -> Self {
        i64::from(((v >> 1) as i32) ^ -((v & 1) as i32))
    }
}

impl Lane for i32 {
    #[inline(always)]
    fn from_byte(b: u8) -> Self {
        i32::from(b >> 1) ^ -i32::from(b & 1)
    }
    #[inline(always)]
    fn from_raw(v: u64) -> Self {
        Self::from_raw32(v as u32)
    }
    #[inline(always)]
    fn from_raw32(v: u32) -> Self {
        ((v >> 1) as i32) ^ -((v & 1) as i32)
    }
}

/// `x`, computed as written: LLVM may not re-associate a sum through it. A loop whose next
/// position is `base + late` (where `late` comes last, from a load) keeps `base` a separate,
/// early sum this way instead of adding `late` first and the rest after it.
#[inline(always)]
pub(crate) fn pin(x: usize) -> usize {
    // Miri runs no assembly; the barrier changes no value, so it is left out there.
    #[cfg(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri)))]
    {
        let mut x = x;
        // SAFETY: an empty assembly block (a comment): it reads and writes only `x`'s
        // register, and leaves it unchanged.
        unsafe {
            std::arch::asm!(
                "/* {0} */",
                inout(reg) x,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        x
    }
    #[cfg(any(not(any(target_arch = "x86_64", target_arch = "aarch64")), miri))]
    x
}

/// The first little-endian word of a window.
#[inline(always)]
pub(crate) fn first_word<const N: usize>(c: &[u8; N]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&c[..8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_compact_spread_round_trip() {
        for shift in 0..56 {
            for v in [
                1u64 << shift,
                (1u64 << shift) - 1,
                ((1u64 << 56) - 1) >> shift,
            ] {
                let spread = Swar.spread(v);
                assert_eq!(spread & HIGH, 0);
                assert_eq!(Swar.compact(spread), v, "v = {v:#x}");
                assert_eq!(Swar.compact(spread | HIGH), v);
            }
        }
    }
}
