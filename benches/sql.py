#!/usr/bin/env python3
"""SQL over Avro: avrow's DataFusion format against DataFusion's own Avro source (both timed
in-process by `target/release/sql`, `benches/src/bin/sql.rs`: fresh session, register,
query) and against DuckDB's `read_avro` (a fresh connection, the view, the query, timed here),
the same queries at 1 and 2 threads/partitions. One run; medians of `--rounds`.

    python3 benches/sql.py [--rounds 5] [--partitions 1,2] FILE.avro|DIR [FILE.avro|DIR ...]

A directory is one table of the `.avro` files in it (a stream sink's output: many small files).

Prints a Markdown table: per file, query and partition count, the median seconds of each and
the ratios (peer / avrow), then avrow's speed-up from 1 to 2 partitions. Needs the Python
packages duckdb and duckdb-extension-avro, and `cargo build --release -p avrow-benches --bin sql`.
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import duckdb

from parquet import extension_path  # benches/parquet.py: where the Avro extension lies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL = os.path.join(ROOT, "target", "release", "sql")


def run_duckdb(path, query, threads):
    start = time.perf_counter()
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.load_extension(extension_path())
    con.execute(f"SET threads = {threads}")
    # A directory is one table of its files, as the other two read it.
    source = os.path.join(path, "*.avro") if os.path.isdir(path) else path
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_avro('{source}')")
    con.execute(query).fetchall()
    con.close()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", default="1,2")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    out = subprocess.run([SQL, "--rounds", str(args.rounds), "--partitions", args.partitions]
                         + args.files, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    print("| file | query | partitions | avrow s | DataFusion s | DataFusion / avrow: median (min–max) "
          "| DuckDB s | DuckDB / avrow |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    scaling = {}
    for r in rows:
        d = statistics.median(run_duckdb(r["path"], r["query"], r["partitions"])
                              for _ in range(args.rounds))
        scaling.setdefault((r["file"], r["query"]), {})[r["partitions"]] = r["avrow_s"]
        print(f"| {r['file']} | `{r['query']}` | {r['partitions']} | {r['avrow_s']:.3f} "
              f"| {r['datafusion_s']:.3f} | {r['ratio']:.2f} ({r['ratio_min']:.2f}–{r['ratio_max']:.2f}) "
              f"| {d:.3f} | {d / r['avrow_s']:.2f} |")
    print()
    print("| file | query | avrow 1 partition s | 2 partitions s | speed-up |")
    print("|---|---|---:|---:|---:|")
    for (f, q), t in scaling.items():
        if 1 in t and 2 in t:
            print(f"| {f} | `{q}` | {t[1]:.3f} | {t[2]:.3f} | {t[1] / t[2]:.2f} |")


if __name__ == "__main__":
    main()
