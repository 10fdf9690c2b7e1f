//! Scalar columns: the plain numbers ([`Prim`]), enums (dictionary keys, remapped under schema
//! resolution) and decimals, and the bulk copy of `float`/`double` array items.

use crate::decode::cursor::{Cursor, Sticky};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::Kernel;
use arrow_array::{ArrayRef, Decimal128Array, Decimal256Array, StringArray};
use arrow_buffer::{i256, NullBuffer, ScalarBuffer};
use arrow_schema::DataType;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct Prim<T> {
    pub(crate) values: Vec<T>,
    pub(crate) data_type: DataType,
}

impl<T> Prim<T> {
    pub(crate) fn new(data_type: DataType) -> Self {
        Prim {
            values: Vec::new(),
            data_type,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct EnumCol {
    pub(super) keys: Vec<i32>,
    pub(super) symbols: ArrayRef,
    n_symbols: usize,
    /// Schema resolution: the reader's index of each writer symbol (`-1`: none, an error).
    remap: Option<Arc<EnumRemap>>,
}

/// The writer's enum symbols resolved against the reader's.
#[derive(Debug)]
pub(crate) struct EnumRemap {
    /// The reader's index of each writer symbol, `-1` where there is none.
    pub(crate) keys: Box<[i32]>,
    pub(crate) writer_symbols: Box<[String]>,
}

impl EnumCol {
    pub(crate) fn new(symbols: &[String]) -> Self {
        // An enum without symbols can hold no value; its dictionary gets one entry so that
        // placeholder keys (under a null parent) stay valid.
        let dict: Vec<&str> = if symbols.is_empty() {
            vec![""]
        } else {
            symbols.iter().map(String::as_str).collect()
        };
        EnumCol {
            keys: Vec::new(),
            symbols: Arc::new(StringArray::from(dict)),
            n_symbols: symbols.len(),
            remap: None,
        }
    }

    /// Read the writer's indexes through `remap` (schema resolution).
    pub(crate) fn with_remap(mut self, remap: EnumRemap) -> Self {
        self.n_symbols = remap.keys.len();
        self.remap = Some(Arc::new(remap));
        self
    }

    /// The output key of the writer's index `index`; negative if there is none (out of
    /// range, or a writer symbol the reader's enum lacks).
    #[inline(always)]
    pub(super) fn key(&self, index: i64) -> i32 {
        if index as u64 >= self.n_symbols as u64 {
            return -1;
        }
        match &self.remap {
            None => index as i32,
            Some(remap) => remap.keys[index as usize],
        }
    }

    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let index = c.long()?;
        if index < 0 || index as u64 >= self.n_symbols as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::EnumIndex {
                    index,
                    symbols: self.n_symbols,
                },
                start,
            ));
        }
        let key = match &self.remap {
            None => index as i32,
            Some(remap) => {
                let key = remap.keys[index as usize];
                if key < 0 {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnresolvedEnumSymbol(
                            remap.writer_symbols[index as usize].clone(),
                        ),
                        start,
                    ));
                }
                key
            }
        };
        self.keys.push(key);
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum DecimalSource {
    Bytes,
    Fixed(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct DecimalCol {
    pub(super) source: DecimalSource,
    precision: u8,
    scale: i8,
    pub(super) narrow: Vec<i128>,
    pub(super) wide: Vec<i256>,
    is_wide: bool,
}

impl DecimalCol {
    pub(crate) fn new(source: DecimalSource, precision: u8, scale: i8) -> Self {
        DecimalCol {
            source,
            precision,
            scale,
            narrow: Vec::new(),
            wide: Vec::new(),
            is_wide: precision > 38,
        }
    }

    /// Sign-extend a big-endian two's-complement integer into `N` bytes.
    #[inline]
    fn sign_extend<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        let negative = b.first().is_some_and(|&x| x & 0x80 != 0);
        let fill = if negative { 0xff } else { 0 };
        let mut out = [fill; N];
        if b.len() <= N {
            out[N - b.len()..].copy_from_slice(b);
            return Some(out);
        }
        // Longer than N: the extra leading bytes must be pure sign extension.
        let (extra, rest) = b.split_at(b.len() - N);
        if extra.iter().any(|&x| x != fill) || (rest[0] & 0x80 != 0) != negative {
            return None;
        }
        out.copy_from_slice(rest);
        Some(out)
    }

    #[inline]
    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let b = match self.source {
            DecimalSource::Bytes => c.bytes()?,
            DecimalSource::Fixed(n) => c.take(n)?,
        };
        let overflow =
            || DecodeError::new(DecodeErrorKind::DecimalOverflow { len: b.len() }, start);
        if self.is_wide {
            let v = Self::sign_extend::<32>(b).ok_or_else(overflow)?;
            self.wide.push(i256::from_be_bytes(v));
        } else {
            let v = Self::sign_extend::<16>(b).ok_or_else(overflow)?;
            self.narrow.push(i128::from_be_bytes(v));
        }
        Ok(())
    }

    /// [`DecimalCol::decode`] on the fast path (zero after a failure).
    #[inline(always)]
    pub(super) fn decode_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        let b = match self.source {
            DecimalSource::Bytes => f.bytes(),
            DecimalSource::Fixed(n) => f.take(n),
        };
        if self.is_wide {
            let v = Self::sign_extend::<32>(b).unwrap_or_else(|| {
                f.fail();
                [0; 32]
            });
            self.wide.push(i256::from_be_bytes(v));
        } else {
            let v = Self::sign_extend::<16>(b).unwrap_or_else(|| {
                f.fail();
                [0; 16]
            });
            self.narrow.push(i128::from_be_bytes(v));
        }
    }

    pub(super) fn push_zero(&mut self) {
        if self.is_wide {
            self.wide.push(i256::ZERO);
        } else {
            self.narrow.push(0);
        }
    }

    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>) -> ArrayRef {
        if self.is_wide {
            let values = ScalarBuffer::from(std::mem::take(&mut self.wide));
            Arc::new(
                Decimal256Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        } else {
            let values = ScalarBuffer::from(std::mem::take(&mut self.narrow));
            Arc::new(
                Decimal128Array::new(values, nulls)
                    .with_precision_and_scale(self.precision, self.scale)
                    .expect("precision and scale validated by the plan"),
            )
        }
    }
}

/// `f32` and `f64` (implemented for nothing else): every bit pattern is a valid value, and on a
/// little-endian target the in-memory layout of a value is its Avro encoding.
pub(super) trait LeFloat: Copy {
    /// `size_of::<Self>()`.
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
}

impl LeFloat for f32 {
    const SIZE: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
}

impl LeFloat for f64 {
    const SIZE: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

/// Append the values of an array block of `float`s or `double`s to `out`: on little-endian
/// targets one copy of the bytes (~5 % of decoding Telemetry's 16 doubles per row, against a
/// vectorized loop).
#[inline(always)]
pub(super) fn extend_le<T: LeFloat>(out: &mut Vec<T>, bytes: &[u8]) {
    debug_assert_eq!(std::mem::size_of::<T>(), T::SIZE);
    let n = bytes.len() / T::SIZE;
    if cfg!(target_endian = "little") {
        out.reserve(n);
        let len = out.len();
        // SAFETY: `reserve(n)` leaves room for `n` more values after `len`, which is
        // `n * T::SIZE` bytes; `bytes` holds at least that many; the regions do not overlap
        // (`out` is owned, `bytes` is borrowed input). `T` is `f32` or `f64` (`LeFloat`), so
        // the copied bytes are valid values, equal to `T::from_le` of each chunk on this
        // little-endian target; `set_len` exposes only those `n` values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().add(len).cast::<u8>(),
                n * T::SIZE,
            );
            out.set_len(len + n);
        }
    } else {
        out.extend(bytes.chunks_exact(T::SIZE).map(T::from_le));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_le_matches_from_le_bytes() {
        let bytes: Vec<u8> = (0..=255u8).cycle().skip(3).take(8 * 9 + 5).collect();
        let mut doubles = vec![1.5f64];
        extend_le(&mut doubles, &bytes[..8 * 9]);
        let expected: Vec<u64> = std::iter::once(1.5f64.to_bits())
            .chain(
                bytes[..8 * 9]
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap())),
            )
            .collect();
        assert_eq!(
            doubles.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
            expected
        );
        let mut floats = Vec::new();
        extend_le(&mut floats, &bytes[1..1 + 4 * 18]);
        let expected: Vec<u32> = bytes[1..1 + 4 * 18]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(
            floats.iter().map(|f: &f32| f.to_bits()).collect::<Vec<_>>(),
            expected
        );
    }

    #[test]
    fn decimal_sign_extension() {
        assert_eq!(DecimalCol::sign_extend::<4>(&[0xff]), Some([0xff; 4]));
        assert_eq!(
            DecimalCol::sign_extend::<4>(&[0x01, 0x00]),
            Some([0, 0, 1, 0])
        );
        assert_eq!(DecimalCol::sign_extend::<4>(&[]), Some([0; 4]));
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0xff, 0xff, 0x80, 0x00]),
            Some([0x80, 0])
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0xff, 0xff, 0x7f, 0x00]),
            None
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0x00, 0x01, 0x00, 0x00]),
            None
        );
        assert_eq!(
            DecimalCol::sign_extend::<2>(&[0x00, 0x00, 0x7f, 0x00]),
            Some([0x7f, 0])
        );
    }
}
