"""Reading: every fixture and sample against fastavro (an independent reader), every kind of
source, streaming in bounded batches, projection, reader schemas and threads."""

import glob
import io
import json
import os
import pathlib
import shutil

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import avrow
from conftest import FIXTURES, ORDER, SAMPLES, norm


def fastavro_rows(path):
    with open(path, "rb") as f:
        return [norm(r) for r in fastavro.reader(f)]


def avrow_rows(table):
    return [norm(r) for r in table.to_pylist(maps_as_pydicts="strict")]


@pytest.mark.parametrize("path", FIXTURES + SAMPLES, ids=lambda p: os.path.relpath(p, os.path.dirname(os.path.dirname(p))))
def test_every_file_equals_fastavro(path):
    table = avrow.read_avro(path)
    assert avrow_rows(table) == fastavro_rows(path)


def test_there_are_fixtures():
    assert len(FIXTURES) >= 20 and len(SAMPLES) == 4


def test_sources_path_pathlike_list_glob_bytes_and_file_objects(tmp_path):
    want = avrow.read_avro(ORDER)
    data = pathlib.Path(ORDER).read_bytes()
    assert avrow.read_avro(pathlib.Path(ORDER)).equals(want)
    assert avrow.read_avro(data).equals(want)
    assert avrow.read_avro(bytearray(data)).equals(want)
    assert avrow.read_avro(memoryview(data)).equals(want)
    assert avrow.read_avro(pa.py_buffer(data)).equals(want)
    assert avrow.read_avro(io.BytesIO(data)).equals(want)
    with open(ORDER, "rb") as f:
        assert avrow.read_avro(f).equals(want)
    # A list and a glob: the files in order, as one table.
    for i in range(3):
        shutil.copy(ORDER, tmp_path / f"part-{i}.avro")
    both = avrow.read_avro([ORDER, pathlib.Path(ORDER)])
    assert both.num_rows == 2 * want.num_rows
    assert both.slice(want.num_rows).equals(want)
    globbed = avrow.read_avro(str(tmp_path / "part-*.avro"))
    assert globbed.num_rows == 3 * want.num_rows
    with pytest.raises(avrow.AvrowIOError, match="no file matches"):
        avrow.read_avro(str(tmp_path / "nothing-*.avro"))
    with pytest.raises(TypeError):
        avrow.read_avro(42)


def test_bytes_are_read_in_place_and_held_while_read():
    # `bytes` are lent to the reader, not copied: the reader holds the object until it is done
    # (and on its worker threads), then lets it go.
    import gc
    import sys
    import time

    want = avrow.read_avro(ORDER)
    data = pathlib.Path(ORDER).read_bytes()
    baseline = sys.getrefcount(data)
    for threads in (1, 2):
        reader = avrow.open_avro(data, batch_size=100, threads=threads)
        assert sys.getrefcount(data) > baseline
        first = reader.read_next_batch()
        rest = list(reader)
        assert pa.Table.from_batches([first, *rest], schema=reader.schema).equals(want)
        reader.close()
        del reader, first, rest
        gc.collect()
        # Workers let go of the source before they hand over their batches, so the reader's
        # close releases the last reference; were one dropped on a worker thread without the
        # GIL, pyo3 would release it when the extension next takes the GIL (any call into it).
        for _ in range(200):
            avrow.read_schema(ORDER)
            if sys.getrefcount(data) == baseline:
                break
            time.sleep(0.01)
        assert sys.getrefcount(data) == baseline, threads
    # The only reference to the bytes may be the reader's.
    reader = avrow.open_avro(pathlib.Path(ORDER).read_bytes(), threads=2)
    gc.collect()
    assert reader.read_all().equals(want)


def test_streaming_in_bounded_batches():
    want = avrow.read_avro(ORDER)
    reader = avrow.open_avro(ORDER, batch_size=100)
    assert reader.schema == want.schema
    batches = list(reader)
    assert all(b.num_rows <= 100 for b in batches)
    assert len(batches) >= want.num_rows // 100
    assert pa.Table.from_batches(batches, schema=reader.schema).equals(want)
    # Exhausted: no more batches.
    assert reader.read_next_batch() is None


def test_arrow_stream_consumers_take_the_reader():
    want = avrow.read_avro(ORDER)
    got = pa.RecordBatchReader.from_stream(avrow.open_avro(ORDER, batch_size=256)).read_all()
    assert got.equals(want)
    assert pa.table(avrow.open_avro(ORDER)).equals(want)
    # Handed over: the reader itself is used up.
    reader = avrow.open_avro(ORDER)
    pa.RecordBatchReader.from_stream(reader).read_all()
    with pytest.raises(avrow.AvrowError):
        next(iter(reader))


def test_polars_and_duckdb_consume_the_stream():
    pl = pytest.importorskip("polars")
    want = avrow.read_avro(ORDER, columns=["id", "total"])
    df = pl.from_arrow(avrow.read_avro(ORDER, columns=["id", "total"]))
    assert df.height == want.num_rows
    assert df["total"].sum() == pytest.approx(pc.sum(want["total"]).as_py())
    # polars straight from the stream interface.
    lazy = pl.from_arrow(pa.RecordBatchReader.from_stream(avrow.open_avro(ORDER, columns=["id"])))
    assert lazy.height == want.num_rows
    duckdb = pytest.importorskip("duckdb")
    reader = avrow.open_avro(ORDER, columns=["id", "total"], batch_size=100)
    got = duckdb.sql("SELECT count(*), sum(total) FROM reader").fetchall()[0]
    assert got[0] == want.num_rows
    assert got[1] == pytest.approx(pc.sum(want["total"]).as_py())


def test_columns_decode_only_those():
    full = avrow.read_avro(ORDER)
    part = avrow.read_avro(ORDER, columns=["total", "id"])
    # File order, as the writer schema has them.
    assert part.column_names == ["id", "total"]
    assert part.equals(full.select(["id", "total"]))
    nested = avrow.read_avro(ORDER, columns=["lines.sku"])
    skus = [[l["sku"] for l in ls] for ls in full.column("lines").to_pylist()]
    assert [[l["sku"] for l in ls] for ls in nested.column("lines").to_pylist()] == skus
    with pytest.raises(avrow.SchemaError, match="nope"):
        avrow.read_avro(ORDER, columns=["nope"])


def test_reader_schema_resolution():
    reader_schema = {
        "type": "record", "name": "Order", "namespace": "bench",
        "fields": [
            {"name": "total", "type": "double"},
            {"name": "id", "type": "long"},
            {"name": "channel", "type": "string", "default": "web"},
        ],
    }
    full = avrow.read_avro(ORDER)
    for schema in (reader_schema, json.dumps(reader_schema)):
        t = avrow.read_avro(ORDER, reader_schema=schema)
        assert t.column_names == ["total", "id", "channel"]
        assert t.column("id").equals(full.column("id"))
        assert set(t.column("channel").to_pylist()) == {"web"}
    bad = dict(reader_schema, fields=[{"name": "missing", "type": "int"}])
    with pytest.raises(avrow.SchemaError, match="missing"):
        avrow.read_avro(ORDER, reader_schema=bad)
    with pytest.raises(avrow.SchemaError):
        avrow.read_avro(ORDER, reader_schema="{not json")


def test_one_thread_equals_the_default():
    for path in SAMPLES:
        assert avrow.read_avro(path, threads=1).equals(avrow.read_avro(path))
        assert avrow.read_avro(path, threads=2, batch_size=333).equals(avrow.read_avro(path))


def test_utf8_view():
    t = avrow.read_avro(ORDER, columns=["customer"], utf8_view=True)
    assert t.schema.field("customer").type == pa.string_view()
    assert t.column("customer").to_pylist() == avrow.read_avro(ORDER, columns=["customer"]).column("customer").to_pylist()


def test_schema_and_info_match_fastavro():
    for path in FIXTURES + SAMPLES:
        with open(path, "rb") as f:
            r = fastavro.reader(f)
            header_schema = r.metadata["avro.schema"]
            codec = r.codec
            rows = sum(1 for _ in r)
        assert json.loads(avrow.read_schema(path)) == json.loads(header_schema)
        info = avrow.read_info(path)
        assert info["records"] == rows
        assert info["codec"] == codec
        assert info["metadata"]["avro.schema"] == header_schema.encode()
        assert info["blocks"] >= 1


def test_info_of_several_files_is_refused_and_one_file_of_a_list_is_described(tmp_path):
    # Counting only the first file's blocks for a list or glob of several misled.
    paths = []
    for i, n in enumerate((3, 5)):
        paths.append(str(tmp_path / f"p{i}.avro"))
        avrow.write_avro(pa.table({"a": pa.array(range(n))}), paths[-1])
    with pytest.raises(ValueError, match="2 files"):
        avrow.read_info(paths)
    with pytest.raises(ValueError, match="2 files"):
        avrow.read_info(str(tmp_path / "p*.avro"))
    assert avrow.read_info(paths[1:])["records"] == 5
    assert avrow.read_avro(paths).num_rows == 8


def test_recursion_depth_zero_reads_nested_records(tmp_path):
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "b", "type": {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]}}]}
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [{"b": {"x": 1}}])
    assert avrow.read_avro(buf.getvalue(), max_recursion_depth=0).to_pylist() == [{"b": {"x": 1}}]


def test_ctrl_c_stops_a_read_between_batches(tmp_path):
    import _thread
    import signal
    import threading

    n = 2_000_000
    table = pa.table({"a": pa.array(range(n), pa.int64()), "s": pa.array(["xyz"] * n)})
    path = tmp_path / "big.avro"
    avrow.write_avro(table, path, codec="none")
    # Python's own handler, even where SIGINT was ignored when the interpreter started (a
    # background job of a non-interactive shell): then interrupt_main() would do nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # One call that decodes 20 000 batches in Rust: the signal must stop it inside,
        # between batches, and leave the rest of the file unread.
        reader = avrow.open_avro(path, batch_size=100, threads=1)
        threading.Timer(0.02, _thread.interrupt_main).start()
        with pytest.raises(KeyboardInterrupt):
            reader.read_all()
        assert reader.read_next_batch() is not None, "the read ran to the end of the file"
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_file_object_through_the_stream_interface():
    # The file object is read on avrow's thread, which takes the GIL; the consumer's thread
    # must not hold it while waiting for a batch.
    data = pathlib.Path(ORDER).read_bytes()
    want = avrow.read_avro(ORDER)
    got = pa.RecordBatchReader.from_stream(avrow.open_avro(io.BytesIO(data), batch_size=100)).read_all()
    assert got.equals(want)
    duckdb = pytest.importorskip("duckdb")
    reader = avrow.open_avro(io.BytesIO(data), columns=["id"], batch_size=100)
    assert duckdb.sql("SELECT count(*) FROM reader").fetchall()[0][0] == want.num_rows
