#!/usr/bin/env python3
"""The type-family datasets: one Avro file per family of Avro types, written by fastavro (an
encoder independent of avrow and of the apache-avro crate behind `avrow-datasets`), with
realistic values, for `benches/families.sh`.

    python3 datasets/families.py OUT_DIR [--mb 16] [--block-kb 64] [--only f1,f2] [--force] [--list]

Each file `OUT_DIR/<family>.avro` holds records of four fields of one family (different value
distributions per field, e.g. counts, ids, prices and measurements for doubles), about `--mb`
megabytes, in blocks of about `--block-kb` KiB (fastavro's `sync_interval`; Java and Python
writers use 16–64 KiB), null codec; files that exist are kept (unless `--force`). `*_nullable` families make every field `["null", T]`
with 10, 25, 40 and 50 % nulls. The same arguments always give the same files (seeded).
"""

import argparse
import decimal
import os
import random
import string
import sys
import uuid

import fastavro

WORDS = ("the of and to in is was for on that with as by at from it an be this are or not "
         "have has had but which one all were when there can been if more will would who "
         "request response error timeout connection user session cache server client retry "
         "payment order invoice shipment warehouse customer account balance transfer ledger "
         "latency throughput queue partition offset commit replica leader broker topic").split()
COUNTRIES = ["US", "DE", "FR", "GB", "IN", "BR", "JP", "CN", "CA", "AU", "ES", "IT", "NL",
             "SE", "PL", "MX", "KR", "ZA", "AR", "NG"] + [a + b for a in "QVWX" for b in "ABCDEFGHIJ"]
STATUSES = ["active", "inactive", "pending", "suspended", "closed", "trial", "churned"]
MILLIS_2025 = 1_735_689_600_000


def names(rng, n):
    return ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 12)))
            for _ in range(n)]


def sentence(rng, lo, hi):
    words, size = [], 0
    target = rng.randint(lo, hi)
    while size < target:
        w = rng.choice(WORDS)
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:target]


def scalar_families(rng):
    """family -> (four (Avro type, value function) pairs)."""
    users = names(rng, 5000)
    skus = [f"SKU-{rng.randint(10000, 99999)}" for _ in range(20000)]
    big_symbols = [f"S{i:02d}" for i in range(50)]
    ts = [MILLIS_2025]

    def next_ts(step_ms):
        ts[0] += rng.randint(0, step_ms)
        return ts[0]

    def dec(digits, scale):
        # Amounts spread over magnitudes, as money and ratios are.
        unscaled = int(rng.lognormvariate(0, 1) * 10 ** rng.randint(scale, digits - 2))
        unscaled = min(unscaled, 10 ** digits - 1) * rng.choice((1, 1, 1, -1))
        return decimal.Decimal(unscaled).scaleb(-scale)

    def dec_type(base, p, s, size=None):
        t = {"type": base, "logicalType": "decimal", "precision": p, "scale": s}
        if size:
            t.update(name=f"dec{p}_{s}_{rng.randint(0, 10**9)}", size=size)
        return t

    fixed = lambda n, name: {"type": "fixed", "name": name, "size": n}
    lt = lambda base, logical: {"type": base, "logicalType": logical}
    return {
        "boolean": [("boolean", lambda: rng.random() < 0.5),
                    ("boolean", lambda: rng.random() < 0.05),
                    ("boolean", lambda: rng.random() < 0.9),
                    ("boolean", lambda: rng.random() < 0.3)],
        "int_small": [("int", lambda: rng.randint(0, 100)),
                      ("int", lambda: int(rng.expovariate(0.1))),
                      ("int", lambda: rng.randint(-50, 50)),
                      ("int", lambda: rng.choice((0, 0, 0, 1, 2, 3)))],
        "int_large": [("int", lambda: rng.randint(-2**31, 2**31 - 1)),
                      ("int", lambda: rng.randint(1_000_000, 2_000_000_000)),
                      ("int", lambda: int(rng.lognormvariate(12, 2)) % 2**31),
                      ("int", lambda: rng.randint(-2**30, 2**30))],
        "long_small": [("long", lambda: rng.randint(0, 10_000)),
                       ("long", lambda: int(rng.expovariate(0.001))),
                       ("long", lambda: rng.randint(-1000, 1000)),
                       ("long", lambda: rng.randint(0, 127))],
        "long_large": [("long", lambda: rng.randint(-2**63, 2**63 - 1)),
                       ("long", lambda: rng.randint(10**15, 10**18)),
                       ("long", lambda: next_ts(1000) * 1000 + rng.randint(0, 999)),
                       ("long", lambda: int(rng.lognormvariate(25, 3)) % 2**62)],
        "float": [("float", lambda: rng.gauss(21.0, 4.0)),
                  ("float", lambda: round(rng.uniform(0, 100), 1)),
                  ("float", lambda: rng.random()),
                  ("float", lambda: rng.lognormvariate(2, 1))],
        "double": [("double", lambda: rng.gauss(1013.25, 12.0)),
                   ("double", lambda: round(rng.lognormvariate(3, 1.2), 2)),
                   ("double", lambda: rng.uniform(-180, 180)),
                   ("double", lambda: rng.random())],
        "string_short": [("string", lambda: rng.choice(COUNTRIES)),
                         ("string", lambda: rng.choice(STATUSES)),
                         ("string", lambda: rng.choice(users)),
                         ("string", lambda: rng.choice(skus))],
        "string_long": [("string", lambda: sentence(rng, 60, 400)),
                        ("string", lambda: sentence(rng, 80, 200)),
                        ("string", lambda: "GET /api/v2/" + "/".join(rng.choices(WORDS, k=4))
                         + f"?id={rng.randint(0, 10**9)} HTTP/1.1"),
                        ("string", lambda: sentence(rng, 100, 300))],
        "bytes": [("bytes", lambda: rng.randbytes(32)),
                  ("bytes", lambda: rng.randbytes(rng.randint(16, 256))),
                  ("bytes", lambda: rng.randbytes(rng.randint(0, 16))),
                  ("bytes", lambda: sentence(rng, 20, 120).encode())],
        "fixed": [(fixed(16, "md5"), lambda: rng.randbytes(16)),
                  (fixed(4, "ipv4"), lambda: bytes([10, rng.randint(0, 3), rng.randint(0, 255),
                                                    rng.randint(1, 254)])),
                  (fixed(6, "mac"), lambda: b"\x00\x1a\x2b" + rng.randbytes(3)),
                  (fixed(32, "sha256"), lambda: rng.randbytes(32))],
        "enum": [({"type": "enum", "name": "Level", "symbols": ["DEBUG", "INFO", "WARN", "ERROR"]},
                  lambda: rng.choices(["DEBUG", "INFO", "WARN", "ERROR"], (30, 60, 8, 2))[0]),
                 ({"type": "enum", "name": "Big", "symbols": big_symbols},
                  lambda: rng.choice(big_symbols)),
                 ({"type": "enum", "name": "Flag", "symbols": ["Y", "N"]},
                  lambda: rng.choice(("Y", "N"))),
                 ({"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]},
                  lambda: rng.choice(("RED", "GREEN", "BLUE")))],
        "uuid": [(lt("string", "uuid"), lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)))
                 for _ in range(4)],
        "decimal_bytes_p18": [(dec_type("bytes", 18, 2), lambda: dec(18, 2)),
                              (dec_type("bytes", 12, 4), lambda: dec(12, 4)),
                              (dec_type("bytes", 18, 0), lambda: dec(18, 0)),
                              (dec_type("bytes", 9, 2), lambda: dec(9, 2))],
        "decimal_bytes_p38": [(dec_type("bytes", 38, 10), lambda: dec(38, 10)),
                              (dec_type("bytes", 30, 6), lambda: dec(30, 6)),
                              (dec_type("bytes", 38, 0), lambda: dec(38, 0)),
                              (dec_type("bytes", 24, 8), lambda: dec(24, 8))],
        "decimal_fixed_p18": [(dec_type("fixed", 18, 2, 8), lambda: dec(18, 2)),
                              (dec_type("fixed", 12, 4, 6), lambda: dec(12, 4)),
                              (dec_type("fixed", 18, 0, 8), lambda: dec(18, 0)),
                              (dec_type("fixed", 9, 2, 4), lambda: dec(9, 2))],
        "decimal_fixed_p38": [(dec_type("fixed", 38, 10, 16), lambda: dec(38, 10)),
                              (dec_type("fixed", 30, 6, 13), lambda: dec(30, 6)),
                              (dec_type("fixed", 38, 0, 16), lambda: dec(38, 0)),
                              (dec_type("fixed", 24, 8, 11), lambda: dec(24, 8))],
        "date": [(lt("int", "date"), lambda: rng.randint(18262, 20454)),
                 (lt("int", "date"), lambda: 20089 + rng.randint(0, 30)),
                 (lt("int", "date"), lambda: rng.randint(-10000, 20000)),
                 (lt("int", "date"), lambda: 19000 + int(rng.expovariate(0.01)))],
        "time": [(lt("int", "time-millis"), lambda: rng.randint(0, 86_399_999)),
                 (lt("long", "time-micros"), lambda: rng.randint(0, 86_399_999_999)),
                 (lt("int", "time-millis"), lambda: rng.randint(8, 18) * 3_600_000),
                 (lt("long", "time-micros"), lambda: rng.randint(0, 86_399) * 1_000_000)],
        "timestamp": [(lt("long", "timestamp-millis"), lambda: next_ts(50)),
                      (lt("long", "timestamp-micros"), lambda: ts[0] * 1000 + rng.randint(0, 10**6)),
                      (lt("long", "local-timestamp-millis"),
                       lambda: MILLIS_2025 + rng.randint(0, 365 * 86_400_000)),
                      (lt("long", "timestamp-millis"), lambda: MILLIS_2025 - rng.randint(0, 10**11))],
    }


NULL_RATES = (0.10, 0.25, 0.40, 0.50)


def nested_families(rng):
    users = names(rng, 5000)
    tags = [sentence(rng, 3, 12).replace(" ", "-") for _ in range(300)]
    keys = [f"attr_{w}" for w in WORDS[:40]]
    line = {"type": "record", "name": "Line", "fields": [
        {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
        {"name": "price", "type": "double"}]}
    union4 = ["null", "string", "long", "double"]
    union3 = ["int", "string", "boolean"]

    def union4_value():
        r = rng.random()
        if r < 0.2:
            return None
        if r < 0.5:
            return rng.choice(users)
        if r < 0.8:
            return rng.randint(-10**6, 10**12)
        return rng.gauss(0, 1000)

    def union3_value():
        r = rng.random()
        return (rng.randint(0, 1000) if r < 0.5 else rng.choice(tags) if r < 0.8
                else rng.random() < 0.5)

    n = lambda lo, hi: rng.randint(lo, hi)
    return {
        "union": [(union4, union4_value), (union3, union3_value), (union4, union4_value),
                  (["null", "long", "string"], lambda: None if rng.random() < 0.3 else
                   rng.randint(0, 10**9) if rng.random() < 0.7 else rng.choice(users))],
        "array_long": [({"type": "array", "items": "long"},
                        lambda: [rng.randint(0, 10**6) for _ in range(n(0, 20))]),
                       ({"type": "array", "items": "long"},
                        lambda: [rng.randint(-2**40, 2**40) for _ in range(n(0, 5))])],
        "array_double": [({"type": "array", "items": "double"},
                          lambda: [rng.gauss(0, 1) for _ in range(n(0, 20))]),
                         ({"type": "array", "items": "double"},
                          lambda: [round(rng.uniform(0, 500), 2) for _ in range(n(0, 6))])],
        "array_string": [({"type": "array", "items": "string"},
                          lambda: rng.sample(tags, n(0, 8))),
                         ({"type": "array", "items": "string"},
                          lambda: [sentence(rng, 10, 60) for _ in range(n(0, 4))])],
        "array_record": [({"type": "array", "items": line},
                          lambda: [{"sku": f"SKU-{rng.randint(10000, 99999)}", "qty": n(1, 10),
                                    "price": round(rng.uniform(1, 300), 2)}
                                   for _ in range(n(0, 10))])],
        "map_string": [({"type": "map", "values": "string"},
                        lambda: {k: rng.choice(tags) for k in rng.sample(keys, n(0, 8))}),
                       ({"type": "map", "values": "string"},
                        lambda: {f"k{rng.randint(0, 10**6)}": rng.choice(users)
                                 for _ in range(n(0, 4))})],
        "map_long": [({"type": "map", "values": "long"},
                      lambda: {k: rng.randint(0, 10**9) for k in rng.sample(keys, n(0, 10))})],
        "map_array_string": [({"type": "map", "values": {"type": "array", "items": "string"}},
                              lambda: {k: rng.sample(tags, n(0, 5))
                                       for k in rng.sample(keys, n(0, 5))})],
        "nested3": [({"type": "record", "name": "L1", "fields": [
                        {"name": "id", "type": "long"},
                        {"name": "l2", "type": {"type": "record", "name": "L2", "fields": [
                            {"name": "name", "type": "string"},
                            {"name": "score", "type": "double"},
                            {"name": "l3", "type": {"type": "record", "name": "L3", "fields": [
                                {"name": "code", "type": "int"},
                                {"name": "label", "type": "string"},
                                {"name": "ok", "type": "boolean"}]}}]}}]},
                     lambda: {"id": rng.randint(0, 10**12), "l2": {
                         "name": rng.choice(users), "score": rng.gauss(50, 15),
                         "l3": {"code": rng.randint(0, 999), "label": rng.choice(tags),
                                "ok": rng.random() < 0.8}}})],
    }


def families(rng):
    out = {}
    scalars = scalar_families(rng)
    for name, fields in scalars.items():
        out[name] = fields
        out[name + "_nullable"] = [
            (["null", t], (lambda f, p: lambda: None if rng.random() < p else f())(f, p))
            for (t, f), p in zip(fields, NULL_RATES)]
    out.update(nested_families(rng))
    return out


def schema_of(name, fields):
    seen = set()

    def unique(t):
        # A named type may be defined once per schema: later fields refer to it by name.
        if isinstance(t, dict) and "name" in t:
            if t["name"] in seen:
                return t["name"]
            seen.add(t["name"])
        if isinstance(t, list):
            return [unique(b) for b in t]
        return t

    return {"type": "record", "name": name, "namespace": "families",
            "fields": [{"name": f"a{i}", "type": unique(t)} for i, (t, _) in enumerate(fields)]}


def write(path, name, fields, mb, block_kb):
    schema = fastavro.parse_schema(schema_of(name, fields))
    target = int(mb * 1e6)
    tmp = path + ".tmp"
    with open(tmp, "wb") as fo:
        writer = fastavro.write.Writer(fo, schema, sync_interval=block_kb * 1024)
        while fo.tell() < target:
            for _ in range(2000):
                writer.write({f"a{i}": f() for i, (_, f) in enumerate(fields)})
            writer.flush()
        writer.flush()
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--mb", type=float, default=16)
    parser.add_argument("--block-kb", type=int, default=64)
    parser.add_argument("--only")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--force", action="store_true", help="rewrite files that exist")
    args = parser.parse_args()
    all_families = families(random.Random(args.seed))
    if args.list:
        print("\n".join(all_families))
        return
    if not args.out_dir:
        parser.error("name an output directory")
    only = set(args.only.split(",")) if args.only else None
    os.makedirs(args.out_dir, exist_ok=True)
    for name, fields in all_families.items():
        if only and name not in only:
            continue
        # Each family gets its own generator seeded from its name: selecting families with
        # --only gives the same files.
        rng = random.Random(f"{args.seed}:{name}")
        fields = families(rng)[name]
        path = os.path.join(args.out_dir, f"{name}.avro")
        if os.path.exists(path) and not args.force:
            continue
        write(path, name, fields, args.mb, args.block_kb)
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
