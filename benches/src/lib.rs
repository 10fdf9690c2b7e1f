//! Shared pieces of avrow's benchmarks: the binaries' flag helpers, the varint benchmarks' data
//! and operations, the benchmark files (generated once, cached under `target/bench-data/`) and
//! the apache-avro `Value` → Arrow conversion that stands for the path DataFusion used before
//! arrow-avro (read `Value`s, then fill Arrow builders column by column).

pub mod args;
pub mod data;
pub mod readers;
pub mod value_to_arrow;
pub mod varint_data;

/// Pins glibc's `mmap` threshold at its starting value, 128 KiB (a pinned threshold does not
/// move). Binaries that time several readers or writers in one process call it first: glibc
/// raises the threshold as large blocks are freed, so one reader's allocations (served by
/// fresh mappings, or from the heap and copied when they grow) depended on what an earlier
/// reader freed (arrow-avro's `bytes` family: 85–105 or 180–320 ns/row between runs of one
/// binary; docs/perf/families.md). Call it before starting any thread.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn pin_mmap_threshold() {
    // SAFETY: `mallopt` only sets an allocator parameter; the callers call it before they
    // start any thread.
    let pinned = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10) };
    assert_eq!(pinned, 1, "mallopt(M_MMAP_THRESHOLD)");
}

/// Other allocators keep no such threshold.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn pin_mmap_threshold() {}

/// The median of `v` (the upper one of an even count), with its minimum and maximum: what the
/// interleaved ratio binaries report per reader and per ratio.
///
/// # Panics
/// If `v` is empty.
pub fn median_min_max(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// A CPU-time clock in nanoseconds (`clock_gettime`), where the platform has it (64-bit Linux).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn cpu_clock_ns(clock: i32) -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` is the C library's (std links it on Linux); `ts` is a valid,
    // writable `struct timespec` (two 64-bit fields on 64-bit Linux) for the whole call.
    let rc = unsafe { clock_gettime(clock, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn cpu_clock_ns(_clock: i32) -> Option<u64> {
    None
}

/// CPU time of the whole process (every thread) in seconds, where the platform reports it
/// (`CLOCK_PROCESS_CPUTIME_ID` on 64-bit Linux).
pub fn process_cpu_seconds() -> Option<f64> {
    cpu_clock_ns(2).map(|ns| ns as f64 * 1e-9)
}

/// CPU time of the calling thread in nanoseconds, where the platform reports it
/// (`CLOCK_THREAD_CPUTIME_ID` on 64-bit Linux).
pub fn thread_cpu_ns() -> Option<u64> {
    cpu_clock_ns(3)
}
