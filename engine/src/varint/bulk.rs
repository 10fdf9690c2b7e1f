//! Bulk entry points: run the whole loop compiled for the bulk path chosen once per process.
//!
//! On x86-64 with AVX2, BMI1, BMI2, LZCNT and POPCNT (x86-64-v3: Haswell and later, every Zen)
//! the loops of [`super::generic`] run inside `#[target_feature]` wrappers, where the 16-byte
//! one-byte-value widening and the zigzag pass are vectorised with AVX2 and the bit scans use
//! TZCNT/LZCNT/POPCNT: the [`BulkKind::V3`](super::BulkKind::V3) path. Elsewhere, or when
//! forced with `AVROW_BULK=baseline`, the same loops run as compiled for the baseline target
//! (SSE2 on x86-64, NEON on aarch64, whose baseline includes it): the
//! [`BulkKind::Baseline`](super::BulkKind::Baseline) path. The choice is made once, in
//! `select.rs`.

use super::generic;
use super::word::Bits;
use super::VarintError;

#[cfg(target_arch = "x86_64")]
use super::x86_64;

/// Whether the loops run the x86-64-v3 path or the AVX-512 one, whose decode loops are v3's
/// (only ever true where [`x86_64::has_v3`] is).
#[cfg(target_arch = "x86_64")]
#[inline]
fn use_v3() -> bool {
    super::select::effective_bulk() != super::select::BulkKind::Baseline
}

/// Whether the encoders run the AVX-512 path (only ever true where [`x86_64::has_v4`] is).
#[cfg(target_arch = "x86_64")]
#[inline]
fn use_v4() -> bool {
    super::select::effective_bulk() == super::select::BulkKind::V4
}

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
    if use_v3() {
        // SAFETY: `use_v3` is true only where `has_v3` detected every feature
        // `v3::read_longs` is compiled for (see `select::bulk_selection`).
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
    if use_v3() {
        // SAFETY: `use_v3` is true only where `has_v3` detected every feature
        // `v3::read_ints` is compiled for (see `select::bulk_selection`).
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
    if use_v3() {
        // SAFETY: `use_v3` is true only where `has_v3` detected every feature
        // `v3::skip` is compiled for (see `select::bulk_selection`).
        return unsafe { x86_64::v3::skip(bits, buf, pos, n) };
    }
    generic::skip(bits, buf, pos, n)
}

/// Append the zigzag encodings of `values` (see
/// [`Kernel::write_longs`](super::Kernel::write_longs)).
#[inline]
pub(crate) fn write_longs<B: Bits>(bits: B, values: &[i64], out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if use_v4() {
        // SAFETY: `use_v4` is true only where `has_v4` detected every feature
        // `v4::write_longs` is compiled for (see `select::bulk_selection`).
        return unsafe { x86_64::v4::write_longs(bits, values, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if use_v3() {
        // SAFETY: `use_v3` is true only where `has_v3` detected every feature
        // `v3::write_longs` is compiled for (see `select::bulk_selection`).
        return unsafe { x86_64::v3::write_longs(bits, values, out) };
    }
    generic::write_longs(bits, values, out)
}

/// Append the zigzag encodings of the ints `values` (see
/// [`Kernel::write_ints`](super::Kernel::write_ints)).
#[inline]
pub(crate) fn write_ints<B: Bits>(bits: B, values: &[i32], out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if use_v4() {
        // SAFETY: `use_v4` is true only where `has_v4` detected every feature
        // `v4::write_ints` is compiled for (see `select::bulk_selection`).
        return unsafe { x86_64::v4::write_ints(bits, values, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if use_v3() {
        // SAFETY: as in `write_longs`.
        return unsafe { x86_64::v3::write_ints(bits, values, out) };
    }
    generic::write_ints(bits, values, out)
}

#[cfg(test)]
mod tests {
    //! Each bulk path run directly (whatever the process selected), on the same inputs, against
    //! the scalar reference: forcing the baseline must give the default's results.

    use super::*;
    use crate::varint::select::{available_bulk_paths, is_bulk_available, BulkKind};
    use crate::varint::word::Swar;
    use crate::varint::{BulkHint, Kernel, Scalar};

    /// One bulk path's loops with one bit mover, called without the process's selection.
    #[derive(Debug, Clone, Copy)]
    struct Path<B> {
        kind: BulkKind,
        bits: B,
    }

    impl<B: Bits> Path<B> {
        fn new(kind: BulkKind, bits: B) -> Self {
            assert!(is_bulk_available(kind), "{kind} is not available");
            Path { kind, bits }
        }

        fn read_longs(
            self,
            buf: &[u8],
            pos: &mut usize,
            n: usize,
            out: &mut Vec<i64>,
            hint: &mut crate::varint::BulkHint,
        ) -> Result<(), VarintError> {
            match self.kind {
                BulkKind::Baseline => generic::read_longs(self.bits, buf, pos, n, out, hint),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Path::new` checked that the path is available (`has_v3`; `v4`
                // implies it).
                BulkKind::V3 | BulkKind::V4 => unsafe {
                    x86_64::v3::read_longs(self.bits, buf, pos, n, out, hint)
                },
                #[cfg(not(target_arch = "x86_64"))]
                BulkKind::V3 | BulkKind::V4 => unreachable!(),
            }
        }

        fn read_ints(
            self,
            buf: &[u8],
            pos: &mut usize,
            n: usize,
            out: &mut Vec<i32>,
            hint: &mut crate::varint::BulkHint,
        ) -> Result<(), VarintError> {
            match self.kind {
                BulkKind::Baseline => generic::read_ints(self.bits, buf, pos, n, out, hint),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as in `read_longs`.
                BulkKind::V3 | BulkKind::V4 => unsafe {
                    x86_64::v3::read_ints(self.bits, buf, pos, n, out, hint)
                },
                #[cfg(not(target_arch = "x86_64"))]
                BulkKind::V3 | BulkKind::V4 => unreachable!(),
            }
        }

        fn skip(self, buf: &[u8], pos: &mut usize, n: usize) -> Result<(), VarintError> {
            match self.kind {
                BulkKind::Baseline => generic::skip(self.bits, buf, pos, n),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as in `read_longs`.
                BulkKind::V3 | BulkKind::V4 => unsafe { x86_64::v3::skip(self.bits, buf, pos, n) },
                #[cfg(not(target_arch = "x86_64"))]
                BulkKind::V3 | BulkKind::V4 => unreachable!(),
            }
        }

        fn write_longs(self, values: &[i64], out: &mut Vec<u8>) {
            match self.kind {
                BulkKind::Baseline => generic::write_longs(self.bits, values, out),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Path::new` checked that the v3 path is available (`has_v3`).
                BulkKind::V3 => unsafe { x86_64::v3::write_longs(self.bits, values, out) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Path::new` checked that the v4 path is available (`has_v4`).
                BulkKind::V4 => unsafe { x86_64::v4::write_longs(self.bits, values, out) },
                #[cfg(not(target_arch = "x86_64"))]
                BulkKind::V3 | BulkKind::V4 => unreachable!(),
            }
        }

        fn write_ints(self, values: &[i32], out: &mut Vec<u8>) {
            match self.kind {
                BulkKind::Baseline => generic::write_ints(self.bits, values, out),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Path::new` checked that the v3 path is available (`has_v3`).
                BulkKind::V3 => unsafe { x86_64::v3::write_ints(self.bits, values, out) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `Path::new` checked that the v4 path is available (`has_v4`).
                BulkKind::V4 => unsafe { x86_64::v4::write_ints(self.bits, values, out) },
                #[cfg(not(target_arch = "x86_64"))]
                BulkKind::V3 | BulkKind::V4 => unreachable!(),
            }
        }
    }

    /// Fewer cases under Miri, which interprets every instruction.
    const STREAMS: usize = if cfg!(miri) { 12 } else { 400 };

    /// A random raw value whose varint has `len` bytes (1 to 10).
    fn value_of_len(len: usize, r: u64) -> u64 {
        if len == 10 {
            return r | 1 << 63;
        }
        let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
        lo | (r & ((1u64 << (7 * len)) - 1))
    }

    /// A stream of varints of one of several length mixes, possibly damaged (an overlong
    /// varint, a 10th byte above 1) or cut short, with the number of values written.
    fn stream(next: &mut impl FnMut() -> u64) -> (Vec<u8>, usize) {
        let count = (next() % 300) as usize;
        let shape = next() % 6;
        let mut buf = Vec::new();
        for i in 0..count {
            let r = next();
            let len = match shape {
                0 => 1,
                1 => 1 + (r % 10) as usize,
                2 => 1 + (i % 2) * 2,
                3 => [1, 1, 1, 1, 1, 1, 2, 9][(r % 8) as usize],
                4 => 1 + (r % 4) as usize,
                _ => 5 + (r % 6) as usize,
            };
            Scalar.write_u64(value_of_len(len, next()), &mut buf);
        }
        match next() % 8 {
            0 if !buf.is_empty() => {
                let at = (next() as usize) % buf.len();
                buf.splice(at..at, [0x80u8; 10]);
            }
            1 if !buf.is_empty() => {
                let at = (next() as usize) % buf.len();
                buf.splice(
                    at..at,
                    [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2],
                );
            }
            2 if !buf.is_empty() => {
                let keep = (next() as usize) % buf.len();
                buf.truncate(keep);
            }
            _ => {}
        }
        (buf, count)
    }

    fn check<B: Bits>(path: Path<B>, buf: &[u8], count: usize) {
        let kind = path.kind;
        // At the count, short of it, and past it (the end of the input or a damaged varint).
        for n in [count, count / 2, count + 1] {
            for start in [0, 1] {
                if start > buf.len() {
                    continue;
                }
                let (mut want_pos, mut want) = (start, vec![7i64]);
                let want_r = Scalar.read_longs(buf, &mut want_pos, n, &mut want);
                for branchless in [false, true] {
                    let (mut pos, mut got) = (start, vec![7i64]);
                    let r =
                        path.read_longs(buf, &mut pos, n, &mut got, &mut BulkHint::new(branchless));
                    assert_eq!(r, want_r, "{kind}: read_longs n={n} start={start}");
                    assert_eq!(got, want, "{kind}: read_longs values n={n}");
                    if r.is_ok() {
                        assert_eq!(pos, want_pos, "{kind}: read_longs position n={n}");
                    }
                }
                let (mut want_pos, mut want) = (start, vec![7i32]);
                let want_r = Scalar.read_ints(buf, &mut want_pos, n, &mut want);
                for branchless in [false, true] {
                    let (mut pos, mut got) = (start, vec![7i32]);
                    let r =
                        path.read_ints(buf, &mut pos, n, &mut got, &mut BulkHint::new(branchless));
                    assert_eq!(r, want_r, "{kind}: read_ints n={n} start={start}");
                    assert_eq!(got, want, "{kind}: read_ints values n={n}");
                    if r.is_ok() {
                        assert_eq!(pos, want_pos, "{kind}: read_ints position n={n}");
                    }
                }
                let mut want_pos = start;
                let want_r = Scalar.skip(buf, &mut want_pos, n);
                let mut pos = start;
                let r = path.skip(buf, &mut pos, n);
                assert_eq!(r, want_r, "{kind}: skip n={n} start={start}");
                if r.is_ok() {
                    assert_eq!(pos, want_pos, "{kind}: skip position n={n}");
                }
            }
        }
    }

    /// Random longs of a random magnitude (so every encoded length is covered).
    fn longs(next: &mut impl FnMut() -> u64) -> Vec<i64> {
        let count = (next() % 600) as usize;
        let shift = (next() % 64) as u32;
        (0..count).map(|_| (next() as i64) >> shift).collect()
    }

    fn check_encode<B: Bits>(path: Path<B>, values: &[i64]) {
        let mut want = vec![0xaa];
        Scalar.write_longs(values, &mut want);
        let mut got = vec![0xaa];
        path.write_longs(values, &mut got);
        assert_eq!(got, want, "{}: write_longs", path.kind);
        // The same values as ints (truncated), after a prefix of every length mod 8 so that
        // the groups start anywhere.
        let ints: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        let mut want = vec![0xaa; values.len() % 8];
        Scalar.write_ints(&ints, &mut want);
        let mut got = vec![0xaa; values.len() % 8];
        path.write_ints(&ints, &mut got);
        assert_eq!(got, want, "{}: write_ints", path.kind);
    }

    #[test]
    fn every_bulk_path_decodes_like_scalar() {
        let mut next = crate::varint::test_rng(0x0123_4567_89ab_cdef);
        for _ in 0..STREAMS {
            let (buf, count) = stream(&mut next);
            for kind in available_bulk_paths() {
                check(Path::new(kind, Swar), &buf, count);
                #[cfg(target_arch = "x86_64")]
                if let Some(k) = x86_64::Bmi2::new() {
                    check(Path::new(kind, k.pext()), &buf, count);
                }
            }
        }
    }

    #[test]
    fn every_bulk_path_encodes_like_scalar() {
        let mut next = crate::varint::test_rng(0xfedc_ba98_7654_3210);
        for _ in 0..STREAMS {
            let values = longs(&mut next);
            for kind in available_bulk_paths() {
                check_encode(Path::new(kind, Swar), &values);
                #[cfg(target_arch = "x86_64")]
                if let Some(k) = x86_64::Bmi2::new() {
                    check_encode(Path::new(kind, k.pext()), &values);
                }
            }
        }
    }
}
