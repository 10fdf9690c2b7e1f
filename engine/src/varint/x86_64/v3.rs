//! The bulk loops of [`generic`] compiled for x86-64-v3 (AVX2, BMI1, BMI2, LZCNT, POPCNT).
//!
//! Each function is a `#[target_feature]` shell around the `#[inline(always)]` generic loop, so
//! the whole loop (not a call per value) is compiled with the wider instruction set.

use crate::varint::generic;
use crate::varint::word::Bits;
use crate::varint::VarintError;

/// Bulk decode of zigzag longs, compiled for x86-64-v3.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT ([`super::has_v3`]).
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn read_longs<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i64>,
    hint: &mut crate::varint::BulkHint,
) -> Result<(), VarintError> {
    generic::read_longs(bits, buf, pos, n, out, hint)
}

/// Bulk decode of zigzag ints, compiled for x86-64-v3.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT ([`super::has_v3`]).
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn read_ints<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    out: &mut Vec<i32>,
    hint: &mut crate::varint::BulkHint,
) -> Result<(), VarintError> {
    generic::read_ints(bits, buf, pos, n, out, hint)
}

/// Bulk skip, compiled for x86-64-v3.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT ([`super::has_v3`]).
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn skip<B: Bits>(
    bits: B,
    buf: &[u8],
    pos: &mut usize,
    n: usize,
) -> Result<(), VarintError> {
    generic::skip(bits, buf, pos, n)
}

/// Bulk encode, compiled for x86-64-v3.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT ([`super::has_v3`]).
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn write_longs<B: Bits>(bits: B, values: &[i64], out: &mut Vec<u8>) {
    generic::write_longs(bits, values, out)
}

/// Bulk encode of ints, compiled for x86-64-v3.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT ([`super::has_v3`]).
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn write_ints<B: Bits>(bits: B, values: &[i32], out: &mut Vec<u8>) {
    generic::write_ints(bits, values, out)
}
