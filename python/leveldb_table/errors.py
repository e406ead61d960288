"""Exceptions raised by leveldb_table.

Every error says what went wrong and where: ``kind`` (the library's error variant, e.g.
``"ChecksumMismatch"``), ``file`` (the file it is in, relative to a database directory, or
the table's path), ``offset`` (the file offset of the damaged block, record or field) and
``block`` (``(kind, offset, size)`` of the block, when there is one).

::

    LevelDBError                  every error
     +- CorruptionError           the bytes are damaged or not LevelDB's
     +- OrderError                an order that cannot be verified (unknown comparator,
     |                            keys that fit no order)
     +- InvalidArgumentError      also a ValueError
     +- LevelDBIOError            also an OSError (errno, strerror, filename)
         +- NotFoundError         also a FileNotFoundError
"""

from typing import Optional, Tuple

__all__ = [
    "LevelDBError",
    "CorruptionError",
    "OrderError",
    "InvalidArgumentError",
    "LevelDBIOError",
    "NotFoundError",
]


class LevelDBError(Exception):
    """An error reading LevelDB data, with where it happened."""

    #: The library's error variant, e.g. ``"ChecksumMismatch"``, ``"BadLogRecord"``.
    kind: Optional[str] = None
    #: The file the error is in (relative to the database directory, or a table's path).
    file: Optional[str] = None
    #: The file offset the error is about (a block's start, a log record, the footer).
    offset: Optional[int] = None
    #: ``(block kind, offset, size)`` of the block the error is about.
    block: Optional[Tuple[str, int, int]] = None


class CorruptionError(LevelDBError):
    """The file's bytes are damaged or not a LevelDB file."""


class OrderError(LevelDBError):
    """The key order cannot be verified: a comparator this reader does not have, or keys
    that fit no known order. Reading in a guessed order would give wrong answers."""


class InvalidArgumentError(LevelDBError, ValueError):
    """An argument the library refuses."""


class LevelDBIOError(LevelDBError, OSError):
    """An operating-system error while reading."""


class NotFoundError(LevelDBIOError, FileNotFoundError):
    """A file or directory that does not exist."""
