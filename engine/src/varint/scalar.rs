//! The portable byte-at-a-time reference kernel: simple, obviously correct, the oracle for
//! every other kernel.

use std::mem::MaybeUninit;

use super::word::Swar;
use super::{long_to_int, unzigzag64, BulkHint, Kernel, KernelKind, VarintError, MAX_LEN};

/// The reference kernel.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scalar;

impl super::sealed::Sealed for Scalar {
    /// Unused: the reference overrides every word-at-a-time path of [`Kernel`].
    type Bits = Swar;

    #[inline(always)]
    fn bits(self) -> Swar {
        Swar
    }

    /// The reference kernel has no branch-free encoder: its loop.
    #[inline]
    fn encode_any(self, v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        self.encode_u64(v, dst)
    }
}

impl Kernel for Scalar {
    const KIND: KernelKind = KernelKind::Scalar;

    fn read_u64(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = buf.get(*pos + i) else {
                return Err(VarintError::Truncated);
            };
            if i == 9 && b > 1 {
                return Err(VarintError::Overlong);
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                *pos += i + 1;
                return Ok(value);
            }
        }
        Err(VarintError::Overlong)
    }

    fn read_u64_unpredictable(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        self.read_u64(buf, pos)
    }

    fn read_u64_branchless(self, buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
        self.read_u64(buf, pos)
    }

    fn read_longs_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i64>,
        _hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        let start = out.len();
        out.reserve(n);
        for _ in 0..n {
            match self.read_u64(buf, pos) {
                Ok(v) => out.push(unzigzag64(v)),
                Err(e) => {
                    out.truncate(start);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn read_ints_hinted(
        self,
        buf: &[u8],
        pos: &mut usize,
        n: usize,
        out: &mut Vec<i32>,
        _hint: &mut BulkHint,
    ) -> Result<(), VarintError> {
        let start = out.len();
        out.reserve(n);
        for _ in 0..n {
            match self
                .read_u64(buf, pos)
                .and_then(|v| long_to_int(unzigzag64(v)))
            {
                Ok(v) => out.push(v),
                Err(e) => {
                    out.truncate(start);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// The reference has no short-block path: its callers read value by value.
    fn read_longs_short(self, _: &[u8], _: &mut usize, _: usize, _: &mut Vec<i64>) -> bool {
        false
    }

    fn read_ints_short(self, _: &[u8], _: &mut usize, _: usize, _: &mut Vec<i32>) -> bool {
        false
    }

    fn skip(self, buf: &[u8], pos: &mut usize, n: usize) -> Result<(), VarintError> {
        for _ in 0..n {
            self.read_u64(buf, pos)?;
        }
        Ok(())
    }

    fn write_u64(self, mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn encode_u64(self, mut v: u64, dst: &mut [MaybeUninit<u8>; MAX_LEN]) -> usize {
        let mut n = 0;
        while v >= 0x80 {
            dst[n].write((v as u8) | 0x80);
            v >>= 7;
            n += 1;
        }
        dst[n].write(v as u8);
        n + 1
    }

    fn write_longs(self, values: &[i64], out: &mut Vec<u8>) {
        for &v in values {
            self.write_long(v, out);
        }
    }

    fn write_ints(self, values: &[i32], out: &mut Vec<u8>) {
        for &v in values {
            self.write_long(i64::from(v), out);
        }
    }
}
