"""Random Avro schemas and records, seeded and reproducible, and files of them written by
fastavro (an independent writer): the generator of `test_random.py` and of the CLI's SQL
test (`cli/tests/cli/sql.rs`, which runs it before the package is installed, so nothing
here imports avrow)."""

import datetime
import decimal
import io
import random
import uuid

import fastavro

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


class Gen:
    """A random schema (as JSON) and a function making a random value of it."""

    def __init__(self, rng):
        self.rng = rng
        self.names = 0

    def name(self, kind):
        self.names += 1
        return f"{kind}{self.names}"

    def text(self):
        rng = self.rng
        n = rng.choice([0, 1, 3, 8, 20, 70])
        alphabet = "abcxyz019 _-é漢\U0001f600"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(n + 1)))

    def long(self, bits):
        rng = self.rng
        if rng.random() < 0.1:
            return rng.choice([-(1 << (bits - 1)), (1 << (bits - 1)) - 1, 0, -1])
        return rng.randrange(-(1 << rng.randrange(1, bits)), 1 << rng.randrange(1, bits))

    def schema(self, depth):
        """A schema of nesting at most `depth`, and its value maker."""
        rng = self.rng
        kinds = ["null", "boolean", "int", "long", "float", "double", "bytes", "string", "fixed", "enum",
                 "decimal", "date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros",
                 "local-timestamp-millis", "local-timestamp-micros", "uuid", "duration"]
        if depth > 0:
            kinds += ["record", "record", "array", "map", "nullable", "nullable", "union"]
        kind = rng.choice(kinds)
        if kind == "null":
            return "null", lambda: None
        if kind == "boolean":
            return "boolean", lambda: rng.random() < 0.5
        if kind == "int":
            return "int", lambda: self.long(32)
        if kind == "long":
            return "long", lambda: self.long(64)
        if kind == "float":
            return "float", lambda: rng.choice([0.0, -1.5, float("inf"), float("nan"), 3.25, rng.random() * 1000])
        if kind == "double":
            return "double", lambda: rng.choice([0.0, -0.0, float("-inf"), float("nan"), rng.random() * 1e300])
        if kind == "bytes":
            return "bytes", lambda: rng.randbytes(rng.choice([0, 1, 5, 40, 300]))
        if kind == "string":
            return "string", self.text
        if kind == "fixed":
            size = rng.choice([1, 4, 16, 33])
            return {"type": "fixed", "name": self.name("F"), "size": size}, lambda: rng.randbytes(size)
        if kind == "enum":
            symbols = [f"S{i}" for i in range(rng.randrange(1, 6))]
            return {"type": "enum", "name": self.name("E"), "symbols": symbols}, lambda: rng.choice(symbols)
        if kind == "decimal":
            precision = rng.choice([1, 9, 18, 30, 38])
            scale = rng.randrange(precision + 1)
            if rng.random() < 0.5:
                schema = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
            else:
                size = rng.choice([8, 16])
                size = max(size, (precision * 332 // 100 + 8) // 8 + 1)
                schema = {"type": "fixed", "name": self.name("D"), "size": size, "logicalType": "decimal",
                          "precision": precision, "scale": scale}

            def dec():
                digits = rng.randrange(10 ** rng.randrange(precision + 1))
                return decimal.Decimal(digits * rng.choice([1, -1])).scaleb(-scale)

            return schema, dec
        if kind == "date":
            return {"type": "int", "logicalType": "date"}, \
                lambda: datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randrange(-700000, 2900000))
        if kind == "time-millis":
            return {"type": "int", "logicalType": "time-millis"}, \
                lambda: (datetime.datetime.min + datetime.timedelta(milliseconds=rng.randrange(86400000))).time()
        if kind == "time-micros":
            return {"type": "long", "logicalType": "time-micros"}, \
                lambda: (datetime.datetime.min + datetime.timedelta(microseconds=rng.randrange(86400000000))).time()
        if kind in ("timestamp-millis", "timestamp-micros"):
            unit = "milliseconds" if kind.endswith("millis") else "microseconds"
            return {"type": "long", "logicalType": kind}, \
                lambda: EPOCH + datetime.timedelta(**{unit: rng.randrange(-(10 ** 13), 10 ** 13)})
        if kind in ("local-timestamp-millis", "local-timestamp-micros"):
            unit = "milliseconds" if kind.endswith("millis") else "microseconds"
            return {"type": "long", "logicalType": kind}, \
                lambda: datetime.datetime(1970, 1, 1) + datetime.timedelta(**{unit: rng.randrange(-(10 ** 13), 10 ** 13)})
        if kind == "uuid":
            return {"type": "string", "logicalType": "uuid"}, lambda: uuid.UUID(bytes=rng.randbytes(16))
        if kind == "duration":
            schema = {"type": "fixed", "name": self.name("Dur"), "size": 12, "logicalType": "duration"}
            return schema, lambda: b"".join(rng.randrange(1 << 31).to_bytes(4, "little") for _ in range(3))
        if kind == "record":
            return self.record(depth - 1)
        if kind == "array":
            items, make = self.schema(depth - 1)
            return {"type": "array", "items": items}, \
                lambda: [make() for _ in range(rng.choice([0, 1, 2, 7]))]
        if kind == "map":
            values, make = self.schema(depth - 1)
            return {"type": "map", "values": values}, \
                lambda: {f"k{i}{self.text()}": make() for i in range(rng.choice([0, 1, 3]))}
        if kind == "nullable":
            inner, make = self.schema(depth - 1)
            while inner == "null" or isinstance(inner, list):
                inner, make = self.schema(depth - 1)
            first = rng.random() < 0.7
            schema = ["null", inner] if first else [inner, "null"]
            return schema, lambda: None if rng.random() < 0.3 else make()
        # A general union: branches of distinct kinds, a record value tagged with its branch's
        # name (fastavro's tuple notation); unions whose other values fastavro could write in
        # another branch are left out by `unambiguous`.
        branches, makers, seen = [], [], set()
        for _ in range(rng.randrange(2, 5)):
            b, make = self.schema(depth - 1)
            if has_duration(b):
                continue
            key = b if isinstance(b, str) else b.get("logicalType", b["type"]) if isinstance(b, dict) else "union"
            if key in seen or isinstance(b, list):
                continue
            if isinstance(b, dict) and b["type"] in ("int", "long", "string", "bytes") and b["type"] in seen:
                continue
            seen.add(key)
            if isinstance(b, dict):
                seen.add(b["type"])
            branches.append(b)
            makers.append(make)
        if len(branches) < 2:
            return self.schema(depth)

        def tagged():
            i = rng.randrange(len(branches))
            b = branches[i]
            value = makers[i]()
            if isinstance(b, dict) and b["type"] == "record":
                return (b["name"], value)
            return value

        return branches, tagged

    def record(self, depth):
        rng = self.rng
        fields, makers = [], []
        for i in range(rng.randrange(0 if depth < 2 else 1, 7)):
            s, make = self.schema(depth)
            fields.append({"name": f"f{i}", "type": s})
            makers.append(make)
        name = self.name("R")
        return {"type": "record", "name": name, "fields": fields}, \
            lambda: {f["name"]: m() for f, m in zip(fields, makers)}


def has_duration(schema):
    """Whether a duration is somewhere in `schema` (kept out of general unions, whose values
    `expect` does not walk)."""
    if isinstance(schema, list):
        return any(has_duration(b) for b in schema)
    if isinstance(schema, dict):
        return schema.get("logicalType") == "duration" or any(
            has_duration(x) for x in [schema.get("items"), schema.get("values")] + [f["type"] for f in schema.get("fields", [])]
            if x is not None)
    return False


def unambiguous(schema):
    """Whether fastavro writes every value of `schema` in the branch it was made for: general
    unions whose branches a plain value could match twice (an int and a long, a string and a
    uuid, bytes and a decimal) are left out."""
    if isinstance(schema, list):
        kinds = [b if isinstance(b, str) else b["type"] for b in schema]
        plain = [k for k in kinds if k in ("int", "long", "float", "double", "string", "bytes", "array", "map")]
        if "null" not in kinds or len(schema) > 2:
            if len(plain) != len(set(plain)) or {"int", "long"} <= set(plain) or {"float", "double"} <= set(plain):
                return False
            if sum(k in ("int", "long", "float", "double") for k in plain) > 1:
                return False
            if sum(k in ("array", "map") for k in kinds) > 1 or ("map" in kinds and "record" in kinds):
                return False
            if sum(isinstance(b, dict) and b["type"] == "record" for b in schema) > 1:
                return False
            # fastavro picks a fixed or an enum branch by its value alone.
            if sum(k in ("fixed", "bytes", "string") for k in kinds) > 1 or kinds.count("enum") > 1:
                return False
            # Nor does it tell an enum's symbol from a logical type's value.
            if "enum" in kinds and any(isinstance(b, dict) and "logicalType" in b for b in schema):
                return False
        return all(unambiguous(b) for b in schema)
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            return all(unambiguous(f["type"]) for f in schema["fields"])
        if t == "array":
            return unambiguous(schema["items"])
        if t == "map":
            return unambiguous(schema["values"])
    return True


def case(seed):
    """A random top-level record schema (as JSON) and its records, from `seed`."""
    rng = random.Random(seed)
    while True:
        gen = Gen(rng)
        schema, make = gen.record(3)
        if unambiguous(schema) and schema["fields"]:
            break
    records = [make() for _ in range(rng.choice([1, 7, 150, 1200]))]
    return schema, records


def fastavro_file(schema, records, codec, block):
    """An Avro container file of `records` written by fastavro with `codec`, in blocks of
    about `block` bytes."""
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec, sync_interval=block)
    return buf.getvalue()
