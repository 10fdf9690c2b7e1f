//! Varint kernel tests (owned by the varint core).
//!
//! Every kernel this CPU can run is tested explicitly (not only the selected one), against the
//! `Scalar` reference: exhaustive round trips at every 7-bit length boundary, every malformed
//! case, and property tests on random streams truncated at every offset.
//!
//! The per-operation helpers are here; the cases are in `selection`, `boundaries` and
//! `properties`.

use avrow_engine::dispatch_kernel;
use avrow_engine::varint::{
    available_kernels, best_available, describe, encoded_len, is_available, selected, unzigzag64,
    zigzag64, BulkHint, Kernel, KernelKind, ReadHint, Scalar, VarintError, Writer, MAX_LEN,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// One function per kernel operation, dispatched on the kind (as the decoder does).

/// `read_u64`, checked against `read_u64_unpredictable` (the record decoder's entry point),
/// which must give the same value, position and error everywhere.
fn read_u64(kind: KernelKind, buf: &[u8], pos: usize) -> Result<(u64, usize), VarintError> {
    let mut p = pos;
    let r = dispatch_kernel!(kind, k => k.read_u64(buf, &mut p)).map(|v| (v, p));
    let mut q = pos;
    let u = dispatch_kernel!(kind, k => k.read_u64_unpredictable(buf, &mut q)).map(|v| (v, q));
    assert_eq!(
        u, r,
        "{kind}: read_u64_unpredictable at {pos} of {buf:02x?}"
    );
    r
}

fn read_long(kind: KernelKind, buf: &[u8], pos: usize) -> Result<(i64, usize), VarintError> {
    let mut p = pos;
    dispatch_kernel!(kind, k => k.read_long(buf, &mut p)).map(|v| (v, p))
}

fn read_int(kind: KernelKind, buf: &[u8], pos: usize) -> Result<(i32, usize), VarintError> {
    let mut p = pos;
    dispatch_kernel!(kind, k => k.read_int(buf, &mut p)).map(|v| (v, p))
}

/// Bulk decode of `n` longs appended after a sentinel; checks the sentinel survives and that
/// nothing is appended on error.
fn read_longs(
    kind: KernelKind,
    buf: &[u8],
    pos: usize,
    n: usize,
) -> Result<(Vec<i64>, usize), VarintError> {
    let mut p = pos;
    let mut out = vec![42i64];
    let r = dispatch_kernel!(kind, k => k.read_longs(buf, &mut p, n, &mut out));
    assert_eq!(out[0], 42, "{kind}: prefix of out changed");
    // The hinted variant, starting in either mode, must agree exactly.
    for start_branchless in [false, true] {
        let mut hint = BulkHint::new(start_branchless);
        let (mut hp, mut hout) = (pos, vec![42i64]);
        let hr =
            dispatch_kernel!(kind, k => k.read_longs_hinted(buf, &mut hp, n, &mut hout, &mut hint));
        assert_eq!(
            hr, r,
            "{kind}: hinted read_longs (start branchless {start_branchless})"
        );
        assert_eq!(hout, out, "{kind}: hinted read_longs values");
        if r.is_ok() {
            assert_eq!(hp, p, "{kind}: hinted read_longs position");
        }
    }
    match r {
        Ok(()) => {
            assert_eq!(out.len(), n + 1, "{kind}: wrong number of values appended");
            Ok((out[1..].to_vec(), p))
        }
        Err(e) => {
            assert_eq!(out.len(), 1, "{kind}: values appended on error {e:?}");
            Err(e)
        }
    }
}

fn read_ints(
    kind: KernelKind,
    buf: &[u8],
    pos: usize,
    n: usize,
) -> Result<(Vec<i32>, usize), VarintError> {
    let mut p = pos;
    let mut out = vec![42i32];
    let r = dispatch_kernel!(kind, k => k.read_ints(buf, &mut p, n, &mut out));
    assert_eq!(out[0], 42, "{kind}: prefix of out changed");
    // The hinted variant, starting in either mode, must agree exactly.
    for start_branchless in [false, true] {
        let mut hint = BulkHint::new(start_branchless);
        let (mut hp, mut hout) = (pos, vec![42i32]);
        let hr =
            dispatch_kernel!(kind, k => k.read_ints_hinted(buf, &mut hp, n, &mut hout, &mut hint));
        assert_eq!(
            hr, r,
            "{kind}: hinted read_ints (start branchless {start_branchless})"
        );
        assert_eq!(hout, out, "{kind}: hinted read_ints values");
        if r.is_ok() {
            assert_eq!(hp, p, "{kind}: hinted read_ints position");
        }
    }
    match r {
        Ok(()) => {
            assert_eq!(out.len(), n + 1, "{kind}: wrong number of values appended");
            Ok((out[1..].to_vec(), p))
        }
        Err(e) => {
            assert_eq!(out.len(), 1, "{kind}: values appended on error {e:?}");
            Err(e)
        }
    }
}

fn skip(kind: KernelKind, buf: &[u8], pos: usize, n: usize) -> Result<usize, VarintError> {
    let mut p = pos;
    dispatch_kernel!(kind, k => k.skip(buf, &mut p, n)).map(|()| p)
}

fn write_u64(kind: KernelKind, v: u64) -> Vec<u8> {
    let mut out = vec![0xaa];
    dispatch_kernel!(kind, k => k.write_u64(v, &mut out));
    assert_eq!(out[0], 0xaa);
    out.split_off(1)
}

fn write_long(kind: KernelKind, v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    dispatch_kernel!(kind, k => k.write_long(v, &mut out));
    out
}

fn write_longs(kind: KernelKind, values: &[i64]) -> Vec<u8> {
    let mut out = vec![0xaa];
    dispatch_kernel!(kind, k => k.write_longs(values, &mut out));
    assert_eq!(out[0], 0xaa);
    out.split_off(1)
}

/// The reference encoding, written out here independently of every kernel.
fn reference_encode(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// Every kernel this machine runs, with a check that the list is what detection says.
fn kernels() -> Vec<KernelKind> {
    let ks = available_kernels();
    assert_eq!(ks[0], KernelKind::Scalar);
    assert!(ks.contains(&KernelKind::Fast));
    assert_eq!(
        ks.contains(&KernelKind::Bmi2),
        is_available(KernelKind::Bmi2)
    );
    ks
}

/// 0, 1 and both sides of every 7-bit length boundary, plus the 64-bit extremes.
fn boundary_values() -> Vec<u64> {
    let mut vs = vec![0u64, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
    for k in 1..10 {
        let b = 1u64 << (7 * k);
        vs.extend([b - 1, b, b + 1, b - 2]);
    }
    vs.sort_unstable();
    vs.dedup();
    vs
}

fn boundary_longs() -> Vec<i64> {
    let mut vs = vec![
        0i64,
        1,
        -1,
        2,
        -2,
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
    ];
    for k in 1..10u32 {
        // Zigzag length boundaries: |v| around 2^(7k - 1).
        let b = 1i64 << (7 * k - 1).min(62);
        vs.extend([b - 1, b, -b, -b - 1, -b + 1]);
    }
    vs.extend([
        i64::from(i32::MIN),
        i64::from(i32::MAX),
        i64::from(i32::MIN) - 1,
        i64::from(i32::MAX) + 1,
    ]);
    vs
}

/// `bytes` alone, and followed by enough padding that the kernels take their unchecked
/// fast paths.
fn with_and_without_padding(bytes: &[u8]) -> [Vec<u8>; 2] {
    let mut padded = bytes.to_vec();
    padded.extend([0u8; 32]);
    [bytes.to_vec(), padded]
}

mod boundaries;
mod properties;
mod selection;
