#!/usr/bin/env python3
"""Whole file to Arrow from Python, one thread: avrow's Python package against fastavro
(records), polars.read_avro, the polars-avro plugin and DuckDB's read_avro (to Arrow), in
interleaved rounds; and the Rust reader doing the same (`target/release/read_table`: the file
by path, one thread, every batch kept) for the Python call's overhead.

    python3 benches/python.py [--rounds 5] FILE.avro ...

Needs `pip install ./python fastavro polars polars-avro duckdb duckdb-extension-avro` and
`cargo build --release -p avrow-benches --bin read_table`. Prints a Markdown table.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import avrow
import fastavro
import polars as pl

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def duckdb_con():
    import duckdb

    from parquet import extension_path  # benches/parquet.py: where the Avro extension lies

    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.load_extension(extension_path())
    return con


def readers():
    out = {
        "avrow": lambda p: avrow.read_avro(p, threads=1).num_rows,
        "fastavro": lambda p: sum(1 for _ in fastavro.reader(open(p, "rb"))),
        "polars.read_avro": lambda p: pl.read_avro(p).height,
    }
    try:
        import polars_avro

        out["polars-avro"] = lambda p: polars_avro.read_avro(p).height
    except ImportError:
        pass
    try:
        con = duckdb_con()
        out["duckdb read_avro"] = lambda p: con.execute(f"SELECT * FROM read_avro('{p}')").fetch_arrow_table().num_rows
    except Exception as e:  # noqa: BLE001
        print(f"(DuckDB not measured: {e})")
    return out


def rust_seconds(path, rounds):
    exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                       "release", "read_table")
    if not os.path.exists(exe):
        return None  # not built: the Rust columns say "n/a"
    text = subprocess.run([exe, "--rounds", str(rounds), path],
                          check=True, capture_output=True, text=True).stdout
    return float(text.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rs = readers()
    names = list(rs)
    print("| file | rows | " + " | ".join(f"{n} s" for n in names)
          + " | fastest peer / avrow | Rust reader s | Python / Rust |")
    print("|---|---:|" + "---:|" * len(names) + "---:|---:|---:|")
    for path in a.files:
        # Warm-up, and every reader sees every row; a peer that cannot read the file is
        # left out of it ("fails").
        rows, failed = {}, {}
        for n, f in rs.items():
            try:
                rows[n] = f(path)
            except BaseException as e:  # noqa: BLE001 (polars panics are PanicException)
                if n == "avrow" or isinstance(e, KeyboardInterrupt):
                    raise
                failed[n] = type(e).__name__
        for n, r in rows.items():
            if r != rows["avrow"]:
                raise SystemExit(f"{n} read {r} rows of {path}, avrow {rows['avrow']}")
        ok = [n for n in names if n in rows]
        times = {n: [] for n in ok}
        for i in range(a.rounds):
            for k in range(len(ok)):
                n = ok[(i + k) % len(ok)]
                t = time.perf_counter()
                rs[n](path)
                times[n].append(time.perf_counter() - t)
        med = {n: statistics.median(v) for n, v in times.items()}
        fastest = min((v for n, v in med.items() if n != "avrow"), default=float("nan"))
        rust = rust_seconds(path, a.rounds)
        cells = [f"{med[n]:.3f}" if n in med else "fails" for n in names]
        rust_cells = "n/a | n/a" if rust is None else f"{rust:.3f} | {med['avrow'] / rust:.2f}"
        print(f"| {os.path.basename(path)} | {rows['avrow']} | " + " | ".join(cells)
              + f" | {fastest / med['avrow']:.1f}× | {rust_cells} |",
              flush=True)


if __name__ == "__main__":
    main()
