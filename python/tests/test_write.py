"""Writing: files avrow writes read back unchanged by fastavro and by avrow, under every codec;
values the Avro schema cannot hold are errors naming column and row, and leave no file."""

import json
import os

import fastavro
import pyarrow as pa
import pytest

import avrow
from conftest import ORDER, SAMPLES, norm


@pytest.mark.parametrize("codec", ["none", "deflate", "snappy", "zstd", "bzip2", "xz"])
def test_round_trip_through_fastavro(tmp_path, codec):
    for path in SAMPLES:
        table = avrow.read_avro(path)
        out = tmp_path / (os.path.basename(path) + "." + codec + ".avro")
        assert avrow.write_avro(table, out, codec=codec, block_size=64 << 10) == table.num_rows
        assert avrow.read_avro(out).equals(table)
        with open(out, "rb") as f:
            back = [norm(r) for r in fastavro.reader(f)]
        with open(path, "rb") as f:
            orig = [norm(r) for r in fastavro.reader(f)]
        assert back == orig
        # The writer schema is the original one (avrow's reader recorded it).
        assert avrow.read_schema(out) == avrow.read_schema(path)


def test_any_arrow_stream_and_metadata(tmp_path):
    table = pa.table({"x": pa.array([1, 2, None], pa.int64()), "s": ["a", "b", "c"]})
    out = tmp_path / "t.avro"
    avrow.write_avro(table.to_batches()[0], out, metadata={"origin": "test", "raw": b"\x00\x01"})
    info = avrow.read_info(out)
    assert info["metadata"]["origin"] == b"test"
    assert info["metadata"]["raw"] == b"\x00\x01"
    assert info["codec"] == "deflate"
    assert avrow.read_avro(out).to_pylist() == table.to_pylist()
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1))
    avrow.write_avro(reader, out, codec="snappy")
    assert avrow.read_avro(out).to_pylist() == table.to_pylist()
    with pytest.raises(TypeError):
        avrow.write_avro([1, 2, 3], out)


def test_with_fsync_the_file_is_written_and_replaced(tmp_path):
    table = pa.table({"x": pa.array([1, 2, None], pa.int64())})
    out = tmp_path / "synced.avro"
    out.write_bytes(b"replace me")
    assert avrow.write_avro(table, out, fsync=True) == 3
    assert avrow.read_avro(out).to_pylist() == table.to_pylist()
    assert os.listdir(tmp_path) == ["synced.avro"]


def test_bad_values_are_errors_and_leave_no_file(tmp_path):
    table = pa.table({"x": pa.array([1, None, 3], pa.int64())})
    schema = '{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}'
    out = tmp_path / "bad.avro"
    with pytest.raises(avrow.EncodeError) as e:
        avrow.write_avro(table, out, avro_schema=schema)
    assert e.value.column_path == "x"
    assert e.value.row == 1
    assert not out.exists()
    assert os.listdir(tmp_path) == []
    with pytest.raises(avrow.InvalidArgumentError, match="codec"):
        avrow.write_avro(table, out, codec="lz4")


def test_file_objects_polars_and_c_array_inputs(tmp_path):
    import io

    import polars as pl

    table = pa.table({"x": pa.array([1, 2, None], pa.int64()), "s": ["a", "b", "c"]})
    # A binary file object gets the whole file; fastavro reads it.
    buf = io.BytesIO()
    assert avrow.write_avro(table, buf, codec="zstd") == 3
    buf.seek(0)
    assert [norm(r) for r in fastavro.reader(buf)] == [norm(r) for r in table.to_pylist()]
    assert avrow.read_avro(buf.getvalue()).to_pylist() == table.to_pylist()
    # A polars DataFrame (its __arrow_c_stream__).
    out = tmp_path / "polars.avro"
    df = pl.DataFrame({"x": [1, 2, 3], "s": ["a", None, "c"]})
    assert avrow.write_avro(df, out, codec="snappy") == 3
    with open(out, "rb") as f:
        assert list(fastavro.reader(f)) == df.to_dicts()
    # Only __arrow_c_array__ (a struct array behind a minimal wrapper).
    batch = table.to_batches()[0]

    class ArrayOnly:
        def __arrow_c_array__(self, requested_schema=None):
            return batch.__arrow_c_array__(requested_schema)

    out = tmp_path / "array.avro"
    assert avrow.write_avro(ArrayOnly(), out) == 3
    assert avrow.read_avro(out).to_pylist() == table.to_pylist()


def test_failed_write_to_a_file_object_writes_nothing():
    import io

    table = pa.table({"x": pa.array([1, None], pa.int64())})
    schema = '{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}'
    buf = io.BytesIO()
    with pytest.raises(avrow.EncodeError):
        avrow.write_avro(table, buf, avro_schema=schema)
    assert buf.getvalue() == b""


@pytest.mark.parametrize(
    "kwargs",
    [{"block_size": -1}, {"threads": -2}, {"level": 1 << 40}, {"codec": 3}, {"threads": "2"}, {"fsync": 1},
     {"threads": 1 << 70}, {"block_size": True}, {"metadata": {"k": 5}}, {"metadata": {"k": [1, 2]}},
     {"metadata": {1: b"x"}}],
)
def test_bad_write_arguments_are_avrow_errors(tmp_path, kwargs):
    table = pa.table({"x": [1]})
    with pytest.raises(avrow.InvalidArgumentError):
        avrow.write_avro(table, tmp_path / "x.avro", **kwargs)
    assert os.listdir(tmp_path) == []


def test_record_name_names_a_derived_schema(tmp_path):
    table = pa.table({"id": pa.array([1, 2], pa.int64())})
    path = tmp_path / "named.avro"
    avrow.write_avro(table, path, record_name="com.acme.Item")
    with open(path, "rb") as f:
        raw = json.loads(fastavro.reader(f).metadata["avro.schema"])
    assert (raw.get("namespace"), raw["name"]) in [("com.acme", "Item"), (None, "com.acme.Item")]
    with pytest.raises(avrow.AvrowError, match="not a valid Avro"):
        avrow.write_avro(table, tmp_path / "bad.avro", record_name="1x")
    assert not (tmp_path / "bad.avro").exists()


def test_null_columns_write_the_null_branch_of_their_union(tmp_path):
    # A column of Arrow's null type (`pa.nulls`, an all-None polars column) against a union
    # with null: each value is the null branch (it was written as nothing, a corrupt file).
    out = tmp_path / "n.avro"
    for union in (["null", "string"], ["string", "null"], ["null"]):
        schema = {"type": "record", "name": "R", "fields": [
            {"name": "c", "type": union}, {"name": "x", "type": "long"}]}
        table = pa.table({"c": pa.nulls(3), "x": pa.array([1, 2, 3], pa.int64())})
        assert avrow.write_avro(table, out, avro_schema=schema) == 3
        with open(out, "rb") as f:
            assert list(fastavro.reader(f)) == [{"c": None, "x": x} for x in (1, 2, 3)]
    # A table read by avrow (its writer schema recorded), a column replaced by nulls.
    table = avrow.read_avro(ORDER)
    i = table.schema.get_field_index("note")
    edited = table.set_column(i, pa.field("note", pa.null()), pa.nulls(table.num_rows))
    avrow.write_avro(edited, out)
    with open(out, "rb") as f:
        back = list(fastavro.reader(f))
    assert len(back) == table.num_rows
    assert all(r["note"] is None for r in back)
    assert [r["id"] for r in back] == table.column("id").to_pylist()


def test_every_input_buffer_is_released_when_write_returns(tmp_path):
    # Many batches on several threads: the workers release their slices of the input before
    # handing back their blocks (they released them after, which could run into the
    # interpreter's exit: an abort in pyarrow's memory pool).
    before = pa.total_allocated_bytes()
    batch = pa.record_batch({"x": pa.array(range(100), pa.int64())})
    table = pa.Table.from_batches([batch] * 5000)
    del batch
    for _ in range(3):
        avrow.write_avro(table, tmp_path / "many.avro", threads=2, block_size=4096)
    del table
    assert pa.total_allocated_bytes() == before


def test_dictionaries_with_null_values_polars_nulls_and_union_branches(tmp_path):
    out = tmp_path / "d.avro"
    # A null among a dictionary's values (pyarrow's `null_encoding="encode"`) is a null.
    d = pa.array(["x", None, "y", None]).dictionary_encode(null_encoding="encode")
    assert d.null_count == 0 and d.dictionary.null_count == 1
    avrow.write_avro(pa.table({"c": d}), out)
    with open(out, "rb") as f:
        assert [r["c"] for r in fastavro.reader(f)] == ["x", None, "y", None]
    # A polars column of None alone (Arrow's null type).
    import polars as pl
    avrow.write_avro(pl.DataFrame({"x": [None, None], "y": [1, 2]}), out)
    with open(out, "rb") as f:
        assert list(fastavro.reader(f)) == [{"x": None, "y": 1}, {"x": None, "y": 2}]
    # A plain column takes the union branch of its own type, not the first it fits.
    schema = lambda t: {"type": "record", "name": "R", "fields": [{"name": "c", "type": t}]}
    for column, union, expected in [
        (pa.array(["a"]), ["bytes", "string"], "a"),
        (pa.array([2 ** 40], pa.int64()), ["int", "long"], 2 ** 40),
        (pa.array([b"\xff"]), ["string", "bytes"], b"\xff"),
    ]:
        avrow.write_avro(pa.table({"c": column}), out, avro_schema=schema(union))
        with open(out, "rb") as f:
            assert [r["c"] for r in fastavro.reader(f)] == [expected]


def test_a_recursive_table_is_written_with_its_recursive_schema(tmp_path):
    # Recursion through an array and a map: the unrolled type ends in an empty Null column.
    tree = {"type": "record", "name": "Tree", "namespace": "t", "fields": [
        {"name": "v", "type": "int"},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "children", "type": {"type": "array", "items": "Tree"}},
        {"name": "named", "type": {"type": "map", "values": "Tree"}}]}
    leaf = lambda v: {"v": v, "kind": "B", "children": [], "named": {}}
    records = [
        {"v": 1, "kind": "A", "children": [leaf(2), {"v": 3, "kind": "A", "children": [leaf(4)],
                                                      "named": {"x": leaf(5)}}], "named": {}},
        leaf(6),
    ]
    src = tmp_path / "tree.avro"
    with open(src, "wb") as f:
        fastavro.writer(f, tree, records)
    table = avrow.read_avro(str(src), max_recursion_depth=5)
    out = tmp_path / "out.avro"
    avrow.write_avro(table, str(out), codec="none")
    with open(out, "rb") as f:
        reader = fastavro.reader(f)
        assert reader.writer_schema["name"] == "t.Tree"
        assert list(reader) == records


def _sliced_nested_tables():
    """Tables holding structs inside structs, fixed-size lists and sparse unions of structs,
    and lists of them: whole, sliced, and as chunks of slices."""
    s = pa.struct
    n = 12
    columns = {
        "struct_struct": pa.array(
            [None if i == 4 else {"z": {"w": float(i)}, "k": i} for i in range(n)],
            s([("z", s([("w", pa.float64())])), ("k", pa.int64())]),
        ),
        "fixed_list_struct": pa.array(
            [[{"x": i}, {"x": -i}] for i in range(n)], pa.list_(s([("x", pa.int64())]), 2)
        ),
        "list_struct_struct": pa.array(
            [[{"a": {"b": str(i * 10 + j)}} for j in range(i % 3)] for i in range(n)],
            pa.list_(s([("a", s([("b", pa.string())]))])),
        ),
        "sparse_union": pa.UnionArray.from_sparse(
            pa.array([0, 1] * (n // 2), pa.int8()),
            [
                pa.array([{"x": i} for i in range(n)], s([("x", pa.int64())])),
                pa.array([str(i) for i in range(n)]),
            ],
        ),
    }
    whole = pa.table(columns)
    yield "whole", whole
    yield "slice", whole.slice(3, 6)
    yield "slice of a slice", whole.slice(2, 9).slice(1, 5)
    yield "chunks of slices", pa.Table.from_batches(
        [b for b in whole.slice(1, 10).to_batches(max_chunksize=3)]
    )


@pytest.mark.parametrize("name,table", list(_sliced_nested_tables()))
def test_sliced_tables_of_nested_structs_write_their_own_rows(tmp_path, name, table):
    # A sliced struct inside a struct panicked in arrow's C stream import (the offset applied
    # twice), or read the rows after the slice.
    path = tmp_path / "out.avro"
    assert avrow.write_avro(table, path) == table.num_rows
    back = avrow.read_avro(path)
    assert back.num_rows == table.num_rows
    for column in ("struct_struct", "fixed_list_struct", "list_struct_struct"):
        assert back.column(column).to_pylist() == table.column(column).to_pylist(), column
    with open(path, "rb") as f:
        records = list(fastavro.reader(f))
    assert [r["struct_struct"] for r in records] == table.column("struct_struct").to_pylist()
    expected = table.column("sparse_union").to_pylist()
    assert [r["sparse_union"] for r in records] == expected


@pytest.mark.parametrize("exc", [RuntimeError("source failed"), KeyboardInterrupt()])
def test_an_exception_of_the_source_is_raised_as_itself(tmp_path, exc):
    # It came back as InvalidArgumentError (the C stream's error), so `except
    # KeyboardInterrupt` never ran.
    schema = pa.schema([("a", pa.int64())])

    def batches():
        yield pa.record_batch([pa.array([1])], schema=schema)
        raise exc

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(type(exc)) as raised:
        avrow.write_avro(reader, tmp_path / "out.avro")
    assert raised.value is exc
    assert isinstance(raised.value.__cause__, avrow.AvrowError)
    assert os.listdir(tmp_path) == []


def test_a_missing_directory_is_named_as_the_destination(tmp_path):
    dest = tmp_path / "missing" / "out.avro"
    with pytest.raises(avrow.AvrowIOError) as raised:
        avrow.write_avro(pa.table({"a": [1]}), dest)
    assert str(dest) in str(raised.value) and ".tmp" not in str(raised.value)


def test_times_outside_a_day_and_text_that_is_not_a_uuid_are_encode_errors(tmp_path):
    path = tmp_path / "out.avro"
    for column in (
        pa.array([0, 90_000_000], pa.time32("ms")),
        pa.array([0, 100_000], pa.time32("s")),
        pa.array([0, -5], pa.time64("us")),
    ):
        with pytest.raises(avrow.EncodeError, match="outside a day"):
            avrow.write_avro(pa.table({"t": column}), path)
    assert not path.exists()
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}}]}
    with pytest.raises(avrow.EncodeError, match="is not a uuid"):
        avrow.write_avro(pa.table({"id": ["not-a-uuid"]}), path, avro_schema=schema)
    good = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
    avrow.write_avro(pa.table({"id": [good]}), path, avro_schema=schema)
    with open(path, "rb") as f:
        assert [str(r["id"]) for r in fastavro.reader(f)] == [good]


@pytest.mark.parametrize("threads", [1, 2])
def test_an_all_null_dictionary_column_is_written_as_nulls(tmp_path, threads):
    # pyarrow's dictionary_encode of an all-null column has an empty dictionary: it aborted the
    # interpreter (a panic on a pool thread) or raised a PanicException.
    import polars as pl

    path = str(tmp_path / "d.avro")
    for index in (pa.int8(), pa.uint64()):
        col = pa.array([None, None], pa.string()).dictionary_encode().cast(pa.dictionary(index, pa.string()))
        assert avrow.write_avro(pa.table({"d": col}), path, threads=threads) == 2
        with open(path, "rb") as f:
            assert [r["d"] for r in fastavro.reader(f)] == [None, None]
    frame = pl.DataFrame({"c": pl.Series([None, None], dtype=pl.Categorical)})
    assert avrow.write_avro(frame, path, threads=threads) == 2
    with open(path, "rb") as f:
        assert [r["c"] for r in fastavro.reader(f)] == [None, None]


@pytest.mark.parametrize("codes", [[2, 4], [1, 0], [0, 1]])
def test_union_children_take_their_own_branches_whatever_their_type_codes(tmp_path, codes):
    kids = [pa.array([1 << 40], pa.int64()), pa.array([7], pa.int16())]
    u = pa.UnionArray.from_dense(pa.array(codes, pa.int8()), pa.array([0, 0], pa.int32()), kids, ["a", "b"], codes)
    path = str(tmp_path / "u.avro")
    avrow.write_avro(pa.table({"u": u}), path, codec="none")
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        # (pyarrow's union children are nullable: the union has a null branch.)
        assert reader.writer_schema["fields"][0]["type"] == ["null", "long", "int"]
        assert [r["u"] for r in reader] == [1 << 40, 7]
    back = avrow.read_avro(path).column("u").chunks[0]
    assert back.type_codes.to_pylist() == [1, 2]


def test_inputs_pyarrow_cannot_take_are_schema_errors(tmp_path):
    import polars as pl

    path = str(tmp_path / "x.avro")
    with pytest.raises(avrow.SchemaError, match="polars DataFrame"):
        avrow.write_avro(pl.DataFrame({"i": pl.Series([1], dtype=pl.Int128)}), path)
    with pytest.raises(avrow.SchemaError, match="record batch or a struct array"):
        avrow.write_avro(pa.array([1, 2]), path)
    assert not os.path.exists(path)


def test_a_nested_projection_is_written_with_its_records_names(tmp_path):
    import io

    schema = {"type": "record", "name": "r", "namespace": "com.acme", "fields": [
        {"name": "a", "type": "long"},
        {"name": "b", "type": {"type": "record", "name": "B", "fields": [
            {"name": "x", "type": "int"}, {"name": "y", "type": "string"}]}}]}
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [{"a": 1, "b": {"x": 2, "y": "z"}}])
    path = str(tmp_path / "p.avro")
    avrow.write_avro(avrow.read_avro(buf.getvalue(), columns=["b.y"]), path)
    written = json.loads(avrow.read_schema(path))
    assert written["name"] == "com.acme.r"
    assert written["fields"][0]["type"]["name"] == "com.acme.B"
    assert [f["name"] for f in written["fields"][0]["type"]["fields"]] == ["y"]
    with open(path, "rb") as f:
        assert list(fastavro.reader(f)) == [{"b": {"y": "z"}}]


@pytest.mark.skipif(os.name != "posix", reason="symbolic links, modes and FIFOs")
def test_links_permissions_pipes_and_devices_are_written_as_open_would(tmp_path):
    import stat
    import threading

    table = pa.table({"x": [1, 2, 3]})
    # A link stays a link: the file it names is replaced, with its permissions.
    target = tmp_path / "data.avro"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    link = tmp_path / "latest.avro"
    os.symlink("data.avro", link)
    assert avrow.write_avro(table, link) == 3
    assert os.path.islink(link)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert avrow.read_avro(target).equals(table)
    assert sorted(os.listdir(tmp_path)) == ["data.avro", "latest.avro"]
    # A character device and a named pipe are written into, not replaced by a file.
    assert avrow.write_avro(table, "/dev/null") == 3
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    # (A daemon: a write that failed before opening the pipe must not hang the run.)
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    assert avrow.write_avro(table, fifo) == 3
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert avrow.read_avro(got[0]).equals(table)


def test_a_file_object_that_takes_part_of_each_write_gets_every_byte(tmp_path):
    class Trickle:
        def __init__(self):
            self.data = bytearray()

        def write(self, b):
            part = bytes(b)[:7]
            self.data += part
            return len(part)

    table = pa.table({"x": list(range(1000)), "s": [str(i) for i in range(1000)]})
    out = Trickle()
    assert avrow.write_avro(table, out) == 1000
    assert avrow.read_avro(bytes(out.data)).equals(table)

    class Stuck:
        def write(self, b):
            return 0

    with pytest.raises(avrow.AvrowIOError):
        avrow.write_avro(table, Stuck())
