"""Random schema evolutions: files of random schemas written by fastavro, read with a random
reader schema evolved from the writer's (fields dropped, reordered, renamed with aliases,
added with defaults, numbers promoted, strings read as bytes, enums given more symbols, at
every depth of nested records). avrow's resolution equals fastavro's, an implementation of
the specification's rules independent of the Rust crates the Rust tests compare with."""

import copy
import io
import json
import random
import struct

import fastavro
import pytest

import avrow
from random_avro import case, fastavro_file
from test_random import expect, rows

#: A primitive's promotions (the specification's), `bytes` to `string` left out: random bytes
#: are not UTF-8.
PROMOTIONS = {
    "int": ["long", "float", "double"],
    "long": ["float", "double"],
    "float": ["double"],
    "string": ["bytes"],
}

#: Fields a reader adds, with their defaults.
ADDED = [
    {"type": "int", "default": 7},
    {"type": "string", "default": "dflt"},
    {"type": ["null", "long"], "default": None},
    {"type": {"type": "array", "items": "int"}, "default": [1, 2]},
    {"type": "double", "default": 1.5},
    {"type": "boolean", "default": True},
    {"type": {"type": "map", "values": "string"}, "default": {"k": "v"}},
]


def evolve_type(t, rng, promotions=PROMOTIONS):
    """A reader type `t` resolves to (the writer's type, evolved)."""
    if isinstance(t, str):
        if t in promotions and rng.random() < 0.3:
            return rng.choice(promotions[t])
        return t
    if isinstance(t, list):
        # A union's branches keep their types (a writer branch resolves to the first reader
        # branch that matches it, which promotions could change).
        return t
    kind = t["type"]
    if kind == "record":
        return evolve_record(t, rng, promotions=promotions)
    if kind == "array":
        return dict(t, items=evolve_type(t["items"], rng, promotions))
    if kind == "map":
        return dict(t, values=evolve_type(t["values"], rng, promotions))
    if kind == "enum" and rng.random() < 0.4:
        return dict(t, symbols=t["symbols"] + ["ZZ_NEW"])
    return t


def evolve_record(schema, rng, top=False, promotions=PROMOTIONS):
    fields = []
    for f in schema["fields"]:
        if rng.random() < 0.2 and not (top and len(schema["fields"]) == 1):
            continue
        g = dict(f, type=evolve_type(f["type"], rng, promotions))
        if rng.random() < 0.15:
            g["name"], g["aliases"] = "renamed_" + f["name"], [f["name"]]
        fields.append(g)
    for i in range(rng.choice([0, 0, 1, 2])):
        fields.insert(rng.randrange(len(fields) + 1), dict(rng.choice(ADDED), name=f"added{i}"))
    if rng.random() < 0.5:
        rng.shuffle(fields)
    if top and not fields:
        fields.append(dict(ADDED[0], name="added"))
    return dict(schema, fields=fields)


def as_read(value, schema):
    """fastavro's value of reader type `schema`, with ints and longs promoted to `float`
    rounded to 32 bits (fastavro keeps them as Python floats of the writer's value; the
    reader's type, and avrow's `Float32` column, hold the nearest 32-bit float)."""
    if schema == "float" and isinstance(value, float):
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            return {f["name"]: as_read(value[f["name"]], f["type"]) for f in schema["fields"]}
        if t == "array":
            return [as_read(v, schema["items"]) for v in value]
        if t == "map":
            return {k: as_read(v, schema["values"]) for k, v in value.items()}
    return value


@pytest.mark.parametrize("seed", range(40))
def test_random_evolutions_resolve_as_fastavro_resolves(seed):
    schema, records = case(seed)
    rng = random.Random(seed ^ 0xE701)
    data = fastavro_file(schema, records, rng.choice(["null", "deflate"]), rng.choice([200, 4000]))
    for _ in range(3):
        reader = evolve_record(copy.deepcopy(schema), rng, top=True)
        want = [expect(as_read(r, reader), reader)
                for r in fastavro.reader(io.BytesIO(data), reader_schema=reader)]
        got = avrow.read_avro(data, reader_schema=reader, batch_size=rng.choice([None, 7]))
        assert rows(got) == want, (schema, reader)


#: The promotions whose two types merge into one (a string and bytes do not: reading both as
#: one would need a choice only the user can make).
MERGED_PROMOTIONS = {k: v for k, v in PROMOTIONS.items() if k != "string"}


@pytest.mark.parametrize("seed", range(30))
def test_files_of_evolved_schemas_read_together_as_their_merged_schema(seed, tmp_path):
    """Two files, one of a random schema and one of an evolution of it (its records those of
    the first read with the evolved schema), read together with no reader schema: avrow
    merges the two writer schemas, and fastavro, reading each file with that merged schema
    as its reader schema, gets the same rows (so the merged schema is one both writers
    resolve to, by an independent implementation's rules)."""
    schema, records = case(seed)
    rng = random.Random(seed ^ 0x3E76E)
    evolved = evolve_record(copy.deepcopy(schema), rng, top=True, promotions=MERGED_PROMOTIONS)
    first = fastavro_file(schema, records, rng.choice(["null", "deflate"]), rng.choice([200, 4000]))
    evolved_records = list(fastavro.reader(io.BytesIO(first), reader_schema=evolved))
    second = fastavro_file(evolved, evolved_records, "null", rng.choice([300, 5000]))
    paths = [tmp_path / "first.avro", tmp_path / "second.avro"]
    for path, data in zip(paths, [first, second]):
        path.write_bytes(data)
    if rng.random() < 0.5:
        paths.reverse()
    with avrow.open_avro([str(p) for p in paths]) as reader:
        merged = json.loads(reader.schema.metadata[b"avro.schema"])
    assert json.loads(avrow.read_schema([str(p) for p in paths])) == merged
    want = [
        expect(as_read(r, merged), merged)
        for p in paths
        for r in fastavro.reader(io.BytesIO(p.read_bytes()), reader_schema=merged)
    ]
    got = avrow.read_avro([str(p) for p in paths], threads=rng.choice([1, 2]))
    assert rows(got) == want, (schema, evolved, merged)


def test_files_whose_schemas_do_not_merge_raise_naming_the_field(tmp_path):
    for i, t in enumerate(["int", "string"]):
        schema = {"type": "record", "name": "r", "fields": [{"name": "code", "type": t}]}
        (tmp_path / f"{i}.avro").write_bytes(fastavro_file(schema, [{"code": [1, "x"][i]}], "null", 100))
    with pytest.raises(avrow.errors.InvalidArgumentError, match='field "code" of record "r": int in one schema, string in the other'):
        avrow.read_avro([str(tmp_path / "0.avro"), str(tmp_path / "1.avro")])
