//! Boolean values and validity, appended one byte per value (a single store, no bit
//! arithmetic on the hot path) and packed into Arrow's bitmaps once per batch.

use super::column::extend_checked;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

/// Append-only booleans, one byte (0 or 1) per value until [`Bits::finish`] packs them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bits {
    bytes: Vec<u8>,
}

impl Bits {
    #[inline(always)]
    pub(crate) fn push(&mut self, bit: bool) {
        self.bytes.push(bit as u8);
    }

    /// Append `f`'s bit for field `j` of each row of `k` values in `values`; whether `f` found
    /// every one valid (see [`extend_checked`]).
    #[inline(always)]
    pub(crate) fn extend_checked(
        &mut self,
        values: &[i64],
        j: usize,
        k: usize,
        f: impl Fn(i64) -> (bool, bool),
    ) -> bool {
        extend_checked(&mut self.bytes, values, j, k, |v| {
            let (bit, ok) = f(v);
            (u8::from(bit), ok)
        })
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.bytes.truncate(len);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The packed bitmap; the builder starts over (keeping its allocation).
    pub(crate) fn finish(&mut self) -> BooleanBuffer {
        let len = self.bytes.len();
        let mut packed = Vec::with_capacity(len.div_ceil(8));
        let chunks = self.bytes.chunks_exact(8);
        let rest = chunks.remainder();
        for chunk in chunks {
            // Eight 0/1 bytes → eight bits: the multiply moves byte i's bit to bit 56 + i, and
            // no two partial products meet, so nothing carries into the top byte.
            let x = u64::from_le_bytes(chunk.try_into().expect("chunks of 8"));
            packed.push((x.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8);
        }
        if !rest.is_empty() {
            packed.push(
                rest.iter()
                    .enumerate()
                    .fold(0u8, |acc, (i, &b)| acc | (b << i)),
            );
        }
        self.bytes.clear();
        BooleanBuffer::new(Buffer::from_vec(packed), 0, len)
    }
}

/// Validity (true = valid). An all-valid column gets no bitmap: its nulls are counted once,
/// at [`Validity::finish`], over the bytes (a vectorised pass), not per value, which would be
/// a load, add and store of a counter in memory for every value of every nullable column.
#[derive(Debug, Clone, Default)]
pub(crate) struct Validity {
    bits: Bits,
}

impl Validity {
    #[inline(always)]
    pub(crate) fn push(&mut self, valid: bool) {
        self.bits.push(valid);
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.bits.truncate(len);
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.bits.reserve(additional);
    }

    /// The null buffer (None if every value is valid); the builder starts over.
    pub(crate) fn finish(&mut self) -> Option<NullBuffer> {
        // Bytes are 0 or 1: all valid when they sum to the length (summed in u8 lanes of
        // 255 bytes at most, which cannot overflow).
        let bytes = &self.bits.bytes;
        let valid: usize = bytes
            .chunks(255)
            .map(|c| usize::from(c.iter().fold(0u8, |acc, &b| acc.wrapping_add(b))))
            .sum();
        let packed = self.bits.finish();
        (valid < packed.len()).then(|| NullBuffer::new(packed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_match_a_bool_vector() {
        let mut bits = Bits::default();
        let mut expected = Vec::new();
        for (i, n) in [1usize, 3, 8, 13, 0, 17, 2].into_iter().enumerate() {
            for _ in 0..n {
                bits.push(i % 2 == 0);
            }
            expected.extend(std::iter::repeat_n(i % 2 == 0, n));
            bits.push(i % 3 == 0);
            expected.push(i % 3 == 0);
        }
        bits.truncate(expected.len() - 3);
        expected.truncate(expected.len() - 3);
        bits.push(true);
        expected.push(true);
        let b = bits.finish();
        assert_eq!(b.iter().collect::<Vec<_>>(), expected);
        assert_eq!(bits.len(), 0);
    }

    #[test]
    fn packing_matches_a_bit_by_bit_reference() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
            let mut bits = Bits::default();
            let mut expected = Vec::new();
            for _ in 0..len {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let b = state >> 63 == 1;
                bits.push(b);
                expected.push(b);
            }
            let reference = BooleanBuffer::from_iter(expected.iter().copied());
            assert_eq!(bits.finish(), reference, "len {len}");
        }
    }

    #[test]
    fn validity_counts_nulls() {
        let mut v = Validity::default();
        for _ in 0..10 {
            v.push(true);
        }
        v.push(false);
        v.push(true);
        v.push(false);
        v.truncate(12);
        let n = v.finish().unwrap();
        assert_eq!(n.len(), 12);
        assert_eq!(n.null_count(), 1);
        assert!(n.is_null(10));
        v.push(true);
        assert!(v.finish().is_none());
    }
}
