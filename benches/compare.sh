#!/usr/bin/env bash
# Runs the whole-record benchmarks (avrow and its peers, one criterion run) and writes
# docs/perf/shapes.md from the results. Extra arguments go to criterion (e.g. a filter:
# `benches/compare.sh order`). AVROW_BENCH_MB, AVROW_BENCH_SHAPES and AVROW_BENCH_CODECS
# narrow the run (see benches/benches/shapes.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p avrow-benches --bench shapes -- --noplot "$@"
python3 benches/shapes_table.py target/criterion > docs/perf/shapes.md.tmp
mv docs/perf/shapes.md.tmp docs/perf/shapes.md
echo "wrote docs/perf/shapes.md"
