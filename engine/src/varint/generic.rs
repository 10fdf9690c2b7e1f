//! Word-at-a-time decoding and encoding shared by the [`Fast`](super::Fast) and
//! [`Bmi2`](super::Bmi2) kernels.
//!
//! Everything here is generic over [`Bits`] (in [`super::word`], with the other word-level
//! primitives this module shares with [`super::block`]), the one operation that differs between
//! the two kernels: moving the 7-bit groups of a varint between the bytes of a 64-bit word and a
//! contiguous value (shift-and-mask for `fast`, PEXT/PDEP for `bmi2`). The functions are
//! `#[inline(always)]` so that each kernel (and each `#[target_feature]` wrapper of a bulk path)
//! gets its own fully specialised copy.
//!
//! Bounds: every fast path first proves that a whole window of input (10 bytes for one varint,
//! [`WINDOW`] bytes for the bulk loops) is in bounds with `first_chunk`, then indexes the
//! resulting array with constant or provably small indexes, so no per-byte bounds checks remain
//! and no `unsafe` is needed. Near the end of the input the checked byte-at-a-time path
//! ([`read_u64_checked`]) takes over.

use std::mem::MaybeUninit;

use super::word::{first_word, Bits, Lane, HIGH};
use super::{VarintError, MAX_LEN};

/// Bytes of input the bulk decode loop needs in bounds at its position: a 16-byte group.
pub(crate) const WINDOW: usize = 16;

/// The byte-at-a-time decoder with a bounds check per byte, used where fewer than
/// [`MAX_LEN`] bytes remain: decodes the varint at `start` and returns it with the position
/// after it. Same results and errors as the scalar reference.
#[cold]
#[inline(never)]
pub(crate) fn read_u64_checked(buf: &[u8], start: usize) -> Result<(u64, usize), VarintError> {
    let mut value = 0u64;
    for i in 0..MAX_LEN {
        let Some(&b) = buf.get(start.wrapping_add(i)) else {
            return Err(VarintError::Truncated);
        };
        if i == MAX_LEN - 1 && b > 1 {
            return Err(VarintError::Overlong);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok((value, start + i + 1));
        }
    }
    Err(VarintError::Overlong)
}

/// Decode one raw varint: 1 byte inline and branchy, then [`read_multi`]. The position is
/// passed by value to the out-of-line paths so that the caller's position stays in a
/// register.
#[inline(always)]
pub(crate) fn read_u64<B: Bits>(bits: B, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let p = *pos;
    let Some(&b0) = buf.get(p) else {
        return Err(VarintError::Truncated);
    };
    if b0 < 0x80 {
        *pos = p + 1;
        return Ok(u64::from(b0));
    }
    match read_multi(bits, buf, p) {
        Ok((v, next)) => {
            *pos = next;
            Ok(v)
        }
        Err(e) => Err(e),
    }
}

/// Decode one raw varint: 1 byte inline, longer ones with [`read_word`] (no branch on their
/// length); the checked path when fewer than [`MAX_LEN`] bytes remain.
#[inline(always)]
pub(crate) fn read_u64_word<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
) -> Result<u64, VarintError> {
    let p = *pos;
    let Some(&b0) = buf.get(p) else {
        return Err(VarintError::Truncated);
    };
    if b0 < 0x80 {
        *pos = p + 1;
        return Ok(u64::from(b0));
    }
    let result = match buf.get(p..).and_then(|s| s.first_chunk::<MAX_LEN>()) {
        Some(c) => read_word(bits, c).map(|(v, len)| (v, p + len)),
        None => read_u64_checked(buf, p),
    };
    match result {
        Ok((v, next)) => {
            *pos = next;
            Ok(v)
        }
        Err(e) => Err(e),
    }
}

/// Decode a varint of at least 2 bytes at `p` (`buf[p] >= 0x80`, `p < buf.len()`): 2 bytes
/// inline, then [`read_3_to_10`]; the checked path when fewer than 10 bytes remain. Returns
/// the value and the position after it.
#[inline(always)]
fn read_multi<B: Bits>(bits: B, buf: &[u8], p: usize) -> Result<(u64, usize), VarintError> {
    let Some(c) = buf.get(p..).and_then(|s| s.first_chunk::<MAX_LEN>()) else {
        return read_u64_checked(buf, p);
    };
    let (b0, b1) = (c[0], c[1]);
    if b1 < 0x80 {
        return Ok((u64::from(b0) + (u64::from(b1) << 7) - 0x80, p + 2));
    }
    match read_3_to_10(bits, c) {
        Ok((v, len)) => Ok((v, p + len)),
        Err(e) => Err(e),
    }
}

/// Decode a varint of at least 3 bytes (its first two bytes have the high bit set) at the
/// start of `c`: unrolled 3-, 4- and 5-byte paths, then [`read_word_branchy`]. Returns the value
/// and its length.
#[inline(always)]
pub(crate) fn read_3_to_10<B: Bits>(
    bits: B,
    c: &[u8; MAX_LEN],
) -> Result<(u64, usize), VarintError> {
    let lo = u64::from(c[0]) + (u64::from(c[1]) << 7) - 0x80 - (0x80 << 7);
    let b2 = c[2];
    if b2 < 0x80 {
        return Ok((lo | (u64::from(b2) << 14), 3));
    }
    let b3 = c[3];
    if b3 < 0x80 {
        return Ok((lo | (u64::from(b2 & 0x7f) << 14) | (u64::from(b3) << 21), 4));
    }
    let b4 = c[4];
    if b4 < 0x80 {
        let mid = (u64::from(b2 & 0x7f) << 14) | (u64::from(b3 & 0x7f) << 21);
        return Ok((lo | mid | (u64::from(b4) << 28), 5));
    }
    read_word_branchy(bits, c)
}

/// Decode a varint of at least 6 bytes at the start of `c` with one 64-bit load: the 7-bit
/// groups of bytes 0 to 7 are compacted at once by [`Bits::compact`], and 9- and 10-byte
/// varints extend the word. The terminator is found with one predictable branch per byte, so
/// that when lengths repeat (a record's field, an array of similar values) the next position
/// is known before the value is; [`read_word`] finds it with `trailing_zeros` instead, which is
/// better when lengths are random.
#[inline(always)]
fn read_word_branchy<B: Bits>(bits: B, c: &[u8; MAX_LEN]) -> Result<(u64, usize), VarintError> {
    let w = first_word(c);
    let len = if c[5] < 0x80 {
        6
    } else if c[6] < 0x80 {
        7
    } else if c[7] < 0x80 {
        8
    } else {
        return read_9_or_10(bits, c, w);
    };
    Ok((bits.compact(w & (u64::MAX >> (64 - 8 * len))), len))
}

/// The end of a 9- or 10-byte varint whose first 8 bytes `w` all have the high bit set.
#[inline(always)]
fn read_9_or_10<B: Bits>(bits: B, c: &[u8; MAX_LEN], w: u64) -> Result<(u64, usize), VarintError> {
    let lo = bits.compact(w);
    let b8 = c[8];
    if b8 < 0x80 {
        return Ok((lo | (u64::from(b8) << 56), 9));
    }
    let b9 = c[9];
    if b9 > 1 {
        return Err(VarintError::Overlong);
    }
    Ok((
        lo | (u64::from(b8 & 0x7f) << 56) | (u64::from(b9) << 63),
        MAX_LEN,
    ))
}

/// Decode the varint at the start of `c` with one 64-bit load: the terminator is the lowest
/// byte with a clear high bit (`trailing_zeros(!w & 0x8080…80)`), the 7-bit groups are
/// compacted by [`Bits::compact`]; 9- and 10-byte varints extend the word by one or two bytes.
/// Returns the value and its length in bytes.
#[inline(always)]
pub(crate) fn read_word<B: Bits>(bits: B, c: &[u8; MAX_LEN]) -> Result<(u64, usize), VarintError> {
    let w = first_word(c);
    let stops = !w & HIGH;
    if stops != 0 {
        let tz = stops.trailing_zeros();
        // Keep the bytes up to and including the terminator (whose top bit is bit `tz`).
        let kept = w & (u64::MAX >> (63 - tz));
        return Ok((bits.compact(kept), (tz as usize >> 3) + 1));
    }
    let lo = bits.compact(w);
    let b8 = c[8];
    if b8 < 0x80 {
        return Ok((lo | (u64::from(b8) << 56), 9));
    }
    let b9 = c[9];
    if b9 > 1 {
        return Err(VarintError::Overlong);
    }
    Ok((
        lo | (u64::from(b8 & 0x7f) << 56) | (u64::from(b9) << 63),
        MAX_LEN,
    ))
}

/// The fewest values for which [`decode_into`] tries the block decoder.
const MIN_BLOCK_VALUES: usize = 16;
/// Values [`decode_into`] decodes while measuring how often the varint length changes.
const PROBE: usize = 64;
/// Values [`decode_into`] then decodes in the mode the probe chose, without measuring.
const RUN: usize = 512;
/// The fewest probed values whose measure is kept in the column's [`super::BulkHint`].
const MIN_PROBE: usize = 16;

/// Decode `n` varints into `dst[..n]` as lane values (zigzag decoded as they are written, see
/// [`Lane`]), advancing `*pos`. Slots of `dst` from `n` on are scratch: with at least
/// [`super::block::OUT_SLACK`] of them the block decoder can decode the last values of a short
/// array too (it writes whole groups past the `n`-th value).
///
/// On success every element of `dst[..n]` is initialised and the bitwise OR of all raw values is
/// returned (the int path range-checks it once). On error, the error is returned together with
/// the OR of the raw values decoded before the failing one, so that the int path can report
/// `IntOutOfRange` first when the scalar reference would have.
///
/// Whole 64-byte blocks are decoded first by [`super::block::decode_blocks`] (terminator
/// bitmap, values decoded in parallel), which covers all but the last [`super::block::OUT_SLACK`]
/// values or [`super::block::BLOCK_SLACK`] bytes, and leaves a block holding an invalid varint
/// to the loop below.
///
/// The loop below alternates a probe of [`PROBE`] values, which counts how often the varint length
/// changes from one value to the next, with a run of [`RUN`] values in the mode the probe chose:
/// - lengths stable (uniform data, long runs, or two alternating lengths): the branchy
///   single-value paths, whose branches predict so the next position is known early; at a
///   one-byte value a whole 8- or 16-byte group is widened in one vectorisable step and its
///   leading one-byte values kept;
/// - lengths changing for more than two values in three (random lengths): the branch-free word
///   path ([`read_word`]), whose cost does not depend on predicting the length; a 16-byte group
///   of one-byte values is still widened at once.
///
/// Each step needs [`WINDOW`] output slots and `WINDOW + MAX_LEN` input bytes; the rest is
/// decoded value by value with the checked fallbacks.
#[inline(always)]
pub(crate) fn decode_into<B: Bits, L: Lane>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    dst: &mut [MaybeUninit<L>],
    n: usize,
    hint: &mut super::BulkHint,
) -> Result<u64, (VarintError, u64)> {
    debug_assert!(n <= dst.len());
    let mut cur = super::block::Cursor {
        p: *pos,
        i: 0,
        acc: 0,
    };
    // Whole 64-byte blocks first (see `super::block`); it stops at the `n`-th value, before
    // the end of the input or the output, or before a block holding an invalid varint. A
    // short array is left to the loops below, whose first value costs less than a block.
    if n >= MIN_BLOCK_VALUES {
        super::block::decode_blocks(buf, dst, n, &mut cur);
    }
    let mut st = State {
        p: cur.p,
        i: cur.i,
        acc: cur.acc,
    };
    // The step loop needs `p + WINDOW + MAX_LEN <= buf.len()` and `i + WINDOW <= n`.
    if let (Some(last_p), Some(last_i)) = (
        buf.len().checked_sub(WINDOW + MAX_LEN),
        n.checked_sub(WINDOW),
    ) {
        // Start in the mode the previous arrays of this column ended in.
        let mut branchless = hint.branchless;
        loop {
            let start = st.i;
            let stop = (start + PROBE).min(last_i + 1);
            let changes = if branchless {
                steps::<B, L, true, true>(bits, buf, dst, &mut st, stop, last_p)?
            } else {
                steps::<B, L, false, true>(bits, buf, dst, &mut st, stop, last_p)?
            };
            // A short probe (a short array) still tells the next array of the column.
            if st.i - start >= MIN_PROBE {
                branchless = changes * 3 > (st.i - start) * 2;
                hint.branchless = branchless;
            }
            if st.i < start + PROBE {
                break;
            }
            let stop = (st.i + RUN).min(last_i + 1);
            if branchless {
                steps::<B, L, true, false>(bits, buf, dst, &mut st, stop, last_p)?;
            } else {
                steps::<B, L, false, false>(bits, buf, dst, &mut st, stop, last_p)?;
            }
            if st.i < stop || stop == last_i + 1 {
                break;
            }
        }
    }
    let State {
        mut p,
        mut i,
        mut acc,
    } = st;
    while i < n {
        match read_u64(bits, buf, &mut p) {
            Ok(value) => {
                dst[i].write(L::from_raw(value));
                acc |= value;
                i += 1;
            }
            Err(e) => return Err((e, acc)),
        }
    }
    *pos = p;
    Ok(acc)
}

/// Where [`decode_into`] is: input position, values written, OR of the raw values.
struct State {
    p: usize,
    i: usize,
    acc: u64,
}

/// Decode steps while `st.i < stop` and `st.p <= last_p` (so every step is in bounds: the
/// caller guarantees `stop <= dst.len() - WINDOW + 1` and `last_p = buf.len() - WINDOW -
/// MAX_LEN`). `BRANCHLESS` picks the mode (see [`decode_into`]); with `COUNT` it returns how
/// many times the varint length changed from one step to the next (0 otherwise).
#[inline(always)]
fn steps<B: Bits, L: Lane, const BRANCHLESS: bool, const COUNT: bool>(
    bits: B,
    buf: &[u8],
    dst: &mut [MaybeUninit<L>],
    st: &mut State,
    stop: usize,
    last_p: usize,
) -> Result<usize, (VarintError, u64)> {
    let State {
        mut p,
        mut i,
        mut acc,
    } = *st;
    let mut changes = 0usize;
    let mut prev_len = 0usize;
    debug_assert!(stop == 0 || stop - 1 + WINDOW <= dst.len());
    while i < stop && p <= last_p {
        // SAFETY: `p <= buf.len() - (WINDOW + MAX_LEN)`, so the window is in bounds.
        let c: &[u8; WINDOW + MAX_LEN] = unsafe { &*buf.as_ptr().add(p).cast() };
        // SAFETY: `i < stop <= dst.len() - WINDOW + 1`, so `dst[i..i + WINDOW]` is in bounds.
        let d: &mut [MaybeUninit<L>; WINDOW] = unsafe { &mut *dst.as_mut_ptr().add(i).cast() };
        let ones = if BRANCHLESS {
            let (lo, hi) = split_words(c);
            if (lo | hi) & HIGH == 0 {
                widen(d, &c[..WINDOW]);
                WINDOW
            } else {
                0
            }
        } else if c[0] < 0x80 {
            let (lo, hi) = split_words(c);
            let cont_lo = lo & HIGH;
            if cont_lo != 0 {
                widen(&mut d[..8], &c[..8]);
                (cont_lo.trailing_zeros() >> 3) as usize
            } else {
                widen(d, &c[..WINDOW]);
                let cont_hi = hi & HIGH;
                if cont_hi != 0 {
                    8 + (cont_hi.trailing_zeros() >> 3) as usize
                } else {
                    WINDOW
                }
            }
        } else {
            0
        };
        if ones != 0 {
            if COUNT {
                changes += usize::from(prev_len != 1);
                prev_len = 1;
            }
            i += ones;
            p += ones;
            continue;
        }
        // The window is longer than MAX_LEN, so this is always `Some` (and free).
        let (v, _) = c
            .split_first_chunk::<MAX_LEN>()
            .unwrap_or((&[0; MAX_LEN], &[]));
        let decoded = if BRANCHLESS {
            read_word(bits, v)
        } else {
            let (b0, b1) = (v[0], v[1]);
            if b1 < 0x80 {
                Ok((u64::from(b0) + (u64::from(b1) << 7) - 0x80, 2))
            } else {
                read_3_to_10(bits, v)
            }
        };
        match decoded {
            Ok((value, len)) => {
                d[0].write(L::from_raw(value));
                acc |= value;
                i += 1;
                p += len;
                if COUNT {
                    changes += usize::from(prev_len != len);
                    prev_len = len;
                }
            }
            Err(e) => return Err((e, acc)),
        }
    }
    *st = State { p, i, acc };
    Ok(changes)
}

/// Widen one-byte varints to lanes (vectorised: `vpmovzxbq` with AVX2).
#[inline(always)]
fn widen<L: Lane>(d: &mut [MaybeUninit<L>], c: &[u8]) {
    for (slot, &b) in d.iter_mut().zip(c) {
        slot.write(L::from_byte(b));
    }
}

/// The first two little-endian words of a window.
#[inline(always)]
fn split_words<const N: usize>(c: &[u8; N]) -> (u64, u64) {
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 8];
    lo.copy_from_slice(&c[..8]);
    hi.copy_from_slice(&c[8..16]);
    (u64::from_le_bytes(lo), u64::from_le_bytes(hi))
}

/// Bulk decode of zigzag longs ([`decode_into`]) straight into the spare capacity. On error
/// `out` keeps its original length.
#[inline(always)]
pub(crate) fn read_longs<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i64>,
    hint: &mut super::BulkHint,
) -> Result<(), VarintError> {
    let start = out.len();
    // Scratch slots past the `n` values let the block decoder finish short arrays.
    out.reserve(n + super::block::OUT_SLACK);
    let dst = out.spare_capacity_mut();
    decode_into(bits, buf, pos, dst, n, hint).map_err(|(e, _)| e)?;
    // SAFETY: `decode_into` returned Ok, so it initialised all `n` elements of the spare
    // capacity starting at `start`, and `reserve` made that capacity exist.
    unsafe { out.set_len(start + n) };
    Ok(())
}

/// Bulk decode of zigzag ints, rejecting values outside `i32` (same contract as
/// [`read_longs`]). A raw varint encodes an `i32` exactly when it is at most `u32::MAX`.
#[inline(always)]
pub(crate) fn read_ints<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i32>,
    hint: &mut super::BulkHint,
) -> Result<(), VarintError> {
    let start = out.len();
    // Scratch slots past the `n` values let the block decoder finish short arrays.
    out.reserve(n + super::block::OUT_SLACK);
    let dst = out.spare_capacity_mut();
    match decode_into(bits, buf, pos, dst, n, hint) {
        Ok(acc) if acc >> 32 != 0 => return Err(VarintError::IntOutOfRange),
        Ok(_) => {}
        Err((_, acc)) if acc >> 32 != 0 => return Err(VarintError::IntOutOfRange),
        Err((e, _)) => return Err(e),
    }
    // SAFETY: `decode_into` returned Ok, so it initialised all `n` elements of the spare
    // capacity starting at `start`, and `reserve` made that capacity exist.
    unsafe { out.set_len(start + n) };
    Ok(())
}

/// The `n` zigzag longs of a short array block through [`super::block::decode_short`],
/// appended to `out`. `false`, with `out` and `*pos` as they were, where it does not read
/// them (see there): the caller reads them value by value.
#[inline(always)]
pub(crate) fn read_longs_short<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i64>,
) -> bool {
    let start = out.len();
    out.reserve(n);
    match super::block::decode_short(bits, buf, *pos, n, out.spare_capacity_mut()) {
        Some((end, _)) => {
            // SAFETY: `decode_short` returned `Some`, so it initialised the first `n` slots
            // of the spare capacity (which `reserve` made exist), from `start` on.
            unsafe { out.set_len(start + n) };
            *pos = end;
            true
        }
        None => false,
    }
}

/// [`read_longs_short`] for zigzag ints: `false` also where a value is outside `i32` (a raw
/// varint encodes an `i32` exactly when it is at most `u32::MAX`), for the exact path to
/// report.
#[inline(always)]
pub(crate) fn read_ints_short<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i32>,
) -> bool {
    let start = out.len();
    out.reserve(n);
    match super::block::decode_short(bits, buf, *pos, n, out.spare_capacity_mut()) {
        Some((end, acc)) if acc >> 32 == 0 => {
            // SAFETY: as in `read_longs_short`.
            unsafe { out.set_len(start + n) };
            *pos = end;
            true
        }
        _ => false,
    }
}

/// Skip `n` varints by counting terminator bytes (bytes with a clear high bit) eight bytes at
/// a time, while tracking the run of continuation bytes so that overlong varints are rejected
/// exactly as the scalar reference rejects them.
#[inline(always)]
pub(crate) fn skip<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
) -> Result<(), VarintError> {
    let mut p = *pos;
    let mut left = n;
    // Continuation bytes seen since the last terminator, inside the current varint.
    let mut run = 0u32;
    let mut run_start = p;
    while left > 0 {
        let Some(c) = buf.get(p..).and_then(|s| s.first_chunk::<8>()) else {
            break;
        };
        let w = u64::from_le_bytes(*c);
        let stops = !w & HIGH;
        if stops == 0 {
            if run == 0 {
                run_start = p;
            }
            run += 8;
            if run >= MAX_LEN as u32 {
                return Err(VarintError::Overlong);
            }
            p += 8;
            continue;
        }
        // The first terminator closes the varint that the running continuation bytes began.
        let first = stops.trailing_zeros() >> 3;
        if run + first >= MAX_LEN as u32 - 1 {
            // A 10-byte (or longer) varint: let the exact decoder judge it.
            let mut q = if run == 0 { p } else { run_start };
            read_u64(bits, buf, &mut q)?;
            left -= 1;
            p = q;
            run = 0;
            continue;
        }
        let count = stops.count_ones() as usize;
        if count >= left {
            // The `left`-th terminator is in this word: clear the lower ones, then locate it.
            let mut s = stops;
            for _ in 1..left {
                s &= s - 1;
            }
            p += (s.trailing_zeros() >> 3) as usize + 1;
            left = 0;
            break;
        }
        left -= count;
        // Continuation bytes after the last terminator start the next varint.
        let trailing = stops.leading_zeros() >> 3;
        run = trailing;
        run_start = p + 8 - trailing as usize;
        p += 8;
    }
    if left > 0 {
        // Fewer than 8 bytes remain: finish byte by byte from the start of the current varint.
        let mut q = if run == 0 { p } else { run_start };
        for _ in 0..left {
            q = read_u64_checked(buf, q)?.1;
        }
        p = q;
    }
    *pos = p;
    Ok(())
}

/// Encode `v` at `dst` and return its length. Values below 2^56 (1 to 8 bytes) are encoded
/// without branches: spread the 7-bit groups ([`Bits::spread`]), find the top non-zero byte
/// with `leading_zeros`, OR in the continuation bits of the bytes below it, and store the
/// whole word at once. 9- and 10-byte values extend it.
///
/// # Safety
/// `dst` must be valid for writes of [`MAX_LEN`] bytes.
#[inline(always)]
pub(crate) unsafe fn encode_raw<B: Bits>(bits: B, v: u64, dst: *mut u8) -> usize {
    if v < 1 << 56 {
        let spread = bits.spread(v);
        // Eight times the number of all-zero bytes above the top non-zero byte (0 to 56).
        let zeros = bits.lzcnt(spread | 1) & 56;
        // The continuation bits of the bytes below the top non-zero byte.
        let cont = (HIGH >> 8) >> zeros;
        // SAFETY: the caller guarantees `MAX_LEN >= 8` writable bytes at `dst`.
        unsafe {
            dst.cast::<[u8; 8]>()
                .write_unaligned((spread | cont).to_le_bytes())
        };
        8 - (zeros as usize >> 3)
    } else {
        let word = bits.spread(v & ((1 << 56) - 1)) | HIGH;
        let top = (v >> 56) as u8;
        // SAFETY: the caller guarantees `MAX_LEN` writable bytes at `dst`.
        unsafe {
            dst.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
            dst.add(8).write(top);
            dst.add(9).write(1);
        }
        if top < 0x80 {
            9
        } else {
            MAX_LEN
        }
    }
}

/// Write the raw varint encoding of any `v` at `dst` without a branch on its length (the
/// [`Writer`](super::Writer)'s branch-free mode); returns the length. Ten bytes are always
/// written: the varint's, then unspecified ones.
///
/// # Safety
/// `dst` must be valid for writes of [`MAX_LEN`] bytes.
#[inline(always)]
pub(crate) unsafe fn encode_any<B: Bits>(bits: B, v: u64, dst: *mut u8) -> usize {
    let top = v >> 56;
    // 1 for 9 or 10 bytes (`top` is at most 0xff).
    let long = (top + 0xff) >> 8;
    // The low 56 bits' groups (`spread` ignores the bits above).
    let spread = bits.spread(v);
    // Eight times the number of all-zero bytes above the top non-zero byte; 0 for 9 or 10
    // bytes, where all eight bytes of the word are continued.
    let zeros = bits.lzcnt(spread | 1 | (long << 63)) & 56;
    let cont = ((HIGH >> 8) >> zeros) | (long << 63);
    // SAFETY: the caller guarantees `MAX_LEN` writable bytes at `dst`. Byte 8 is `top`,
    // whose high bit (bit 63 of `v`) continues it to byte 9, which is 1; both are past the
    // varint, and not counted, when it has 8 bytes or fewer.
    unsafe {
        dst.cast::<[u8; 8]>()
            .write_unaligned((spread | cont).to_le_bytes());
        dst.add(8).cast::<[u8; 2]>().write_unaligned([top as u8, 1]);
    }
    8 - (zeros as usize >> 3) + long as usize + (v >> 63) as usize
}

/// Append the raw varint encoding of `v`: one capacity check for every length (growing out
/// of line), then [`encode_at`].
#[inline(always)]
pub(crate) fn write_u64<B: Bits>(bits: B, v: u64, out: &mut Vec<u8>) {
    if out.capacity() - out.len() < MAX_LEN {
        grow(out);
    }
    let len = out.len();
    // SAFETY: at least `MAX_LEN` bytes of spare capacity at `len` (checked or reserved above).
    let n = unsafe { encode_at(bits, v, out.as_mut_ptr().add(len)) };
    // SAFETY: the `n <= MAX_LEN` bytes at `len` were just initialised and are within capacity.
    unsafe { out.set_len(len + n) };
}

/// Write the raw varint encoding of `v` at `dst` and return its length: one-byte values with
/// a byte store, two- and three-byte values with one 16- or 32-bit store, the others through
/// [`encode_raw`]. (The three-byte store was shift-and-mask only; since the single-value
/// writer ([`super::Writer`]) keeps its cursor in registers it measured faster with `bmi2`
/// too: len3 1.96 -> 1.48 ns, Mixed1-10 4.64 -> 5.25 ns, both still over 2x prost.) Bytes past the varint (up to [`MAX_LEN`]) may be
/// overwritten.
///
/// # Safety
/// `dst` must be valid for writes of [`MAX_LEN`] bytes.
#[inline(always)]
pub(crate) unsafe fn encode_at<B: Bits>(bits: B, v: u64, dst: *mut u8) -> usize {
    if v < 0x80 {
        // SAFETY: the caller guarantees `MAX_LEN` writable bytes at `dst`.
        unsafe { dst.write(v as u8) };
        1
    } else if v < 1 << 14 {
        let pair = (v as u16 & 0x7f) | 0x80 | ((v as u16 >> 7) << 8);
        // SAFETY: as above.
        unsafe { dst.cast::<[u8; 2]>().write_unaligned(pair.to_le_bytes()) };
        2
    } else if v < 1 << 21 {
        let v = v as u32;
        let triple = (v & 0x7f) | (((v >> 7) & 0x7f) << 8) | ((v >> 14) << 16) | 0x8080;
        // SAFETY: as above (the 4th byte is past the varint).
        unsafe { dst.cast::<[u8; 4]>().write_unaligned(triple.to_le_bytes()) };
        3
    } else {
        // SAFETY: as above.
        unsafe { encode_raw(bits, v, dst) }
    }
}

/// Make room for one more varint in `out` (the rare case of [`write_u64`]).
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u8>) {
    out.reserve(MAX_LEN);
}

/// Values encoded per reservation in [`write_longs`].
const ENCODE_CHUNK: usize = 256;

/// Append the zigzag encodings of `values`: reserve once per chunk of [`ENCODE_CHUNK`]
/// values, write through a local cursor, and store eight one-byte values at once.
#[inline(always)]
pub(crate) fn write_longs<B: Bits>(bits: B, values: &[i64], out: &mut Vec<u8>) {
    for chunk in values.chunks(ENCODE_CHUNK) {
        out.reserve(chunk.len() * MAX_LEN);
        let start = out.len();
        // SAFETY: `reserve` made `chunk.len() * MAX_LEN` bytes of spare capacity at `start`;
        // every value below writes at most `MAX_LEN` bytes (8 for a group of 8 one-byte
        // values) at the cursor `q`, and `q` grows by at most `MAX_LEN` per value, so every
        // write stays within that capacity.
        let base = unsafe { out.as_mut_ptr().add(start) };
        let mut q = 0usize;
        let mut eights = chunk.chunks_exact(8);
        for group in &mut eights {
            let mut z = [0u64; 8];
            for (zi, &v) in z.iter_mut().zip(group) {
                *zi = super::zigzag64(v);
            }
            let or = z.iter().fold(0, |a, &x| a | x);
            if or < 0x80 {
                let packed = z.map(|x| x as u8);
                // SAFETY: see above (8 bytes for 8 values).
                unsafe { base.add(q).cast::<[u8; 8]>().write_unaligned(packed) };
                q += 8;
                continue;
            }
            if or < 1 << 14 {
                // One- and two-byte values, without branches: both bytes of the two-byte
                // form are stored; a one-byte value keeps only the first.
                for &x in &z {
                    let two = u64::from(x >= 0x80);
                    // Masks, not a select: a branch here mispredicts on mixed lengths.
                    let m = two.wrapping_neg();
                    let pair = (((x & 0x7f) | 0x80 | ((x >> 7) << 8)) & m) | (x & !m);
                    // SAFETY: see above (2 bytes).
                    unsafe {
                        base.add(q)
                            .cast::<[u8; 2]>()
                            .write_unaligned((pair as u16).to_le_bytes())
                    };
                    q += 1 + two as usize;
                }
                continue;
            }
            if !B::ONE_OP && or < 1 << 21 {
                // One- to three-byte values, without branches: the three-byte form is stored
                // with continuation bits only below the value's top byte.
                for &x in &z {
                    let c1 = u32::from(x >= 0x80);
                    let c2 = u32::from(x >= 1 << 14);
                    let x = x as u32;
                    let word = (x & 0x7f)
                        | (((x >> 7) & 0x7f) << 8)
                        | ((x >> 14) << 16)
                        | (c1 << 7)
                        | (c2 << 15);
                    // SAFETY: see above (4 bytes).
                    unsafe {
                        base.add(q)
                            .cast::<[u8; 4]>()
                            .write_unaligned(word.to_le_bytes())
                    };
                    q += 1 + (c1 + c2) as usize;
                }
                continue;
            }
            for &x in &z {
                // SAFETY: see above.
                q += unsafe { encode_raw(bits, x, base.add(q)) };
            }
        }
        for &v in eights.remainder() {
            // SAFETY: see above.
            q += unsafe { encode_raw(bits, super::zigzag64(v), base.add(q)) };
        }
        // SAFETY: the `q` bytes at `start` were initialised above and are within capacity.
        unsafe { out.set_len(start + q) };
    }
}

/// Append the zigzag encodings of the ints `values` (at most five bytes each): reserve once
/// per chunk of [`ENCODE_CHUNK`] values and write through a local cursor.
#[inline(always)]
pub(crate) fn write_ints<B: Bits>(bits: B, values: &[i32], out: &mut Vec<u8>) {
    for chunk in values.chunks(ENCODE_CHUNK) {
        out.reserve(chunk.len() * MAX_LEN);
        let start = out.len();
        // SAFETY: `reserve` made `chunk.len() * MAX_LEN` bytes of spare capacity at `start`;
        // every value writes at most `MAX_LEN` bytes at the cursor `q`, which grows by at most
        // `MAX_LEN` per value.
        let base = unsafe { out.as_mut_ptr().add(start) };
        let mut q = 0usize;
        for &v in chunk {
            // SAFETY: see above.
            q += unsafe { encode_at(bits, super::zigzag64(i64::from(v)), base.add(q)) };
        }
        // SAFETY: the `q` bytes at `start` were initialised above and are within capacity.
        unsafe { out.set_len(start + q) };
    }
}
