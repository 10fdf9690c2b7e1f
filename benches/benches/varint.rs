//! The varint table (issue 3): zigzag varint decode and encode, every avrow kernel side by
//! side with the peers (`prost::encoding::{decode_varint, encode_varint}` and
//! `integer-encoding`'s `VarInt`) and a `memcpy` of the same output bytes as the limit.
//!
//! Each operation handles 64K random values of one length distribution: exactly 1, 2, 3, 4,
//! 5, 8 or 10 bytes per varint, or lengths drawn uniformly from 1..=10 (`Mixed1-10`) or 1..=2
//! (`Mixed1-2`). Throughput is in elements, so criterion's time per iteration divided by 65536
//! is the time per value. Benchmark ids: `varint-decode/<dist>/<impl>` and
//! `varint-encode/<dist>/<impl>`, where `<impl>` is `<kernel>-single` (a loop of single-value
//! calls), `<kernel>-bulk` (one array call), `prost-single`, `prost-bulk` (prost's decoder in a
//! loop pushing into a reserved `Vec`), `integer-encoding-single` or `memcpy`.
//!
//! Run: `cargo bench -p avrow-benches --bench varint` (add a filter such as `Mixed1-10` to
//! run a subset); `benches/varint_table.py` turns the results into the table of
//! `docs/perf/varint.md`.
//!
//! Clock: on 64-bit Linux the time measured is the benchmark thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), not wall time, so that time the thread spends descheduled on a
//! busy machine is not counted (our 2-core development machines are shared with compilers).
//! Set `AVROW_BENCH_CLOCK=wall` to measure wall time instead.

use avrow_benches::thread_cpu_ns;
use std::hint::black_box;
use std::time::Duration;

use avrow_benches::varint_data::{
    data, decode_bulk, decode_single, encode_bulk, encode_single, Dist, DISTS, N,
};
use avrow_engine::dispatch_kernel;
use avrow_engine::varint::{available_kernels, unzigzag64, zigzag64, KernelKind};
use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use integer_encoding::VarInt;

/// Criterion measurement: the thread's CPU time in nanoseconds (see the module docs), or wall
/// time when `AVROW_BENCH_CLOCK=wall` or on other platforms.
struct Clock {
    cpu: bool,
    base: std::time::Instant,
}

impl Clock {
    fn from_env() -> Self {
        let wall = std::env::var("AVROW_BENCH_CLOCK").is_ok_and(|v| v == "wall");
        Clock {
            cpu: !wall && thread_cpu_ns().is_some(),
            base: std::time::Instant::now(),
        }
    }

    fn now(&self) -> u64 {
        if self.cpu {
            if let Some(ns) = thread_cpu_ns() {
                return ns;
            }
        }
        self.base.elapsed().as_nanos() as u64
    }
}

impl Measurement for Clock {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now()
    }
    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NanosFormatter
    }
}

/// Formats nanoseconds like criterion's wall-time formatter.
struct NanosFormatter;

impl ValueFormatter for NanosFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let per_iter = match *throughput {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                n as f64
            }
            Throughput::Bits(n) => n as f64,
            Throughput::ElementsAndBytes { elements, .. } => elements as f64,
        };
        for v in values {
            *v = per_iter * 1e3 / *v;
        }
        "M/s"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

type Group<'a> = BenchmarkGroup<'a, Clock>;

fn configure(group: &mut Group<'_>) {
    group
        .throughput(Throughput::Elements(N as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(400))
        .measurement_time(Duration::from_millis(1500));
}

fn bench_decode(c: &mut Criterion<Clock>, dist: &Dist, kernels: &[KernelKind]) {
    let (values, bytes) = data(dist);
    let mut group = c.benchmark_group(format!("varint-decode/{}", dist.name));
    configure(&mut group);
    let mut out: Vec<i64> = Vec::with_capacity(N);

    for &kind in kernels {
        // Check the kernel decodes the data before timing it.
        let mut check = Vec::new();
        dispatch_kernel!(kind, k => decode_bulk(k, &bytes, &mut check));
        assert!(check == values, "{kind} decodes {} wrongly", dist.name);
        let want: i64 = values.iter().fold(0, |a: i64, &v| a.wrapping_add(v));
        let got = dispatch_kernel!(kind, k => decode_single(k, &bytes));
        assert!(got == want, "{kind} decodes {} wrongly", dist.name);

        group.bench_function(format!("{kind}-single"), |b| {
            b.iter(|| dispatch_kernel!(kind, k => decode_single(k, black_box(&bytes))))
        });
        group.bench_function(format!("{kind}-bulk"), |b| {
            b.iter(|| dispatch_kernel!(kind, k => decode_bulk(k, black_box(&bytes), &mut out)))
        });
    }

    group.bench_function("prost-single", |b| {
        b.iter(|| {
            let mut buf: &[u8] = black_box(&bytes);
            let mut sum = 0i64;
            for _ in 0..N {
                let v = prost::encoding::decode_varint(&mut buf).unwrap();
                sum = sum.wrapping_add(unzigzag64(v));
            }
            sum
        })
    });
    group.bench_function("prost-bulk", |b| {
        b.iter(|| {
            out.clear();
            out.reserve(N);
            let mut buf: &[u8] = black_box(&bytes);
            for _ in 0..N {
                out.push(unzigzag64(
                    prost::encoding::decode_varint(&mut buf).unwrap(),
                ));
            }
        })
    });
    group.bench_function("integer-encoding-single", |b| {
        b.iter(|| {
            let buf: &[u8] = black_box(&bytes);
            let mut pos = 0;
            let mut sum = 0i64;
            for _ in 0..N {
                let (v, len) = i64::decode_var(&buf[pos..]).unwrap();
                pos += len;
                sum = sum.wrapping_add(v);
            }
            sum
        })
    });
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&values));
        })
    });
    group.finish();
}

fn bench_encode(c: &mut Criterion<Clock>, dist: &Dist, kernels: &[KernelKind]) {
    let (values, bytes) = data(dist);
    let mut group = c.benchmark_group(format!("varint-encode/{}", dist.name));
    configure(&mut group);
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + 16);

    for &kind in kernels {
        let mut check = Vec::new();
        dispatch_kernel!(kind, k => encode_bulk(k, &values, &mut check));
        assert!(check == bytes, "{kind} encodes {} wrongly", dist.name);
        dispatch_kernel!(kind, k => encode_single(k, &values, &mut check));
        assert!(check == bytes, "{kind} encodes {} wrongly", dist.name);

        group.bench_function(format!("{kind}-single"), |b| {
            b.iter(|| dispatch_kernel!(kind, k => encode_single(k, black_box(&values), &mut out)))
        });
        group.bench_function(format!("{kind}-bulk"), |b| {
            b.iter(|| dispatch_kernel!(kind, k => encode_bulk(k, black_box(&values), &mut out)))
        });
    }

    group.bench_function("prost-single", |b| {
        b.iter(|| {
            out.clear();
            for &v in black_box(&values) {
                prost::encoding::encode_varint(zigzag64(v), &mut out);
            }
        })
    });
    let mut slice = vec![0u8; N * 10];
    let mut len = 0;
    for &v in &values {
        len += v.encode_var(&mut slice[len..]);
    }
    assert!(slice[..len] == bytes[..], "integer-encoding disagrees");
    group.bench_function("integer-encoding-single", |b| {
        b.iter(|| {
            let mut pos = 0;
            for &v in black_box(&values) {
                pos += v.encode_var(&mut slice[pos..]);
            }
            pos
        })
    });
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&bytes));
        })
    });
    group.finish();
}

fn varint(c: &mut Criterion<Clock>) {
    let kernels = available_kernels();
    eprintln!(
        "varint kernels: {}; selected: {}",
        kernels
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
        avrow_engine::varint::describe()
    );
    for dist in DISTS {
        bench_decode(c, dist, &kernels);
        bench_encode(c, dist, &kernels);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = varint
}
criterion_main!(benches);
