"""Read LevelDB databases and tables exactly as LevelDB does, without writing a byte or
taking the LOCK (a live Chrome profile reads as it is, no copy needed).

- ``Db(path, salvage=False)``: a database directory: ``get``, ``scan`` (a streaming
  iterator of ``(key, value)`` bytes), ``records()`` (every record of every file, with
  status and location), ``info()``.
- ``Table(path)``: one ``.ldb``/``.sst`` file: ``get``, ``scan``, ``verify()``,
  ``stats()``.
- Chrome: ``Db.indexeddb()`` (object-store records with names and decoded values),
  ``Db.local_storage()``, ``Db.session_storage()``, ``decode_v8()``; the value types are
  in ``leveldb_table.chrome``.
- Chromium's SQLite IndexedDB: ``SqliteIndexedDb(path)`` (an origin's folder or one
  file, the ``-wal`` included): ``indexeddb()``, ``older_records()``, ``blob()``,
  ``info()``; ``profile(path)``: every storage area of a Chrome or Electron profile.
- Errors are ``leveldb_table.errors`` exceptions carrying ``file`` and ``offset``.

See docs/python.md in the repository.
"""

from . import chrome, errors
from ._native import (
    Db,
    IndexedDbIterator,
    StorageIterator,
    decode_v8,
    Record,
    RecordIterator,
    ScanIterator,
    SqliteIndexedDb,
    Table,
    parse_internal_key,
    profile,
)
from .errors import (
    CorruptionError,
    InvalidArgumentError,
    LevelDBError,
    LevelDBIOError,
    NotFoundError,
    OrderError,
)

__all__ = [
    "Db",
    "Table",
    "Record",
    "RecordIterator",
    "ScanIterator",
    "IndexedDbIterator",
    "StorageIterator",
    "SqliteIndexedDb",
    "profile",
    "parse_internal_key",
    "decode_v8",
    "chrome",
    "errors",
    "LevelDBError",
    "CorruptionError",
    "OrderError",
    "InvalidArgumentError",
    "LevelDBIOError",
    "NotFoundError",
]
