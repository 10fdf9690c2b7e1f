#!/usr/bin/env bash
# Miri over the engine's portable unsafe code: the unit tests of the varint kernels
# (engine/src/varint/: word, generic, block, predict, writer, bulk) and of the buffer pool
# (engine/src/decode/pool.rs), which lends `Vec` allocations to Arrow through raw pointers.
#
# Miri interprets the code and reports undefined behaviour (out-of-bounds or misaligned
# accesses, reads of uninitialised memory, use after free, aliasing violations under Stacked
# Borrows) and leaks. It cannot run inline assembly or CPUID, so the x86-64 `bmi2` kernel and
# the x86-64-v3 bulk loops are not reached under Miri (CPU detection reports no features; the
# tests that need them are `#[cfg_attr(miri, ignore)]`); the SSE2 intrinsics of the block
# decoder's terminator bitmap are emulated by Miri and are covered. Tests scale their case
# counts down under `cfg(miri)`.
#
# Installs the nightly toolchain's `miri` and `rust-src` components if they are missing, then
# runs exactly that selection. Extra arguments go to the test binary (e.g. a narrower filter:
# `scripts/miri.sh varint::block`).
#
# Status: ran on 2026-12-01 (nightly 1.97.0-nightly 2026-05-19, 2 shared cores): 15 passed, 1
# ignored (CPUID), no undefined behaviour found. What it found were operations Miri cannot run
# in the portable code: CPUID in the CPU detection (now skipped under Miri: no features) and the
# empty `asm!` optimisation barrier `word::pin` (now plain `x` under Miri). Time: about 10 min
# from cold (sysroot and dependencies built for Miri), 2.5 min when built, so it is not in
# .ci/run (over the ~5 min a CI step may take, and it needs the components installed).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^miri'; then
  rustup +nightly component add miri rust-src
fi
cargo +nightly miri setup

filters=("$@")
if [ ${#filters[@]} -eq 0 ]; then
  filters=(varint:: decode::pool:: encode::)
fi
# Only the library's unit tests (`--lib`): the integration suites run the same kernels on far
# more data than Miri gets through in reasonable time.
cargo +nightly miri test -p avrow-engine --lib -- "${filters[@]}"
