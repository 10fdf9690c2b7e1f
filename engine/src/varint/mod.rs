//! Zigzag varint kernels: the hottest code in avrow.
//!
//! Every Avro `int`, `long`, length, block count, union branch and enum index is a zigzag
//! LEB128 varint. This module owns decoding and encoding them. It follows memchr's layout: one
//! kernel per implementation strategy, a portable [`Scalar`] reference that every other kernel is
//! tested against, and a process-wide choice made once and cached ([`selected`], in `select`).
//!
//! Kernels are zero-sized values implementing [`Kernel`]. Decoders are generic over the kernel
//! and are monomorphized once per kernel, so the hot loops never call through a pointer per
//! value: the dispatch happens once per block (see [`KernelKind`] and [`dispatch!`](crate::dispatch_kernel)).
//!
//! Kernels:
//! - [`Scalar`]: byte at a time, the reference. Reached only when forced with
//!   `AVROW_VARINT=scalar`.
//! - [`Fast`]: word at a time with shift-and-mask, every target.
//! - `Bmi2` (x86-64 only): `Fast` with PEXT/PDEP, chosen where they are fast.
//!
//! Bulk paths (arrays: [`Kernel::read_longs`], [`Kernel::read_ints`], [`Kernel::skip`],
//! [`Kernel::write_longs`], [`Kernel::write_ints`] of `fast` and `bmi2`) additionally run
//! loops compiled for an instruction set chosen once per process ([`BulkKind`],
//! [`selected_bulk`]):
//! - [`BulkKind::Baseline`]: the target's baseline (SSE2 on x86-64, NEON on aarch64), every
//!   CPU. Reached on x86-64-v3 CPUs only when forced with `AVROW_BULK=baseline`.
//! - [`BulkKind::V3`] (x86-64 only): compiled for AVX2/BMI1/BMI2/LZCNT/POPCNT, chosen where
//!   they are all present.
//! - [`BulkKind::V4`] (x86-64 only): v3's decode loops, and [`Kernel::write_longs`] /
//!   [`Kernel::write_ints`] eight values at a time with AVX-512 (F, BW, CD, VL, VBMI, VBMI2),
//!   chosen where those are present too.
//!
//! Forcing: `AVROW_VARINT=scalar|fast|bmi2` forces the kernel and `AVROW_BULK=baseline|v3|v4` the
//! bulk path (both read once per process; an unknown or unavailable name is an error that the
//! readers report and `avrow --version` prints). CI runs the test suites under each.
//!
//! Single values: [`Kernel::read_u64`] and [`Kernel::write_u64`] are stateless. A stream of
//! single values reads faster with a [`ReadHint`] ([`Kernel::read_u64_hinted`]: the length
//! is predicted, or computed without a branch when lengths are random) and writes faster
//! through a [`Writer`] (the output cursor stays in registers).

mod block;
mod bulk;
mod fast;
mod generic;
mod predict;
mod scalar;
mod select;
pub(crate) mod skip;
pub(crate) mod word;
mod writer;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub use fast::Fast;
pub use predict::ReadHint;
pub use scalar::Scalar;
pub use select::{
    available_bulk_paths, available_kernels, best_available, best_bulk, check_available, describe,
    describe_bulk, is_available, is_bulk_available, selected, selected_bulk, BulkKind, Choice,
    SelectionError,
};
pub use writer::Writer;
#[cfg(target_arch = "x86_64")]
pub use x86_64::Bmi2;

/// Whether the bulk path in use is x86-64-v3's or AVX-512's (so AVX2 and SSSE3 may be used):
/// other vector code of the decoder (`uuid` strings) follows the same choice, so that
/// `AVROW_BULK=baseline` runs every baseline path.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn v3_path() -> bool {
    select::effective_bulk() != BulkKind::Baseline
}

/// The longest valid varint, in bytes (a 64-bit value in 7-bit groups).
pub const MAX_LEN: usize = 10;

use std::fmt;
use std::mem::MaybeUninit;

/// Why a varint could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VarintError {
    /// The input ended before the terminating byte (high bit clear).
    Truncated,
    /// More than 10 bytes, or a 10th byte greater than 1 (the value does not fit 64 bits).
    Overlong,
    /// A decoded Avro `int` does not fit in 32 bits.
    IntOutOfRange,
}

impl fmt::Display for VarintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VarintError::Truncated => "truncated varint",
            VarintError::Overlong => "overlong varint (more than 64 bits)",
            VarintError::IntOutOfRange => "int value outside the 32-bit range",
        })
    }
}

impl std::error::Error for VarintError {}

/// Which kernel implementation is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
// Not `#[non_exhaustive]`: `dispatch_kernel!`, which other crates expand, matches it
// exhaustively so that each kernel's body is monomorphized once and nothing falls back.
pub enum KernelKind {
    /// The portable byte-at-a-time reference.
    Scalar,
    /// The portable word-at-a-time kernel (all targets).
    Fast,
    /// x86-64 with fast PEXT/PDEP.
    Bmi2,
}

impl KernelKind {
    /// The kernel's name as accepted by `AVROW_VARINT` and printed by `avrow --version`.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Scalar => "scalar",
            KernelKind::Fast => "fast",
            KernelKind::Bmi2 => "bmi2",
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Undo zigzag encoding.
#[inline(always)]
pub fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Apply zigzag encoding.
#[inline(always)]
pub fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Narrow a decoded zigzag `long` to an Avro `int`.
#[inline(always)]
pub fn long_to_int(v: i64) -> Result<i32, VarintError> {
    i32::try_from(v).map_err(|_| VarintError::IntOutOfRange)
}

/// Implemented only by this module's kernels (see [`Kernel`]).
/// The most values [`Kernel::read_longs_short`] and [`Kernel::read_ints_short`] read at once.
pub const SHORT_BLOCK_MAX: usize = block::SHORT;

mod sealed {
    use std::mem::MaybeUninit;

    use super::{generic, word, MAX_LEN};

    /// The seal on [`super::Kernel`], and the kernel parts only this crate uses.
    pub trait Sealed: Copy {
        /// How this kernel moves 7-bit groups between words and values: what the
        /// word-at-a-time paths (the provided methods of [`super::Kernel`]) run with. The
        /// scalar reference overrides every one of them and never uses it.
        type Bits: word::Bits;

        /// This kernel's [`Sealed::Bits`] (holding a kernel proves the CPU can run them).
        fn bits(self) -> Self::Bits;

        /// Write the raw varint encoding of `v` at the start of `dst` without a branch on its
        /// length and return the length; all of `dst` may be written (the [`super::Writer`]'s
        /// branch-free mode).
        #[inline(always)]
        fn encode_any(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
            // SAFETY: `dst` is `MAX_LEN` writable bytes.
            unsafe { generic::encode_any(self.bits(), v, dst.as_mut_ptr().cast()) }
        }
    }
}

/// A varint kernel. Kernels are zero-sized `Copy` values; a kernel that needs CPU features can
/// only be constructed after those features were detected, so holding one is the proof that its
/// methods are safe to call.
///
/// The trait is sealed (only [`Scalar`], [`Fast`] and `Bmi2` implement it): [`Writer`] relies
/// on [`Kernel::encode_u64`] returning the true length of what it initialised.
///
/// The provided methods are the word-at-a-time paths (the single-value and bulk loops of
/// `generic.rs` and `bulk.rs`) run with the kernel's bit mover, so `Fast` and `Bmi2` differ
/// only in that mover (and `Bmi2`'s predicted single reads); the [`Scalar`] reference
/// overrides every one.
pub trait Kernel: sealed::Sealed + Copy + Send + Sync + fmt::Debug + 'static {
    /// Which kernel this is.
    const KIND: KernelKind;

    /// Decode one raw (not zigzag) varint starting at `buf[*pos]` and advance `*pos` past it.
    /// On error `*pos` is unspecified.
    #[inline(always)]
    fn read_u64(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64(self.bits(), buf, pos)
    }

    /// Decode one zigzag Avro `long`.
    #[inline(always)]
    fn read_long(self, buf: &[u8], pos: &mut usize) -> Result<i64, VarintError> {
        self.read_u64(buf, pos).map(unzigzag64)
    }

    /// [`Kernel::read_u64`] for values whose lengths vary unpredictably from one to the next
    /// (a record's fields in turn): one-byte values inline, longer ones without a branch on
    /// their length. Same results and errors.
    #[inline(always)]
    fn read_u64_unpredictable(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        generic::read_u64_word(self.bits(), buf, pos)
    }

    /// [`Kernel::read_u64`] with no branch on the varint's length (one byte included) where
    /// it ends within eight bytes and ten bytes follow `*pos`: for a value read whether or not
    /// it is there (a nullable number), whose bytes, when it is not, are the next value's.
    /// Same results and errors.
    #[inline(always)]
    fn read_u64_branchless(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        let (v, next) = match buf.get(*pos..).and_then(|s| s.first_chunk::<MAX_LEN>()) {
            Some(c) => generic::read_word(self.bits(), c).map(|(v, len)| (v, *pos + len))?,
            None => generic::read_u64_checked(buf, *pos)?,
        };
        *pos = next;
        Ok(v)
    }

    /// [`Kernel::read_u64`] for one of a stream of single values: `hint` learns the stream's
    /// varint lengths (see [`ReadHint`]) so that the next value's position is predicted, or,
    /// when lengths vary at random, computed without a branch. Same results and errors.
    #[inline(always)]
    fn read_u64_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        hint: &mut ReadHint,
    ) -> Result<u64, VarintError> {
        let _ = hint;
        self.read_u64(buf, pos)
    }

    /// [`Kernel::read_long`] with a [`ReadHint`] (see [`Kernel::read_u64_hinted`]).
    #[inline(always)]
    fn read_long_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        hint: &mut ReadHint,
    ) -> Result<i64, VarintError> {
        self.read_u64_hinted(buf, pos, hint).map(unzigzag64)
    }

    /// Decode one zigzag Avro `int`, rejecting values outside `i32`.
    #[inline(always)]
    fn read_int(self, buf: &[u8], pos: &mut usize) -> Result<i32, VarintError> {
        long_to_int(self.read_long(buf, pos)?)
    }

    /// Decode `n` zigzag longs, appending them to `out`. The caller has checked that `n` is
    /// at most the number of bytes left, so reserving `n` is bounded by the input.
    ///
    /// On success `*pos` is past the last varint. On error `*pos` is unspecified and `out` is
    /// left with its original length (nothing appended); the error is the one the scalar
    /// reference meets first, value by value.
    #[inline]
    fn read_longs(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i64>,
    ) -> Result<(), VarintError> {
        self.read_longs_hinted(buf, pos, n, out, &mut BulkHint::default())
    }

    /// Decode `n` zigzag ints, appending them to `out` (same contract as [`Kernel::read_longs`];
    /// a value outside `i32` is [`VarintError::IntOutOfRange`] unless a decoding error comes
    /// first).
    #[inline]
    fn read_ints(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i32>,
    ) -> Result<(), VarintError> {
        self.read_ints_hinted(buf, pos, n, out, &mut BulkHint::default())
    }

    /// [`Kernel::read_longs`] for one of a series of arrays of the same column: `hint` carries
    /// the decoding mode (branchy or branch-free) measured on the previous arrays, so that short
    /// arrays of randomly varying lengths need not each measure it again.
    #[inline]
    fn read_longs_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i64>,
        hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        bulk::read_longs(self.bits(), buf, pos, n, out, hint)
    }

    /// [`Kernel::read_ints`] with a [`BulkHint`] (see [`Kernel::read_longs_hinted`]).
    #[inline]
    fn read_ints_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i32>,
        hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        bulk::read_ints(self.bits(), buf, pos, n, out, hint)
    }

    /// Decode the `n` zigzag longs of a short array block (`n` at most
    /// [`SHORT_BLOCK_MAX`]), appending them
    /// to `out`, when they all end within the next 64 bytes, none is longer than eight bytes
    /// and 80 bytes remain: their positions found at once from one bitmap of terminator
    /// bytes, so that no value waits for the one before. `false`, with `out` and `*pos` as
    /// they were, otherwise (and always for the [`Scalar`] reference): the caller then reads
    /// the values one by one, which reports any error.
    #[inline(always)]
    fn read_longs_short(self, buf: &[u8], pos: &mut usize, n: usize, out: &mut Vec<i64>) -> bool {
        generic::read_longs_short(self.bits(), buf, pos, n, out)
    }

    /// [`Kernel::read_longs_short`] for zigzag ints (`false` also where one is outside
    /// `i32`).
    #[inline(always)]
    fn read_ints_short(self, buf: &[u8], pos: &mut usize, n: usize, out: &mut Vec<i32>) -> bool {
        generic::read_ints_short(self.bits(), buf, pos, n, out)
    }

    /// Skip `n` varints without decoding them, rejecting exactly what decoding them would
    /// reject. On error `*pos` is unspecified.
    #[inline]
    fn skip(self, buf: &[u8], pos: &mut usize, n: usize) -> Result<(), VarintError> {
        bulk::skip(self.bits(), buf, pos, n)
    }

    /// Append the raw varint encoding of `v`.
    #[inline(always)]
    fn write_u64(self, v: u64, out: &mut Vec<u8>) {
        generic::write_u64(self.bits(), v, out)
    }

    /// Write the raw varint encoding of `v` at the start of `dst` and return its length (1 to
    /// 10). The bytes before the length are initialised; later ones may have been written too
    /// (with unspecified values). [`Writer`] appends through this.
    #[inline(always)]
    fn encode_u64(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        // SAFETY: `dst` is `MAX_LEN` writable bytes.
        unsafe { generic::encode_at(self.bits(), v, dst.as_mut_ptr().cast()) }
    }

    /// Append the zigzag varint encoding of `v`.
    #[inline(always)]
    fn write_long(self, v: i64, out: &mut Vec<u8>) {
        self.write_u64(zigzag64(v), out)
    }

    /// Append the zigzag varint encodings of all `values` (reserving once per chunk, not per
    /// value).
    #[inline]
    fn write_longs(self, values: &[i64], out: &mut Vec<u8>) {
        bulk::write_longs(self.bits(), values, out)
    }

    /// Append the zigzag varint encodings of all the ints `values` (Avro `int`s: at most five
    /// bytes each), as [`Kernel::write_longs`] does.
    #[inline]
    fn write_ints(self, values: &[i32], out: &mut Vec<u8>) {
        bulk::write_ints(self.bits(), values, out)
    }
}

/// What a column's bulk decoding learned from its previous arrays: whether their varint lengths
/// changed so often from value to value that the branch-free path pays. Keep one per column
/// and pass it to [`Kernel::read_longs_hinted`] / [`Kernel::read_ints_hinted`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkHint {
    pub(crate) branchless: bool,
}

impl BulkHint {
    /// A hint that starts in the branch-free mode (`true`) or the branchy one (`false`, the
    /// default).
    pub fn new(branchless: bool) -> Self {
        BulkHint { branchless }
    }

    /// Whether the next array starts in the branch-free mode.
    pub fn branchless(self) -> bool {
        self.branchless
    }
}

/// Number of bytes the raw varint encoding of `v` takes (1 to 10), computed without a loop.
#[inline(always)]
pub fn encoded_len(v: u64) -> usize {
    // bits = 64 - lz, at least 1; bytes = ceil(bits / 7) = (bits * 9 + 64) / 64 for 1..=64.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    (bits * 9 + 64) / 64
}

/// Run a generic expression with the kernel value for `kind`: the expression is
/// monomorphized once per kernel and the choice is made once, here, not per value.
///
/// `KernelKind::Bmi2` runs the expression with [`Bmi2`](crate::varint) where the CPU supports
/// it and falls back to [`Fast`] otherwise (always on non-x86-64 targets), so the macro never
/// runs an instruction the CPU lacks whatever `kind` it is given.
///
/// ```
/// use avrow_engine::varint::{Kernel, KernelKind};
/// fn first<K: Kernel>(k: K, buf: &[u8]) -> i64 { k.read_long(buf, &mut 0).unwrap() }
/// let v = avrow_engine::dispatch_kernel!(KernelKind::Scalar, k => first(k, &[0x03]));
/// assert_eq!(v, -2);
/// ```
#[macro_export]
macro_rules! dispatch_kernel {
    ($kind:expr, $k:ident => $body:expr) => {{
        match $kind {
            $crate::varint::KernelKind::Scalar => {
                let $k = $crate::varint::Scalar;
                $body
            }
            $crate::varint::KernelKind::Fast => {
                let $k = $crate::varint::Fast;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::varint::KernelKind::Bmi2 => match $crate::varint::Bmi2::new() {
                ::core::option::Option::Some($k) => $body,
                ::core::option::Option::None => {
                    let $k = $crate::varint::Fast;
                    $body
                }
            },
            #[cfg(not(target_arch = "x86_64"))]
            $crate::varint::KernelKind::Bmi2 => {
                let $k = $crate::varint::Fast;
                $body
            }
        }
    }};
}

/// A xorshift64 generator for the unit tests' random values.
#[cfg(test)]
pub(crate) fn test_rng(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
