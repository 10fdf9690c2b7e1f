//! The bulk encoder with AVX-512 (F, BW, CD, VL, VBMI, VBMI2): eight zigzag varints at a time, for
//! the [`BulkKind::V4`](crate::varint::BulkKind::V4) path. Its decode loops are v3's.
//!
//! Eight values in one 512-bit register: zigzag; `vpmultishiftqb` gathers each value's 7-bit
//! groups into its eight bytes; `vplzcntq` and a 64-byte table lookup give each value's length;
//! the continuation bits are a blend; `vpcompressb` packs the eight varints together and one
//! 64-byte store writes them. A group holding a value of 2^56 or more (nine or ten bytes)
//! goes through the scalar [`generic::encode_raw`] instead.

use crate::varint::generic;
use crate::varint::word::Bits;
use crate::varint::MAX_LEN;
use std::arch::x86_64::*;

/// Values encoded per reservation.
const CHUNK: usize = 256;

/// Bytes a group's store may write past its varints: one 64-byte store at most.
const SLACK: usize = 64;

/// The varint length (1 to 8) of a value below 2^56 with `lz` leading zero bits (of the
/// value OR 1, so 8 to 63), indexed by `lz`; entries below 8 are unused.
const LENGTHS: [u8; 64] = {
    let mut t = [8u8; 64];
    let mut lz = 8;
    while lz < 64 {
        let bits = 64 - lz;
        t[lz] = bits.div_ceil(7) as u8;
        lz += 1;
    }
    t
};

/// Encode the zigzagged values in the low `lanes` (1 to 8) lanes of `z` at `dst`, returning
/// the bytes written. Lanes above `lanes` must be zero.
///
/// # Safety
/// The CPU must have the features of this module's `#[target_feature]` functions; `dst` must
/// be valid for writes of `lanes * MAX_LEN + SLACK` bytes.
#[inline(always)]
unsafe fn encode8<B: Bits>(bits: B, z: __m512i, lanes: usize, dst: *mut u8) -> usize {
    let big = _mm512_test_epi64_mask(z, _mm512_set1_epi64(0xff00_0000_0000_0000u64 as i64));
    if big != 0 {
        // A nine- or ten-byte value in the group (rare): one value at a time.
        let mut lane = [0u64; 8];
        // SAFETY: `lane` is 64 writable bytes.
        unsafe { _mm512_storeu_si512(lane.as_mut_ptr().cast(), z) };
        let mut q = 0;
        for &v in &lane[..lanes] {
            // SAFETY: at most `MAX_LEN` bytes per value, within the caller's `lanes * MAX_LEN`.
            q += unsafe { generic::encode_raw(bits, v, dst.add(q)) };
        }
        return q;
    }
    // Byte k of each lane: bits 7k..7k + 8 of the value (the bit above the group is cleared
    // below).
    let groups = _mm512_multishift_epi64_epi8(_mm512_set1_epi64(0x312a_231c_150e_0700), z);
    let groups = _mm512_and_si512(groups, _mm512_set1_epi8(0x7f));
    let lz = _mm512_lzcnt_epi64(_mm512_or_si512(z, _mm512_set1_epi64(1)));
    // Each lane's leading-zero count (its low byte) in all eight of its bytes, then its length.
    let lz = _mm512_shuffle_epi8(
        lz,
        _mm512_set_epi64(
            0x0808_0808_0808_0808,
            0,
            0x0808_0808_0808_0808,
            0,
            0x0808_0808_0808_0808,
            0,
            0x0808_0808_0808_0808,
            0,
        ),
    );
    // SAFETY: `LENGTHS` is 64 readable bytes.
    let table = unsafe { _mm512_loadu_si512(LENGTHS.as_ptr().cast()) };
    let len = _mm512_permutexvar_epi8(lz, table);
    // The bytes of each varint: those below its length.
    let index = _mm512_set1_epi64(0x0706_0504_0302_0100);
    let lanes_mask = if lanes == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * lanes)) - 1
    };
    let valid = _mm512_cmplt_epu8_mask(index, len) & lanes_mask;
    // Continued: every byte of a varint but its last (a lane's eighth byte never is: values
    // are below 2^56).
    let cont = valid & (valid >> 1) & 0x7f7f_7f7f_7f7f_7f7f;
    let bytes = _mm512_mask_blend_epi8(
        cont,
        groups,
        _mm512_or_si512(groups, _mm512_set1_epi8(0x80u8 as i8)),
    );
    let packed = _mm512_maskz_compress_epi8(valid, bytes);
    // SAFETY: the caller guarantees `SLACK` (64) writable bytes at `dst`.
    unsafe { _mm512_storeu_si512(dst.cast(), packed) };
    valid.count_ones() as usize
}

/// Zigzag of eight longs.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[inline(always)]
unsafe fn zigzag(v: __m512i) -> __m512i {
    _mm512_xor_si512(_mm512_slli_epi64::<1>(v), _mm512_srai_epi64::<63>(v))
}

/// Append the zigzag varints of `values` (as [`generic::write_longs`]), eight at a time.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, CD, VL, VBMI and VBMI2 and x86-64-v3
/// ([`super::has_v4`]).
#[target_feature(
    enable = "avx512f,avx512bw,avx512cd,avx512vl,avx512vbmi,avx512vbmi2,avx2,bmi1,bmi2,lzcnt,popcnt"
)]
pub(crate) unsafe fn write_longs<B: Bits>(bits: B, values: &[i64], out: &mut Vec<u8>) {
    for chunk in values.chunks(CHUNK) {
        out.reserve(chunk.len() * MAX_LEN + SLACK);
        let start = out.len();
        // SAFETY: `reserve` left `chunk.len() * MAX_LEN + SLACK` bytes of spare capacity at
        // `start`; the cursor `q` grows by at most `MAX_LEN` per value, and a group writes
        // `q..q + SLACK` (its one 64-byte store) or at most `n * MAX_LEN` bytes from `q`
        // (one value at a time), so every write stays within that capacity.
        let base = unsafe { out.as_mut_ptr().add(start) };
        let mut q = 0usize;
        let mut groups = chunk.chunks_exact(8);
        for group in &mut groups {
            // SAFETY: `group` is 8 readable longs (64 bytes).
            let v = unsafe { _mm512_loadu_si512(group.as_ptr().cast()) };
            // SAFETY: the features are enabled; the capacity is shown above.
            q += unsafe { encode8(bits, zigzag(v), 8, base.add(q)) };
        }
        let rest = groups.remainder();
        if !rest.is_empty() {
            // SAFETY: the masked load reads only the `rest.len()` lanes that exist.
            let v = unsafe {
                _mm512_maskz_loadu_epi64((1u8 << rest.len()).wrapping_sub(1), rest.as_ptr())
            };
            // SAFETY: as above (the masked-off lanes are zero).
            q += unsafe { encode8(bits, zigzag(v), rest.len(), base.add(q)) };
        }
        // SAFETY: the `q` bytes at `start` were initialised above and are within capacity.
        unsafe { out.set_len(start + q) };
    }
}

/// Append the zigzag varints of `values` (as [`generic::write_ints`]), eight at a time: each
/// widened to 64 bits, whose zigzag is the 32-bit one's.
///
/// # Safety
/// As [`write_longs`].
#[target_feature(
    enable = "avx512f,avx512bw,avx512cd,avx512vl,avx512vbmi,avx512vbmi2,avx2,bmi1,bmi2,lzcnt,popcnt"
)]
pub(crate) unsafe fn write_ints<B: Bits>(bits: B, values: &[i32], out: &mut Vec<u8>) {
    for chunk in values.chunks(CHUNK) {
        out.reserve(chunk.len() * MAX_LEN + SLACK);
        let start = out.len();
        // SAFETY: as in `write_longs` (an int's varint is at most 5 bytes).
        let base = unsafe { out.as_mut_ptr().add(start) };
        let mut q = 0usize;
        let mut groups = chunk.chunks_exact(8);
        for group in &mut groups {
            // SAFETY: `group` is 8 readable ints (32 bytes).
            let v = unsafe { _mm256_loadu_si256(group.as_ptr().cast()) };
            // SAFETY: as in `write_longs`.
            q += unsafe { encode8(bits, zigzag(_mm512_cvtepi32_epi64(v)), 8, base.add(q)) };
        }
        let rest = groups.remainder();
        if !rest.is_empty() {
            // SAFETY: the masked load reads only the `rest.len()` lanes that exist.
            let v = unsafe {
                _mm256_maskz_loadu_epi32((1u8 << rest.len()).wrapping_sub(1), rest.as_ptr())
            };
            // SAFETY: as above (the masked-off lanes are zero).
            q += unsafe {
                encode8(
                    bits,
                    zigzag(_mm512_cvtepi32_epi64(v)),
                    rest.len(),
                    base.add(q),
                )
            };
        }
        // SAFETY: the `q` bytes at `start` were initialised above and are within capacity.
        unsafe { out.set_len(start + q) };
    }
}

#[cfg(test)]
mod tests {
    use super::LENGTHS;

    #[test]
    fn lengths_are_the_varint_lengths() {
        for lz in 8..64u32 {
            let v = if lz == 63 { 0 } else { 1u64 << (63 - lz) };
            let mut out = Vec::new();
            crate::varint::Kernel::write_u64(crate::varint::Scalar, v, &mut out);
            assert_eq!(usize::from(LENGTHS[lz as usize]), out.len(), "lz {lz}");
        }
    }
}
