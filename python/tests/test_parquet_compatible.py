"""``parquet_compatible=True``: tables ``pyarrow.parquet`` can write, holding Avro's unions,
durations and records without fields as ``avrow convert`` writes them to Parquet."""

import io
import struct

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import avrow

SCHEMA = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "value", "type": ["null", "string", "long"]},
        {"name": "tags", "type": {"type": "array", "items": ["string", "double"]}},
        {"name": "wait", "type": {"type": "fixed", "name": "Wait", "size": 12, "logicalType": "duration"}},
        {"name": "marker", "type": {"type": "record", "name": "Marker", "fields": []}},
    ],
}


def duration(months, days, millis):
    return struct.pack("<III", months, days, millis)


RECORDS = [
    {"id": i,
     "value": [None, f"s{i}", i * 10][i % 3],
     "tags": [f"t{i}", float(i)][: i % 3],
     "wait": duration(i, 2 * i, 1000 * i),
     "marker": {}}
    for i in range(50)
]


def avro_bytes():
    out = io.BytesIO()
    fastavro.writer(out, SCHEMA, RECORDS, sync_interval=500)
    return out.getvalue()


def expected(record):
    value = record["value"]
    return {
        "id": record["id"],
        "value": None if value is None else {
            "member0": value if isinstance(value, str) else None,
            "member1": value if isinstance(value, int) else None,
        },
        "tags": [
            {"member0": t if isinstance(t, str) else None,
             "member1": t if isinstance(t, float) else None}
            for t in record["tags"]
        ],
        "wait": record["wait"],
        "marker": {"__empty": None},
    }


def test_read_avro_parquet_compatible_writes_to_parquet(tmp_path):
    table = avrow.read_avro(avro_bytes(), parquet_compatible=True, batch_size=7)
    assert pa.types.is_struct(table.schema.field("value").type)
    assert table.schema.field("value").metadata[b"avrow.parquet.mapping"] == b"union"
    assert table.schema.field("wait").type == pa.binary(12)
    out = tmp_path / "events.parquet"
    pq.write_table(table, out)
    back = pq.read_table(out).to_pylist()
    assert back == [expected(r) for r in RECORDS]
    # Unchanged without the flag: the union stays a union.
    plain = avrow.read_avro(avro_bytes())
    assert pa.types.is_union(plain.schema.field("value").type)
    assert plain.num_rows == table.num_rows


def test_open_avro_streams_the_mapped_batches():
    with avrow.open_avro(avro_bytes(), parquet_compatible=True, batch_size=16) as reader:
        stream = pa.RecordBatchReader.from_stream(reader)
        assert stream.schema == reader.schema
        table = stream.read_all()
    assert table.to_pylist() == [expected(r) for r in RECORDS]
    with avrow.open_avro(avro_bytes(), parquet_compatible=True, batch_size=16) as reader:
        batches = list(reader)
    assert pa.Table.from_batches(batches).to_pylist() == [expected(r) for r in RECORDS]


def test_a_union_of_only_null_cannot_be_made_parquet_compatible():
    schema = {"type": "record", "name": "R",
              "fields": [{"name": "a", "type": "long"}, {"name": "n", "type": ["null"]}]}
    out = io.BytesIO()
    fastavro.writer(out, schema, [{"a": 1, "n": None}])
    with pytest.raises(avrow.UnsupportedError, match="only a null branch"):
        avrow.read_avro(out.getvalue(), parquet_compatible=True)
