//! A cross-check of the criterion varint table (`benches/varint.rs`) for loaded machines: the
//! same data, kernels and peers, but each cell is the *minimum* time of 150 repetitions of one
//! 64K-value operation, in ns per value. The minimum is the run least disturbed by other
//! processes, so ratios between cells stay stable on a busy 2-core machine where criterion's
//! medians drift. Run: `cargo bench -p avrow-benches --bench varint_min [dec|enc]`, optionally
//! with `VARINT_DISTS=len1,Mixed1-10` to select rows.
//!
//! `{kernel}-single` is a loop of single-value calls through the stateful single-value APIs
//! (`read_long_hinted` with one `ReadHint`; a `Writer`); `plain-single` is the same loop
//! through the stateless calls (`read_long`; `write_long` on the vector) with the selected
//! kernel.

use std::hint::black_box;
use std::time::Instant;

use avrow_benches::varint_data::{
    data, decode_bulk, decode_single, decode_single_plain, encode_bulk, encode_single,
    encode_single_plain, DISTS, N,
};
use avrow_engine::dispatch_kernel;
use avrow_engine::varint::{available_kernels, best_available, unzigzag64, zigzag64};
use integer_encoding::VarInt;

/// Repetitions per cell; the fastest is reported.
const REPS: usize = 150;

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
        head.push("plain-single".into());
        head.extend(["prost-single".into(), "integer-encoding-single".into()]);
        head.extend(names.iter().map(|k| format!("{k}-bulk")));
        head.extend(["prost-bulk".into(), "memcpy".into()]);
        println!("| {} |\n|{}", head.join(" | "), "---|".repeat(head.len()));
        for dist in DISTS.iter().filter(|d| selected(d.name)) {
            let name = dist.name;
            let (values, bytes) = data(dist);
            let mut out = Vec::with_capacity(N);
            let mut row = vec![name.to_string()];
            for &kind in &kinds {
                let t = min_ns(|| {
                    black_box(dispatch_kernel!(kind, k => decode_single(k, black_box(&bytes))));
                });
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(|| {
                black_box(
                    dispatch_kernel!(best_available(), k => decode_single_plain(k, black_box(&bytes))),
                );
            });
            row.push(format!("{t:.2}"));
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
        head.push("plain-single".into());
        head.extend(["prost-single".into(), "integer-encoding-single".into()]);
        head.extend(names.iter().map(|k| format!("{k}-bulk")));
        head.push("memcpy".into());
        println!("| {} |\n|{}", head.join(" | "), "---|".repeat(head.len()));
        for dist in DISTS.iter().filter(|d| selected(d.name)) {
            let name = dist.name;
            let (values, bytes) = data(dist);
            let mut out = Vec::with_capacity(bytes.len() + 16);
            let mut slice = vec![0u8; N * 10];
            let mut row = vec![name.to_string()];
            for &kind in &kinds {
                let t = min_ns(
                    || dispatch_kernel!(kind, k => encode_single(k, black_box(&values), &mut out)),
                );
                row.push(format!("{t:.2}"));
            }
            let t = min_ns(
                || dispatch_kernel!(best_available(), k => encode_single_plain(k, black_box(&values), &mut out)),
            );
            row.push(format!("{t:.2}"));
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
