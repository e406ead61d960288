"""Chrome's IndexedDB key order, `idb_cmp1`, written again in Python for the tests, so that
C++ LevelDB (plyvel, which takes a Python comparator) can open copies of Chrome's IndexedDB
directories and be compared with the reader, whose order is the library's Rust one.

Follows Chromium's content/browser/indexed_db/indexed_db_leveldb_coding.cc (`Compare`,
`KeyPrefix`, `CompareEncodedIDBKeys`, the metadata key classes); the constants are its
type bytes. Never raises: plyvel aborts the process on an exception in a comparator, so
bytes that fit no known key compare bytewise from where they stop fitting."""

import struct

# Encoded IndexedDB key type bytes, and their rank in the IndexedDB order (number < date <
# string < binary < array; the min key first): Chromium ranks by WebIDBKeyType, reversed.
_KEY_RANK = {5: 0, 3: 1, 2: 2, 1: 3, 6: 4, 4: 5, 0: 6}  # min, number, date, string, binary, array, null


class _Bad(Exception):
    pass


def _varint(b, i):
    shift = result = 0
    while True:
        if i >= len(b) or shift > 63:
            raise _Bad
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        if not c & 0x80:
            return result, i
        shift += 7


def _byte(b, i):
    if i >= len(b):
        raise _Bad
    return b[i], i + 1


def _cmp(x, y):
    return (x > y) - (x < y)


def _prefix(b):
    """(database, object store, index) ids and the offset after the prefix."""
    first, i = _byte(b, 0)
    lens = (((first >> 5) & 7) + 1, ((first >> 2) & 7) + 1, (first & 3) + 1)
    ids = []
    for n in lens:
        if i + n > len(b):
            raise _Bad
        ids.append(int.from_bytes(b[i : i + n], "little"))
        i += n
    return tuple(ids), i


def _string_with_length(b, i):
    """The UTF-16BE bytes of a StringWithLength (varint length in code units)."""
    n, i = _varint(b, i)
    if i + 2 * n > len(b):
        raise _Bad
    return b[i : i + 2 * n], i + 2 * n


def _binary(b, i):
    n, i = _varint(b, i)
    if i + n > len(b):
        raise _Bad
    return b[i : i + n], i + n


def _double(b, i):
    if i + 8 > len(b):
        raise _Bad
    return struct.unpack("<d", b[i : i + 8])[0], i + 8


def _idb_key(a, i, b, j):
    """Compares the encoded IDB keys at a[i:] and b[j:]: (result, next i, next j)."""
    ta, i = _byte(a, i)
    tb, j = _byte(b, j)
    if ta not in _KEY_RANK or tb not in _KEY_RANK:
        raise _Bad
    if ta != tb:
        return _cmp(_KEY_RANK[ta], _KEY_RANK[tb]), i, j
    if ta == 4:  # array: element by element, then the lengths
        na, i = _varint(a, i)
        nb, j = _varint(b, j)
        for _ in range(min(na, nb)):
            r, i, j = _idb_key(a, i, b, j)
            if r:
                return r, i, j
        return _cmp(na, nb), i, j
    if ta == 6:  # binary
        xa, i = _binary(a, i)
        xb, j = _binary(b, j)
        return _cmp(xa, xb), i, j
    if ta == 1:  # string: UTF-16 code units, big-endian, so bytewise
        xa, i = _string_with_length(a, i)
        xb, j = _string_with_length(b, j)
        return _cmp(xa, xb), i, j
    if ta in (2, 3):  # date, number
        xa, i = _double(a, i)
        xb, j = _double(b, j)
        return _cmp(xa, xb), i, j
    return 0, i, j  # null, min


def _keys_with_presence(a, i, b, j):
    """An optional encoded key (absent sorts first)."""
    if i >= len(a) or j >= len(b):
        return _cmp(i < len(a), j < len(b)), i, j
    return _idb_key(a, i, b, j)


def _global_meta(a, i, b, j):
    ta, i = _byte(a, i)
    tb, j = _byte(b, j)
    if ta != tb:
        return _cmp(ta, tb)
    if ta < 7:  # the simple ones: schema version, max database id, data version...
        return 0
    if ta == 100:  # database free list: the database id
        return _cmp(_varint(a, i)[0], _varint(b, j)[0])
    if ta == 201:  # database name: origin, then name
        oa, i = _string_with_length(a, i)
        ob, j = _string_with_length(b, j)
        if oa != ob:
            return _cmp(oa, ob)
        return _cmp(_string_with_length(a, i)[0], _string_with_length(b, j)[0])
    return _cmp(a[i:], b[j:])  # scopes (50) and what else: the rest bytewise


def _database_meta(a, i, b, j):
    ta, i = _byte(a, i)
    tb, j = _byte(b, j)
    if ta != tb:
        return _cmp(ta, tb)
    if ta < 6:  # origin name, database name, versions, blob key generator
        return 0
    if ta in (50, 150):  # object store metadata / free list: store id (then meta type)
        sa, i = _varint(a, i)
        sb, j = _varint(b, j)
        if sa != sb or ta == 150:
            return _cmp(sa, sb)
        return _cmp(_byte(a, i)[0], _byte(b, j)[0])
    if ta in (100, 151):  # index metadata / free list: store id, index id (then meta type)
        for _ in range(2):
            xa, i = _varint(a, i)
            xb, j = _varint(b, j)
            if xa != xb:
                return _cmp(xa, xb)
        if ta == 151:
            return 0
        return _cmp(_byte(a, i)[0], _byte(b, j)[0])
    if ta == 200:  # object store names: the name
        return _cmp(_string_with_length(a, i)[0], _string_with_length(b, j)[0])
    if ta == 201:  # index names: store id, then the name
        sa, i = _varint(a, i)
        sb, j = _varint(b, j)
        if sa != sb:
            return _cmp(sa, sb)
        return _cmp(_string_with_length(a, i)[0], _string_with_length(b, j)[0])
    return _cmp(a[i:], b[j:])


def _index_data(a, i, b, j):
    # The index key, then the primary key (absent first), then the sequence number; an
    # entry that ends early sorts first.
    r, i, j = _keys_with_presence(a, i, b, j)
    if r or i >= len(a) or j >= len(b):
        return r
    if r:
        return r
    sa = sb = -1
    if i < len(a):
        sa, i = _varint(a, i)
    if j < len(b):
        sb, j = _varint(b, j)
    r, i, j = _keys_with_presence(a, i, b, j)
    return r or _cmp(sa, sb)


def compare(a, b):
    """-1, 0 or 1: `a` before, with or after `b` in idb_cmp1."""
    try:
        (pa, i), (pb, j) = _prefix(a), _prefix(b)
        if pa != pb:
            return _cmp(pa, pb)
        database, store, index = pa
        if database == 0:
            return _global_meta(a, i, b, j)
        if store == 0:
            return _database_meta(a, i, b, j)
        if index in (1, 2, 3):  # records, exists entries, blob entries: the primary key
            return _keys_with_presence(a, i, b, j)[0]
        if index >= 30:
            return _index_data(a, i, b, j)
    except _Bad:
        pass
    global fallbacks
    fallbacks += 1
    return _cmp(a, b)


#: How many comparisons fell back to bytewise (keys that fit no known IndexedDB key).
fallbacks = 0
