"""Shared paths and helpers of the avrow Python tests."""

import datetime
import decimal
import glob
import math
import os
import uuid

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
#: Real files written by Java (Spark), C and Python Avro (a copy of the shared fixture set).
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "readers", "tests", "data", "fixtures", "**", "*.avro"), recursive=True))
#: The four benchmark shapes' samples.
SAMPLES = sorted(glob.glob(os.path.join(ROOT, "datasets", "samples", "*.avro")))
ORDER = os.path.join(ROOT, "datasets", "samples", "order.avro")


def norm(v):
    """A value in a form both readers' values reach: maps as sorted item lists, UUIDs as
    strings, NaN as a marker, timestamps as UTC instants, durations as (months, days, ms)."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and type(v).__name__ == "MonthDayNano":
        return ("duration", v.months, v.days, v.nanoseconds // 1_000_000)
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return v.normalize() if v.is_finite() else v
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.timezone.utc)
    return v


def norm_fastavro(v, schema):
    """fastavro's value of `schema`, with the conventions of `norm` (maps are dicts on both
    sides; a duration is 12 bytes in fastavro)."""
    if isinstance(schema, dict) and schema.get("logicalType") == "duration" and isinstance(v, (bytes, bytearray)):
        months, days, ms = (int.from_bytes(v[i:i + 4], "little") for i in (0, 4, 8))
        return ("duration", months, days, ms)
    return norm(v)


@pytest.fixture
def order_path():
    return ORDER
