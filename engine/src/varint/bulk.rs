//! Bulk entry points: pick the widest instruction set once per call (once per array block),
//! then run the whole loop compiled for it.
//!
//! On x86-64 with AVX2, BMI1, BMI2, LZCNT and POPCNT (x86-64-v3: Haswell and later, every Zen)
//! the loops of [`super::generic`] run inside `#[target_feature]` wrappers, where the 16-byte
//! one-byte-value widening and the zigzag pass are vectorised with AVX2 and the bit scans use
//! TZCNT/LZCNT/POPCNT. Elsewhere the same loops run as compiled for the baseline target (SSE2
//! on x86-64, NEON on aarch64, whose baseline includes it).

use super::generic;
use super::word::Bits;
use super::VarintError;

#[cfg(target_arch = "x86_64")]
use super::x86_64;

/// Decode `n` zigzag longs (see [`Kernel::read_longs`](super::Kernel::read_longs)).
#[inline]
pub(crate) fn read_longs<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i64>,
    hint: &mut super::BulkHint,
) -> Result<(), VarintError> {
    #[cfg(target_arch = "x86_64")]
    if x86_64::has_v3() {
        // SAFETY: `has_v3` detected every feature `v3::read_longs` is compiled for.
        return unsafe { x86_64::v3::read_longs(bits, buf, pos, n, out, hint) };
    }
    generic::read_longs(bits, buf, pos, n, out, hint)
}

/// Decode `n` zigzag ints (see [`Kernel::read_ints`](super::Kernel::read_ints)).
#[inline]
pub(crate) fn read_ints<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i32>,
    hint: &mut super::BulkHint,
) -> Result<(), VarintError> {
    #[cfg(target_arch = "x86_64")]
    if x86_64::has_v3() {
        // SAFETY: `has_v3` detected every feature `v3::read_ints` is compiled for.
        return unsafe { x86_64::v3::read_ints(bits, buf, pos, n, out, hint) };
    }
    generic::read_ints(bits, buf, pos, n, out, hint)
}

/// Skip `n` varints (see [`Kernel::skip`](super::Kernel::skip)).
#[inline]
pub(crate) fn skip<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
) -> Result<(), VarintError> {
    #[cfg(target_arch = "x86_64")]
    if x86_64::has_v3() {
        // SAFETY: `has_v3` detected every feature `v3::skip` is compiled for.
        return unsafe { x86_64::v3::skip(bits, buf, pos, n) };
    }
    generic::skip(bits, buf, pos, n)
}

/// Append the zigzag encodings of `values` (see
/// [`Kernel::write_longs`](super::Kernel::write_longs)).
#[inline]
pub(crate) fn write_longs<B: Bits>(bits: B, values: &[i64], out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if x86_64::has_v3() {
        // SAFETY: `has_v3` detected every feature `v3::write_longs` is compiled for.
        return unsafe { x86_64::v3::write_longs(bits, values, out) };
    }
    generic::write_longs(bits, values, out)
}
