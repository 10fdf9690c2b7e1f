//! A cross-check of the criterion varint table (`benches/varint.rs`) for loaded machines: the
//! same data, kernels and peers, but each cell is the *minimum* time of 150 repetitions of one
//! 64K-value operation, in ns per value. The minimum is the run least disturbed by other
//! processes, so ratios between cells stay stable on a busy 2-core machine where criterion's
//! medians drift. Run: `cargo bench -p avrow-benches --bench varint_min [dec|enc]`, optionally
//! with `VARINT_DISTS=len1,Mixed1-10` to select rows.

use std::hint::black_box;
use std::time::Instant;

use avrow_engine::dispatch_kernel;
use avrow_engine::varint::{available_kernels, unzigzag64, zigzag64, Kernel, Scalar};
use integer_encoding::VarInt;

/// Values per operation.
const N: usize = 64 * 1024;
/// Repetitions per cell; the fastest is reported.
const REPS: usize = 150;

const DISTS: &[(&str, &[usize])] = &[
    ("len1", &[1]),
    ("len2", &[2]),
    ("len3", &[3]),
    ("len4", &[4]),
    ("len5", &[5]),
    ("len8", &[8]),
    ("len10", &[10]),
    ("Mixed1-10", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("Mixed1-2", &[1, 2]),
];

/// xorshift64*, the same generator and seed as `benches/varint.rs`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

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

fn data(lens: &[usize]) -> (Vec<i64>, Vec<u8>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let values: Vec<i64> = (0..N)
        .map(|_| {
            let len = lens[(rng.next() % lens.len() as u64) as usize];
            unzigzag64(raw_of_len(len, rng.next()))
        })
        .collect();
    let mut bytes = Vec::new();
    Scalar.write_longs(&values, &mut bytes);
    (values, bytes)
}

#[inline(never)]
fn decode_single<K: Kernel>(k: K, buf: &[u8]) -> i64 {
    let mut pos = 0;
    let mut sum = 0i64;
    for _ in 0..N {
        sum = sum.wrapping_add(k.read_long(buf, &mut pos).unwrap());
    }
    sum
}

#[inline(never)]
fn decode_bulk<K: Kernel>(k: K, buf: &[u8], out: &mut Vec<i64>) {
    out.clear();
    let mut pos = 0;
    k.read_longs(buf, &mut pos, N, out).unwrap();
}

#[inline(never)]
fn encode_single<K: Kernel>(k: K, values: &[i64], out: &mut Vec<u8>) {
    out.clear();
    for &v in values {
        k.write_long(v, out);
    }
}

#[inline(never)]
fn encode_bulk<K: Kernel>(k: K, values: &[i64], out: &mut Vec<u8>) {
    out.clear();
    k.write_longs(values, out);
}

/// Fastest of `REPS` runs of `f`, in ns per value.
fn min_ns<F: FnMut()>(mut f: F) -> f64 {
    let mut best = u128::MAX;
    for _ in 0..REPS {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_nanos());
    }
    best as f64 / N as f64
}

fn selected(name: &str) -> bool {
    std::env::var("VARINT_DISTS").map_or(true, |f| f.split(',').any(|x| x == name))
}

fn main() {
    let what = std::env::args()
        .skip(1)
        .find(|a| a == "dec" || a == "enc")
        .unwrap_or_default();
    let kinds = available_kernels();
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    if what != "enc" {
        let mut head = vec!["decode".to_string()];
        head.extend(names.iter().map(|k| format!("{k}-single")));
        head.extend(["prost-single".into(), "integer-encoding-single".into()]);
        head.extend(names.iter().map(|k| format!("{k}-bulk")));
        head.extend(["prost-bulk".into(), "memcpy".into()]);
        println!("| {} |\n|{}", head.join(" | "), "---|".repeat(head.len()));
        for &(name, lens) in DISTS.iter().filter(|d| selected(d.0)) {
            let (values, bytes) = data(lens);
            let mut out = Vec::with_capacity(N);
            let mut row = vec![name.to_string()];
            for &kind in &kinds {
                let t = min_ns(|| {
                    black_box(dispatch_kernel!(kind, k => decode_single(k, black_box(&bytes))));
                });
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(|| {
                let mut b: &[u8] = black_box(&bytes);
                let mut sum = 0i64;
                for _ in 0..N {
                    let v = prost::encoding::decode_varint(&mut b).unwrap();
                    sum = sum.wrapping_add(unzigzag64(v));
                }
                black_box(sum);
            });
            row.push(format!("{t:.2}"));
            let t = min_ns(|| {
                let b: &[u8] = black_box(&bytes);
                let (mut pos, mut sum) = (0, 0i64);
                for _ in 0..N {
                    let (v, len) = i64::decode_var(&b[pos..]).unwrap();
                    pos += len;
                    sum = sum.wrapping_add(v);
                }
                black_box(sum);
            });
            row.push(format!("{t:.2}"));
            for &kind in &kinds {
                let t = min_ns(
                    || dispatch_kernel!(kind, k => decode_bulk(k, black_box(&bytes), &mut out)),
                );
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(|| {
                out.clear();
                out.reserve(N);
                let mut b: &[u8] = black_box(&bytes);
                for _ in 0..N {
                    out.push(unzigzag64(prost::encoding::decode_varint(&mut b).unwrap()));
                }
            });
            row.push(format!("{t:.2}"));
            let t = min_ns(|| {
                out.clear();
                out.extend_from_slice(black_box(&values));
            });
            row.push(format!("{t:.2}"));
            println!("| {} |", row.join(" | "));
        }
        println!();
    }
    if what != "dec" {
        let mut head = vec!["encode".to_string()];
        head.extend(names.iter().map(|k| format!("{k}-single")));
        head.extend(["prost-single".into(), "integer-encoding-single".into()]);
        head.extend(names.iter().map(|k| format!("{k}-bulk")));
        head.push("memcpy".into());
        println!("| {} |\n|{}", head.join(" | "), "---|".repeat(head.len()));
        for &(name, lens) in DISTS.iter().filter(|d| selected(d.0)) {
            let (values, bytes) = data(lens);
            let mut out = Vec::with_capacity(bytes.len() + 16);
            let mut slice = vec![0u8; N * 10];
            let mut row = vec![name.to_string()];
            for &kind in &kinds {
                let t = min_ns(
                    || dispatch_kernel!(kind, k => encode_single(k, black_box(&values), &mut out)),
                );
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(|| {
                out.clear();
                for &v in black_box(&values) {
                    prost::encoding::encode_varint(zigzag64(v), &mut out);
                }
            });
            row.push(format!("{t:.2}"));
            let t = min_ns(|| {
                let mut pos = 0;
                for &v in black_box(&values) {
                    pos += v.encode_var(&mut slice[pos..]);
                }
                black_box(pos);
            });
            row.push(format!("{t:.2}"));
            for &kind in &kinds {
                let t = min_ns(
                    || dispatch_kernel!(kind, k => encode_bulk(k, black_box(&values), &mut out)),
                );
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(|| {
                out.clear();
                out.extend_from_slice(black_box(&bytes));
            });
            row.push(format!("{t:.2}"));
            println!("| {} |", row.join(" | "));
        }
    }
}
