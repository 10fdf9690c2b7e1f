#!/usr/bin/env python3
"""Three record shapes unlike the four benchmark shapes, written by fastavro (an independent
encoder) with 64 KiB-ish blocks: a clickstream event (uuid strings, a general union, a nullable
nested record holding an enum, map<array<string>>, arrays of records holding arrays of strings),
a ledger entry (decimals as bytes and as fixed(16), date, time-millis,
local-timestamp-millis, an enum, fixed(12), a nullable string) and a change record as
Debezium writes them (`before` and `after` as nullable records of the row, a `source` record,
the operation, timestamps). Used to measure on data the fast paths were not built from
(`projection`, `ratios`-style comparisons).

    python3 benches/other_shapes.py OUT_DIR [--mb 50]
"""
import argparse
import decimal
import os
import random
import uuid

import fastavro

CLICK = {
    "type": "record", "name": "Click", "namespace": "other",
    "fields": [
        {"name": "event_id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "session", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "value", "type": ["null", "string", "long", "double"]},
        {"name": "page", "type": ["null", {"type": "record", "name": "Page", "fields": [
            {"name": "url", "type": "string"},
            {"name": "kind", "type": {"type": "enum", "name": "Kind",
                                      "symbols": ["HOME", "SEARCH", "ITEM", "CART", "PAY"]}},
        ]}], "default": None},
        {"name": "tags", "type": {"type": "map", "values": {"type": "array", "items": "string"}}},
        {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item",
            "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
                       {"name": "labels", "type": {"type": "array", "items": "string"}}]}}},
        {"name": "score", "type": "double"},
    ],
}

LEDGER = {
    "type": "record", "name": "Entry", "namespace": "other",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "account", "type": {"type": "fixed", "name": "Acct", "size": 12}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                    "precision": 18, "scale": 2}},
        {"name": "balance", "type": {"type": "fixed", "name": "Bal", "size": 16,
                                     "logicalType": "decimal", "precision": 38, "scale": 4}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "booked", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["DEBIT", "CREDIT"]}},
        {"name": "memo", "type": ["null", "string"], "default": None},
    ],
}

ROW = {
    "type": "record", "name": "Value", "namespace": "other.cdc",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "balance", "type": "double"},
        {"name": "updated", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ],
}

CDC = {
    "type": "record", "name": "Envelope", "namespace": "other.cdc",
    "fields": [
        {"name": "before", "type": ["null", ROW], "default": None},
        {"name": "after", "type": ["null", "other.cdc.Value"], "default": None},
        {"name": "source", "type": {"type": "record", "name": "Source", "fields": [
            {"name": "version", "type": "string"},
            {"name": "connector", "type": "string"},
            {"name": "name", "type": "string"},
            {"name": "ts_ms", "type": "long"},
            {"name": "db", "type": "string"},
            {"name": "table", "type": "string"},
            {"name": "lsn", "type": ["null", "long"], "default": None},
            {"name": "snapshot", "type": "boolean"},
        ]}},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
    ],
}

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def click(r):
    v = r.random()
    value = None if v < 0.2 else (r.choice(WORDS) if v < 0.5 else
                                  (r.randrange(-10**9, 10**9) if v < 0.8 else r.random() * 1e4))
    page = None if r.random() < 0.3 else {
        "url": "https://example.com/" + "/".join(r.choice(WORDS) for _ in range(r.randrange(1, 5))),
        "kind": r.choice(["HOME", "SEARCH", "ITEM", "CART", "PAY"])}
    return {
        "event_id": str(uuid.UUID(int=r.getrandbits(128))),
        "session": str(uuid.UUID(int=r.getrandbits(128))),
        "ts": 1_700_000_000_000 + r.randrange(10**9),
        "value": value,
        "page": page,
        "tags": {r.choice(WORDS): [r.choice(WORDS) for _ in range(r.randrange(3))]
                 for _ in range(r.randrange(3))},
        "items": [{"sku": "SKU-%06d" % r.randrange(10**6), "qty": r.randrange(1, 9),
                   "labels": [r.choice(WORDS) for _ in range(r.randrange(3))]}
                  for _ in range(r.randrange(4))],
        "score": r.random(),
    }


def entry(r, i):
    return {
        "id": i,
        "account": r.getrandbits(96).to_bytes(12, "big"),
        "amount": decimal.Decimal(r.randrange(-10**9, 10**9)).scaleb(-2),
        "balance": decimal.Decimal(r.randrange(-10**20, 10**20)).scaleb(-4),
        "day": 18_000 + r.randrange(3000),
        "at": r.randrange(86_400_000),
        "booked": 1_600_000_000_000 + r.randrange(10**11),
        "side": r.choice(["DEBIT", "CREDIT"]),
        "memo": None if r.random() < 0.6 else " ".join(r.choice(WORDS) for _ in range(r.randrange(1, 8))),
    }


def change(r):
    def row():
        return {"id": r.randrange(1, 10**7), "name": "user%d" % r.randrange(10**5),
                "email": None if r.random() < 0.2 else "u%d@example.com" % r.randrange(10**5),
                "balance": r.random() * 1e4, "updated": r.randrange(1, 2**50)}
    op = r.choice("cuud")
    return {
        "before": None if op == "c" else row(),
        "after": None if op == "d" else row(),
        "source": {"version": "2.5.0.Final", "connector": "postgresql", "name": "dbserver1",
                   "ts_ms": r.randrange(1, 2**41), "db": "inventory",
                   "table": r.choice(["customers", "orders", "items"]),
                   "lsn": r.randrange(1, 2**40), "snapshot": False},
        "op": op,
        "ts_ms": r.randrange(1, 2**41),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--mb", type=int, default=50)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, schema, make, row_bytes in [("clickstream", CLICK, lambda r, i: click(r), 330),
                                          ("ledger", LEDGER, entry, 80),
                                          ("cdc", CDC, lambda r, i: change(r), 145)]:
        r = random.Random(7)
        rows = a.mb * 1_000_000 // row_bytes
        path = os.path.join(a.out, name + ".avro")
        with open(path + ".tmp", "wb") as f:
            fastavro.writer(f, fastavro.parse_schema(schema), (make(r, i) for i in range(rows)),
                            sync_interval=64 * 1024)
        os.replace(path + ".tmp", path)
        print(path, rows, "rows", os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
