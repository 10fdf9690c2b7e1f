//! A tiny deterministic PRNG (SplitMix64) and the sampling helpers the generators use.
//!
//! Everything here is integer arithmetic or exactly rounded IEEE operations (`+ - * /`), never
//! transcendental functions, so the same seed gives bit-identical data on every platform.

/// SplitMix64 (Steele, Lea and Flood): 64 bits of state, passes BigCrush, trivially portable.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed` mixed with a per-purpose `stream` constant, so that the
    /// same user seed gives independent streams for, e.g., row data and the sync marker.
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Rng {
            state: seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03),
        };
        // Decorrelate neighbouring seeds before first use.
        rng.next_u64();
        rng
    }

    /// The next 64 uniformly distributed bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the tiny bias is irrelevant here). `n > 0`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform index into a slice of length `n`.
    pub(crate) fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = hi.wrapping_sub(lo) as u64;
        if span == u64::MAX {
            return self.next_u64() as i64;
        }
        lo.wrapping_add(self.below(span + 1) as i64)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Approximately standard normal (Irwin–Hall sum of four uniforms, rescaled): cheap,
    /// bounded to about ±3.46, and free of `ln`/`sqrt`-of-random-value portability questions.
    pub(crate) fn normalish(&mut self) -> f64 {
        let s = self.unit() + self.unit() + self.unit() + self.unit();
        // Sum of 4 U(0,1) has mean 2 and variance 1/3; sqrt(3) as an exact literal.
        (s - 2.0) * 1.732_050_807_568_877_2
    }

    /// A uniformly chosen element of a non-empty slice.
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }

    /// An index drawn with probability proportional to `weights[i]`.
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            let w = u64::from(w);
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// A non-negative value whose zigzag varint encoding takes exactly `bytes` bytes (1..=9).
    ///
    /// Zigzag maps `v >= 0` to `2v`, so a 1-byte varint holds `0..64`, 2 bytes `64..8192`,
    /// 3 bytes `8192..2^20`, 4 bytes `2^20..2^27`, 5 bytes `2^27..2^34`, and so on.
    pub(crate) fn varint_sized(&mut self, bytes: u32) -> i64 {
        debug_assert!((1..=9).contains(&bytes));
        let hi = 1i64 << (7 * bytes - 1);
        let lo = if bytes == 1 {
            0
        } else {
            1i64 << (7 * (bytes - 1) - 1)
        };
        self.range(lo, hi - 1)
    }

    /// A value of `varint_sized(b)` where `b` is `first_len + weighted(weights)`.
    pub(crate) fn varint_mixed(&mut self, first_len: u32, weights: &[u32]) -> i64 {
        let len = first_len + self.weighted(weights) as u32;
        self.varint_sized(len)
    }
}

/// Appends the decimal digits of `n` to `s`, zero-padded to at least `width` digits.
pub(crate) fn push_num(s: &mut String, n: u64, width: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in (buf.len() - i)..width {
        s.push('0');
    }
    for &b in &buf[i..] {
        s.push(char::from(b));
    }
}

/// Appends `n` random characters drawn from `alphabet` (ASCII) to `s`.
pub(crate) fn push_random(s: &mut String, rng: &mut Rng, alphabet: &[u8], n: usize) {
    for _ in 0..n {
        s.push(char::from(rng.pick(alphabet)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag_len(v: i64) -> u32 {
        let z = ((v << 1) ^ (v >> 63)) as u64;
        (64 - z.leading_zeros()).div_ceil(7).max(1)
    }

    #[test]
    fn splitmix_known_values() {
        // Reference values of SplitMix64 from state 0 (no decorrelation step).
        let mut r = Rng { state: 0 };
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn varint_sized_has_exact_length() {
        let mut r = Rng::new(7, 1);
        for bytes in 1..=9 {
            for _ in 0..1000 {
                let v = r.varint_sized(bytes);
                assert!(v >= 0);
                assert_eq!(zigzag_len(v), bytes, "value {v}");
            }
        }
    }

    #[test]
    fn range_and_weighted_stay_in_bounds() {
        let mut r = Rng::new(1, 2);
        for _ in 0..10_000 {
            let v = r.range(-5, 5);
            assert!((-5..=5).contains(&v));
            assert!(r.weighted(&[1, 0, 3]) != 1);
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn push_num_pads() {
        let mut s = String::new();
        push_num(&mut s, 42, 5);
        s.push(' ');
        push_num(&mut s, 0, 0);
        s.push(' ');
        push_num(&mut s, 1_234_567, 3);
        assert_eq!(s, "00042 0 1234567");
    }
}
