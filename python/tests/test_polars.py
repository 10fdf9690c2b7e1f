"""avrow.polars.scan_avro: a polars IO plugin with projection, limit and filter pushdown."""

import pytest

import avrow
from conftest import ORDER, SAMPLES

pl = pytest.importorskip("polars")
import avrow.polars  # noqa: E402


def test_scan_equals_eager_read():
    for path in SAMPLES:
        want = pl.from_arrow(avrow.read_avro(path))
        got = avrow.polars.scan_avro(path).collect()
        assert got.equals(want)


def test_projection_limit_and_filter():
    want = pl.from_arrow(avrow.read_avro(ORDER))
    lf = avrow.polars.scan_avro(ORDER, batch_size=100)
    got = lf.select("id", "total").filter(pl.col("total") > 100).head(7).collect()
    assert got.columns == ["id", "total"]
    assert got.equals(want.select("id", "total").filter(pl.col("total") > 100).head(7))
    assert lf.select(pl.len()).collect().item() == want.height
    assert lf.head(0).collect().height == 0
    assert "avrow" in lf.select("id").explain()


def test_many_files_and_bytes(tmp_path):
    import shutil

    for i in range(2):
        shutil.copy(ORDER, tmp_path / f"p{i}.avro")
    n = avrow.read_avro(ORDER).num_rows
    assert avrow.polars.scan_avro(str(tmp_path / "*.avro")).select(pl.len()).collect().item() == 2 * n
    data = open(ORDER, "rb").read()
    assert avrow.polars.scan_avro(data).collect().height == n
    with open(ORDER, "rb") as f, pytest.raises(TypeError):
        avrow.polars.scan_avro(f)


def test_only_the_used_columns_are_decoded(monkeypatch):
    asked = []
    real = avrow.open_avro

    def spy(*args, **kwargs):
        asked.append(kwargs.get("columns"))
        return real(*args, **kwargs)

    monkeypatch.setattr(avrow, "open_avro", spy)
    lf = avrow.polars.scan_avro(ORDER)
    assert lf.select("total").collect().height > 0
    # The schema probe reads no column list; the scan reads only `total`.
    assert asked[-1] == ["total"]
