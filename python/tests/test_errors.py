"""Bad input raises avrow's exceptions (never crashes the interpreter), naming the file,
block, offset, record and field like the Rust error does."""

import io
import os

import pytest

import avrow
from conftest import ORDER


def test_missing_file_is_an_io_error(tmp_path):
    missing = str(tmp_path / "missing.avro")
    with pytest.raises(avrow.AvrowIOError) as e:
        avrow.read_avro(missing)
    assert isinstance(e.value, OSError)
    assert e.value.file == missing


def test_not_avro_is_an_invalid_file():
    with pytest.raises(avrow.InvalidFileError, match="magic") as e:
        avrow.read_avro(b"PAR1 not avro at all")
    assert e.value.file == "<bytes>"
    assert e.value.offset == 0
    with pytest.raises(avrow.InvalidFileError):
        avrow.read_avro(b"")


def test_every_truncation_raises_or_reads_whole_blocks():
    data = open(ORDER, "rb").read()
    rows = avrow.read_avro(data).num_rows
    for cut in list(range(0, 700, 37)) + list(range(700, len(data), len(data) // 40)):
        try:
            t = avrow.read_avro(data[:cut])
        except avrow.InvalidFileError as e:
            assert e.file == "<bytes>"
            continue
        # A cut at a block boundary is a shorter valid file.
        assert t.num_rows < rows


def _file(schema: str, blocks):
    """A container file with the null codec and the given (count, data) blocks."""
    def long(v):
        z = (v << 1) ^ (v >> 63)
        out = bytearray()
        while z >= 0x80:
            out.append(z & 0x7F | 0x80)
            z >>= 7
        out.append(z)
        return bytes(out)

    def string(b):
        return long(len(b)) + b

    sync = bytes(range(16))
    out = b"Obj\x01" + long(1) + string(b"avro.schema") + string(schema.encode()) + long(0) + sync
    for count, data in blocks:
        out += long(count) + long(len(data)) + data + sync
    return out, long, string


def test_hostile_counts_are_errors_not_allocations():
    schema = '{"type":"record","name":"R","fields":[{"name":"xs","type":{"type":"array","items":"long"}}]}'
    _, long, _ = _file(schema, [])
    # One record claiming 2^60 items in a few bytes.
    data, _, _ = _file(schema, [(1, long(1 << 60) + b"\x02\x04")])
    with pytest.raises(avrow.InvalidFileError) as e:
        avrow.read_avro(data)
    assert e.value.block == 0
    assert e.value.field_path == "xs"
    # A block claiming 2^62 records.
    data, _, _ = _file(schema, [(1 << 62, b"\x00")])
    with pytest.raises(avrow.InvalidFileError):
        avrow.read_avro(data)


def test_bad_values_name_record_and_field():
    schema = ('{"type":"record","name":"R","fields":[{"name":"a","type":"long"},'
              '{"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"]}}]}')
    _, long, _ = _file(schema, [])
    rows = b"".join(long(i) + long(i % 2) for i in range(5)) + long(5) + long(7)
    data, _, _ = _file(schema, [(6, rows)])
    with pytest.raises(avrow.InvalidFileError, match="record 5") as e:
        avrow.read_avro(data)
    err = e.value
    assert (err.block, err.record, err.field_path) == (0, 5, "e")
    assert err.offset > 0 and err.offset_in_block > 0
    # Iterating reports the same error after the good batches.
    reader = avrow.open_avro(data, batch_size=2)
    with pytest.raises(avrow.InvalidFileError, match="record 5"):
        for _ in reader:
            pass


def test_a_stream_consumer_gets_the_message():
    import pyarrow as pa

    data = open(ORDER, "rb").read()
    cut = data[: len(data) - 100]
    with pytest.raises(pa.ArrowException, match="block"):
        pa.RecordBatchReader.from_stream(avrow.open_avro(cut)).read_all()


def test_invalid_arguments():
    with pytest.raises(avrow.InvalidArgumentError):
        avrow.read_avro(ORDER, batch_size=0)
    with pytest.raises(avrow.InvalidArgumentError, match="threads"):
        avrow.read_avro(ORDER, threads=-1)
    with pytest.raises(ValueError):
        avrow.read_avro(ORDER, batch_size=-5)
    for name in ("batch_size", "threads", "max_recursion_depth", "max_block_size"):
        for value in (1 << 70, True, 2.0):
            with pytest.raises(avrow.InvalidArgumentError, match=name):
                avrow.read_avro(ORDER, **{name: value})
    # One string is not a list of columns (it was read as one column a character).
    with pytest.raises(avrow.InvalidArgumentError, match="list of names"):
        avrow.read_avro(ORDER, columns="id")
    with pytest.raises(avrow.InvalidArgumentError, match="not int: 1"):
        avrow.read_avro(ORDER, columns=[1])
    # Bytes are a source on their own, not a path in a list.
    with open(ORDER, "rb") as f:
        data = f.read()
    with pytest.raises(TypeError, match="bytes are one source"):
        avrow.read_avro([data])
    # A directory says so (it was "No such device").
    with pytest.raises(avrow.AvrowError, match="a directory, not an Avro file"):
        avrow.read_avro(os.path.dirname(ORDER))
    # An absurd thread count is capped, not a thread each.
    assert avrow.read_avro(ORDER, threads=1 << 40).num_rows == avrow.read_avro(ORDER).num_rows


def test_max_block_size_bounds_a_block_and_can_be_raised():
    import fastavro

    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [{"s": "x" * 5000}], codec="deflate")
    data = buf.getvalue()
    for source in (data, io.BytesIO(data)):
        # The stored block (compressed) is small; the decompressed one is not.
        with pytest.raises(avrow.InvalidFileError, match="max_block_size= in Python"):
            avrow.read_avro(source, max_block_size=1000)
    assert avrow.read_avro(data, max_block_size=6000).column("s")[0].as_py() == "x" * 5000


def test_skip_bad_blocks_reads_the_rest_and_reports_what_it_skipped():
    schema = '{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}'
    data, long, _ = _file(schema, [(2, b"\x02\x04"), (2, b"\x06"), (1, b"\x08")])
    # The middle block declares two records but holds one: an error by default...
    with pytest.raises(avrow.InvalidFileError) as e:
        avrow.read_avro(data)
    assert e.value.block == 1
    # ...skipped on request, with a warning naming the block for read_avro...
    with pytest.warns(avrow.BadBlockWarning, match="block 1"):
        t = avrow.read_avro(data, skip_bad_blocks=True)
    assert t.column("x").to_pylist() == [1, 2, 4]
    # ...and listed by the streaming reader.
    with avrow.open_avro(data, skip_bad_blocks=True, threads=1) as r:
        assert [v for b in r for v in b.column(0).to_pylist()] == [1, 2, 4]
        skipped = r.skipped_blocks
    assert len(skipped) == 1
    s = skipped[0]
    assert (s.file, s.file_index, s.block, s.records) == ("<bytes>", 0, 1, 2)
    assert 0 < s.start < s.end <= len(data)
    assert isinstance(s.error, avrow.InvalidFileError)
    assert s.error.block == 1


def test_info_refuses_record_counts_past_u64():
    schema = '{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}'
    # Four blocks declaring 2^62 records each: 2^64 in all.
    data, _, _ = _file(schema, [(1 << 62, b"\x02")] * 4)
    with pytest.raises(avrow.InvalidFileError, match="block 3"):
        avrow.read_info(data)
    data, _, _ = _file(schema, [(1 << 62, b"\x02")] * 3)
    assert avrow.read_info(data)["records"] == 3 << 62


def test_a_file_objects_own_exception_is_raised_as_it_is():
    import io

    data = open(ORDER, "rb").read()

    class Failing(io.RawIOBase):
        def __init__(self, after):
            self.inner = io.BytesIO(data)
            self.after = after

        def readable(self):
            return True

        def read(self, n=-1):
            if self.inner.tell() >= self.after:
                raise ValueError("the disk is on fire")
            return self.inner.read(min(n, 4096))

    # While the header is read (opening), and while blocks are read (iterating).
    for after, call in [(0, avrow.open_avro), (len(data) // 2, avrow.read_avro)]:
        with pytest.raises(ValueError, match="the disk is on fire") as e:
            call(Failing(after), threads=1)
        assert not isinstance(e.value, avrow.AvrowError)
    with pytest.raises(ValueError, match="on fire"):
        avrow.read_info(Failing(len(data) // 2))


def test_times_outside_a_day_are_errors():
    import fastavro

    buf = io.BytesIO()
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "t", "type": {"type": "int", "logicalType": "time-millis"}}]}
    fastavro.writer(buf, schema, [{"t": 5}, {"t": 86_400_000}])
    with pytest.raises(avrow.InvalidFileError, match="outside a day") as e:
        avrow.read_avro(buf.getvalue())
    assert e.value.field_path == "t" and e.value.record == 1


def test_a_schema_nested_deeper_than_pyarrow_imports_says_what_to_lower():
    import fastavro

    tree = {"type": "record", "name": "T", "fields": [
        {"name": "c", "type": ["null", {"type": "map", "values": {"type": "array", "items": "T"}}]}]}
    buf = io.BytesIO()
    fastavro.writer(buf, tree, [{"c": {"k": [{"c": None}]}}, {"c": None}])
    with pytest.raises(avrow.SchemaError, match="max_recursion_depth"):
        avrow.read_avro(buf.getvalue())
    table = avrow.read_avro(buf.getvalue(), max_recursion_depth=8)
    assert table.num_rows == 2
    assert table.column("c")[0].as_py() == [("k", [{"c": None}])]


def test_a_small_block_of_millions_of_records_streams_in_bounded_memory(tmp_path):
    """A 32 KB deflate block of 32M one-byte records is 256 MB of Arrow: `open_avro` hands it
    out in batches as they fill, holding the block's 32 MB of data and a few batches."""
    import subprocess
    import sys
    import zlib

    schema = '{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}'
    rows = 32 << 20
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = packer.compress(bytes(rows)) + packer.flush()
    assert len(data) < 64 << 10
    _, long, string = _file(schema, [])
    sync = bytes(range(16))
    meta = long(2) + string(b"avro.schema") + string(schema.encode())
    meta += string(b"avro.codec") + string(b"deflate") + long(0)
    path = tmp_path / "bomb.avro"
    path.write_bytes(b"Obj\x01" + meta + sync + long(rows) + long(len(data)) + data + sync)
    child = """
import resource, sys, avrow, pyarrow
def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
before = peak()
with avrow.open_avro(sys.argv[1], threads=int(sys.argv[2])) as reader:
    n = sum(batch.num_rows for batch in reader)
print(n, peak() - before)
"""
    grew = {}
    for threads in (1, 2):
        args = [sys.executable, "-c", child, str(path), str(threads)]
        out = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        n, grew[threads] = map(int, out.stdout.split())
        assert n == rows
    # One thread: the data and a window checking it; two: units pause at 64 MiB of batches.
    assert grew[1] < 100 << 20, grew
    assert grew[2] < 160 << 20, grew
