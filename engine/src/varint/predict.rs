//! Single-value reads that learn the varint lengths of their stream ([`ReadHint`]).
//!
//! A loop of [`Kernel::read_u64`](super::Kernel::read_u64) calls is bound by how soon the
//! position of the next value is known. The stateless path finds it with one branch per byte
//! (unrolled): cheap when the branches predict, but ~40 instructions for a 5-byte value, and
//! on random lengths one of its branches mispredicts per value. With a [`ReadHint`] the reader
//! keeps one of two modes, chosen from what it measured:
//!
//! - **predicted**: the hint holds the last multi-byte length and its masks. One 64-bit load
//!   and one compare check that the stop byte is exactly where that length puts it; the value
//!   is then the masked word compacted (one PEXT) and the position advances by the predicted
//!   length, a register rather than a value computed from the load, so the next read's load
//!   does not wait for this one. A miss decodes the value with [`read_word`] and predicts its
//!   length from then on.
//! - **branch-free**: after [`STREAK`] mispredicted reads in a row, the values of the next
//!   [`RUN`] bytes (one-byte ones too) are decoded without a branch on their length
//!   ([`read_any`]): the position comes from the load through `trailing_zeros`, ~14 cycles
//!   a value (Zen 3) however random the lengths are. Then the reader tries the predicted mode
//!   again.
//!
//! One-byte values take the usual inline check in the predicted mode and never touch the
//! hint's masks.
//!
//! Only the `bmi2` kernel reads this way: the predicted check pays off because PEXT compacts
//! the masked word in one instruction. With shift-and-mask compaction (~10 instructions) the
//! `fast` kernel measured slower than its stateless unrolled path on uniform lengths (len5
//! 3.15 vs 2.47 ns, slower than prost's 2.78; keeping the unrolled path for short varints and
//! only counting misses cost as much), so `Fast::read_u64_hinted` is the trait's default, the
//! stateless read.

use super::generic::{read_u64_checked, read_word};
use super::word::{first_word, Bits, HIGH, LOW};
use super::{VarintError, MAX_LEN};

/// Back-to-back mispredicted reads after which the branch-free mode takes over.
const STREAK: u64 = 8;
/// Bytes read branch-free before the predicted mode is tried again (about 3,000 values of
/// random lengths).
const RUN: usize = 16 * 1024;
/// [`ReadHint::expect`] in the branch-free mode: never equal to masked high bits.
const BRANCHLESS: u64 = u64::MAX;

/// What a sequence of single-value reads learned about its varint lengths; pass the same hint
/// to every [`Kernel::read_u64_hinted`](super::Kernel::read_u64_hinted) call of one stream.
///
/// A hint only makes reads faster or slower, never different: results and errors are those of
/// [`Kernel::read_u64`](super::Kernel::read_u64) whatever the hint holds.
///
/// ```
/// use avrow_engine::varint::{Fast, Kernel, ReadHint};
/// let mut buf = Vec::new();
/// for v in [300i64, -70_000, 5, 1 << 40] {
///     Fast.write_long(v, &mut buf);
/// }
/// let (mut pos, mut hint) = (0, ReadHint::default());
/// let mut got = Vec::new();
/// while pos < buf.len() {
///     got.push(Fast.read_long_hinted(&buf, &mut pos, &mut hint).unwrap());
/// }
/// assert_eq!(got, [300, -70_000, 5, 1 << 40]);
/// ```
// Five words and a byte that the read loop keeps in registers: the cold paths take and return
// the hint by value, so that its address never escapes the caller's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadHint {
    /// Bytes below this are one-byte varints read by the inline check: 0x80 in the predicted
    /// mode, 0 in the branch-free one (which reads them like any other).
    one: u8,
    /// The predicted length of the next multi-byte varint, 2 to 10 (0: none yet, and in the
    /// branch-free mode).
    len: u64,
    /// The high bits of the predicted varint's bytes within the first word (`HIGH` for 9 and
    /// 10 bytes). `HIGH` in the branch-free mode, which uses it as that constant: a register
    /// the loop holds anyway.
    high: u64,
    /// What `word & high` must be for the prediction to hold: every byte continued but the
    /// last. [`BRANCHLESS`] in the branch-free mode; 1 (impossible) when nothing is predicted.
    expect: u64,
    /// The payload bits of the predicted varint's bytes within the first word. `LOW` in the
    /// branch-free mode (used as that constant, like `high`).
    low: u64,
    /// Predicted mode: where the last mispredicted read ended, times 16, plus how many reads
    /// in a row, up to that one, missed (so that a miss at that position continues the
    /// streak; positions past 2^60 only lose the streak). Branch-free: the position where the
    /// run ends (a position is cheaper to test than a count is to keep).
    state: u64,
}

impl Default for ReadHint {
    fn default() -> Self {
        ReadHint {
            one: 0x80,
            len: 0,
            high: 0,
            expect: 1,
            low: 0,
            state: u64::MAX,
        }
    }
}

impl ReadHint {
    /// Whether the next reads decode without a branch on the varint length (the mode chosen
    /// for streams whose lengths vary at random).
    pub fn branchless(&self) -> bool {
        self.expect == BRANCHLESS
    }

    /// The hint predicting `len` (2 to 10 bytes) for the next multi-byte varint, after a
    /// streak of `streak` mispredicted reads that ended at `end`.
    fn predicting(len: u64, streak: u64, end: usize) -> Self {
        let bytes = if len <= 8 {
            u64::MAX >> (64 - 8 * len)
        } else {
            u64::MAX
        };
        let high = HIGH & bytes;
        // Clear the last byte's high bit (none within the word for 9 and 10 bytes).
        let expect = if len <= 8 {
            high ^ (0x80 << (8 * (len - 1)))
        } else {
            high
        };
        ReadHint {
            one: 0x80,
            len,
            high,
            expect,
            low: LOW & bytes,
            state: ((end as u64) << 4) | streak,
        }
    }

    /// After a mispredicted multi-byte read from `start` to `end`: predict its length from
    /// now on, or switch to the branch-free mode after [`STREAK`] mispredicted reads in a row
    /// (no one-byte value or correctly predicted read between them). Random lengths get there
    /// within a few dozen values; a stream whose prediction fails one read in ten, almost
    /// never.
    #[cold]
    #[inline(never)]
    fn missed(self, start: usize, end: usize) -> Self {
        let streak = if self.state >> 4 == (start as u64) & (u64::MAX >> 4) {
            (self.state & 15) + 1
        } else {
            1
        };
        if streak < STREAK {
            return Self::predicting((end - start) as u64, streak, end);
        }
        ReadHint {
            one: 0,
            len: 0,
            high: HIGH,
            expect: BRANCHLESS,
            low: LOW,
            state: end.saturating_add(RUN) as u64,
        }
    }

    /// The predicted mode again, after a branch-free run (out of line: a call the compiler
    /// cannot turn into selects on every field of the hint).
    #[cold]
    #[inline(never)]
    fn after_run() -> Self {
        ReadHint::default()
    }
}

/// Decode one raw varint at `*pos` and advance past it, predicting its length from `hint`
/// (see the module documentation). Same results and errors as the scalar reference.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn read_u64_hinted<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    hint: &mut ReadHint,
) -> Result<u64, VarintError> {
    let p = *pos;
    // One compare for the whole fast path: 10 bytes at `p` (`saturating_sub` is hoisted out
    // of the caller's loop). The last 9 bytes of the input take the checked path.
    if p >= buf.len().saturating_sub(MAX_LEN - 1) {
        let (v, next) = read_u64_checked(buf, p)?;
        *pos = next;
        return Ok(v);
    }
    // SAFETY: `p < buf.len() - 9`, so `p + MAX_LEN <= buf.len()`: the 10 bytes are in bounds.
    let c: &[u8; MAX_LEN] = unsafe { &*buf.as_ptr().add(p).cast() };
    if c[0] < hint.one {
        *pos = p + 1;
        return Ok(u64::from(c[0]));
    }
    if hint.expect == BRANCHLESS {
        // The hint's `high` and `low` are `HIGH` and `LOW` in this mode.
        let (v, next) = read_any(bits, c, p, hint.high, hint.low)?;
        if next as u64 >= hint.state {
            *hint = ReadHint::after_run();
        }
        *pos = next;
        return Ok(v);
    }
    let w = first_word(c);
    if w & hint.high == hint.expect {
        let lo = bits.compact_masked(w, hint.low);
        if hint.len <= 8 {
            *pos = p + hint.len as usize;
            return Ok(lo);
        }
        // Predicted 9 or 10 bytes: the first word is all continued bytes; bytes 8 and 9
        // (`t`) must end the varint where predicted. A branch on the predicted length (it
        // holds for the whole stream) keeps each check's masks constants: derived from the
        // length, they took more registers than the read loop had.
        let t = u64::from(u16::from_le_bytes([c[8], c[9]]));
        if hint.len == 9 {
            // A 9th byte without its high bit.
            if t & 0x80 == 0 {
                *pos = p + 9;
                return Ok(lo | ((t & 0x7f) << 56));
            }
        } else if t & 0xfe80 == 0x80 {
            // A continued 9th byte and a 10th byte of 0 or 1.
            *pos = p + 10;
            return Ok(lo | (bits.compact_masked(t, 0x17f) << 56));
        }
    }
    let (v, len) = read_word(bits, c)?;
    *hint = hint.missed(p, p + len);
    *pos = p + len;
    Ok(v)
}

/// Decode the varint (1 to 10 bytes) at the start of `c` (position `p`) without a branch on
/// its length ([`Bits::decode_any`]); the only branch is the (never taken for valid data)
/// overlong check. `high` and `low` must be [`HIGH`] and [`LOW`]. Returns the value and the
/// position after it.
#[inline(always)]
pub(crate) fn read_any<B: Bits>(
    bits: B,
    c: &[u8; MAX_LEN],
    p: usize,
    high: u64,
    low: u64,
) -> Result<(u64, usize), VarintError> {
    debug_assert!(high == HIGH && low == LOW);
    let (v, next, bad) = bits.decode_any(c, p, high, low);
    if bad != 0 {
        return Err(VarintError::Overlong);
    }
    Ok((v, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::word::Swar;
    use crate::varint::{Kernel, Scalar};

    /// The generic paths with shift-and-mask compaction (the `bmi2` kernel, which uses them,
    /// is tested against the scalar reference in the integration tests): random lengths,
    /// then uniform ones, then damage, one hint throughout.
    #[test]
    fn shift_and_mask_reads_equal_scalar() {
        let mut next = crate::varint::test_rng(0x9e37_79b9_7f4a_7c15u64);
        let mut buf = Vec::new();
        // A tenth as many values under Miri, which interprets every instruction.
        let total: u64 = if cfg!(miri) { 3_000 } else { 30_000 };
        for i in 0..total {
            let len = if i < total / 3 {
                1 + next() % 10
            } else {
                3 + (i / (total / 6)) % 8
            };
            let bits = (7 * len).min(64);
            let v = if len == 1 {
                next() & 0x7f
            } else {
                (next() & (u64::MAX >> (64 - bits))) | (1 << (7 * (len - 1)))
            };
            Scalar.write_u64(v, &mut buf);
        }
        let mut bad = buf.clone();
        let at = (total * 5 / 6) as usize;
        bad.splice(at..at, [0xffu8; 11]);
        let mut ten = buf.clone();
        let at = total as usize;
        ten.splice(
            at..at,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
        );
        for buf in [&buf, &bad, &ten] {
            let (mut p, mut q, mut hint) = (0, 0, ReadHint::default());
            let mut modes = [false; 2];
            loop {
                let want = Scalar.read_u64(buf, &mut p);
                modes[usize::from(hint.branchless())] = true;
                let got = read_u64_hinted(Swar, buf, &mut q, &mut hint);
                assert_eq!(got, want, "at {q}");
                if want.is_err() || p == buf.len() {
                    break;
                }
                assert_eq!(q, p);
            }
            assert_eq!(modes, [true, true]);
        }
    }
}
