"""Type stubs of leveldb_table._native, the Rust extension (python/src/)."""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

_Path = Union[str, "PathLike[str]"]
_Bytes = Union[bytes, bytearray]

class ScanIterator(Iterator[Tuple[bytes, bytes]]):
    """(key, value) pairs of a scan, read in batches with the GIL released."""

    def __iter__(self) -> "ScanIterator": ...
    def __next__(self) -> Tuple[bytes, bytes]: ...

class Record:
    """One record of a database directory (``Db.records()``), with the field names of
    ``sst db records --format json``."""

    key: bytes
    value: bytes
    seq: int
    kind: str
    """``"value"`` or ``"deletion"``."""
    status: str
    """``"live"``, ``"shadowed"``, ``"deleted"`` or ``"obsolete_file"``."""
    file: str
    """The file it is in, relative to the directory (``000005.ldb``, ``000003.log``)."""
    offset: int
    """Its data block's offset (tables) or its batch's offset (logs)."""
    block_offset: Optional[int]
    block_size: Optional[int]
    offset_in_block: Optional[int]
    """Tables: the entry's byte offset in the decompressed data block."""
    batch_offset: Optional[int]
    offset_in_batch: Optional[int]
    """Logs: the record's offset in its WriteBatch (its tag byte)."""
    def as_dict(self) -> Dict[str, Any]: ...

class RecordIterator(Iterator[Record]):
    def __iter__(self) -> "RecordIterator": ...
    def __next__(self) -> Record: ...
    def __len__(self) -> int: ...

class IdbRecord:
    """One object-store record of a Chrome IndexedDB directory (``Db.indexeddb()``)."""

    database: Optional[str]
    store: Optional[str]
    database_id: int
    store_id: int
    key: Any
    """The IndexedDB key: int/float, str, bytes (binary), datetime (date), list."""
    value: Any
    """The decoded value (leveldb_table.chrome's mapping); None when ``error`` is set."""
    error: Optional[str]
    version: int
    raw_key: bytes
    raw_value: bytes

class IndexedDbIterator(Iterator[IdbRecord]):
    def __iter__(self) -> "IndexedDbIterator": ...
    def __next__(self) -> IdbRecord: ...

class StorageIterator(Iterator[Any]):
    """Items of localStorage / sessionStorage (``leveldb_table.chrome.StorageItem``)."""

    def __iter__(self) -> "StorageIterator": ...
    def __next__(self) -> Any: ...

class Db:
    """A LevelDB database directory opened read-only: no byte written, no LOCK taken."""

    def __init__(self, path: _Path, salvage: bool = False, verify_checksums: bool = True) -> None: ...
    def get(self, key: _Bytes, at_seq: Optional[int] = None) -> Optional[bytes]: ...
    def scan(
        self,
        start: Optional[_Bytes] = None,
        stop: Optional[_Bytes] = None,
        at_seq: Optional[int] = None,
        reverse: bool = False,
    ) -> ScanIterator: ...
    def records(self) -> RecordIterator: ...
    def indexeddb(self, database: Optional[str] = None, store: Optional[str] = None) -> IndexedDbIterator: ...
    def indexeddb_get(self, key: Any, store: str, database: Optional[str] = None) -> Optional[IdbRecord]: ...
    def local_storage(self) -> StorageIterator: ...
    def session_storage(self) -> StorageIterator: ...
    def info(self) -> Dict[str, Any]: ...
    def damage(self) -> List[Dict[str, Any]]: ...
    @property
    def last_sequence(self) -> int: ...
    @property
    def comparator(self) -> str: ...
    @property
    def path(self) -> Path: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Db": ...
    def __exit__(self, *args: object) -> None: ...

class Table:
    """One table file (.ldb/.sst) opened read-only."""

    def __init__(
        self,
        path: _Path,
        comparator: Optional[str] = None,
        keys: str = "auto",
        verify_checksums: bool = True,
    ) -> None: ...
    def get(self, key: _Bytes, at_seq: Optional[int] = None) -> Optional[bytes]: ...
    def lookup(
        self, key: _Bytes, at_seq: Optional[int] = None
    ) -> Optional[Tuple[str, Optional[bytes], Optional[int]]]: ...
    def scan(
        self,
        start: Optional[_Bytes] = None,
        stop: Optional[_Bytes] = None,
        reverse: bool = False,
    ) -> ScanIterator: ...
    def verify(self) -> Dict[str, Any]: ...
    def stats(self) -> Dict[str, Any]: ...
    @property
    def path(self) -> str: ...
    @property
    def internal_keys(self) -> bool: ...
    def __enter__(self) -> "Table": ...
    def __exit__(self, *args: object) -> None: ...

def parse_internal_key(key: _Bytes) -> Optional[Tuple[bytes, int, str]]: ...
def decode_v8(data: _Bytes) -> Any: ...
