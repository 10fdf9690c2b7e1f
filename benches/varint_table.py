#!/usr/bin/env python3
"""Turn criterion's results of `cargo bench -p avrow-benches --bench varint` into the
markdown tables of docs/perf/varint.md: median ns per value for every implementation, the
speed-up over prost (prost time / our time, so > 1 is faster), and bulk time over memcpy.

Usage: python3 benches/varint_table.py [target/criterion]

With `--min`, reads instead the output of one or more runs of the `varint_min` bench on stdin
and tables the per-cell minimum over the runs (ns per value), e.g.
`for i in 1 2 3 4 5 6; do cargo bench -q -p avrow-benches --bench varint_min; done |
python3 benches/varint_table.py --min`.
"""
import json
import os
import sys

MIN = "--min" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--min"]
ROOT = ARGS[0] if ARGS else "target/criterion"
DISTS = ["len1", "len2", "len3", "len4", "len5", "len8", "len10", "Mixed1-10", "Mixed1-2"]
KERNELS = ["scalar", "fast", "bmi2"]


def load():
    res = {}
    for group in sorted(os.listdir(ROOT)):
        if not group.startswith("varint-"):
            continue
        for bench in os.listdir(os.path.join(ROOT, group)):
            d = os.path.join(ROOT, group, bench, "new")
            try:
                meta = json.load(open(os.path.join(d, "benchmark.json")))
                est = json.load(open(os.path.join(d, "estimates.json")))
            except (FileNotFoundError, NotADirectoryError):
                continue
            n = meta["throughput"]["Elements"]
            op, dist = meta["group_id"].split("/")
            res[(op, dist, meta["function_id"])] = est["median"]["point_estimate"] / n
    return res


def load_min(lines):
    """Per-cell minimum of `varint_min` tables (`| decode | col... |` headers, then rows)."""
    res = {}
    op, cols = None, []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0].startswith("---"):
            continue
        if cells[0] in ("decode", "encode"):
            op, cols = f"varint-{cells[0]}", cells[1:]
            continue
        for col, val in zip(cols, cells[1:]):
            key = (op, cells[0], col)
            res[key] = min(res.get(key, float("inf")), float(val))
    return res


def fmt(x):
    return "—" if x is None else f"{x:.2f}"


def table(res, op):
    kernels = [k for k in KERNELS if (op, "len1", f"{k}-single") in res]
    single = [f"{k}-single" for k in kernels]
    single += ["plain-single"] if (op, "len1", "plain-single") in res else []
    single += ["prost-single", "integer-encoding-single"]
    bulk = [f"{k}-bulk" for k in kernels] + (["prost-bulk"] if op == "varint-decode" else [])
    cols = single + bulk + ["memcpy"]
    head = ["values"] + cols
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for dist in DISTS:
        row = [dist]
        for c in cols:
            row.append(fmt(res.get((op, dist, c))))
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    # Ratios: speed-up over prost (same kind of loop where prost has one), bulk / memcpy.
    rhead = ["values"]
    rhead += [f"{c} ×prost" for c in single if not c.startswith("prost")]
    rhead += [f"{c} ×prost" for c in bulk if not c.startswith("prost")]
    rhead += [f"{c} /memcpy" for c in bulk if not c.startswith("prost")]
    out += ["| " + " | ".join(rhead) + " |", "|" + "---|" * len(rhead)]
    for dist in DISTS:
        ps = res.get((op, dist, "prost-single"))
        pb = res.get((op, dist, "prost-bulk"), ps)
        mc = res.get((op, dist, "memcpy"))
        row = [dist]
        for c in single:
            if c.startswith("prost"):
                continue
            t = res.get((op, dist, c))
            row.append(fmt(ps / t) if t and ps else "—")
        for c in bulk:
            if c.startswith("prost"):
                continue
            t = res.get((op, dist, c))
            row.append(fmt(pb / t) if t and pb else "—")
        for c in bulk:
            if c.startswith("prost"):
                continue
            t = res.get((op, dist, c))
            row.append(fmt(t / mc) if t and mc else "—")
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def main():
    res = load_min(sys.stdin) if MIN else load()
    what = "minimum" if MIN else "median"
    for op, title in [("varint-decode", "Decode"), ("varint-encode", "Encode")]:
        print(f"### {title}: {what} ns per value\n")
        print(table(res, op))
        print()


main()
