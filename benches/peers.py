#!/usr/bin/env python3
"""avrow against the Python peers, in one run: fastavro (records as dicts) and polars'
`read_avro` (a DataFrame, Arrow-backed), all on one core.

    python3 benches/peers.py [--avrow target/release/avrow] [--iters 3] FILE.avro...

avrow runs as `avrow validate -j 1 -q FILE` (decodes every block into Arrow RecordBatches on
one thread and drops them; the time includes process start, a few milliseconds). fastavro
iterates `fastavro.reader`; polars runs `pl.read_avro` with POLARS_MAX_THREADS=1. Each cell is
the median of --iters runs, as nanoseconds per row, with the peer's time over avrow's
(> 1: avrow is faster). A peer that fails on a file (polars cannot read maps) says so.
Prints a markdown table.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("POLARS_MAX_THREADS", "1")

import fastavro  # noqa: E402

try:
    import polars as pl  # noqa: E402
except ImportError:  # polars is optional
    pl = None


def median_time(run, iters):
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--avrow", default="target/release/avrow")
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    print(f"fastavro {fastavro.__version__}, polars {pl.__version__ if pl else 'not installed'}, "
          f"median of {args.iters}, ns per row (peer time / avrow time)\n")
    print("| file | MB | rows | avrow 1 thread | fastavro | polars |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in args.files:
        with open(path, "rb") as f:
            rows = sum(block.num_records for block in fastavro.block_reader(f))
        mb = os.path.getsize(path) / 1e6

        def run_avrow():
            subprocess.run([args.avrow, "validate", "-j", "1", "-q", path], check=True,
                           stdout=subprocess.DEVNULL)

        def run_fastavro():
            with open(path, "rb") as f:
                for _ in fastavro.reader(f):
                    pass

        def run_polars():
            pl.read_avro(path)

        base = median_time(run_avrow, args.iters)
        cells = [f"{base * 1e9 / rows:.0f}"]
        for name, run in (("fastavro", run_fastavro), ("polars", run_polars)):
            if name == "polars" and pl is None:
                cells.append("not installed")
                continue
            try:
                t = median_time(run, args.iters)
            except BaseException as e:  # polars raises a PanicException (a BaseException)
                if isinstance(e, KeyboardInterrupt):
                    raise
                cells.append(f"fails: {type(e).__name__}")
                continue
            cells.append(f"{t * 1e9 / rows:.0f} ({t / base:.1f}×)")
        print(f"| {os.path.basename(path)} | {mb:.0f} | {rows} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
