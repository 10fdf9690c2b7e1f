"""avrow: Apache Avro to Apache Arrow, fast.

Read Avro container files into pyarrow Tables (:func:`read_avro`) or streams of record
batches (:func:`open_avro`), inspect them (:func:`read_schema`, :func:`read_info`), and write
Arrow data as Avro (:func:`write_avro`). Decoding runs in Rust, on every core by default, with
the GIL released; the data reaches Python through the Arrow C data interface without copies.

>>> import avrow
>>> table = avrow.read_avro("data.avro", columns=["id", "total"])   # doctest: +SKIP
"""

from __future__ import annotations

import glob as _glob
import os
import tempfile
import warnings
from typing import Any, BinaryIO, Dict, Iterator, List, NamedTuple, Optional, Sequence, Union

import pyarrow as pa

from . import _avrow
from .errors import (
    AvrowError,
    AvrowIOError,
    EncodeError,
    InternalError,
    InvalidArgumentError,
    InvalidFileError,
    SchemaError,
    UnsupportedError,
)

__all__ = [
    "read_avro",
    "open_avro",
    "read_schema",
    "read_info",
    "write_avro",
    "Reader",
    "SkippedBlock",
    "BadBlockWarning",
    "AvrowError",
    "InvalidFileError",
    "SchemaError",
    "AvrowIOError",
    "EncodeError",
    "UnsupportedError",
    "InvalidArgumentError",
    "InternalError",
]

Source = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], bytes, bytearray, memoryview, Any]


def _source(source: Source) -> Any:
    """The extension module's form of a source: a list of paths (globs expanded), bytes, or a
    binary file-like object."""
    if isinstance(source, (bytes, bytearray)):
        return source
    if isinstance(source, memoryview):
        return source.tobytes()
    if isinstance(source, (str, os.PathLike)):
        return _paths([source])
    if hasattr(source, "read"):
        return source
    if isinstance(source, (list, tuple)):
        return _paths(source)
    try:
        # Any other object with the buffer protocol (pyarrow.Buffer, a NumPy array of bytes).
        view = memoryview(source)
    except TypeError:
        view = None
    if view is not None:
        return view.tobytes()
    raise TypeError(
        "source must be a path, a glob, a list of paths, bytes (or another buffer) or a binary "
        "file-like object, "
        f"not {type(source).__name__}"
    )


def _paths(items: Sequence[Any]) -> List[str]:
    paths: List[str] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(
                "a list source holds paths (str or path-like), not "
                f"{type(item).__name__} (bytes are one source: pass them alone)"
            )
        path = os.fspath(item)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if _glob.has_magic(path) and not os.path.exists(path):
            matched = sorted(_glob.glob(path, recursive=True))
            if not matched:
                raise AvrowIOError(f"{path}: no file matches this pattern")
            paths.extend(matched)
        else:
            paths.append(path)
    if not paths:
        raise AvrowIOError("no files to read")
    return paths


class SkippedBlock(NamedTuple):
    """A block that ``skip_bad_blocks=True`` skipped."""

    #: The input's name.
    file: str
    #: The input's position among the reader's inputs.
    file_index: int
    #: The block's index in its file (a damaged stretch hiding several blocks counts as one).
    block: int
    #: The first byte skipped.
    start: int
    #: The byte after the sync marker the reader resynchronised on (or the input's end).
    end: int
    #: The records the block's header declared, when it was readable.
    records: Optional[int]
    #: Why the block could not be read.
    error: AvrowError


class BadBlockWarning(UserWarning):
    """:func:`read_avro` with ``skip_bad_blocks=True`` skipped a block (the warning's text names
    the file, block, byte range and error)."""


class Reader:
    """Record batches of Avro data, decoded as they are asked for (memory stays bounded by a
    few batches). Iterate it for :class:`pyarrow.RecordBatch` objects, or hand it to any
    consumer of the Arrow PyCapsule stream interface (``pyarrow.RecordBatchReader.from_stream``,
    ``pyarrow.table``, polars, DuckDB), which takes the remaining batches without copies.

    Errors while iterating are :class:`AvrowError`; a consumer of the C stream sees the same
    message as its own error type.
    """

    def __init__(self, inner: "_avrow.Reader") -> None:
        self._inner = inner
        try:
            self._schema = pa.Schema._import_from_c_capsule(inner.__arrow_c_schema__())
        except pa.ArrowInvalid as e:
            inner.close()
            if "Recursion level" in str(e):
                # pyarrow imports at most 64 levels of nested types; a recursive type unrolled
                # max_recursion_depth times through maps and arrays can nest deeper.
                raise SchemaError(
                    f"the Arrow schema nests deeper than pyarrow can import ({e}): recursive "
                    "types are unrolled max_recursion_depth times; pass a smaller "
                    "max_recursion_depth"
                ) from e
            raise
        self._skipped: List[SkippedBlock] = []

    @property
    def skipped_blocks(self) -> List["SkippedBlock"]:
        """The blocks skipped so far (with ``skip_bad_blocks=True``), in the order met: each a
        :class:`SkippedBlock` with the file, block index, byte range, declared record count
        and the error that made it unreadable."""
        self._collect_skipped()
        return list(self._skipped)

    def _collect_skipped(self) -> None:
        for item in self._inner.take_skipped():
            self._skipped.append(SkippedBlock(**item))

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the batches (known before the first one is decoded)."""
        return self._schema

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def __next__(self) -> pa.RecordBatch:
        batch = self.read_next_batch()
        if batch is None:
            raise StopIteration
        return batch

    def read_next_batch(self) -> Optional[pa.RecordBatch]:
        """The next batch, or ``None`` at the end."""
        batch = self._inner.read_next_batch()
        self._collect_skipped()
        return None if batch is None else pa.record_batch(batch)

    def read_all(self) -> pa.Table:
        """The remaining batches as one :class:`pyarrow.Table`."""
        table = pa.table(self._inner.read_all())
        self._collect_skipped()
        return table

    def __arrow_c_schema__(self) -> Any:
        return self._inner.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._inner.__arrow_c_stream__(requested_schema)

    def close(self) -> None:
        """Stop reading and release the input."""
        self._inner.close()

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"avrow.Reader(schema={self._schema!r})"


def open_avro(
    source: Source,
    *,
    columns: Optional[Sequence[str]] = None,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
    reader_schema: Optional[Union[str, Dict[str, Any]]] = None,
    max_recursion_depth: int = 16,
    utf8_view: bool = False,
    skip_bad_blocks: bool = False,
    parquet_compatible: bool = False,
    max_block_size: Optional[int] = None,
) -> Reader:
    """Open Avro data for reading batch by batch.

    ``source``: a path (``str`` or path-like), a glob (``"data/*.avro"``), a list of paths
    (read in order, as one stream), ``bytes``/``bytearray``/``memoryview`` (or any object with
    the buffer protocol, such as ``pyarrow.Buffer``) holding a whole file, or a binary
    file-like object (read with its ``read`` method). Files whose writer
    schemas differ are read as their merged schema (fields some files lack are null there,
    numbers widened, enum symbols and union branches joined; the Avro schema is the
    ``avro.schema`` metadata of ``Reader.schema``); schemas that do not merge raise
    :class:`avrow.errors.InvalidArgumentError` naming the file and field.

    ``columns``: the columns to decode, as names or dotted paths into records
    (``"lines.sku"``); the others are skipped; the columns kept come in the file's order (a
    projection, as the Rust reader's and the CLI's ``--columns``; ``table.select([...])``
    reorders). ``batch_size``: rows per batch (default 8192).
    ``threads``: decoding threads (default and 0: every core; 1 decodes on the calling
    thread).
    ``reader_schema``: an Avro schema (JSON text or a dict) to read the data as (schema
    resolution: fields added with defaults, removed, reordered, promoted).
    ``max_recursion_depth``: how deep recursive types are followed (default 16; a type that
    refers to itself more than once, a tree, only as deep as 4,096 columns allow, or 65,536
    when a depth is given). ``utf8_view``: strings as
    ``string_view`` instead of ``string``. ``max_block_size``: the most bytes a block may
    hold, stored or decompressed (default 1 GiB): a larger one raises
    :class:`InvalidFileError`, as a lying block size would.
    ``skip_bad_blocks``: skip a damaged block whole, resynchronise on the next sync marker and
    go on (:attr:`Reader.skipped_blocks` lists what was skipped); by default the first damaged
    block raises :class:`InvalidFileError`.
    ``parquet_compatible``: give the columns that Parquet writers (``pyarrow.parquet``)
    cannot store the form ``avrow convert`` writes to Parquet: a general union becomes a
    struct of its non-null branches (``member0``, ``member1``, ...; exactly the row's branch
    set, null for the ``null`` branch), a ``duration`` its 12 bytes (months, days,
    milliseconds, little-endian), a record without fields a struct with one null child
    ``__empty``; other columns are unchanged.

    >>> import pyarrow.parquet as pq                                       # doctest: +SKIP
    >>> pq.write_table(avrow.read_avro("cdc.avro", parquet_compatible=True), "cdc.parquet")  # doctest: +SKIP
    """
    for name, value in (
        ("threads", threads),
        ("batch_size", batch_size),
        ("max_recursion_depth", max_recursion_depth),
        ("max_block_size", max_block_size),
    ):
        _check_count(name, value)
    if isinstance(columns, (str, bytes)):
        raise InvalidArgumentError(
            f"columns must be a list of names or dotted paths, not one string: [{columns!r}]"
        )
    if columns is not None:
        columns = list(columns)
        for c in columns:
            if not isinstance(c, str):
                raise InvalidArgumentError(
                    f"columns must be names or dotted paths (str), not {type(c).__name__}: {c!r}"
                )
    return Reader(
        _avrow.open(
            _source(source),
            columns=None if columns is None else list(columns),
            batch_size=batch_size,
            threads=threads,
            reader_schema=_schema_json(reader_schema),
            max_recursion_depth=max_recursion_depth,
            utf8_view=utf8_view,
            skip_bad_blocks=bool(skip_bad_blocks),
            parquet_compatible=bool(parquet_compatible),
            max_block_size=max_block_size,
        )
    )


def read_avro(
    source: Source,
    *,
    columns: Optional[Sequence[str]] = None,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
    reader_schema: Optional[Union[str, Dict[str, Any]]] = None,
    max_recursion_depth: int = 16,
    utf8_view: bool = False,
    skip_bad_blocks: bool = False,
    parquet_compatible: bool = False,
    max_block_size: Optional[int] = None,
) -> pa.Table:
    """Read Avro data whole into a :class:`pyarrow.Table`; arguments as :func:`open_avro`.

    With ``skip_bad_blocks=True`` each skipped block is reported as a :class:`BadBlockWarning`.

    >>> import avrow, polars as pl                                       # doctest: +SKIP
    >>> df = pl.from_arrow(avrow.read_avro("data.avro"))                 # doctest: +SKIP
    """
    reader = open_avro(
        source,
        columns=columns,
        batch_size=batch_size,
        threads=threads,
        reader_schema=reader_schema,
        max_recursion_depth=max_recursion_depth,
        utf8_view=utf8_view,
        skip_bad_blocks=skip_bad_blocks,
        parquet_compatible=parquet_compatible,
        max_block_size=max_block_size,
    )
    table = reader.read_all()
    for b in reader.skipped_blocks:
        warnings.warn(
            f"{b.file}: block {b.block} (bytes {b.start}..{b.end}) skipped: {b.error}",
            BadBlockWarning,
            stacklevel=2,
        )
    return table


def read_schema(source: Source) -> str:
    """The writer schema of Avro data as Avro JSON text; of several files (a list or a glob),
    the schema :func:`read_avro` reads them as together (their merged schema where their
    writer schemas differ)."""
    return _avrow.read_schema(_source(source))


def read_info(source: Source) -> Dict[str, Any]:
    """What the header and the block headers of Avro data say, without decoding records:
    ``codec``, ``sync_marker`` (hex), ``blocks``, ``records``, ``compressed_bytes`` (of the
    blocks' data), ``header_bytes``, ``metadata`` (``dict`` of ``bytes``) and ``schema``
    (JSON text). One file: a list of paths or a glob naming several raises ``ValueError``
    (``[avrow.read_info(p) for p in paths]`` describes each)."""
    return _avrow.read_info(_source(source))


def write_avro(
    data: Any,
    dest: Union[str, "os.PathLike[str]", BinaryIO],
    *,
    codec: str = "deflate",
    level: Optional[int] = None,
    block_size: Optional[int] = None,
    threads: Optional[int] = None,
    avro_schema: Optional[Union[str, Dict[str, Any]]] = None,
    metadata: Optional[Dict[str, Union[str, bytes]]] = None,
    fsync: bool = False,
    record_name: Optional[str] = None,
) -> int:
    """Write Arrow data as an Avro container file; returns the rows written.

    ``data``: anything exporting the Arrow PyCapsule interface: ``__arrow_c_stream__``
    (:class:`pyarrow.Table`, :class:`pyarrow.RecordBatchReader`, a polars ``DataFrame``, an
    :class:`avrow.Reader`) or ``__arrow_c_array__`` (:class:`pyarrow.RecordBatch`, a struct
    array). ``dest``: a path, or a binary file-like object (anything with ``write``).
    ``codec``: ``none``, ``deflate`` (default: every Avro reader has it), ``snappy``, ``zstd``,
    ``bzip2`` or ``xz``; ``level`` its level. ``block_size``: uncompressed bytes per block
    (default 1 MiB). ``threads``: encoding threads (default and 0: every core).
    ``avro_schema``: the Avro schema to write (default: the one avrow's reader recorded in the
    Arrow schema, else derived from it). ``record_name``: the derived schema's record name,
    ``"name"`` or ``"namespace.name"`` (default ``topLevelRecord``; a recorded schema keeps its
    own). ``metadata``: extra header entries.

    A path is written under a temporary name beside it and renamed when complete (for a
    symbolic link, beside the file it names, which is replaced: the link stays, unless
    another user owns it in a shared directory such as ``/tmp``; a replaced file's
    permissions are kept); a file object receives the file only once it is complete. On an
    error nothing is left behind, but in a named pipe or a device such as ``/dev/null`` or
    ``/dev/stdout``, which are written into directly.
    ``fsync``: a path's data is synced to disk before the rename, so that a power loss leaves
    the old file or the whole new one (by default, as with ``open``, the operating system
    writes it back in its own time; a file object is the caller's to sync).

    >>> avrow.write_avro(table, "out.avro", codec="zstd")                # doctest: +SKIP
    """
    for name, value in (("block_size", block_size), ("threads", threads)):
        _check_count(name, value)
    if level is not None and (not isinstance(level, int) or isinstance(level, bool) or not -(1 << 31) <= level < 1 << 31):
        raise InvalidArgumentError(f"level must be an integer, not {level!r}")
    if not isinstance(codec, str):
        raise InvalidArgumentError(f"codec must be a string, not {codec!r}")
    if not isinstance(fsync, bool):
        raise InvalidArgumentError(f"fsync must be True or False, not {fsync!r}")
    if record_name is not None and not isinstance(record_name, str):
        raise InvalidArgumentError(f"record_name must be a string, not {record_name!r}")
    if type(data).__module__.split(".")[0] == "polars" and hasattr(data, "to_arrow"):
        # polars exports a Null column (all None) with a validity buffer, which the C Data
        # import on the Rust side refuses ("Null doesn't expect buffer at index 0"); its
        # pyarrow table, without copying the data, is imported as is.
        try:
            data = data.to_arrow()
        except pa.ArrowException as e:
            # (A type pyarrow has no counterpart for, such as polars' Int128.)
            raise SchemaError(f"the polars DataFrame has no Arrow form pyarrow takes: {e}") from e
    if not hasattr(data, "__arrow_c_stream__") and hasattr(data, "__arrow_c_array__"):
        try:
            data = pa.Table.from_batches([pa.record_batch(data)])
        except pa.ArrowException as e:
            raise SchemaError(
                f"data exporting __arrow_c_array__ must be a record batch or a struct array: {e}"
            ) from e
    # A reader's batches may come from Python code (a generator): an exception it raises
    # reaches the Rust side as a C stream error, so it is kept and raised as itself (a
    # KeyboardInterrupt stays one) instead of as that error.
    raised: List[BaseException] = []
    if isinstance(data, pa.RecordBatchReader):
        data = pa.RecordBatchReader.from_batches(data.schema, _keeping_errors(data, raised))
    try:
        return _write(data, dest, fsync, codec, level, block_size, threads, avro_schema, metadata, record_name)
    except AvrowError as e:
        if raised:
            raise raised[0] from e
        raise


def _keeping_errors(reader: "pa.RecordBatchReader", raised: List[BaseException]) -> Iterator["pa.RecordBatch"]:
    """The batches of ``reader``; an exception reading them is also put in ``raised``."""
    try:
        yield from reader
    except GeneratorExit:
        # (The stream closed early: not an error of the source.)
        raise
    except BaseException as e:
        raised.append(e)
        raise


def _write(data, dest, fsync, codec, level, block_size, threads, avro_schema, metadata, record_name) -> int:
    meta = None
    if metadata is not None:
        meta = {}
        for k, v in metadata.items():
            if not isinstance(k, str):
                raise InvalidArgumentError(f"metadata keys must be strings, not {k!r}")
            if isinstance(v, str):
                meta[k] = v.encode()
            elif isinstance(v, (bytes, bytearray, memoryview)):
                meta[k] = bytes(v)
            else:
                raise InvalidArgumentError(
                    f"metadata[{k!r}] must be str or bytes, not {type(v).__name__}"
                )
    options = dict(
        codec=codec,
        level=level,
        block_size=block_size,
        threads=threads,
        avro_schema=_schema_json(avro_schema),
        metadata=meta,
        record_name=record_name,
    )
    if isinstance(dest, (str, os.PathLike)):
        return _avrow.write(data, os.fspath(dest), fsync=fsync, **options)
    if not hasattr(dest, "write"):
        raise TypeError(f"dest must be a path or a binary file-like object, not {type(dest).__name__}")
    # The file is made whole on disk first, so that an error leaves the file object untouched.
    with tempfile.TemporaryDirectory(prefix="avrow-") as tmp:
        path = os.path.join(tmp, "out.avro")
        rows = _avrow.write(data, path, **options)
        with open(path, "rb") as f:
            _copy_out(f, dest)
    return rows


def _copy_out(src, dest) -> None:
    """Copy `src` to the file object `dest` whole: a raw stream's `write` may take fewer bytes
    than offered and says how many (`None` taken as all, as most file-likes return nothing;
    a non-blocking raw stream, whose `None` means none, is not supported)."""
    while True:
        chunk = src.read(1 << 20)
        if not chunk:
            return
        while chunk:
            n = dest.write(chunk)
            if n is None or n >= len(chunk):
                break
            if n <= 0:
                raise AvrowIOError(f"{dest!r} took none of {len(chunk)} bytes")
            chunk = chunk[n:]


def _check_count(name: str, value: Any) -> None:
    """A count argument: ``None`` or a non-negative ``int`` (not a ``bool``) below 2^63."""
    if value is not None and (
        not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 63
    ):
        raise InvalidArgumentError(f"{name} must be a non-negative integer, not {value!r}")


def _schema_json(schema: Optional[Union[str, Dict[str, Any]]]) -> Optional[str]:
    if schema is None or isinstance(schema, str):
        return schema
    import json

    return json.dumps(schema)
