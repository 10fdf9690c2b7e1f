#!/usr/bin/env python3
"""The main job end to end: `avrow convert X.avro -o X.parquet` against DuckDB's
`COPY (SELECT * FROM read_avro(X)) TO ... (FORMAT parquet)` and against arrow-rs alone
(arrow-avro's reader into the parquet crate's `ArrowWriter`, `benches/src/bin/
arrow_avro_parquet.rs`, one thread whatever the thread count), all zstd. Whole process for
avrow and arrow-rs (release binaries), one `COPY` statement in a fresh DuckDB connection for
DuckDB. Rounds alternate the three so that a slow stretch of a shared machine hits all.
Every output is read back with pyarrow and must hold every row. Before every run the previous
output is removed and dirty pages are flushed (`sync`), untimed, so that every run writes a new
file and one run's writes are not written back during the next.

    python3 benches/parquet.py [--rounds 7] [--threads 1,2] FILE.avro [FILE.avro ...]

Prints a Markdown table: per file and thread count, the median seconds of each, the ratios
(peer / avrow) and the output sizes; beside the medians, DuckDB / avrow of the fastest runs
(on a shared machine whose slow stretches outlast a round, the medians move with them).
Needs the Python packages duckdb, duckdb-extension-avro and pyarrow, and
`cargo build --release -p avrow-cli -p avrow-benches`.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb
import duckdb_extension_avro

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AVROW = os.path.join(ROOT, "target", "release", "avrow")
ARROW_RS = os.path.join(ROOT, "target", "release", "arrow_avro_parquet")


def extension_path():
    base = os.path.join(os.path.dirname(duckdb_extension_avro.__file__), "extensions")
    for version in sorted(os.listdir(base)):
        return os.path.join(base, version, "avro.duckdb_extension")
    raise SystemExit("no DuckDB Avro extension found")


def fresh(out):
    """Remove the previous round's output and write back dirty pages, untimed: each run then
    writes a new file, and none pays for freeing the old one's pages or for the file
    system's flush when a file is replaced."""
    if os.path.exists(out):
        os.unlink(out)
    os.sync()


def run_avrow(path, out, threads):
    fresh(out)
    start = time.perf_counter()
    subprocess.run([AVROW, "convert", path, "-o", out, "--quiet",
                    "-j", str(threads)], check=True)
    return time.perf_counter() - start


def run_arrow_rs(path, out):
    """Seconds, or None when arrow-rs cannot convert the file (its writer has no unions)."""
    fresh(out)
    start = time.perf_counter()
    done = subprocess.run([ARROW_RS, path, out], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    return time.perf_counter() - start if done.returncode == 0 else None


def rows_of(parquet):
    import pyarrow.parquet as pq
    return pq.read_table(parquet).num_rows


def run_duckdb(path, out, threads):
    fresh(out)
    start = time.perf_counter()
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.load_extension(extension_path())
    con.execute(f"SET threads = {threads}")
    con.execute(f"COPY (SELECT * FROM read_avro('{path}')) TO '{out}' "
                "(FORMAT parquet, COMPRESSION zstd)")
    con.close()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    print("| file | threads | avrow s | DuckDB s | DuckDB / avrow | DuckDB / avrow, fastest runs "
          "| arrow-rs s | arrow-rs / avrow | avrow MB | DuckDB MB | arrow-rs MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.files:
            rows = int(subprocess.run([AVROW, "count", path], check=True, capture_output=True,
                                      text=True).stdout.split()[0])
            for t in threads:
                outs = {k: os.path.join(tmp, f"{k}.parquet") for k in ("avrow", "duckdb", "arrow")}
                a, d, r = [], [], []
                for _ in range(args.rounds):
                    a.append(run_avrow(path, outs["avrow"], t))
                    d.append(run_duckdb(path, outs["duckdb"], t))
                    r.append(run_arrow_rs(path, outs["arrow"]))
                converted = {"avrow": True, "duckdb": True, "arrow": None not in r}
                for name, out in outs.items():
                    if converted[name] and rows_of(out) != rows:
                        raise SystemExit(f"{name} wrote {rows_of(out)} rows of {path}'s {rows}")
                ma, md = statistics.median(a), statistics.median(d)
                mb = {k: os.path.getsize(v) / 1e6 if converted[k] else None
                      for k, v in outs.items()}
                if converted["arrow"]:
                    mr = statistics.median(r)
                    arrow = f"{mr:.3f} | {mr / ma:.2f}"
                    arrow_mb = f"{mb['arrow']:.1f}"
                else:
                    arrow, arrow_mb = "cannot convert | —", "—"
                fastest = f"{min(d) / min(a):.2f} ({min(a):.3f} / {min(d):.3f} s)"
                print(f"| {os.path.basename(path)} | {t} | {ma:.3f} | {md:.3f} | {md / ma:.2f} "
                      f"| {fastest} | {arrow} | {mb['avrow']:.1f} | {mb['duckdb']:.1f} "
                      f"| {arrow_mb} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
