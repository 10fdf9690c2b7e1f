#!/usr/bin/env bash
# Runs the whole-record benchmarks (avrow and its peers, one criterion run) and writes
# docs/perf/shapes.md from the results. Extra arguments go to criterion (e.g. a filter:
# `benches/compare.sh order`). AVROW_BENCH_MB, AVROW_BENCH_SHAPES and AVROW_BENCH_CODECS
# narrow the run (see benches/benches/shapes.rs); AVROW_BENCH_ROUNDS sets the rounds of the
# interleaved ratio run that follows (default 11).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p avrow-benches --bench shapes -- --noplot "$@"
# The single-core ratios again, interleaved round by round (see benches/src/bin/ratios.rs).
cargo run --release -q -p avrow-benches --bin ratios -- --rounds "${AVROW_BENCH_ROUNDS:-11}" \
  --shapes "${AVROW_BENCH_SHAPES:-order,wide,telemetry,counters}" --codecs null \
  > target/criterion/interleaved.md
python3 benches/shapes_table.py target/criterion > docs/perf/shapes.md.tmp
mv docs/perf/shapes.md.tmp docs/perf/shapes.md
echo "wrote docs/perf/shapes.md"
