//! `uuid` strings parsed into their 16 bytes: the canonical 8-4-4-4-12 hexadecimal text
//! (either case), anything else refused. On x86-64 with the `v3` or `v4` bulk path
//! (`crate::varint::BulkKind`) the 32 digits are gathered into two registers with SSSE3
//! shuffles and converted there ([`v3`], a call); otherwise in three SSE2 registers (part of
//! the x86-64 baseline, inlined into the record loop); elsewhere one digit at a time through
//! a table.

/// Parse a canonical 8-4-4-4-12 hexadecimal UUID (digits in either case); `None` for any other
/// text, including other lengths.
#[inline(always)]
pub(crate) fn parse_uuid(s: &[u8]) -> Option<[u8; 16]> {
    let s: &[u8; 36] = s.try_into().ok()?;
    #[cfg(target_arch = "x86_64")]
    {
        if crate::varint::v3_path() {
            // SAFETY: `v3_path` is true only where the CPU has x86-64-v3's features (AVX2
            // among them), which `v3::parse` is compiled for.
            unsafe { v3::parse(s) }
        } else {
            // SAFETY: SSE2 is part of every x86-64 target (`sse2::parse` needs nothing else).
            unsafe { sse2::parse(s) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        parse_scalar(s)
    }
}

/// The value of each byte as a hexadecimal digit; `0xFF` for bytes that are not one.
const HEX: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Where the 32 digits of a canonical UUID stand in its 36 characters.
const UUID_DIGITS: [usize; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29,
    30, 31, 32, 33, 34, 35,
];

/// [`parse_uuid`] one digit at a time: table lookups at fixed positions with one check at the
/// end (a branch per character on whether it is a digit or a letter mispredicts half the time
/// on random UUIDs, ~4× slower). The path where no vector one is compiled, and the reference
/// the vector paths are tested against.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn parse_scalar(s: &[u8; 36]) -> Option<[u8; 16]> {
    if s[8] != b'-' || s[13] != b'-' || s[18] != b'-' || s[23] != b'-' {
        return None;
    }
    let mut out = [0u8; 16];
    let mut invalid = 0u8;
    for (i, byte) in out.iter_mut().enumerate() {
        let hi = HEX[usize::from(s[UUID_DIGITS[2 * i]])];
        let lo = HEX[usize::from(s[UUID_DIGITS[2 * i + 1]])];
        invalid |= hi | lo;
        *byte = (hi << 4) | (lo & 0x0F);
    }
    (invalid & 0xF0 == 0).then_some(out)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    //! The 36 characters as three 16-byte loads (at 0, 16 and 20), each byte turned into its
    //! digit's value and a valid/invalid lane with compares (no table), adjacent digits joined
    //! into bytes in 16-bit lanes (at even and at odd positions, since the dashes shift the
    //! pairs by one), and the 16 bytes gathered from those lanes with shifts and masks.
    //!
    //! Measured against the table parser: docs/perf/families.md (uuid). Every function is
    //! compiled for SSE2, which every x86-64 target has, so they inline into their callers.
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128,
        _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16,
        _mm_set1_epi8, _mm_setzero_si128, _mm_slli_epi16, _mm_srli_epi16, _mm_srli_si128,
        _mm_sub_epi8, _mm_unpackhi_epi64,
    };

    /// Each byte's value as a hexadecimal digit (0 where it is not one), and a lane of ones
    /// where it is one (`0-9`, `a-f`, `A-F`: exactly the table parser's digits).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn digits(x: __m128i) -> (__m128i, __m128i) {
        // `x - '0'` is at most 9 (unsigned) for a decimal digit only; `(x | 0x20) - 'a'` at
        // most 5 for a letter `a-f` or `A-F` only (bytes from 0x80 wrap far above).
        let d = _mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8));
        let is_decimal = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
        let l = _mm_sub_epi8(
            _mm_or_si128(x, _mm_set1_epi8(0x20)),
            _mm_set1_epi8(b'a' as i8),
        );
        let is_letter = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l);
        let value = _mm_or_si128(
            _mm_and_si128(is_decimal, d),
            _mm_and_si128(is_letter, _mm_add_epi8(l, _mm_set1_epi8(10))),
        );
        (value, _mm_or_si128(is_decimal, is_letter))
    }

    /// Digits `2k` and `2k + 1` joined into one byte, in the low byte of 16-bit lane `k`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn pairs(v: __m128i) -> __m128i {
        // Lane `k` holds `hi | lo << 8` (both under 16): `lane << 4 | lane >> 8` has
        // `hi << 4 | lo` in its low byte.
        let joined = _mm_or_si128(_mm_slli_epi16(v, 4), _mm_srli_epi16(v, 8));
        _mm_and_si128(joined, _mm_set1_epi16(0xFF))
    }

    /// Bytes 0-7 and 8-15 of `v`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn halves(v: __m128i) -> (u64, u64) {
        (
            _mm_cvtsi128_si64(v) as u64,
            _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64,
        )
    }

    /// Where the dashes stand among characters 0-15 and 16-31.
    pub(super) const DASHES_A: u32 = 1 << 8 | 1 << 13;
    pub(super) const DASHES_B: u32 = 1 << (18 - 16) | 1 << (23 - 16);

    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn parse(s: &[u8; 36]) -> Option<[u8; 16]> {
        let p = s.as_ptr();
        // SAFETY: unaligned 16-byte loads at offsets 0, 16 and 20 of 36 bytes read inside `s`.
        let (a, b, c) = unsafe {
            (
                _mm_loadu_si128(p.cast()),
                _mm_loadu_si128(p.add(16).cast()),
                _mm_loadu_si128(p.add(20).cast()),
            )
        };
        let (va, da) = digits(a);
        let (vb, db) = digits(b);
        let (vc, dc) = digits(c);
        let dash = _mm_set1_epi8(b'-' as i8);
        let digits_a = _mm_movemask_epi8(da) as u32;
        let digits_b = _mm_movemask_epi8(db) as u32;
        let dashes_a = _mm_movemask_epi8(_mm_cmpeq_epi8(a, dash)) as u32;
        let dashes_b = _mm_movemask_epi8(_mm_cmpeq_epi8(b, dash)) as u32;
        // Characters 0-31: a digit everywhere but the dashes' places, which hold dashes; 32-35
        // (the last four lanes of `c`, whose others overlap `b`): digits.
        let ok_a = (digits_a & !DASHES_A) | (dashes_a & DASHES_A);
        let ok_b = (digits_b & !DASHES_B) | (dashes_b & DASHES_B);
        let ok_c = _mm_movemask_epi8(dc) as u32 >> 12;
        if (ok_a & ok_b) != 0xFFFF || ok_c != 0xF {
            return None;
        }
        // Bytes from pairs at even characters (`pairs(v)`) and at odd ones (`pairs(v >> 8)`):
        // (lo_a, hi_a) = [pairs of a at 0, 2, .., 14] [pairs of a at 1, 3, .., 15], and so on.
        let (even_a, odd_a) = halves(_mm_packus_epi16(pairs(va), pairs(_mm_srli_si128(va, 1))));
        let (even_b, odd_b) = halves(_mm_packus_epi16(pairs(vb), pairs(_mm_srli_si128(vb, 1))));
        let (even_c, _) = halves(_mm_packus_epi16(pairs(vc), _mm_setzero_si128()));
        // Characters 0-7 | 9-12 | 14-15 | 16-17: bytes 0-3 of the even pairs of a, 4-5 of its
        // odd pairs, 7 of its even pairs, and 0 of b's even pairs.
        let low = (even_a & 0xFFFF_FFFF)
            | (odd_a & 0xFFFF_0000_0000)
            | ((even_a >> 8) & 0x00FF_0000_0000_0000)
            | (even_b << 56);
        // Characters 19-22 | 24-31 | 32-35: bytes 1-2 of b's odd pairs, 4-7 of its even pairs,
        // and 6-7 of c's even pairs (c starts at character 20).
        let high = ((odd_b >> 8) & 0xFFFF)
            | ((even_b >> 16) & 0xFFFF_FFFF_0000)
            | (even_c & 0xFFFF_0000_0000_0000);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&low.to_le_bytes());
        out[8..].copy_from_slice(&high.to_le_bytes());
        Some(out)
    }
}

#[cfg(target_arch = "x86_64")]
mod v3 {
    //! The 32 digits gathered from three 16-byte loads (at 0, 16 and 20) into two registers
    //! with `pshufb`, converted and checked there as in [`super::sse2`], joined in pairs with
    //! one `pmaddubsw` each and packed into the 16 bytes: about a third of the SSE2 path's
    //! instructions (which must convert three registers and gather the bytes from them with
    //! shifts), at the price of a call (compiled for AVX2: three-operand encodings).
    use super::sse2::{digits, DASHES_A, DASHES_B};
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_maddubs_epi16, _mm_movemask_epi8,
        _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16, _mm_set1_epi8, _mm_setr_epi8,
        _mm_shuffle_epi8, _mm_storeu_si128,
    };

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    pub(super) fn parse(s: &[u8; 36]) -> Option<[u8; 16]> {
        let p = s.as_ptr();
        // SAFETY: unaligned 16-byte loads at offsets 0, 16 and 20 of 36 bytes read inside `s`.
        let (a, b, c) = unsafe {
            (
                _mm_loadu_si128(p.cast()),
                _mm_loadu_si128(p.add(16).cast()),
                _mm_loadu_si128(p.add(20).cast()),
            )
        };
        // Digits 0-15 are characters 0-7, 9-12, 14-15 (in `a`) and 16-17 (`b`'s first two);
        // digits 16-31 are characters 19-22, 24-31 (`b` from its fourth) and 32-35 (`c`'s last
        // four). A negative index makes a zero lane.
        let first = _mm_or_si128(
            _mm_shuffle_epi8(
                a,
                _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, -1, -1),
            ),
            _mm_shuffle_epi8(
                b,
                _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1),
            ),
        );
        let second = _mm_or_si128(
            _mm_shuffle_epi8(
                b,
                _mm_setr_epi8(3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1),
            ),
            _mm_shuffle_epi8(
                c,
                _mm_setr_epi8(
                    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 12, 13, 14, 15,
                ),
            ),
        );
        let (v1, d1) = digits(first);
        let (v2, d2) = digits(second);
        let dash = _mm_set1_epi8(b'-' as i8);
        let dashes_a = _mm_movemask_epi8(_mm_cmpeq_epi8(a, dash)) as u32;
        let dashes_b = _mm_movemask_epi8(_mm_cmpeq_epi8(b, dash)) as u32;
        let digits_ok = _mm_movemask_epi8(d1) & _mm_movemask_epi8(d2) == 0xFFFF;
        let dashes_ok = dashes_a & DASHES_A == DASHES_A && dashes_b & DASHES_B == DASHES_B;
        if !(digits_ok & dashes_ok) {
            return None;
        }
        // `hi * 16 + lo` in every 16-bit lane, then the lanes as bytes.
        let weights = _mm_set1_epi16(0x0110);
        let bytes: __m128i = _mm_packus_epi16(
            _mm_maddubs_epi16(v1, weights),
            _mm_maddubs_epi16(v2, weights),
        );
        let mut out = [0u8; 16];
        // SAFETY: a 16-byte unaligned store into the 16-byte array.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), bytes) };
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser the build uses, after checking that the table parser and every vector parser
    /// this CPU runs agree with it.
    fn both(s: &[u8]) -> Option<[u8; 16]> {
        let parsed = parse_uuid(s);
        let text = <&[u8; 36]>::try_from(s).ok();
        let scalar = text.and_then(parse_scalar);
        assert_eq!(parsed, scalar, "{:?}", String::from_utf8_lossy(s));
        #[cfg(target_arch = "x86_64")]
        if let Some(text) = text {
            // SAFETY: SSE2 is part of every x86-64 target.
            assert_eq!(unsafe { sse2::parse(text) }, scalar, "sse2");
            if crate::varint::is_bulk_available(crate::varint::BulkKind::V3) {
                // SAFETY: the CPU has x86-64-v3's features, AVX2 among them.
                assert_eq!(unsafe { v3::parse(text) }, scalar, "v3");
            }
        }
        parsed
    }

    #[test]
    fn uuid_parsing() {
        assert_eq!(
            both(b"01234567-89ab-CDEF-0123-456789abcdef"),
            Some([
                0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                0xcd, 0xef
            ])
        );
        assert_eq!(both(b"0123456789abcdef0123456789abcdef"), None);
        assert_eq!(both(b"01234567-89ab-cdef-0123-456789abcdeg"), None);
        assert_eq!(both(b"01234567-89ab-cdef-0123+456789abcdef"), None);
        assert_eq!(both(b"01234567-89ab-cdef-0123-456789abcde"), None);
        assert_eq!(both(b"01234567-89ab-cdef-0123-456789abcdef0"), None);
    }

    /// The obvious parser: hexadecimal digits one by one, dashes where they belong.
    fn reference_uuid(s: &[u8]) -> Option<[u8; 16]> {
        let text = std::str::from_utf8(s).ok()?;
        let groups: Vec<&str> = text.split('-').collect();
        let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        if lens != [8, 4, 4, 4, 12] {
            return None;
        }
        let hex: String = groups.concat();
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        // from_str_radix takes a sign; a UUID does not.
        hex.bytes().all(|b| b.is_ascii_hexdigit()).then_some(out)
    }

    proptest::proptest! {
        #[test]
        fn uuid_parsing_matches_the_reference(
            digits in proptest::collection::vec(proptest::sample::select(
                b"0123456789abcdefABCDEF-+ gG/:@`\x00\x10\x19\x7f\x80\xff".to_vec()), 36),
            dashes in proptest::bool::weighted(0.8),
        ) {
            let mut s = digits;
            if dashes {
                for i in [8, 13, 18, 23] {
                    s[i] = b'-';
                }
            }
            proptest::prop_assert_eq!(both(&s), reference_uuid(&s));
        }

        #[test]
        fn valid_uuids_parse_like_the_reference(
            mut s in proptest::collection::vec(proptest::sample::select(
                b"0123456789abcdefABCDEF".to_vec()), 36),
        ) {
            for i in [8, 13, 18, 23] {
                s[i] = b'-';
            }
            proptest::prop_assert!(both(&s).is_some());
            proptest::prop_assert_eq!(both(&s), reference_uuid(&s));
        }
    }

    /// Every byte value in every position of a valid UUID: parsed as the reference does, and
    /// refused in a dash's place.
    #[test]
    fn every_byte_in_every_digit_position() {
        let valid = *b"0123abcd-4567-89AB-CDEF-0123456789ef";
        for at in (0..36).filter(|i| ![8, 13, 18, 23].contains(i)) {
            for b in 0..=255u8 {
                let mut s = valid;
                s[at] = b;
                assert_eq!(both(&s), reference_uuid(&s), "byte {b:#04x} at {at}");
            }
        }
        for at in [8, 13, 18, 23] {
            for b in (0..=255u8).filter(|&b| b != b'-') {
                let mut s = valid;
                s[at] = b;
                assert_eq!(both(&s), None, "byte {b:#04x} at {at}");
            }
        }
    }
}
