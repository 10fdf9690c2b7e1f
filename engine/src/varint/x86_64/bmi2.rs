//! The x86-64 BMI2 kernel: like [`Fast`](crate::varint::Fast), but PEXT compacts the 7-bit
//! groups of the 5- to 10-byte word path and PDEP spreads them on encode.
//!
//! A `#[target_feature(enable = "bmi2")]` function cannot be inlined into the generic
//! (non-target-feature) record decoder, which would cost a call per value. Instead PEXT and
//! PDEP are emitted with inline assembly, which needs no target feature, so the whole
//! single-value path inlines like `fast`'s. Soundness comes from the kernel value itself: a
//! [`Bmi2`] can only be obtained from [`Bmi2::new`], which checks that BMI2 is present (and
//! fast), and the [`Pext`] bit mover can only be obtained from a `Bmi2`.

use std::arch::asm;
use std::mem::MaybeUninit;

use crate::varint::generic::{self, Bits, HIGH, LOW};
use crate::varint::{bulk, predict, BulkHint, Kernel, KernelKind, ReadHint, VarintError, MAX_LEN};

/// The BMI2 kernel. Holding one proves that this CPU has fast PEXT/PDEP.
#[derive(Debug, Clone, Copy)]
pub struct Bmi2 {
    _detected: (),
}

impl Bmi2 {
    /// The kernel, if this CPU has BMI2 (with BMI1 and LZCNT) and its PEXT/PDEP are fast (not
    /// AMD/Hygon family 0x15, 0x17 or 0x18). Detection runs once per process; later calls
    /// are one load.
    #[inline]
    pub fn new() -> Option<Self> {
        super::has_fast_pext().then_some(Bmi2 { _detected: () })
    }

    #[inline(always)]
    fn pext(self) -> Pext {
        Pext { _detected: () }
    }
}

/// [`Bits`] with PEXT/PDEP, only constructible from a [`Bmi2`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pext {
    _detected: (),
}

impl Bits for Pext {
    const ONE_OP: bool = true;

    #[inline(always)]
    fn compact(self, w: u64) -> u64 {
        self.compact_masked(w, LOW)
    }

    #[inline(always)]
    fn compact_masked(self, w: u64, mask: u64) -> u64 {
        let out: u64;
        // SAFETY: a `Pext` exists only if `Bmi2::new` detected BMI2, so PEXT is a valid
        // instruction here. It reads and writes only registers and leaves the flags alone.
        unsafe {
            asm!(
                "pext {out}, {w}, {mask}",
                w = in(reg) w,
                mask = in(reg) mask,
                out = lateout(reg) out,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        out
    }

    #[inline(always)]
    fn stops(self, w: u64) -> u64 {
        let out: u64;
        // SAFETY: a `Pext` exists only if `Bmi2::new` detected BMI1 (with BMI2), so ANDN is a
        // valid instruction here. It reads and writes only registers (and the flags).
        unsafe {
            asm!(
                "andn {out}, {w}, {high}",
                w = in(reg) w,
                high = in(reg) HIGH,
                out = lateout(reg) out,
                options(pure, nomem, nostack),
            );
        }
        out
    }

    #[inline(always)]
    fn lzcnt(self, x: u64) -> u32 {
        let out: u64;
        // SAFETY: a `Pext` exists only if `Bmi2::new` detected LZCNT (with BMI2), so LZCNT is
        // a valid instruction here. It reads and writes only registers.
        unsafe {
            asm!(
                "lzcnt {out}, {x}",
                x = in(reg) x,
                out = lateout(reg) out,
                options(pure, nomem, nostack),
            );
        }
        out as u32
    }

    #[inline(always)]
    fn spread(self, v: u64) -> u64 {
        let out: u64;
        // SAFETY: a `Pext` exists only if `Bmi2::new` detected BMI2, so PDEP is a valid
        // instruction here. It reads and writes only registers and leaves the flags alone.
        unsafe {
            asm!(
                "pdep {out}, {v}, {mask}",
                v = in(reg) v,
                mask = in(reg) LOW,
                out = lateout(reg) out,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        out
    }
}

impl Kernel for Bmi2 {
    const KIND: KernelKind = KernelKind::Bmi2;

    #[inline(always)]
    fn read_u64(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64(self.pext(), buf, pos)
    }

    #[inline(always)]
    fn read_u64_unpredictable(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64_word(self.pext(), buf, pos)
    }

    #[inline(always)]
    fn read_u64_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        hint: &mut ReadHint,
    ) -> Result<u64, VarintError> {
        predict::read_u64_hinted(self.pext(), buf, pos, hint)
    }

    #[inline]
    fn read_longs_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i64>,
        hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        bulk::read_longs(self.pext(), buf, pos, n, out, hint)
    }

    #[inline]
    fn read_ints_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i32>,
        hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        bulk::read_ints(self.pext(), buf, pos, n, out, hint)
    }

    #[inline]
    fn skip(self, buf: &[u8], pos: &mut usize, n: usize) -> Result<(), VarintError> {
        bulk::skip(self.pext(), buf, pos, n)
    }

    #[inline(always)]
    fn write_u64(self, v: u64, out: &mut Vec<u8>) {
        generic::write_u64(self.pext(), v, out)
    }

    #[inline(always)]
    fn encode_u64(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        // SAFETY: `dst` is `MAX_LEN` writable bytes.
        unsafe { generic::encode_at(self.pext(), v, dst.as_mut_ptr().cast()) }
    }

    #[inline]
    fn write_longs(self, values: &[i64], out: &mut Vec<u8>) {
        bulk::write_longs(self.pext(), values, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::generic::Swar;

    #[test]
    fn pext_matches_swar() {
        let Some(k) = Bmi2::new() else { return };
        let p = k.pext();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            assert_eq!(p.compact(x), Swar.compact(x));
            let v = x >> 8;
            assert_eq!(p.spread(v), Swar.spread(v));
        }
    }
}
