//! The block bulk decoder: varint boundaries from a terminator bitmap, then every value of a
//! block decoded independently.
//!
//! The value-at-a-time bulk loop ([`super::generic`]'s steps) is latency bound: the position of
//! the next varint is known only after the current one's length is (load → length → next
//! load, about ten cycles a value), or after a predicted branch, which mispredicts when lengths
//! vary. Here the bitmap of terminator bytes (high bit clear) of a 64-byte block is computed
//! from the bytes alone (SSE2 `movemask` on x86-64, shift-multiply elsewhere), independently of
//! any decoding. The boundaries are then peeled off the bitmap with `trailing_zeros` and
//! "clear lowest bit" (one cycle each), and each value is decoded from one unaligned load at
//! its start, cut at its terminator (`w & blsmsk(!w & 0x8080…80)`) and compacted with
//! shift-and-mask ([`Swar`]); values decode in parallel, so the loop runs at instruction
//! throughput instead of load latency, and it has no length-dependent branch to mispredict.
//!
//! Both the `fast` and the `bmi2` kernel use [`Swar`] here: the compaction of a group of values
//! is vectorised by the compiler (four values per AVX2 instruction in the x86-64-v3 build),
//! which measured faster than one PEXT per value (len5: 1.29 vs 1.82 ns per value; Mixed1-10:
//! 2.79 vs 3.27 ns).
//!
//! Values are peeled [`GROUP`] (or [`GROUP32`]) at a time unconditionally (the slots past the
//! block's last value are written with garbage that the next group or block overwrites), so
//! the only data-dependent branch is the group loop's exit, taken once per block.
//!
//! A block whose varints are all at most 4 bytes (no run of 4 continuation bytes, checked once
//! per block on the bitmap) is decoded in 32-bit lanes: 4-byte loads, two compaction rounds
//! instead of three, 16 values per group (Counters, 1- and 3-byte values: 7.6 instructions per
//! value instead of 11; 316M -> 266M for the whole 40 MB file). One whose varints are at most 8
//! bytes takes the 64-bit path without the 9/10-byte extension; the others check every value
//! for overlong encodings. Values are zigzag decoded as they are written (no separate pass).
//! Any block that holds an invalid varint is left undecoded: the caller's exact path then
//! decodes it value by value and reports the error the scalar reference reports.
//!
//! [`decode_short`] applies the same bitmap to an array block of a few values (one window,
//! no groups), where the value-at-a-time loops would otherwise read them.

use std::mem::MaybeUninit;

use super::word::{Bits, Lane, Swar, HIGH, LOW};

/// Bytes per block of the terminator bitmap.
pub(crate) const BLOCK: usize = 64;
/// Values peeled per iteration of the inner loop (the unconditional group). Measured: 8 beat
/// 4 on len10 (2.08x vs 1.92x prost) with the same Mixed1-10 result (within noise).
const GROUP: usize = 8;
/// Values peeled per iteration on the path for blocks of varints of at most four bytes, which
/// hold more values per block (Counters: ~32). Measured (callgrind, Counters 40 MB file):
/// 266.0M instructions with 16, 275.1M with 8. The 8-byte path keeps [`GROUP`]: 16 there
/// cost Order (~16 values per block) 308.2M instead of 302.8M.
const GROUP32: usize = 16;
/// Bytes of input that must be in bounds from a block's base. The bitmap reads [`BLOCK`]
/// bytes. A value read starts at most at `base + BLOCK + 1` (past a block's last terminator
/// the peeled "terminator" is `base + BLOCK`, see [`decode_blocks`]), and reads 10 bytes.
pub(crate) const BLOCK_SLACK: usize = BLOCK + 1 + 10 + 5;
/// Output slots that must be available from the block's first value index: a block holds
/// at most [`BLOCK`] values, and the last group may write up to `GROUP32 - 1` slots past them.
pub(crate) const OUT_SLACK: usize = BLOCK + GROUP32;

/// The terminator bitmap of `c`: bit `k` is set when `c[k] < 0x80`.
#[inline(always)]
pub(crate) fn stops64(c: &[u8; BLOCK]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8};
        let mut m = 0u64;
        for k in 0..4 {
            // SAFETY: SSE2 is part of the x86-64 baseline, so both intrinsics are available on
            // every x86-64 CPU; the unaligned 16-byte load reads `c[16k..16k+16]`, in bounds of
            // the 64-byte array.
            let bits = unsafe {
                _mm_movemask_epi8(_mm_loadu_si128(c.as_ptr().add(16 * k).cast::<__m128i>()))
            };
            m |= u64::from(bits as u16) << (16 * k);
        }
        !m
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = 0u64;
        for (k, w) in c.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            // Bit 7 of every byte of the word, where the byte is a terminator, moved to bit
            // 8j; the multiplication gathers bit 8j into bit 56 + j (no two partial products
            // meet, so there are no carries).
            let t = (!u64::from_le_bytes(b) & HIGH) >> 7;
            m |= (t.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
        }
        m
    }
}

/// Where a block decoding stopped: input position (start of the next varint), values written,
/// OR of the raw values written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor {
    pub(crate) p: usize,
    pub(crate) i: usize,
    pub(crate) acc: u64,
}

/// Read 8 bytes at `buf[at..at + 8]` as a little-endian word.
///
/// # Safety
/// `at + 8 <= buf.len()`.
#[inline(always)]
unsafe fn load64(buf: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= buf.len());
    // SAFETY: the caller guarantees the 8 bytes are in bounds; `read_unaligned` has no
    // alignment requirement.
    u64::from_le(unsafe { buf.as_ptr().add(at).cast::<u64>().read_unaligned() })
}

/// Decode the first `n` varints from `cur` in whole blocks of [`BLOCK`] input bytes while at
/// least [`BLOCK_SLACK`] input bytes remain at the block and [`OUT_SLACK`] output slots remain
/// in `dst` (which may be longer than `n`: slots from `n` on are scratch). Stops at the
/// `n`-th value (the block that holds it may hold more varints, or other data, after it:
/// those are decoded into the scratch slots and dropped, their bytes are not consumed), or
/// early, before a block that holds an invalid varint (overlong, or a 10th byte above 1), at
/// the start of that block; the caller decodes from there with the exact path.
///
/// Every block starts right after the previous one (not at a varint boundary): a varint that
/// crosses the block end is completed by the next block's first terminator.
#[inline(always)]
pub(crate) fn decode_blocks<L: Lane>(
    buf: &[u8],
    dst: &mut [MaybeUninit<L>],
    n: usize,
    cur: &mut Cursor,
) {
    let (Some(last_b), Some(last_i)) = (
        buf.len().checked_sub(BLOCK_SLACK),
        dst.len().checked_sub(OUT_SLACK),
    ) else {
        return;
    };
    let Cursor {
        p: mut s,
        mut i,
        mut acc,
    } = *cur;
    let mut b = s;
    let out = dst.as_mut_ptr();
    // Invariants at the top of every iteration: `s` is the start of the next varint,
    // `b - 9 <= s <= b` whenever the varints so far were valid (and `s <= b` always, with
    // `s >= cur.p`), `i` values were written.
    while b <= last_b && i < n && i <= last_i {
        // `b + BLOCK <= buf.len()`, so this is always `Some` (and free).
        let Some(c) = buf.get(b..).and_then(|r| r.first_chunk::<BLOCK>()) else {
            break;
        };
        let t0 = stops64(c);
        if t0 == 0 {
            // 64 continuation bytes: an overlong varint. The exact path reports it.
            break;
        }
        let cnt = t0.count_ones() as usize;
        // Values of this block that belong to the `n` (at least one: `i < n`).
        let want = n - i;
        let lim = cnt.min(want);
        let first_len = b + t0.trailing_zeros() as usize + 1 - s;
        // Bit k of `run4` is set when bytes k..k+4 of the block are all continuation bytes
        // (a varint of 5 or more bytes ends in or after this block), of `run8` when bytes
        // k..k+8 are (9 or more bytes).
        let z = !t0;
        let mut run4 = z & (z >> 1);
        run4 &= run4 >> 2;
        let run8 = run4 & (run4 >> 4);
        if t0 == u64::MAX && s == b {
            // 64 one-byte values.
            for (k, &byte) in c.iter().enumerate() {
                // SAFETY: `i + k < i + BLOCK <= dst.len()` (`i <= last_i`).
                unsafe { (*out.add(i + k)).write(L::from_byte(byte)) };
                acc |= u64::from(byte) & valid(k, lim);
            }
        } else if run4 == 0 && first_len <= 4 {
            // Every value that ends in this block has at most four bytes: decoded in 32-bit
            // lanes (twice as many per vector register as the 64-bit path). Their raw values
            // are below 2^28, so they cannot fail the int range check and `acc` needs none of
            // them.
            let mut t = t0;
            let mut k = 0;
            loop {
                // Past the block's last terminator `t` is 0 and the peeled end is
                // `b + BLOCK`: those slots are garbage, overwritten later, and their reads
                // stay in bounds.
                let starts = peel::<GROUP32>(&mut t, b, &mut s);
                let mut v = [0u32; GROUP32];
                for (v, &at) in v.iter_mut().zip(&starts) {
                    // SAFETY: `cur.p <= at <= b + BLOCK + 1` and `b + BLOCK_SLACK <=
                    // buf.len()`, so the 4 bytes at `at` are in bounds.
                    let w = unsafe { load32(buf, at) };
                    *v = compact32(w & to_stop32(w));
                }
                for (j, &v) in v.iter().enumerate() {
                    // SAFETY: `i + k + j < i + OUT_SLACK <= dst.len()`: `k < cnt + GROUP32`
                    // rounded down to a multiple of `GROUP32`, with `cnt <= BLOCK`.
                    unsafe { (*out.add(i + k + j)).write(L::from_raw32(v)) };
                }
                k += GROUP32;
                if k >= lim {
                    break;
                }
            }
        } else if run8 == 0 && first_len <= 8 {
            let mut t = t0;
            let mut k = 0;
            loop {
                // As in the 4-byte path: past the block's last terminator `t` is 0 and the
                // peeled end is `b + BLOCK`; those slots are garbage, overwritten later.
                let starts = peel::<GROUP>(&mut t, b, &mut s);
                let mut v = [0u64; GROUP];
                for (v, &at) in v.iter_mut().zip(&starts) {
                    // SAFETY: `cur.p <= at <= b + BLOCK + 1` and `b + BLOCK_SLACK <=
                    // buf.len()`, so the 8 bytes at `at` are in bounds.
                    let w = unsafe { load64(buf, at) };
                    *v = Swar.compact(w & to_stop(w));
                }
                for (j, &v) in v.iter().enumerate() {
                    // SAFETY: `i + k + j < i + OUT_SLACK <= dst.len()`: `k < cnt + GROUP`
                    // rounded down to a multiple of `GROUP`, with `cnt <= BLOCK`.
                    unsafe { (*out.add(i + k + j)).write(L::from_raw(v)) };
                    acc |= v & valid(k + j, lim);
                }
                k += GROUP;
                if k >= lim {
                    break;
                }
            }
        } else {
            // Some varint may be longer than 8 bytes: extend by bytes 8 and 9 and check
            // every value (a varint of 11 bytes or more has a 10th byte above 1 too).
            let (s0, acc0) = (s, acc);
            let mut t = t0;
            let mut k = 0;
            let mut bad = 0u64;
            loop {
                let starts = peel::<GROUP>(&mut t, b, &mut s);
                let mut v = [0u64; GROUP];
                for (v, &at) in v.iter_mut().zip(&starts) {
                    // SAFETY: as in the short path; the 8 bytes at `at + 2` are in bounds as
                    // `at + 10 <= b + BLOCK_SLACK`.
                    let (w, w2) = unsafe { (load64(buf, at), load64(buf, at + 2)) };
                    let lo = Swar.compact(w & to_stop(w));
                    // Bytes 8 and 9 (the top of the word at `at + 2`) belong to this varint
                    // only when bytes 0 to 7 do not end it, and byte 9 only when byte 8 does
                    // not.
                    let long = u64::from(!w & HIGH == 0).wrapping_neg();
                    let x = w2 >> 48;
                    let x = x & to_stop(x) & long;
                    *v = lo | ((x & 0x7f) << 56) | (x >> 8 << 63);
                    // Bits 1 to 6 of a 10th byte, which do not fit 64 bits. Not masked to
                    // the block's values: past them, the first slot decodes the varint that
                    // starts after the last terminator and the others the bytes at
                    // `b + BLOCK + 1`, and neither can be overlong in valid input (a run of 8
                    // continuation bytes there is the tail of a valid 9- or 10-byte varint),
                    // so a flag there only sends a block with invalid input after it to the
                    // exact path early.
                    bad |= x >> 9;
                }
                for (j, &v) in v.iter().enumerate() {
                    // SAFETY: as in the short path.
                    unsafe { (*out.add(i + k + j)).write(L::from_raw(v)) };
                    acc |= v & valid(k + j, lim);
                }
                k += GROUP;
                if k >= lim {
                    break;
                }
            }
            if bad != 0 {
                s = s0;
                acc = acc0;
                break;
            }
        }
        if want <= cnt {
            // The `n`-th value ends in this block: stop after its terminator, the
            // `want`-th set bit of `t0`.
            let mut t = t0;
            for _ in 1..want {
                t &= t - 1;
            }
            s = b + t.trailing_zeros() as usize + 1;
            i = n;
            break;
        }
        i += cnt;
        // After the block's last terminator.
        s = b + BLOCK - t0.leading_zeros() as usize;
        b += BLOCK;
    }
    *cur = Cursor { p: s, i, acc };
}

/// The most values [`decode_short`] reads: what an array block of a few items holds.
pub(crate) const SHORT: usize = 16;

/// Decode the `n` varints at `pos` (`n <= SHORT`, `dst.len() >= n`) when all of them end in
/// the [`BLOCK`] bytes there and none is longer than eight bytes: the short array blocks
/// (a handful of ids or counters) that [`decode_blocks`] leaves to the value-at-a-time loops.
/// One terminator bitmap for the whole array, each value decoded from one load at its start
/// (compacted by the kernel's `bits`: one PEXT where it is fast, unlike the block decoder,
/// whose groups of values the compiler vectorises):
/// no value's position waits for the decoding of the one before (a value-at-a-time loop waits
/// about ten cycles a value on load, length and position).
///
/// Returns the position after the `n`-th varint and the OR of the raw values (for the int
/// range check), or `None`, with the slots written meaningless, where the values do not all
/// fit that window, one is longer than eight bytes, fewer than [`BLOCK_SLACK`] bytes remain
/// at `pos`, or `n` is out of range: the caller then reads them value by value with the exact
/// path, which reports any invalid varint.
#[inline(always)]
pub(crate) fn decode_short<B: Bits, L: Lane>(
    bits: B,
    buf: &[u8],
    pos: usize,
    n: usize,
    dst: &mut [MaybeUninit<L>],
) -> Option<(usize, u64)> {
    let window = buf.get(pos..pos.checked_add(BLOCK_SLACK)?)?;
    let c = window.first_chunk::<BLOCK>()?;
    let dst = dst.get_mut(..n).filter(|_| n <= SHORT)?;
    let (mut t, mut s, mut acc, mut long) = (stops64(c), pos, 0u64, false);
    for slot in dst {
        let at = s;
        // Past the window's last terminator `t` is 0 and `s` becomes `pos + BLOCK + 1`,
        // which the check after the loop rejects (one comparison instead of counting the
        // terminators first).
        s = pos + t.trailing_zeros() as usize + 1;
        t &= t.wrapping_sub(1);
        long |= s - at > 8;
        // SAFETY: `pos <= at <= pos + BLOCK + 1` and `pos + BLOCK_SLACK <= buf.len()`, so
        // the 8 bytes at `at` are in bounds.
        let w = unsafe { load64(buf, at) };
        let v = bits.compact_masked(w, to_stop(w) & LOW);
        acc |= v;
        slot.write(L::from_raw(v));
    }
    (!long && s <= pos + BLOCK).then_some((s, acc))
}

/// Read 4 bytes at `buf[at..at + 4]` as a little-endian word.
///
/// # Safety
/// `at + 4 <= buf.len()`.
#[inline(always)]
unsafe fn load32(buf: &[u8], at: usize) -> u32 {
    debug_assert!(at + 4 <= buf.len());
    // SAFETY: the caller guarantees the 4 bytes are in bounds; `read_unaligned` has no
    // alignment requirement.
    u32::from_le(unsafe { buf.as_ptr().add(at).cast::<u32>().read_unaligned() })
}

/// [`to_stop`] for a 4-byte word.
#[inline(always)]
fn to_stop32(w: u32) -> u32 {
    let stops = !w & 0x8080_8080;
    stops ^ stops.wrapping_sub(1)
}

/// The low seven bits of the four bytes of `w` gathered into 28 bits ([`Swar`]'s compaction,
/// two rounds in 32 bits).
#[inline(always)]
fn compact32(w: u32) -> u32 {
    let x = w & 0x7f7f_7f7f;
    let x = x - ((x & 0x7f00_7f00) >> 1);
    (x & 0x0000_3fff) | ((x & 0x3fff_0000) >> 2)
}

/// The bits of the bytes of `w` up to and including its first terminator (high bit clear);
/// all of them when there is none.
#[inline(always)]
fn to_stop(w: u64) -> u64 {
    let stops = !w & HIGH;
    stops ^ stops.wrapping_sub(1)
}

/// The starts of the next [`GROUP`] varints: the first at `*s`, each next one after the
/// terminator peeled from `t` (bit positions relative to `b`); `*s` moves past the last.
#[inline(always)]
fn peel<const G: usize>(t: &mut u64, b: usize, s: &mut usize) -> [usize; G] {
    let mut starts = [0usize; G];
    for at in &mut starts {
        *at = *s;
        *s = b + t.trailing_zeros() as usize + 1;
        *t &= t.wrapping_sub(1);
    }
    starts
}

/// All ones when `k < cnt` (slot `k` holds one of the block's values), else 0.
#[inline(always)]
fn valid(k: usize, cnt: usize) -> u64 {
    u64::from(k < cnt).wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops64_marks_terminators() {
        let mut c = [0x80u8; BLOCK];
        let mut want = 0u64;
        for k in [0usize, 1, 7, 8, 15, 16, 31, 32, 33, 48, 62, 63] {
            c[k] = (k as u8) & 0x7f;
            want |= 1 << k;
        }
        c[5] = 0xff;
        assert_eq!(stops64(&c), want);
        assert_eq!(stops64(&[0u8; BLOCK]), u64::MAX);
        assert_eq!(stops64(&[0xffu8; BLOCK]), 0);
    }

    /// The short-block path against the reference, value for value: random arrays of 1 to
    /// 16 varints of mixed lengths (some over eight bytes, some invalid, some cut short),
    /// followed by a random number of bytes, read from two starting offsets. Where the path
    /// reads a block it must give the reference's values and position; where it declines, it
    /// must leave the output and the position as they were.
    #[test]
    fn short_blocks_decode_like_scalar() {
        use crate::varint::generic::{read_ints_short, read_longs_short};
        use crate::varint::{Kernel, Scalar};
        #[cfg(target_arch = "x86_64")]
        let pext = crate::varint::x86_64::Bmi2::new().map(|k| k.pext());
        let mut next = crate::varint::test_rng(0x5bd1_e995_0bad_cafe);
        let (mut taken, mut declined, mut ints_taken) = (0, 0, 0);
        for case in 0..if cfg!(miri) { 40 } else { 4000 } {
            let n = 1 + (next() % SHORT as u64) as usize;
            let shape = next() % 5;
            let mut buf = vec![0x55u8; (case % 3) as usize];
            let start = buf.len();
            for _ in 0..n {
                let r = next();
                let len = match shape {
                    0 => 1 + (r % 3) as usize,
                    1 => 1 + (r % 8) as usize,
                    2 => 1 + (r % 10) as usize,
                    3 => 4 + (r % 2) as usize,
                    _ => [1, 1, 2, 3, 5, 9][(r % 6) as usize],
                };
                let v = if len == 10 {
                    next() | 1 << 63
                } else {
                    let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
                    lo | (next() & ((1u64 << (7 * len)) - 1))
                };
                Scalar.write_u64(v, &mut buf);
            }
            match next() % 10 {
                0 => {
                    let at = start + (next() as usize) % (buf.len() - start);
                    buf.splice(at..at, [0x80u8; 10]);
                }
                1 => {
                    let at = start + (next() as usize) % (buf.len() - start);
                    buf.splice(at..at, [0xff; 9].into_iter().chain([2]));
                }
                2 => buf.truncate(start + (next() as usize) % (buf.len() - start)),
                _ => {}
            }
            // Room after the values: sometimes less than the path needs.
            let pad = (next() % 100) as usize;
            buf.extend((0..pad).map(|_| next() as u8));

            let (mut want_pos, mut want) = (start, vec![7i64]);
            let want_ok = Scalar.read_longs(&buf, &mut want_pos, n, &mut want).is_ok();
            let (mut pos, mut got) = (start, vec![7i64]);
            if read_longs_short(Swar, &buf, &mut pos, n, &mut got) {
                taken += 1;
                assert!(want_ok, "case {case}: read what the reference rejects");
                assert_eq!(got, want, "case {case}: values");
                assert_eq!(pos, want_pos, "case {case}: position");
            } else {
                declined += 1;
                assert_eq!((pos, &got[..]), (start, &[7i64][..]), "case {case}");
            }
            // The same with a compaction that keeps exactly the bits of its mask (PEXT's
            // contract, in software: the CPU's PEXT runs only where it is fast).
            let (mut pos, mut got) = (start, vec![7i64]);
            if read_longs_short(SoftPext, &buf, &mut pos, n, &mut got) {
                assert_eq!(
                    (pos, &got),
                    (want_pos, &want),
                    "case {case}: gathering the mask"
                );
            } else {
                assert_eq!((pos, &got[..]), (start, &[7i64][..]), "case {case}");
            }
            #[cfg(target_arch = "x86_64")]
            if let Some(bits) = pext {
                let (mut pos, mut got) = (start, vec![7i64]);
                if read_longs_short(bits, &buf, &mut pos, n, &mut got) {
                    assert_eq!((pos, &got), (want_pos, &want), "case {case}: with PEXT");
                } else {
                    assert_eq!((pos, &got[..]), (start, &[7i64][..]), "case {case}");
                }
            }

            let (mut want_pos, mut want) = (start, vec![7i32]);
            let want_ok = Scalar.read_ints(&buf, &mut want_pos, n, &mut want).is_ok();
            let (mut pos, mut got) = (start, vec![7i32]);
            if read_ints_short(Swar, &buf, &mut pos, n, &mut got) {
                ints_taken += 1;
                assert!(want_ok, "case {case}: read ints the reference rejects");
                assert_eq!(got, want, "case {case}: int values");
                assert_eq!(pos, want_pos, "case {case}: int position");
            } else {
                assert_eq!((pos, &got[..]), (start, &[7i32][..]), "case {case}");
            }
        }
        // Both ways are exercised, ints too.
        assert!(
            taken > 100 && declined > 100,
            "taken {taken}, declined {declined}"
        );
        assert!(ints_taken > 100, "ints taken {ints_taken}");
    }

    /// [`Bits`] gathering exactly the bits under the mask, bit by bit (what PEXT does).
    #[derive(Clone, Copy)]
    struct SoftPext;

    impl Bits for SoftPext {
        fn compact(self, w: u64) -> u64 {
            self.compact_masked(w, LOW)
        }
        fn compact_masked(self, w: u64, mask: u64) -> u64 {
            let (mut out, mut k) = (0, 0);
            for i in (0..64).filter(|i| mask >> i & 1 == 1) {
                out |= (w >> i & 1) << k;
                k += 1;
            }
            out
        }
        fn spread(self, v: u64) -> u64 {
            Swar.spread(v)
        }
    }

    /// The edges of the short path's window, each against the reference: the last value
    /// ending on the window's last byte (read) or one past it (declined), an eight-byte value
    /// (read) and a nine-byte one (declined), and exactly the 80 bytes the path needs after
    /// the position (read) or one fewer (declined).
    #[test]
    fn short_blocks_at_the_edges_of_their_window() {
        use crate::varint::generic::read_longs_short;
        use crate::varint::{Kernel, Scalar};
        let varint = |len: usize, low: u64| -> Vec<u8> {
            let mut v = vec![0x80 | (low as u8 & 0x7f); len];
            v[len - 1] = 1;
            v
        };
        let cases: [(Vec<Vec<u8>>, usize, bool); 6] = [
            // 14 four-byte values and an eight-byte one: the 15th ends on byte 63.
            (
                (0..14)
                    .map(|i| varint(4, i))
                    .chain([varint(8, 3)])
                    .collect(),
                80,
                true,
            ),
            // 15 four-byte values and a five-byte one: the 16th ends on byte 64.
            (
                (0..15)
                    .map(|i| varint(4, i))
                    .chain([varint(5, 3)])
                    .collect(),
                80,
                false,
            ),
            (vec![varint(1, 5), varint(8, 9), varint(2, 1)], 80, true),
            (vec![varint(1, 5), varint(9, 9), varint(2, 1)], 80, false),
            (vec![varint(3, 1), varint(3, 2)], 80, true),
            (vec![varint(3, 1), varint(3, 2)], 79, false),
        ];
        for (k, (values, total, read)) in cases.into_iter().enumerate() {
            let n = values.len();
            let mut buf: Vec<u8> = values.concat();
            buf.resize(total.max(buf.len()), 0);
            let (mut want_pos, mut want) = (0, Vec::new());
            Scalar
                .read_longs(&buf, &mut want_pos, n, &mut want)
                .expect("valid varints");
            let (mut pos, mut got) = (0, Vec::new());
            let took = read_longs_short(Swar, &buf, &mut pos, n, &mut got);
            assert_eq!(took, read, "case {k}");
            if read {
                assert_eq!((pos, got), (want_pos, want), "case {k}");
            } else {
                assert_eq!((pos, got.len()), (0, 0), "case {k}");
            }
            let (mut pos, mut got) = (0, Vec::new());
            assert_eq!(
                read_longs_short(SoftPext, &buf, &mut pos, n, &mut got),
                read
            );
        }
    }
}
