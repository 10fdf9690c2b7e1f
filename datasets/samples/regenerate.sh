#!/usr/bin/env bash
# Regenerates the sample files in datasets/samples/ (run from the repository root).
# Keep these commands in sync with README.md beside this script and with the SAMPLES table in
# datasets/tests/datasets/main.rs, which checks that each file is reproduced byte for byte.
set -euo pipefail
cd "$(dirname "$0")/../.."
gen() { cargo run --quiet --release -p avrow-datasets -- "$@"; }
gen order --rows 1500 --codec deflate --block-rows 500 --seed 42 -o datasets/samples/order.avro
gen wide --rows 1500 --codec snappy --block-rows 400 --seed 42 -o datasets/samples/wide.avro
gen telemetry --rows 4000 --codec null --block-rows 1500 --seed 42 -o datasets/samples/telemetry.avro
gen counters --rows 1200 --codec deflate --block-rows 500 --seed 42 -o datasets/samples/counters.avro
