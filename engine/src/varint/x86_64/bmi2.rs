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

use crate::varint::word::{Bits, LOW};
use crate::varint::{predict, Kernel, KernelKind, ReadHint, VarintError, MAX_LEN};

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
    pub(crate) fn pext(self) -> Pext {
        Pext { _detected: () }
    }
}

/// [`Bits`] with PEXT/PDEP, only constructible from a [`Bmi2`]. (`pub` in this private
/// module: it is the sealed kernel trait's associated type.)
#[derive(Debug, Clone, Copy)]
pub struct Pext {
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
    fn decode_any(self, c: &[u8; MAX_LEN], p: usize, high: u64, low: u64) -> (u64, usize, u64) {
        // The reference arithmetic (`Bits::decode_any`'s default) in 24 instructions, with
        // registers chosen once: the compiler's version of it spent a third of its
        // instructions on register moves in the read loop (Mixed1-10 5.1 -> 4.35 ns, see
        // docs/perf/varint.md). Flags replace compares: TZCNT's carry (no stop bit in the
        // word: 9 or 10 bytes) and BT's (byte 8 continued: 10 bytes), each made a mask by SBB.
        // `c` is `p` bytes into the caller's buffer: addressing `base + p` folds the sum into
        // the loads (the compiler cancels `+ p - p`).
        let base = c.as_ptr().wrapping_sub(p);
        let (value, next, bad): (u64, usize, u64);
        // SAFETY: `base + p` is `c`, a reference to 10 bytes, so the 8-byte load at `c` and
        // the 2-byte load at `c + 8` are in bounds. A `Pext` exists only if `Bmi2::new`
        // detected BMI1 and BMI2, so ANDN, TZCNT, BLSMSK and PEXT are valid instructions
        // here. Every other register written is an output of the block; it changes the flags
        // (not declared preserved) and touches no memory but the 10 bytes it reads. Wrong
        // `high` / `low` masks would give wrong values, never an access outside `c`.
        unsafe {
            asm!(
                "mov {w}, qword ptr [{base} + {p}]",
                "movzx {t:e}, word ptr [{base} + {p} + 8]",
                // Stop bits; n = the lowest one's index, 64 and CF = 1 without one.
                "andn {s}, {w}, {high}",
                "tzcnt {n}, {s}",
                // m = all ones for 9 or 10 bytes: then t keeps bytes 8 and 9, else it is 0.
                "sbb {m}, {m}",
                // k = all ones for 10 bytes (9 or 10, and byte 8 continued). Byte 8's bit is
                // tested before the masking: off the chain from TZCNT to the next position.
                "bt {t:e}, 7",
                "sbb {k}, {k}",
                "and {k}, {m}",
                "and {t}, {m}",
                // The low 56 bits: the payload of the bytes up to the stop byte.
                "blsmsk {s}, {s}",
                "and {s}, {low}",
                "pext {w}, {w}, {s}",
                // next = p + 1 + n / 8 + (10 bytes); n / 8 is 8 without a stop bit. The sum
                // of p + 1 is off the chain from the load to the next position.
                "lea {next}, [{p} + 1]",
                "shr {n}, 3",
                "add {next}, {n}",
                "sub {next}, {k}",
                // bad = the bits of byte 9 above bit 0, in a 10-byte varint.
                "mov {n}, {t}",
                "shr {n}, 9",
                "and {n}, {k}",
                // The top 8 bits: byte 8's payload, and bit 0 of byte 9 for 10 bytes.
                "and {k:e}, 0x100",
                "or {k:e}, 0x7f",
                "pext {t}, {t}, {k}",
                "shl {t}, 56",
                "or {w}, {t}",
                base = in(reg) base,
                p = in(reg) p,
                high = in(reg) high,
                low = in(reg) low,
                w = out(reg) value,
                t = out(reg) _,
                s = out(reg) _,
                m = out(reg) _,
                k = out(reg) _,
                n = out(reg) bad,
                next = lateout(reg) next,
                options(pure, readonly, nostack),
            );
        }
        (value, next, bad)
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

impl crate::varint::sealed::Sealed for Bmi2 {
    type Bits = Pext;

    #[inline(always)]
    fn bits(self) -> Pext {
        self.pext()
    }
}

/// [`Kernel`]'s word-at-a-time paths with PEXT/PDEP, and single reads of a stream predicted
/// (which pays where the mover is one instruction).
impl Kernel for Bmi2 {
    const KIND: KernelKind = KernelKind::Bmi2;

    #[inline(always)]
    fn read_u64_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        hint: &mut ReadHint,
    ) -> Result<u64, VarintError> {
        predict::read_u64_hinted(self.pext(), buf, pos, hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::word::Swar;

    #[test]
    fn pext_matches_swar() {
        let Some(k) = Bmi2::new() else { return };
        let p = k.pext();
        let mut next = crate::varint::test_rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..10_000 {
            let x = next();
            assert_eq!(p.compact(x), Swar.compact(x));
            let v = x >> 8;
            assert_eq!(p.spread(v), Swar.spread(v));
        }
    }
}
