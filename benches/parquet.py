#!/usr/bin/env python3
"""The main job end to end: `avrow convert X.avro -o X.parquet` against DuckDB's
`COPY (SELECT * FROM read_avro(X)) TO ... (FORMAT parquet)`, both zstd, whole process for
avrow (the release binary), one `COPY` statement in a fresh DuckDB connection for DuckDB.
Rounds alternate the two so that a slow stretch of a shared machine hits both.

    python3 benches/parquet.py [--rounds 7] [--threads 1,2] FILE.avro [FILE.avro ...]

Prints a Markdown table: per file and thread count, the median seconds of each, the ratio
(DuckDB / avrow) and the output sizes. Needs the Python packages duckdb and
duckdb-extension-avro, and `cargo build --release -p avrow-cli`.
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


def extension_path():
    base = os.path.join(os.path.dirname(duckdb_extension_avro.__file__), "extensions")
    for version in sorted(os.listdir(base)):
        return os.path.join(base, version, "avro.duckdb_extension")
    raise SystemExit("no DuckDB Avro extension found")


def run_avrow(path, out, threads):
    start = time.perf_counter()
    subprocess.run([AVROW, "convert", path, "-o", out, "--force", "--quiet",
                    "-j", str(threads)], check=True)
    return time.perf_counter() - start


def run_duckdb(path, out, threads):
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
    print("| file | threads | avrow s | DuckDB s | DuckDB / avrow | avrow MB | DuckDB MB |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.files:
            for t in threads:
                a_out = os.path.join(tmp, "avrow.parquet")
                d_out = os.path.join(tmp, "duckdb.parquet")
                a, d = [], []
                for _ in range(args.rounds):
                    a.append(run_avrow(path, a_out, t))
                    d.append(run_duckdb(path, d_out, t))
                ma, md = statistics.median(a), statistics.median(d)
                print(f"| {os.path.basename(path)} | {t} | {ma:.3f} | {md:.3f} | {md / ma:.2f} "
                      f"| {os.path.getsize(a_out) / 1e6:.1f} | {os.path.getsize(d_out) / 1e6:.1f} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
