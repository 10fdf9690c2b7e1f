#!/usr/bin/env python3
"""Arrow → Avro end to end: `avrow convert X.arrow -o X.avro --compression none -j 1` against
a program doing the same with arrow-rs alone (`arrow-ipc`'s reader into `arrow-avro`'s
`AvroWriter`, `benches/src/bin/arrow_avro_write.rs`), whole process, release binaries. Rounds
alternate the two; before every run the previous output is removed and dirty pages are
flushed (`sync`), untimed, so every run writes a new file. Every output is read
back by fastavro for its row count (avrow's must be complete; an arrow-rs output fastavro
cannot read is marked "unreadable").

    python3 benches/write.py [--rounds 7] FILE.arrow [FILE.arrow ...]

Prints a Markdown table: per file the median seconds of each, the ratio (arrow-rs / avrow)
with its range over rounds, and the output sizes. Needs `cargo build --release -p avrow-cli
-p avrow-benches` and the Python packages pyarrow and fastavro.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import fastavro
import pyarrow.ipc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AVROW = os.path.join(ROOT, "target", "release", "avrow")
ARROW_RS = os.path.join(ROOT, "target", "release", "arrow_avro_write")


def timed(cmd, out):
    """Seconds for `cmd`, which writes `out`: the previous round's output is removed and dirty
    pages written back first, untimed, so that each run writes a new file and none pays for
    freeing the old one's pages or for the file system's flush when a file is replaced."""
    if os.path.exists(out):
        os.unlink(out)
    os.sync()
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def rows_of(path):
    with open(path, "rb") as f:
        return sum(1 for _ in fastavro.reader(f))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    print("| file | avrow s | arrow-rs s | arrow-rs / avrow: median (min–max) | avrow MB | arrow-rs MB |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.files:
            rows = pyarrow.ipc.open_file(path).read_all().num_rows
            ours, theirs = os.path.join(tmp, "avrow.avro"), os.path.join(tmp, "arrow-rs.avro")
            outs = {"avrow": ours, "arrow-rs": theirs}
            runs = {
                "avrow": [AVROW, "convert", path, "-o", ours, "--compression", "none",
                          "-j", "1", "--quiet"],
                "arrow-rs": [ARROW_RS, path, theirs],
            }
            times = {k: [] for k in runs}
            for r in range(args.rounds):
                order = list(runs) if r % 2 == 0 else list(reversed(runs))
                for k in order:
                    times[k].append(timed(runs[k], outs[k]))
            assert rows_of(ours) == rows, f"{ours}: not every row"
            try:
                peer_ok = rows_of(theirs) == rows
            except Exception as e:  # arrow-avro's output that fastavro cannot read
                peer_ok = False
                print(f"<!-- {path}: fastavro cannot read arrow-rs's output: {e} -->")
            ratios = [b / a for a, b in zip(times["avrow"], times["arrow-rs"])]
            mb = lambda p: os.path.getsize(p) / 1e6
            print(f"| {os.path.basename(path)} | {statistics.median(times['avrow']):.3f} | "
                  f"{statistics.median(times['arrow-rs']):.3f} | {statistics.median(ratios):.2f}× "
                  f"({min(ratios):.2f}–{max(ratios):.2f}) | {mb(ours):.1f} | {mb(theirs):.1f}"
                  f"{'' if peer_ok else ' (unreadable)'} |")


if __name__ == "__main__":
    main()
