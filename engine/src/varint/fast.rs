//! The portable word-at-a-time kernel, for every target.
//!
//! Single values: one-byte check inline and branchy first, two bytes inline, unrolled three-
//! and four-byte paths, then one 64-bit word for five to eight bytes (terminator found with
//! `trailing_zeros(!w & 0x8080…80)`, 7-bit groups compacted with shift-and-mask), extended by
//! one or two bytes for nine- and ten-byte varints. Bulk paths are in [`super::bulk`].
//!
//! [`Kernel::read_u64_unpredictable`] (the record decoder's field reads) keeps the one-byte
//! check and decodes every longer varint with the word path, so that a record whose fields
//! alternate between lengths does not mispredict a length branch per field.

use std::mem::MaybeUninit;

use super::generic;
use super::word::Swar;
use super::{bulk, BulkHint, Kernel, KernelKind, VarintError, MAX_LEN};

/// The portable word-at-a-time kernel (available on every target).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fast;

impl super::sealed::Sealed for Fast {
    #[inline(always)]
    fn encode_any(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        // SAFETY: `dst` is `MAX_LEN` writable bytes.
        unsafe { generic::encode_any(Swar, v, dst.as_mut_ptr().cast()) }
    }
}

impl Kernel for Fast {
    const KIND: KernelKind = KernelKind::Fast;

    #[inline(always)]
    fn read_u64(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64(Swar, buf, pos)
    }

    #[inline(always)]
    fn read_u64_unpredictable(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64_word(Swar, buf, pos)
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
        bulk::read_longs(Swar, buf, pos, n, out, hint)
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
        bulk::read_ints(Swar, buf, pos, n, out, hint)
    }

    #[inline]
    fn skip(self, buf: &[u8], pos: &mut usize, n: usize) -> Result<(), VarintError> {
        bulk::skip(Swar, buf, pos, n)
    }

    #[inline(always)]
    fn write_u64(self, v: u64, out: &mut Vec<u8>) {
        generic::write_u64(Swar, v, out)
    }

    #[inline(always)]
    fn encode_u64(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        // SAFETY: `dst` is `MAX_LEN` writable bytes.
        unsafe { generic::encode_at(Swar, v, dst.as_mut_ptr().cast()) }
    }

    #[inline]
    fn write_longs(self, values: &[i64], out: &mut Vec<u8>) {
        bulk::write_longs(Swar, values, out)
    }
}
