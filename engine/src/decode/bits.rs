//! Bit-packed buffers for boolean values and validity, cheap to append to and to clone empty.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

/// An append-only bitmap (LSB first, Arrow's layout).
#[derive(Debug, Clone, Default)]
pub(crate) struct Bits {
    bytes: Vec<u8>,
    len: usize,
}

impl Bits {
    #[inline(always)]
    pub(crate) fn push(&mut self, bit: bool) {
        let i = self.len;
        if i % 8 == 0 {
            self.bytes.push(0);
        }
        // `bytes` has ceil(len / 8) bytes after the push above, so the last one holds bit `i`.
        if let Some(last) = self.bytes.last_mut() {
            *last |= (bit as u8) << (i % 8);
        }
        self.len = i + 1;
    }

    pub(crate) fn push_n(&mut self, bit: bool, n: usize) {
        let new_len = self.len + n;
        if bit {
            while self.len % 8 != 0 && self.len < new_len {
                self.push(true);
            }
            let whole = (new_len - self.len) / 8;
            self.bytes.resize(self.bytes.len() + whole, 0xff);
            self.len += whole * 8;
            while self.len < new_len {
                self.push(true);
            }
        } else {
            self.bytes.resize(new_len.div_ceil(8), 0);
            self.len = new_len;
        }
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional / 8 + 1);
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.bytes.truncate(len.div_ceil(8));
        if len % 8 != 0 {
            if let Some(last) = self.bytes.last_mut() {
                *last &= (1u8 << (len % 8)) - 1;
            }
        }
        self.len = len;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn finish(&mut self) -> BooleanBuffer {
        let len = std::mem::take(&mut self.len);
        BooleanBuffer::new(Buffer::from_vec(std::mem::take(&mut self.bytes)), 0, len)
    }
}

/// A validity bitmap that stays unallocated until the first null.
#[derive(Debug, Clone, Default)]
pub(crate) struct Validity {
    bits: Option<Bits>,
    len: usize,
}

impl Validity {
    #[inline(always)]
    pub(crate) fn push(&mut self, valid: bool) {
        match &mut self.bits {
            None if valid => self.len += 1,
            None => {
                let mut bits = Bits::default();
                bits.push_n(true, self.len);
                bits.push(false);
                self.bits = Some(bits);
            }
            Some(bits) => bits.push(valid),
        }
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        match &mut self.bits {
            None => self.len = self.len.min(len),
            Some(bits) => bits.truncate(len),
        }
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        if let Some(bits) = &mut self.bits {
            bits.reserve(additional);
        }
    }

    /// The null buffer (None if every value is valid); resets the builder.
    pub(crate) fn finish(&mut self) -> Option<NullBuffer> {
        self.len = 0;
        self.bits
            .take()
            .map(|mut bits| NullBuffer::new(bits.finish()))
            .filter(|n| n.null_count() > 0)
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
            bits.push_n(i % 2 == 0, n);
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
    }

    #[test]
    fn validity_is_lazy() {
        let mut v = Validity::default();
        for _ in 0..10 {
            v.push(true);
        }
        assert!(v.bits.is_none());
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
