#!/usr/bin/env python3
"""Whole file to Arrow from Python, one thread: avrow's Python package against fastavro
(records), polars.read_avro, the polars-avro plugin and DuckDB's read_avro (to Arrow), in
interleaved rounds; and the Rust reader doing the same (`target/release/read_table`: the file
by path, one thread, every batch kept) for the Python call's overhead.

    python3 benches/python.py [--rounds 5] FILE.avro ...
    python3 benches/python.py --threads [--rounds 5] FILE.avro ...   # every core vs one
    python3 benches/python.py --write [--rounds 5] FILE.avro ...     # writing vs fastavro

`--threads`: `read_avro(path)` (every core) against `read_avro(path, threads=1)`, interleaved.
`--write`: the file's rows written back as Avro with the file's own schema, uncompressed and
deflate, by `avrow.write_avro(table, ...)` from the `pyarrow.Table` (`threads=1` and the
default, every core) and by `fastavro.writer` from the records (Python dicts, as fastavro reads them), and by
polars' `DataFrame.write_avro` where it can hold the data; each output read back by fastavro
(same row count). Conversions to each writer's input are not timed.

Needs `pip install ./python fastavro polars polars-avro duckdb duckdb-extension-avro` and
`cargo build --release -p avrow-benches --bin read_table`. Prints a Markdown table.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# Every reader runs in this one process, most on glibc's allocator, whose mmap threshold rises
# as large blocks are freed: a reader's speed then depends on what an earlier one freed
# (docs/perf/families.md). Pin it at glibc's starting value, 128 KiB, for the whole run: the
# tunable must be set before the process starts, so the script starts itself again with it.
TUNABLE = "glibc.malloc.mmap_threshold=131072"
if TUNABLE not in os.environ.get("GLIBC_TUNABLES", ""):
    tunables = ":".join(filter(None, [os.environ.get("GLIBC_TUNABLES"), TUNABLE]))
    os.execve(sys.executable, [sys.executable] + sys.argv,
              {**os.environ, "GLIBC_TUNABLES": tunables})

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


def interleaved(fns, rounds):
    """Median seconds of each function over `rounds` rounds, the order rotating each round."""
    names = list(fns)
    times = {n: [] for n in names}
    for i in range(rounds):
        for k in range(len(names)):
            n = names[(i + k) % len(names)]
            t = time.perf_counter()
            fns[n]()
            times[n].append(time.perf_counter() - t)
    return {n: statistics.median(v) for n, v in times.items()}


def threads_table(files, rounds):
    print(f"every core: {os.cpu_count()} CPUs")
    print("| file | rows | threads=1 s | every core s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for path in files:
        rows = avrow.read_avro(path).num_rows
        med = interleaved({
            "one": lambda: avrow.read_avro(path, threads=1),
            "all": lambda: avrow.read_avro(path),
        }, rounds)
        print(f"| {os.path.basename(path)} | {rows} | {med['one']:.3f} | {med['all']:.3f} "
              f"| {med['one'] / med['all']:.2f}× |", flush=True)


def write_table(files, rounds):
    print("| file | rows | codec | avrow 1 thread s | avrow every core s | fastavro s "
          "| polars s | fastavro / avrow 1 thread | fastavro / avrow every core |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            table = avrow.read_avro(path)
            schema = avrow.read_schema(path)
            parsed = fastavro.parse_schema(json.loads(schema) if isinstance(schema, str) else schema)
            with open(path, "rb") as f:
                records = list(fastavro.reader(f))
            try:
                frame = pl.from_arrow(table)
            except Exception:  # noqa: BLE001 (a type polars cannot hold)
                frame = None
            out = os.path.join(tmp, "out.avro")
            for codec, fcodec, pcodec in (("none", "null", "uncompressed"),
                                          ("deflate", "deflate", "deflate")):
                fns = {
                    "avrow1": lambda: avrow.write_avro(table, out, codec=codec, threads=1,
                                                       avro_schema=schema),
                    "avrow": lambda: avrow.write_avro(table, out, codec=codec,
                                                      avro_schema=schema),
                    "fastavro": lambda: fastavro.writer(open(out, "wb"), parsed, records,
                                                        codec=fcodec),
                }
                if frame is not None:
                    fns["polars"] = lambda: frame.write_avro(out, compression=pcodec)
                for n in list(fns):
                    try:
                        fns[n]()
                    except Exception as e:  # noqa: BLE001
                        if n.startswith("avrow") or n == "fastavro":
                            raise
                        print(f"({n} cannot write {os.path.basename(path)}: "
                              f"{type(e).__name__})")
                        del fns[n]
                        continue
                    with open(out, "rb") as f:
                        got = sum(1 for _ in fastavro.reader(f))
                    if got != len(records):
                        raise SystemExit(f"{n} wrote {got} rows of {len(records)}")
                med = interleaved(fns, rounds)
                polars_cell = f"{med['polars']:.3f}" if "polars" in med else "fails"
                print(f"| {os.path.basename(path)} | {len(records)} | {codec} "
                      f"| {med['avrow1']:.3f} | {med['avrow']:.3f} | {med['fastavro']:.3f} "
                      f"| {polars_cell} | {med['fastavro'] / med['avrow1']:.1f}× "
                      f"| {med['fastavro'] / med['avrow']:.1f}× |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--threads", action="store_true", help="every core against one")
    mode.add_argument("--write", action="store_true", help="writing, against fastavro")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.threads:
        return threads_table(a.files, a.rounds)
    if a.write:
        return write_table(a.files, a.rounds)
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
