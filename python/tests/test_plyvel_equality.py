"""The reader against C++ LevelDB itself (plyvel): every key and value of every database
directory of testdata/ and of a 1M-entry directory LevelDB wrote, forward, backward, in
ranges and by point lookups; and the directory read is left byte for byte as it was."""

import functools
import itertools
import random
import shutil

import plyvel
import pytest

import dbgen
import idb_cmp1
import leveldb_table as lt
from conftest import ALL_DIRS, BYTEWISE_DIRS, IDB_DIRS, dir_state


def test_testdata_has_the_directories():
    names = {p.name for p in BYTEWISE_DIRS}
    assert {"basic", "snapshot", "biglog", "goleveldb", "local_storage", "session_storage"} <= names
    # Every directory is compared with plyvel here: in bytewise order or in idb_cmp1.
    assert len(BYTEWISE_DIRS) + len(IDB_DIRS) == len(ALL_DIRS)
    idb = {str(p.relative_to(p.parents[2])) for p in IDB_DIRS}
    assert {
        "testdata/idb/chromium",
        "testdata/idb/many",
        "values/IndexedDB/http_127.0.0.1_55229.indexeddb.leveldb",
        "contract/IndexedDB/http_127.0.0.1_55499.indexeddb.leveldb",
    } <= idb, idb


def assert_same_stream(ours, theirs):
    """Two iterators of (key, value) give the same pairs (compared as they stream)."""
    n = 0
    for a, b in itertools.zip_longest(ours, theirs):
        assert a == b, f"entry {n}: ours {a!r}, LevelDB {b!r}"
        n += 1
    return n


def compare_with_plyvel(src, tmp_path, plyvel_opts, bytewise):
    """Every key and value of directory `src`, forward, backward, by lookups and in ranges,
    against plyvel on a copy of it; and `src` left as it was."""
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    before = dir_state(src)
    ref = plyvel.DB(str(copy), **plyvel_opts)
    try:
        expected = list(ref.iterator())
        assert expected
        db = lt.Db(src)
        assert list(db.scan()) == expected
        assert list(db.scan(reverse=True)) == expected[::-1]
        for k, v in expected:
            assert db.get(k) == v
        # Absent keys: between, before and after every present one (bytewise order only:
        # such bytes are no IndexedDB keys).
        if bytewise:
            for k, _ in expected:
                for probe in (k + b"\x00", k[:-1]):
                    assert db.get(probe) == ref.get(probe)
        # Ranges: bounds on keys (and between them), both directions.
        rng = random.Random(src.name)
        keys = [k for k, _ in expected]
        for _ in range(50):
            a, b = rng.sample(keys, 2)
            if keys.index(a) > keys.index(b):
                a, b = b, a
            if bytewise and rng.random() < 0.5:
                a += b"\x00"
            want = list(ref.iterator(start=a, stop=b))
            assert list(db.scan(start=a, stop=b)) == want
            assert list(db.scan(start=a, stop=b, reverse=True)) == want[::-1]
        assert list(db.scan(stop=keys[0])) == []
        if bytewise:
            assert list(db.scan(start=keys[-1] + b"\x00")) == []
    finally:
        ref.close()
    assert dir_state(src) == before


@pytest.mark.parametrize("src", BYTEWISE_DIRS, ids=lambda p: p.name)
def test_testdata_directory_equals_plyvel(src, tmp_path):
    compare_with_plyvel(src, tmp_path, {}, bytewise=True)


@pytest.mark.parametrize("src", IDB_DIRS, ids=lambda p: p.name)
def test_testdata_indexeddb_directory_equals_plyvel(src, tmp_path):
    """Chrome's IndexedDB directories: C++ LevelDB opens them with idb_cmp1 written again in
    Python (python/tests/idb_cmp1.py, from Chromium's source), merging their tables and logs
    in that order; the reader's order is the library's own."""
    keys = [k for k, _ in lt.Db(src).scan()]
    # The order is not bytewise here, and the Python comparator understands every key.
    assert sorted(keys) != keys
    before = idb_cmp1.fallbacks
    assert sorted(keys, key=functools.cmp_to_key(idb_cmp1.compare)) == keys
    assert idb_cmp1.fallbacks == before
    opts = {"comparator": idb_cmp1.compare, "comparator_name": b"idb_cmp1"}
    compare_with_plyvel(src, tmp_path, opts, bytewise=False)


def test_million_scan_equals_plyvel(million):
    ours, theirs = million
    before = dir_state(ours)
    ref = plyvel.DB(str(theirs))
    try:
        db = lt.Db(ours)
        n = assert_same_stream(db.scan(), ref.iterator())
        assert n == dbgen.KEYS - dbgen.DELETED
        # And against what was written, so the two cannot agree on a wrong answer.
        live = (dbgen.key(i) for i in range(dbgen.KEYS) if not dbgen.deleted(i))
        expected = ((k, dbgen.live_value(int(k[4:]))) for k in live)
        assert assert_same_stream(db.scan(), expected) == n
    finally:
        ref.close()
    assert dir_state(ours) == before


def test_million_reverse_and_ranges_equal_plyvel(million):
    ours, theirs = million
    ref = plyvel.DB(str(theirs))
    try:
        db = lt.Db(ours)
        n = assert_same_stream(db.scan(reverse=True), ref.iterator(reverse=True))
        assert n == dbgen.KEYS - dbgen.DELETED
        rng = random.Random(7)
        for _ in range(30):
            a = rng.randrange(dbgen.KEYS)
            b = a + rng.randrange(20_000)
            start, stop = dbgen.key(a), dbgen.key(b) + b"!"
            assert_same_stream(db.scan(start, stop), ref.iterator(start=start, stop=stop))
            assert_same_stream(
                db.scan(start, stop, reverse=True),
                ref.iterator(start=start, stop=stop, reverse=True),
            )
    finally:
        ref.close()


def test_million_gets_equal_plyvel(million):
    ours, theirs = million
    ref = plyvel.DB(str(theirs))
    try:
        db = lt.Db(ours)
        rng = random.Random(11)
        for n in rng.sample(range(dbgen.KEYS), 20_000):
            k = dbgen.key(n)
            got = db.get(k)
            assert got == ref.get(k)
            assert got == dbgen.live_value(n)
        for n in range(dbgen.KEYS, dbgen.KEYS + 2_000):
            assert db.get(dbgen.key(n)) is None
        # Every deleted key, at the newest sequence.
        for n in range(7, dbgen.KEYS, 51):
            assert db.get(dbgen.key(n)) is None
    finally:
        ref.close()


def test_threads_share_a_database():
    """Scans and lookups from several threads at once (the GIL released while the Rust
    side reads) give each thread the same answers."""
    import threading

    src = BYTEWISE_DIRS[0]
    db = lt.Db(src)
    want = list(db.scan())
    results = [None] * 4

    def work(i):
        out = []
        for _ in range(5):
            out.append(list(db.scan(reverse=bool(i % 2))))
            out.append([db.get(k) for k, _ in want[::7]])
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, out in enumerate(results):
        for j, got in enumerate(out):
            if j % 2 == 0:
                assert got == (want[::-1] if i % 2 else want)
            else:
                assert got == [v for _, v in want[::7]]
