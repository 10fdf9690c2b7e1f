//! Shared pieces of avrow's benchmarks: the binaries' flag helpers, the varint benchmarks' data
//! and operations, the benchmark files (generated once, cached under `target/bench-data/`) and
//! the apache-avro `Value` → Arrow conversion that stands for the path DataFusion used before
//! arrow-avro (read `Value`s, then fill Arrow builders column by column).

pub mod args;
pub mod data;
pub mod readers;
pub mod value_to_arrow;
pub mod varint_data;

/// The median of `v` (the upper one of an even count), with its minimum and maximum: what the
/// interleaved ratio binaries report per reader and per ratio.
///
/// # Panics
/// If `v` is empty.
pub fn median_min_max(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// CPU time of the whole process (every thread) in seconds, where the platform reports it
/// (`CLOCK_PROCESS_CPUTIME_ID` on 64-bit Linux).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub fn process_cpu_seconds() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` is the C library's (std links it on Linux); `ts` is a valid,
    // writable `struct timespec` (two 64-bit fields on 64-bit Linux) for the whole call.
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// CPU time of the whole process: not reported on this platform.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub fn process_cpu_seconds() -> Option<f64> {
    None
}
