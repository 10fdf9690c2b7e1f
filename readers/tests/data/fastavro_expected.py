#!/usr/bin/env python3
"""Second, independent oracle for the Avro fixtures: fastavro.

Reads every fixture under fixtures/ with fastavro and writes expected/<dir>/<file>.json, one JSON
document per file: {"rows": [...]} where each value is encoded *raw* (logical types are not
applied: the Rust test applies them from the schema), guided by the writer schema:

  null -> null, boolean -> true/false, int/long -> integer,
  float -> "f32:<8 hex digits of the IEEE bits>", double -> "f64:<16 hex digits>",
  bytes/fixed -> hex string, string -> string, enum -> symbol,
  array -> list, map -> list of [key, value] (file order), record -> list of [field, value],
  union -> {"branch": index, "value": value}

Rerunnable: `python3 readers/tests/data/fastavro_expected.py` (needs `pip install fastavro`).
"""

import json
import os
import struct
import sys

import fastavro
import fastavro.read

# Return raw values: the Rust side applies logical types from the schema itself.
fastavro.read.LOGICAL_READERS.clear()

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
EXPECTED = os.path.join(HERE, "expected")

PRIMS = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class Names:
    def __init__(self):
        self.named = {}

    def collect(self, s, ns=""):
        if isinstance(s, list):
            for b in s:
                self.collect(b, ns)
        elif isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "error", "enum", "fixed"):
                name = s["name"]
                if "." in name:
                    full = name
                    tns = name.rsplit(".", 1)[0]
                else:
                    tns = s.get("namespace", ns)
                    full = f"{tns}.{name}" if tns else name
                self.named[full] = (s, tns)
                if t in ("record", "error"):
                    for f in s["fields"]:
                        self.collect(f["type"], tns)
            elif t in ("array",):
                self.collect(s["items"], ns)
            elif t in ("map",):
                self.collect(s["values"], ns)
            elif isinstance(t, (dict, list)):
                self.collect(t, ns)

    def resolve(self, s, ns):
        """(schema dict or primitive name, namespace)"""
        if isinstance(s, str):
            if s in PRIMS:
                return s, ns
            if "." not in s and ns and f"{ns}.{s}" in self.named:
                return self.named[f"{ns}.{s}"]
            return self.named[s]
        if isinstance(s, dict):
            t = s["type"]
            if isinstance(t, (dict, list)):
                return self.resolve(t, ns)
            if t in PRIMS:
                return t, ns
            if t in ("record", "error", "enum", "fixed"):
                name = s["name"]
                if "." in name:
                    return s, name.rsplit(".", 1)[0]
                return s, s.get("namespace", ns)
            if t in ("array", "map"):
                return s, ns
            return self.resolve(t, ns)
        return s, ns


def kind(names, s, ns):
    r, _ = names.resolve(s, ns)
    if isinstance(r, str):
        return r
    if isinstance(r, list):
        return "union"
    return r["type"]


def matches(names, s, ns, v):
    k = kind(names, s, ns)
    if k == "null":
        return v is None
    if k == "boolean":
        return isinstance(v, bool)
    if k in ("int", "long"):
        return isinstance(v, int) and not isinstance(v, bool)
    if k in ("float", "double"):
        return isinstance(v, float)
    if k == "string":
        return isinstance(v, str)
    if k == "bytes":
        return isinstance(v, (bytes, bytearray))
    if k == "fixed":
        r, _ = names.resolve(s, ns)
        return isinstance(v, (bytes, bytearray)) and len(v) == r["size"]
    if k == "enum":
        r, _ = names.resolve(s, ns)
        return isinstance(v, str) and v in r["symbols"]
    if k in ("record", "error"):
        r, _ = names.resolve(s, ns)
        return isinstance(v, dict) and set(v.keys()) == {f["name"] for f in r["fields"]}
    if k == "map":
        return isinstance(v, dict)
    if k == "array":
        return isinstance(v, list)
    return False


def encode(names, s, ns, v):
    r, rns = names.resolve(s, ns)
    if isinstance(r, list):
        hits = [i for i, b in enumerate(r) if matches(names, b, rns, v)]
        if len(hits) != 1:
            raise ValueError(f"cannot tell the union branch of {v!r} in {r} ({hits})")
        i = hits[0]
        return {"branch": i, "value": encode(names, r[i], rns, v)}
    k = r if isinstance(r, str) else r["type"]
    if k == "null":
        assert v is None
        return None
    if k in ("boolean", "int", "long", "string", "enum"):
        return v
    if k == "float":
        return "f32:" + struct.pack(">f", v).hex()
    if k == "double":
        return "f64:" + struct.pack(">d", v).hex()
    if k in ("bytes", "fixed"):
        return bytes(v).hex()
    if k == "array":
        return [encode(names, r["items"], rns, x) for x in v]
    if k == "map":
        return [[key, encode(names, r["values"], rns, x)] for key, x in v.items()]
    if k in ("record", "error"):
        return [[f["name"], encode(names, f["type"], rns, v[f["name"]])] for f in r["fields"]]
    raise ValueError(f"unknown type {k}")


def main():
    written = 0
    for sub in sorted(os.listdir(FIXTURES)):
        d = os.path.join(FIXTURES, sub)
        if not os.path.isdir(d):
            continue
        for fname in sorted(os.listdir(d)):
            if not fname.endswith(".avro"):
                continue
            path = os.path.join(d, fname)
            with open(path, "rb") as f:
                r = fastavro.reader(f)
                raw_schema = json.loads(r.metadata["avro.schema"])
                rows = list(r)
            names = Names()
            names.collect(raw_schema)
            out = [encode(names, raw_schema, "", row) for row in rows]
            os.makedirs(os.path.join(EXPECTED, sub), exist_ok=True)
            target = os.path.join(EXPECTED, sub, fname + ".json")
            with open(target, "w") as f:
                json.dump({"reader": f"fastavro {fastavro.__version__}", "rows": out}, f, indent=None)
                f.write("\n")
            written += 1
    print(f"wrote {written} expected files under {EXPECTED}", file=sys.stderr)


if __name__ == "__main__":
    main()
