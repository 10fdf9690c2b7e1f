//! What the varint benchmarks (`benches/varint.rs`, `benches/varint_min.rs`) measure: the value
//! distributions, their deterministic data, and the operations timed for each kernel.

use avrow_engine::varint::{unzigzag64, Kernel, ReadHint, Scalar, Writer};

/// Values per operation.
pub const N: usize = 64 * 1024;

/// A length distribution: its label and the varint lengths it draws from uniformly.
pub struct Dist {
    /// The row label (`len1`, `Mixed1-10`, ...).
    pub name: &'static str,
    /// The lengths in bytes drawn from, uniformly.
    pub lens: &'static [usize],
}

/// Every row of the varint table.
pub const DISTS: &[Dist] = &[
    Dist {
        name: "len1",
        lens: &[1],
    },
    Dist {
        name: "len2",
        lens: &[2],
    },
    Dist {
        name: "len3",
        lens: &[3],
    },
    Dist {
        name: "len4",
        lens: &[4],
    },
    Dist {
        name: "len5",
        lens: &[5],
    },
    Dist {
        name: "len8",
        lens: &[8],
    },
    Dist {
        name: "len10",
        lens: &[10],
    },
    Dist {
        name: "Mixed1-10",
        lens: &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    },
    Dist {
        name: "Mixed1-2",
        lens: &[1, 2],
    },
];

/// xorshift64*: deterministic, dependency-free random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A random raw value whose varint is exactly `len` bytes.
fn raw_of_len(len: usize, r: u64) -> u64 {
    if len == 1 {
        return r & 0x7f;
    }
    let bits = (7 * len).min(64);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    (r & mask) | (1 << (7 * (len - 1)))
}

/// [`N`] zigzag longs of `dist` (always the same ones) and their encoding.
pub fn data(dist: &Dist) -> (Vec<i64>, Vec<u8>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let values: Vec<i64> = (0..N)
        .map(|_| {
            let len = dist.lens[(rng.next() % dist.lens.len() as u64) as usize];
            unzigzag64(raw_of_len(len, rng.next()))
        })
        .collect();
    let mut bytes = Vec::new();
    Scalar.write_longs(&values, &mut bytes);
    (values, bytes)
}

/// Decode [`N`] longs one call at a time with one [`ReadHint`] (their sum, so nothing is
/// optimized away): the single-value loop of the table.
#[inline(never)]
pub fn decode_single<K: Kernel>(k: K, buf: &[u8]) -> i64 {
    let mut pos = 0;
    let mut sum = 0i64;
    let mut hint = ReadHint::default();
    for _ in 0..N {
        sum = sum.wrapping_add(
            k.read_long_hinted(buf, &mut pos, &mut hint)
                .expect("valid data"),
        );
    }
    sum
}

/// [`decode_single`] through the stateless [`Kernel::read_long`] (no hint): the `plain`
/// column.
#[inline(never)]
pub fn decode_single_plain<K: Kernel>(k: K, buf: &[u8]) -> i64 {
    let mut pos = 0;
    let mut sum = 0i64;
    for _ in 0..N {
        sum = sum.wrapping_add(k.read_long(buf, &mut pos).expect("valid data"));
    }
    sum
}

/// Decode [`N`] longs in one bulk call into `out`.
#[inline(never)]
pub fn decode_bulk<K: Kernel>(k: K, buf: &[u8], out: &mut Vec<i64>) {
    out.clear();
    let mut pos = 0;
    k.read_longs(buf, &mut pos, N, out).expect("valid data");
}

/// Encode `values` one call at a time into `out` through a [`Writer`]: the single-value loop
/// of the table.
#[inline(never)]
pub fn encode_single<K: Kernel>(k: K, values: &[i64], out: &mut Vec<u8>) {
    out.clear();
    let mut w = Writer::new(k, out);
    for &v in values {
        w.write_long(v);
    }
}

/// [`encode_single`] through [`Kernel::write_long`] on the vector itself (no writer): the
/// `plain` column.
#[inline(never)]
pub fn encode_single_plain<K: Kernel>(k: K, values: &[i64], out: &mut Vec<u8>) {
    out.clear();
    for &v in values {
        k.write_long(v, out);
    }
}

/// Encode `values` in one bulk call into `out`.
#[inline(never)]
pub fn encode_bulk<K: Kernel>(k: K, values: &[i64], out: &mut Vec<u8>) {
    out.clear();
    k.write_longs(values, out);
}
