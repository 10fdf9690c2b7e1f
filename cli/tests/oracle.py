#!/usr/bin/env python3
"""Independent check of `avrow convert` outputs, used by the CLI integration tests.

Reads the Avro inputs with fastavro and the output with pyarrow (Parquet, Arrow IPC file and
stream, CSV, NDJSON), and compares row counts, column names and values.

    oracle.py --format parquet --output out.parquet [--columns a,b.c] [--limit N]
              [--json-reader pyarrow|stdlib] in1.avro [in2.avro ...]
    oracle.py --jobs jobs.json

Prints one JSON object ({"rows": N, "columns": [...], "values_checked": K}) per check (a list
with --jobs) and exits 0 when every output matches; prints the first difference on stderr and
exits 1 otherwise. `--columns` and `--limit` describe what the conversion was asked for.

Binary formats (Parquet, IPC) are compared value by value, deeply. Text formats are compared
the way they are written: CSV cells are read back as text (pyarrow, every column as string)
and compared with the formatted Avro values (integers, booleans, strings exactly; floats
within 1e-6 relative; nested values parsed as JSON); NDJSON is read by pyarrow for the row
count and schema and by Python's json module for values. Leaf values whose text form is a
formatting choice (bytes, decimals, dates and times) are not compared in text formats.
"""

import argparse
import datetime
import decimal
import json
import math
import sys
import uuid

import fastavro
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.ipc as pa_ipc
import pyarrow.json as pa_json
import pyarrow.parquet as pa_parquet


class Mismatch(Exception):
    pass


def projection_tree(columns):
    tree = {}
    for path in columns:
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})
    return tree


def project(value, tree):
    """Keep only the projected fields of records, through arrays (like avrow's projection)."""
    if not tree or value is None:
        return value
    if isinstance(value, list):
        return [project(v, tree) for v in value]
    if isinstance(value, dict):
        return {k: project(v, tree[k]) for k, v in value.items() if k in tree}
    return value


def read_avro(paths, columns, limit, reader_schema=None):
    rows = []
    names = None
    record_schema = True
    if reader_schema:
        with open(reader_schema, encoding="utf-8") as f:
            reader_schema = json.load(f)
    for path in paths:
        with open(path, "rb") as f:
            if reader_schema:
                reader = fastavro.reader(f, reader_schema=reader_schema)
                schema = reader_schema
            else:
                reader = fastavro.reader(f)
                schema = reader.writer_schema
            if names is None:
                record_schema = isinstance(schema, dict) and schema.get("type") in (
                    "record", "error")
                names = [f["name"] for f in schema["fields"]] if record_schema else ["value"]
            for record in reader:
                rows.append(record if record_schema else {"value": record})
    tree = projection_tree(columns) if columns else None
    if tree:
        names = [n for n in names if n in tree]
        rows = [project(r, tree) for r in rows]
    if limit is not None:
        rows = rows[:limit]
    return names, rows


def norm(value):
    """A comparable form of a fastavro or pyarrow value."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {k: norm(v) for k, v in value}  # a pyarrow map
        return [norm(v) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return value.normalize() if value.is_finite() else str(value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def same(expected, actual, where, tolerant=False):
    if isinstance(expected, float) and isinstance(actual, float):
        if expected == actual or (tolerant and math.isclose(expected, actual, rel_tol=1e-6)):
            return
        raise Mismatch(f"{where}: expected {expected!r}, got {actual!r}")
    if expected == {} and actual == []:
        return  # an empty map, as pyarrow lists it
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual) and set(expected) != set(actual):
            raise Mismatch(f"{where}: keys {list(expected)} != {list(actual)}")
        for k in expected:
            same(expected[k], actual.get(k), f"{where}.{k}", tolerant)
        return
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            raise Mismatch(f"{where}: {len(expected)} items expected, got {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            same(e, a, f"{where}[{i}]", tolerant)
        return
    if tolerant and isinstance(expected, (int, float)) and isinstance(actual, (int, float)) \
            and not isinstance(expected, bool) and not isinstance(actual, bool):
        if math.isclose(float(expected), float(actual), rel_tol=1e-6):
            return
    if expected != actual:
        raise Mismatch(f"{where}: expected {expected!r}, got {actual!r}")


def read_binary(fmt, path):
    if fmt == "parquet":
        return pa_parquet.read_table(path)
    if fmt == "arrow":
        with pa_ipc.open_file(path) as f:
            return f.read_all()
    if fmt == "arrows":
        with pa_ipc.open_stream(path) as f:
            return f.read_all()
    raise ValueError(fmt)


MAPPING_KEY = b"avrow.parquet.mapping"


def unmap(value, arrow_type, metadata):
    """A value read from Parquet as fastavro gives it, undoing avrow's Parquet mapping
(docs: README, Avro -> Parquet): a union's struct of `member*` children holds the value of its
one non-null member; an empty record's struct holds only `__empty`; a duration is the 12
bytes of Avro's own encoding. The rewritten fields say so in their metadata."""
    if value is None:
        return None
    mapping = (metadata or {}).get(MAPPING_KEY)
    if mapping == b"union":
        set_members = [(f, value[f.name]) for f in arrow_type if value[f.name] is not None]
        if not set_members:
            return None
        if len(set_members) != 1:
            raise Mismatch(f"a union struct with {len(set_members)} members set: {value}")
        f, v = set_members[0]
        return unmap(v, f.type, f.metadata)
    if mapping == b"empty-record":
        return {}
    if pa.types.is_struct(arrow_type):
        return {f.name: unmap(value[f.name], f.type, f.metadata) for f in arrow_type}
    if pa.types.is_map(arrow_type):
        item = arrow_type.item_field
        return [(k, unmap(v, item.type, item.metadata)) for k, v in value]
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        f = arrow_type.value_field
        return [unmap(v, f.type, f.metadata) for v in value]
    return value


def compare_binary(fmt, path, names, rows):
    table = read_binary(fmt, path)
    mapped = fmt == "parquet"
    if table.column_names != names:
        raise Mismatch(f"columns: expected {names}, got {table.column_names}")
    if table.num_rows != len(rows):
        raise Mismatch(f"rows: expected {len(rows)}, got {table.num_rows}")
    checked = 0
    for name in names:
        actual = table.column(name).to_pylist()
        if mapped:
            field = table.schema.field(name)
            actual = [unmap(v, field.type, field.metadata) for v in actual]
        for i, (row, value) in enumerate(zip(rows, actual)):
            expected = row[name]
            if not (type(expected) is type(value) and expected == value):  # fast path
                same(norm(expected), norm(value), f"row {i} column {name}")
            checked += 1
    return checked


def json_form(value):
    """The value as JSON would carry it, or raise LookupError when its text form is a
    formatting choice (bytes, decimals, dates, times, UUIDs)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise LookupError
        return value
    if isinstance(value, dict):
        return {k: json_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_form(v) for v in value]
    raise LookupError


def compare_csv(path, names, rows):
    with open(path, "rb") as f:
        header = f.readline().decode().rstrip("\r\n")
    columns = pa_csv.read_csv(
        path,
        convert_options=pa_csv.ConvertOptions(
            column_types={n: pa.string() for n in names},
            strings_can_be_null=False,
        ),
    )
    if columns.column_names != names:
        raise Mismatch(f"columns: expected {names}, got {columns.column_names} ({header})")
    if columns.num_rows != len(rows):
        raise Mismatch(f"rows: expected {len(rows)}, got {columns.num_rows}")
    checked = 0
    for name in names:
        cells = columns.column(name).to_pylist()
        for i, (row, cell) in enumerate(zip(rows, cells)):
            where = f"row {i} column {name}"
            value = row[name]
            if value is None:
                if cell != "":
                    raise Mismatch(f"{where}: expected an empty cell (null), got {cell!r}")
            elif isinstance(value, bool):
                same("true" if value else "false", cell, where)
            elif isinstance(value, int):
                same(str(value), cell, where)
            elif isinstance(value, float):
                if math.isnan(value):
                    same("NaN", cell, where)
                else:
                    same(value, float(cell), where, tolerant=True)
            elif isinstance(value, str):
                same(value, cell, where)
            elif isinstance(value, (dict, list)):
                try:
                    expected = json_form(value)
                except LookupError:
                    continue
                parsed = json.loads(cell)
                if expected != parsed:  # fast path when equal
                    same(expected, parsed, where, tolerant=True)
            else:
                continue
            checked += 1
    return checked


def compare_ndjson(path, names, rows, json_reader):
    with open(path, "rb") as f:
        empty = f.read(1) == b""
    if json_reader == "pyarrow" and not (empty and not rows):  # pyarrow refuses empty files
        table = pa_json.read_json(path)
        if table.num_rows != len(rows):
            raise Mismatch(f"rows (pyarrow): expected {len(rows)}, got {table.num_rows}")
        if table.column_names != names:
            raise Mismatch(f"columns (pyarrow): expected {names}, got {table.column_names}")
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if len(lines) != len(rows):
        raise Mismatch(f"rows: expected {len(rows)}, got {len(lines)}")
    checked = 0
    for i, (row, line) in enumerate(zip(rows, lines)):
        if list(line) != names:
            raise Mismatch(f"row {i}: keys {list(line)} != {names}")
        for name in names:
            try:
                expected = json_form(row[name])
            except LookupError:
                continue
            if expected != line[name]:  # fast path when equal
                same(expected, line[name], f"row {i} column {name}", tolerant=True)
            checked += 1
    return checked


def check(fmt, output, inputs, columns="", limit=None, json_reader="pyarrow",
          reader_schema=None):
    columns = [c for c in columns.split(",") if c]
    names, rows = read_avro(inputs, columns, limit, reader_schema)
    if fmt == "csv":
        checked = compare_csv(output, names, rows)
    elif fmt == "ndjson":
        checked = compare_ndjson(output, names, rows, json_reader)
    else:
        checked = compare_binary(fmt, output, names, rows)
    return {"rows": len(rows), "columns": names, "values_checked": checked}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", help="a JSON file holding a list of checks "
                        "({format, output, inputs, columns?, limit?, json_reader?, "
                        "reader_schema?}); "
                        "prints a JSON list of reports")
    parser.add_argument("--format", choices=["parquet", "arrow", "arrows", "csv", "ndjson"])
    parser.add_argument("--output")
    parser.add_argument("--columns", default="")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--json-reader", default="pyarrow", choices=["pyarrow", "stdlib"])
    parser.add_argument("inputs", nargs="*")
    args = parser.parse_args()
    if args.jobs:
        with open(args.jobs, encoding="utf-8") as f:
            jobs = json.load(f)
    else:
        if not (args.format and args.output and args.inputs):
            parser.error("--format, --output and inputs are required without --jobs")
        jobs = [{"format": args.format, "output": args.output, "inputs": args.inputs,
                 "columns": args.columns, "limit": args.limit,
                 "json_reader": args.json_reader}]
    reports = []
    for job in jobs:
        try:
            reports.append(check(job["format"], job["output"], job["inputs"],
                                 job.get("columns") or "", job.get("limit"),
                                 job.get("json_reader") or "pyarrow",
                                 job.get("reader_schema")))
        except Mismatch as e:
            print(f"{job['output']}: {e}", file=sys.stderr)
            sys.exit(1)
        except Exception as e:  # a reader failing on the output is a mismatch too
            print(f"{job['output']}: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(1)
    print(json.dumps(reports if args.jobs else reports[0]))


if __name__ == "__main__":
    main()
