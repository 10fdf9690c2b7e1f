//! The portable word-at-a-time kernel, for every target: [`Kernel`]'s provided paths with the
//! shift-and-mask bit mover ([`Swar`]).
//!
//! Single values: one-byte check inline and branchy first, two bytes inline, unrolled three-
//! and four-byte paths, then one 64-bit word for five to eight bytes (terminator found with
//! `trailing_zeros(!w & 0x8080…80)`, 7-bit groups compacted with shift-and-mask), extended by
//! one or two bytes for nine- and ten-byte varints (see [`super::generic`]). Bulk paths are in
//! [`super::bulk`].
//!
//! [`Kernel::read_u64_unpredictable`] (the record decoder's field reads) keeps the one-byte
//! check and decodes every longer varint with the word path, so that a record whose fields
//! alternate between lengths does not mispredict a length branch per field.

use super::word::Swar;
use super::{Kernel, KernelKind};

/// The portable word-at-a-time kernel (available on every target).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fast;

impl super::sealed::Sealed for Fast {
    type Bits = Swar;

    #[inline(always)]
    fn bits(self) -> Swar {
        Swar
    }
}

impl Kernel for Fast {
    const KIND: KernelKind = KernelKind::Fast;
}
