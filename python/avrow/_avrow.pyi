"""Type stubs of the extension module (the Rust half of avrow); use the functions of the
``avrow`` package, which normalise their arguments, rather than these."""

from typing import Any, Dict, List, Optional, Tuple, Union

_RawSource = Union[List[str], bytes, bytearray, Any]

class Reader:
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any: ...
    def read_next_batch(self) -> Optional[Batch]: ...
    def read_all(self) -> Batches: ...
    def close(self) -> None: ...
    def take_skipped(self) -> List[Dict[str, Any]]: ...

class Batch:
    @property
    def num_rows(self) -> int: ...
    def __arrow_c_array__(self, requested_schema: Optional[Any] = None) -> Tuple[Any, Any]: ...

class Batches:
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Optional[Any] = None) -> Any: ...

def open(
    source: _RawSource,
    columns: Optional[List[str]] = None,
    batch_size: Optional[int] = None,
    threads: Optional[int] = None,
    reader_schema: Optional[str] = None,
    max_recursion_depth: Optional[int] = None,
    utf8_view: bool = False,
    skip_bad_blocks: bool = False,
    parquet_compatible: bool = False,
    max_block_size: Optional[int] = None,
) -> Reader: ...
def read_schema(source: _RawSource) -> str: ...
def read_info(source: _RawSource) -> Dict[str, Any]: ...
def write(
    data: Any,
    path: str,
    codec: str = "deflate",
    level: Optional[int] = None,
    block_size: Optional[int] = None,
    threads: Optional[int] = None,
    avro_schema: Optional[str] = None,
    metadata: Optional[Dict[str, bytes]] = None,
    fsync: bool = False,
    record_name: Optional[str] = None,
) -> int: ...
def build_info() -> str: ...
