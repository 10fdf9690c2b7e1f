"""avrow for polars: ``scan_avro`` returns a ``polars.LazyFrame`` whose scan is avrow's reader,
registered as a polars IO plugin, so that polars pushes down the columns a query uses (only
those are decoded), the row limit (reading stops once it is reached) and filters (applied to
each batch as it is decoded).

>>> import avrow.polars                                                   # doctest: +SKIP
>>> avrow.polars.scan_avro("data/*.avro").select("id").head(10).collect()  # doctest: +SKIP

For a whole file, ``polars.from_arrow(avrow.read_avro(path))`` is the same data eagerly.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import avrow

__all__ = ["scan_avro"]


def scan_avro(
    source: Any,
    *,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
    reader_schema: Optional[Union[str, Dict[str, Any]]] = None,
    max_recursion_depth: int = 16,
) -> "polars.LazyFrame":  # noqa: F821
    """A lazy scan of Avro files (a path, a glob, a list of paths, or ``bytes``; not a file
    object, which a scan could read only once). Arguments as :func:`avrow.open_avro`."""
    import polars as pl

    try:
        from polars.io.plugins import register_io_source
    except ImportError as e:
        raise ImportError(
            f"avrow.polars needs polars with IO plugins (polars.io.plugins.register_io_source); "
            f"polars {pl.__version__} has none: upgrade polars"
        ) from e

    if hasattr(source, "read"):
        raise TypeError("scan_avro needs a path, a glob, a list of paths or bytes, not a file object")
    if isinstance(source, (str, os.PathLike)):
        source = avrow._paths([source])
    elif isinstance(source, (list, tuple)):
        source = avrow._paths(source)
    elif isinstance(source, memoryview):
        source = source.tobytes()

    def open_reader(columns: Optional[List[str]], rows: Optional[int]) -> avrow.Reader:
        size = batch_size or rows
        return avrow.open_avro(
            source,
            columns=columns,
            batch_size=None if size is None else max(1, min(size, 1 << 20)),
            threads=threads,
            reader_schema=reader_schema,
            max_recursion_depth=max_recursion_depth,
        )

    with open_reader(None, None) as r:
        schema = pl.from_arrow(r.schema.empty_table()).schema

    def batches(
        with_columns: Optional[List[str]],
        predicate: Optional[Any],
        n_rows: Optional[int],
        hint: Optional[int],
    ) -> Iterator[pl.DataFrame]:
        left = n_rows
        if left == 0:
            return
        with open_reader(with_columns, hint if batch_size is None else batch_size) as reader:
            for batch in reader:
                df = pl.from_arrow(batch)
                if with_columns is not None:
                    df = df.select(with_columns)
                if predicate is not None:
                    df = df.filter(predicate)
                if left is not None:
                    df = df.head(left)
                    left -= df.height
                yield df
                if left == 0:
                    return

    return register_io_source(
        batches, schema=schema, explain_name="avrow", explain_detail=_describe(source)
    )


def _describe(source: Any) -> str:
    if isinstance(source, list):
        return source[0] if len(source) == 1 else f"{source[0]} and {len(source) - 1} more"
    return f"<{len(source)} bytes>"
