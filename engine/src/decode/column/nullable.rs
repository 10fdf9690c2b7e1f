//! Nullable values (`["null", T]` and `[T, "null"]`): [`NullableCol`] and the reads with no
//! branch on null that it and the columns of numbers, booleans, enums, strings, fixed values,
//! fixed decimals and `uuid` strings share ([`number_or_null`], [`ReadAt`], [`keep`]).

use super::{nested_sticky, Column};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::{unzigzag64, Kernel};
use std::hint::select_unpredictable;

#[derive(Debug, Clone)]
pub(crate) struct NullableCol {
    /// Branch index of `null`: 0 for `["null", T]`, 1 for `[T, "null"]`.
    null_index: i64,
    /// The one byte that encodes the other branch's index (zigzag 0 and 1: 0 and 2).
    value_byte: u8,
    pub(super) validity: Validity,
    pub(crate) child: Column,
}

impl NullableCol {
    pub(crate) fn new(null_index: i64, child: Column) -> Self {
        NullableCol {
            null_index,
            value_byte: if null_index == 0 { 2 } else { 0 },
            validity: Validity::default(),
            child,
        }
    }
}

impl NullableCol {
    /// [`NullableCol::decode`] on the fast path.
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        self.decode_sticky_with::<K, false, false>(f, c)
    }

    /// [`NullableCol::decode_sticky`], a record value inline with `INLINE_RECORD` (as a
    /// block's row loop and `StructCol::fields_sticky` decode their record fields).
    #[inline(always)]
    pub(super) fn decode_sticky_with<
        K: Kernel,
        const INLINE_RECORD: bool,
        const INLINE_NUMBERS: bool,
    >(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        if !self.fast_sticky::<K, INLINE_NUMBERS, false>(f) {
            self.slow_sticky::<K, INLINE_RECORD, false>(f, c);
        }
    }

    /// The value of [`NullableCol::decode_sticky_with`] read with no branch on null where the
    /// child's kind has such a read; `false`, with nothing read, where it does not decide.
    /// `NO_NUMBERS`: `int`s and enums are not read here (always `false`), for a loop that
    /// has none and must not call out with the cursor ([`number_or_null_out`]).
    #[inline(always)]
    pub(super) fn fast_sticky<K: Kernel, const INLINE_NUMBERS: bool, const NO_NUMBERS: bool>(
        &mut self,
        f: &mut Sticky<'_, K>,
    ) -> bool {
        // The branch index as its one encoded byte (zigzag 0 and 1: the bytes 0 and 2),
        // compared without decoding it. Anything else fails the record (or array block),
        // which the reference path then decodes again: it reports a bad index and accepts an
        // index written as a longer (padded) varint, as it always did.
        let value_byte = self.value_byte;
        let k = f.k;
        let validity = &mut self.validity;
        match &mut self.child {
            Column::Int64(p) => {
                number_or_null(f, value_byte, validity, LongAt(k), |v| p.values.push(v))
            }
            // Ints (and enums) inline only in the row loops of records that have them
            // (`INLINE_NUMBERS`), else through a call ([`number_or_null_out`]).
            Column::Int32(p) if !NO_NUMBERS => number_or_null_in::<K, i32, INLINE_NUMBERS>(
                f,
                value_byte,
                validity,
                IntAt(k),
                |v| p.values.push(v),
            ),
            // Floats as their bits: a select on a float register compiles to a branch.
            Column::Float64(p) => number_or_null(f, value_byte, validity, BitsAt, |v: u64| {
                p.values.push(f64::from_bits(v))
            }),
            Column::Float32(p) => number_or_null(f, value_byte, validity, BitsAt, |v: u32| {
                p.values.push(f32::from_bits(v))
            }),
            Column::Boolean(bits) => {
                number_or_null(f, value_byte, validity, BoolAt, |v| bits.push(v != 0))
            }
            Column::Enum(e) if !NO_NUMBERS => {
                e.or_null_sticky::<K, INLINE_NUMBERS>(f, value_byte, validity)
            }
            Column::Bytes(b) => b.or_null_sticky(f, value_byte, validity),
            Column::Fixed(x) => x.or_null_sticky(f, value_byte, validity),
            Column::UuidString(x) => x.uuid_or_null_sticky(f, value_byte, validity),
            Column::Decimal(d) => d.or_null_sticky(f, value_byte, validity),
            _ => false,
        }
    }

    /// The value of [`NullableCol::decode_sticky_with`] with a branch on null, for what
    /// [`NullableCol::fast_sticky`] does not decide. `SCALAR`: for a scalar child (a record's
    /// row loop of scalars, `StructCol::decode_rows_scalar`), whose code has no arm for
    /// records, arrays or maps (anything else goes through [`Column::decode_nested`]).
    #[inline(always)]
    pub(super) fn slow_sticky<K: Kernel, const INLINE_RECORD: bool, const SCALAR: bool>(
        &mut self,
        f: &mut Sticky<'_, K>,
        c: &mut Cursor<'_, K>,
    ) {
        let value_byte = self.value_byte;
        match f.buf.get(f.pos) {
            Some(&b) if b == value_byte => {
                f.pos += 1;
                self.validity.push(true);
                decode_primitive_sticky!(&mut self.child, f, other => match other {
                    other if SCALAR => nested_sticky(other, f, c),
                    Column::Struct(s) if INLINE_RECORD => s.fields_sticky_inline::<K, false>(f, c),
                    Column::Struct(s) => s.fields_sticky(f, c),
                    Column::List(l) => l.field_sticky(f, c),
                    Column::Map(m) => m.decode_sticky(f, c),
                    other => nested_sticky(other, f, c),
                });
            }
            Some(&b) if b == 2 - value_byte => {
                f.pos += 1;
                self.push_null();
            }
            _ => f.fail(),
        }
    }

    #[inline(always)]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let branch = c.long()?;
        if branch == 1 - self.null_index {
            self.validity.push(true);
            decode_primitive!(&mut self.child, c, other => other.decode_nested(c)?);
        } else if branch == self.null_index {
            self.push_null();
        } else {
            return Err(DecodeError::new(
                DecodeErrorKind::UnionIndex {
                    index: branch,
                    branches: 2,
                },
                start,
            ));
        }
        Ok(())
    }

    /// Start a non-null value (the caller appends it to the child).
    #[inline]
    pub(crate) fn push_valid(&mut self) {
        self.validity.push(true);
    }

    #[inline(always)]
    pub(crate) fn push_null(&mut self) {
        self.validity.push(false);
        match &mut self.child {
            Column::Int64(p) => p.values.push(0),
            Column::Int32(p) => p.values.push(0),
            Column::Float64(p) => p.values.push(0.0),
            Column::Float32(p) => p.values.push(0.0),
            Column::Bytes(b) => b.push_empty(),
            other => other.append_placeholder(),
        }
    }
}

/// A nullable number (`value_byte` the encoded index of the number's branch) on the fast
/// path, with no branch on whether it is null: nulls come at random in real data, and the
/// branch mispredicted on about every other null. The number is read (`read`: the value, its
/// end and whether it is a valid value at `at`, computed rather than branched on) from the
/// bytes after the index whether or not it is there, and pushed (`push`), with the position
/// moved past it, only if it is (a null pushes 0, as [`NullableCol::push_null`] does).
/// `false`, with nothing pushed, where that does not decide (a bad index, or a present value
/// that does not read or is not valid): the caller's general path does.
#[inline(always)]
pub(super) fn number_or_null<K: Kernel, T: Masked>(
    f: &mut Sticky<'_, K>,
    value_byte: u8,
    validity: &mut Validity,
    read: impl ReadAt<T>,
    push: impl FnOnce(T),
) -> bool {
    let p = f.pos;
    let Some(&index) = f.buf.get(p) else {
        return false;
    };
    let (present, index_ok) = null_index(index, value_byte);
    let (number, end, read) = read.read_at(f.buf, p + 1);
    if !index_ok | (present & !read) {
        return false;
    }
    f.pos = select_unpredictable(present, end, p + 1);
    validity.push(present);
    push(keep(number, present));
    true
}

/// The branch index byte that opens a nullable value, classified with no branch on which
/// branch it names: whether it names the value's (`value_byte`, the encoded index of the
/// value's branch), and whether it is an index of the union at all (0 or 1: the bytes 0 and
/// 2, in one test). The first step of every read of a value or null ([`number_or_null`] and
/// the `or_null_sticky` reads of strings, fixed values, decimals and `uuid` strings).
#[inline(always)]
pub(super) fn null_index(index: u8, value_byte: u8) -> (bool, bool) {
    (index == value_byte, index & !2 == 0)
}

/// [`number_or_null`] inline (`INLINE`) or through a call ([`number_or_null_out`]).
#[inline(always)]
pub(super) fn number_or_null_in<K: Kernel, T: Masked, const INLINE: bool>(
    f: &mut Sticky<'_, K>,
    value_byte: u8,
    validity: &mut Validity,
    read: impl ReadAt<T>,
    push: impl FnOnce(T),
) -> bool {
    if INLINE {
        number_or_null(f, value_byte, validity, read, push)
    } else {
        number_or_null_out(f, value_byte, validity, read, push)
    }
}

/// [`number_or_null`] through a call: for nullable `int`s and enums outside the row loops of
/// records that have them. Inlined into every fast path that reads nullable values, their
/// code made the record loops of data without them slower (cdc, with only nullable longs
/// and strings, 12-15 %). The whole read is one call, the value read inside it (a closure's
/// out-of-line read had returned its value through memory, which the next field's position
/// then waited for). (Longs, floats and booleans are read inline everywhere: the plain loop
/// kept them inline before, and they cost the records without them nothing.)
#[inline(never)]
pub(super) fn number_or_null_out<K: Kernel, T: Masked>(
    f: &mut Sticky<'_, K>,
    value_byte: u8,
    validity: &mut Validity,
    read: impl ReadAt<T>,
    push: impl FnOnce(T),
) -> bool {
    number_or_null(f, value_byte, validity, read, push)
}

/// How [`number_or_null`] reads a value at `at`: the value, its end and whether it is a
/// valid value there (else `(zero, at, false)`). A trait whose methods are always inlined,
/// not a closure: a closure's body, inlined into the many fast paths that read nullable
/// numbers, became one shared out-of-line function returning its value through memory (41 %
/// of the `int_small_nullable` family's time).
pub(super) trait ReadAt<T> {
    /// The value at `at` of `buf`, its end, whether it is valid.
    fn read_at(&self, buf: &[u8], at: usize) -> (T, usize, bool);
}

/// A `long` (zigzag varint) for [`number_or_null`].
pub(super) struct LongAt<K>(pub(super) K);

impl<K: Kernel> ReadAt<i64> for LongAt<K> {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (i64, usize, bool) {
        let mut end = at;
        match self.0.read_u64_branchless(buf, &mut end) {
            Ok(v) => (unzigzag64(v), end, true),
            Err(_) => (0, at, false),
        }
    }
}

/// An `int` (zigzag varint, in range) for [`number_or_null`].
pub(super) struct IntAt<K>(pub(super) K);

impl<K: Kernel> ReadAt<i32> for IntAt<K> {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (i32, usize, bool) {
        let mut end = at;
        match self.0.read_u64_branchless(buf, &mut end) {
            Ok(v) => {
                let v = unzigzag64(v);
                (v as i32, end, i64::from(v as i32) == v)
            }
            Err(_) => (0, at, false),
        }
    }
}

/// A `double` or `float` as its bits (little-endian) for [`number_or_null`].
pub(super) struct BitsAt;

impl ReadAt<u64> for BitsAt {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (u64, usize, bool) {
        match buf.get(at..).and_then(|b| b.first_chunk()) {
            Some(b) => (u64::from_le_bytes(*b), at + 8, true),
            None => (0, at, false),
        }
    }
}

impl ReadAt<u32> for BitsAt {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (u32, usize, bool) {
        match buf.get(at..).and_then(|b| b.first_chunk()) {
            Some(b) => (u32::from_le_bytes(*b), at + 4, true),
            None => (0, at, false),
        }
    }
}

/// A `boolean` byte for [`number_or_null`] (a byte other than 0 and 1 is no boolean: tested,
/// not branched on).
pub(super) struct BoolAt;

impl ReadAt<u8> for BoolAt {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (u8, usize, bool) {
        match buf.get(at) {
            Some(&b) => (b, at + 1, b <= 1),
            None => (0, at, false),
        }
    }
}

/// The integers [`number_or_null`] reads (floats as their bits), zeroed by a mask.
pub(super) trait Masked: Copy + Default + std::ops::BitAnd<Output = Self> {
    /// All ones.
    const ONES: Self;
}

impl Masked for i64 {
    const ONES: Self = -1;
}

impl Masked for i128 {
    const ONES: Self = -1;
}

impl Masked for i32 {
    const ONES: Self = -1;
}

impl Masked for u64 {
    const ONES: Self = u64::MAX;
}

impl Masked for u32 {
    const ONES: Self = u32::MAX;
}

impl Masked for u8 {
    const ONES: Self = u8::MAX;
}

/// `number` if `present`, else 0, with no branch: the mask is opaque to the compiler, which
/// otherwise turns the masking of a float's bits back into a select on a float register,
/// and that into a branch.
#[inline(always)]
pub(super) fn keep<T: Masked>(number: T, present: bool) -> T {
    number & std::hint::black_box(select_unpredictable(present, T::ONES, T::default()))
}
