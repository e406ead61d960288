"""Chrome's values as Python objects: what ``Db.indexeddb()`` and ``decode_v8()`` give.

A decoded value follows the mapping ``sst db scan --format jsonl`` writes as JSON
(docs/indexeddb.md), with Python's own types where they say the same thing exactly:

====================================  ==================================================
JavaScript                            Python
====================================  ==================================================
string                                ``str`` (lone surrogates kept as code points)
number                                ``int`` when integral and within 2**53 (not -0),
                                      else ``float`` (NaN, Infinity and -0 included)
true, false, null, undefined          ``True``, ``False``, ``None``, ``undefined``
BigInt                                ``BigInt`` (an ``int``)
plain object                          ``dict`` (keys ``str``; integer keys as strings)
dense array                           ``list``
holey array, array with properties    ``Array(length, elements, properties)``
Date                                  ``datetime`` (UTC), or ``Date(ms)`` when out of its
                                      range or invalid
RegExp, boxed primitive, Error        ``RegExp``, ``Boxed``, ``JSError`` (stack, cause)
Map, Set                              ``Map(entries)``, ``Set(values)`` (keys may be
                                      unhashable objects)
ArrayBuffer                           ``bytes``; views: ``TypedArray(type, data)``
Blob, File, FileList                  ``Blob``, ``File``, ``FileList``
other platform objects                ``HostObject(type, fields)``
====================================  ==================================================

An object met twice is the same Python object, and cycles are real cycles (where the JSON
writes ``{"$ref": id}``).
"""

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ._native import IdbRecord  # one object-store record (Db.indexeddb() makes them)

__all__ = [
    "undefined",
    "Undefined",
    "BigInt",
    "Array",
    "Date",
    "RegExp",
    "Boxed",
    "Map",
    "Set",
    "TypedArray",
    "JSError",
    "Blob",
    "File",
    "FileList",
    "HostObject",
    "IdbRecord",
    "StorageItem",
]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class Undefined:
    """JavaScript's ``undefined`` (one instance: ``undefined``)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


undefined = Undefined()


class BigInt(int):
    """A JavaScript BigInt: an ``int`` that says it was one (a plain number is ``int`` or
    ``float``)."""

    def __repr__(self) -> str:
        return f"BigInt({int(self)})"


@dataclass(eq=False)
class Array:
    """An array that is not a plain list: holes, or extra properties."""

    length: int
    elements: Dict[int, Any] = field(default_factory=dict)
    properties: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Date:
    """A Date ``datetime`` cannot hold (invalid, or beyond year 1-9999): milliseconds
    since the epoch, as JavaScript keeps it (NaN for an invalid date)."""

    ms: float


def _date(ms: float):
    """A JavaScript time value as a UTC ``datetime``, else ``Date(ms)``."""
    try:
        return _EPOCH + _dt.timedelta(milliseconds=ms)
    except (OverflowError, ValueError):
        return Date(ms)


@dataclass(frozen=True)
class RegExp:
    source: str
    flags: str


@dataclass(frozen=True)
class Boxed:
    """``new Number(..)``, ``new String(..)``, ``Object(1n)``...: the primitive inside."""

    value: Any


@dataclass(eq=False)
class Map:
    """A JavaScript Map: its entries in insertion order."""

    entries: List[Tuple[Any, Any]] = field(default_factory=list)

    def to_dict(self) -> Dict[Any, Any]:
        """The entries as a dict (keys must be hashable)."""
        return dict(self.entries)


@dataclass(eq=False)
class Set:
    """A JavaScript Set: its values in insertion order."""

    values: List[Any] = field(default_factory=list)


@dataclass(frozen=True)
class TypedArray:
    """A view on an ArrayBuffer (``Uint8Array``, ``Float64Array``, ``DataView``...): its
    type and the bytes it sees."""

    type: str
    data: bytes


@dataclass(frozen=True)
class JSError:
    """An Error: its prototype's name, its message, the stack V8 stored with it (``None``
    when it had none as a string) and its ``cause`` (``has_cause`` tells a cause of ``None``
    from none at all; a cause may be any value, an object holding this error included)."""

    name: str
    message: str
    stack: Optional[str] = None
    cause: Any = field(default=None, compare=False)
    has_cause: bool = False

    def _set_cause(self, cause: Any) -> None:
        # The decoder makes every object first, then fills them: a cause may be made after.
        object.__setattr__(self, "cause", cause)
        object.__setattr__(self, "has_cause", True)


@dataclass(frozen=True)
class Blob:
    """A Blob stored with the record: its size and type, and the file holding its bytes in
    the ``.blob`` folder when known."""

    size: Optional[int]
    mime: str
    path: Optional[str] = None
    uuid: Optional[str] = None
    error: Optional[str] = None
    #: Chromium's SQLite backend: the ``blobs`` row holding the bytes
    #: (``SqliteIndexedDb.blob``).
    blob_row_id: Optional[int] = None


@dataclass(frozen=True)
class File(Blob):
    """A File: a Blob with a name and a modification time."""

    name: Optional[str] = None
    last_modified: Optional[Any] = None


@dataclass(frozen=True)
class FileList:
    files: Tuple[File, ...]


@dataclass(frozen=True)
class HostObject:
    """Another object Blink serializes (DOMPoint, DOMMatrix, CryptoKey, ImageData...): its
    type and fields."""

    type: str
    fields: Dict[str, Any]


@dataclass(frozen=True)
class StorageItem:
    """One item of localStorage or sessionStorage, as the page stored it."""

    origin: Optional[str]
    key: Optional[str]
    """None when Chrome reads the bytes as corrupt (``raw_key`` has them)."""
    value: Optional[str]
    """None when Chrome reads the bytes as corrupt (``raw_value`` has them)."""
    raw_key: bytes
    raw_value: bytes
    namespaces: Tuple[str, ...] = ()
    """sessionStorage: the sessions (tabs) whose map holds the item."""
    map: Optional[int] = None
    """sessionStorage: the map's number."""
