"""avrow's exceptions. Every error avrow raises is an :class:`AvrowError`; its message is the
Rust library's, naming the file, block, byte offset, record and field path where it has them,
and the same facts are attributes (``None`` where they do not apply)."""

from __future__ import annotations

from typing import Optional

__all__ = [
    "AvrowError",
    "InvalidFileError",
    "SchemaError",
    "AvrowIOError",
    "EncodeError",
    "UnsupportedError",
    "InvalidArgumentError",
    "InternalError",
]


class AvrowError(Exception):
    """Base class of avrow's errors."""

    #: The input the error is about (a path, ``<bytes>`` or ``<stream>``).
    file: Optional[str] = None
    #: The index of the container block (0-based).
    block: Optional[int] = None
    #: The byte offset in the file (of the block, for errors inside a block).
    offset: Optional[int] = None
    #: The byte offset of the bad value in the block's decompressed data.
    offset_in_block: Optional[int] = None
    #: The index of the record within its block.
    record: Optional[int] = None
    #: The field path of the bad value (``lines[3].sku``; ``""`` at the top level).
    field_path: Optional[str] = None
    #: Writing: the column path of the value the Avro schema cannot hold.
    column_path: Optional[str] = None
    #: Writing: the row of the value within its batch.
    row: Optional[int] = None


class InvalidFileError(AvrowError):
    """The data is not valid Avro: a bad header, block framing, codec data or record."""


class SchemaError(AvrowError):
    """A schema is invalid, or the data cannot be read as asked (an unknown column, a reader
    schema that does not resolve)."""


class AvrowIOError(AvrowError, OSError):
    """Reading or writing a file failed."""


class EncodeError(AvrowError, ValueError):
    """Writing: a value the Avro schema cannot hold."""


class UnsupportedError(AvrowError, NotImplementedError):
    """Something avrow does not implement (a file compressed with a codec avrow does not know,
    for example; an unknown codec name given to ``write_avro`` is an ``InvalidArgumentError``)."""


class InvalidArgumentError(AvrowError, ValueError):
    """An invalid option or argument."""


class InternalError(AvrowError):
    """A bug in avrow (please report it)."""
