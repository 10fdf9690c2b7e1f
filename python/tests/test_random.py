"""Random schemas and records written by fastavro (an independent writer) under every codec
(`scripts/test` installs fastavro's snappy and zstandard modules), in blocks of random sizes,
read by avrow from bytes and as a stream from a file object: the same records as fastavro
reads, for every Avro type and logical type. And avrow's tables written back by
`write_avro` under the same codec: fastavro reads the same records again."""

import io
import random

import fastavro
import pyarrow as pa
import pytest

import avrow
from conftest import norm, norm_fastavro
from random_avro import case, fastavro_file, has_duration

#: The specification's codecs (fastavro's `lz4` is its own, not Avro's).
CODECS = ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"]
#: Their names in `avrow.write_avro`.
WRITE_CODECS = dict(zip(CODECS, ["none", "deflate", "snappy", "zstd", "bzip2", "xz"]))


def expect(value, schema):
    """fastavro's value of `schema` normalised as `norm` normalises avrow's (durations, which
    fastavro reads as 12 bytes, at any depth)."""
    if isinstance(schema, list):
        if value is None or not has_duration(schema):
            return norm(value)
        return expect(value, next(b for b in schema if b != "null"))
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            return {f["name"]: expect(value[f["name"]], f["type"]) for f in schema["fields"]}
        if t == "array":
            return [expect(v, schema["items"]) for v in value]
        if t == "map":
            return {k: expect(v, schema["values"]) for k, v in value.items()}
    return norm_fastavro(value, schema)


def rows(table):
    return [norm(r) for r in table.to_pylist(maps_as_pydicts="strict")]


@pytest.mark.parametrize("seed", range(40))
def test_random_schemas_every_codec_equal_fastavro(seed):
    schema, records = case(seed)
    rng = random.Random(seed ^ 0x5EED)
    for codec in CODECS:
        data = fastavro_file(schema, records, codec, rng.choice([1, 200, 4000, 64000]))
        want = [expect(r, schema) for r in fastavro.reader(io.BytesIO(data))]
        got = avrow.read_avro(data, batch_size=rng.choice([None, 1, 37]))
        assert rows(got) == want, (codec, schema)
        # The same through the stream, in batches of a random size.
        with avrow.open_avro(io.BytesIO(data), batch_size=rng.choice([5, 512])) as reader:
            streamed = pa.Table.from_batches(list(reader), schema=reader.schema)
        assert streamed.schema == got.schema
        assert rows(streamed) == want, (codec, schema)
        # Written back by avrow (the schema it recorded, or the one given), read by fastavro.
        out = io.BytesIO()
        given = rng.random() < 0.5
        written = avrow.write_avro(got if rng.random() < 0.5 else streamed, out, codec=WRITE_CODECS[codec],
                                   block_size=rng.choice([None, 100, 5000]), threads=rng.choice([None, 1]),
                                   avro_schema=schema if given else None)
        assert written == len(records)
        back = [expect(r, schema) for r in fastavro.reader(io.BytesIO(out.getvalue()))]
        assert back == want, (codec, given, schema)
