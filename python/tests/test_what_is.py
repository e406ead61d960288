"""A path opened as a database that is something else is named in the error: an empty
folder, a cache, the IndexedDB folder holding one database per origin, IndexedDB's blob
folder, a folder of Chromium's SQLite IndexedDB, LevelDB's files without CURRENT, a table,
a log, a file of another program."""

import os
import shutil

import pytest

import leveldb_table as lt
from conftest import TESTDATA

BASIC = TESTDATA / "db" / "basic"
FILES = ["000005.ldb", "000007.ldb", "000008.log", "000009.ldb", "CURRENT", "MANIFEST-000002"]


def refused(path):
    """The message of the error opening `path` (kind NotADatabase)."""
    with pytest.raises(lt.LevelDBError) as e:
        lt.Db(path)
    assert e.value.kind == "NotADatabase", e.value
    assert "\n" not in str(e.value)
    return str(e.value)


def database(path):
    path.mkdir(parents=True)
    for f in FILES:
        shutil.copy(BASIC / f, path / f)


def test_folders_that_hold_no_database(tmp_path):
    (tmp_path / "empty").mkdir()
    assert refused(tmp_path / "empty").endswith("not a LevelDB database: the folder is empty")

    cache = tmp_path / "Cache" / "Cache_Data"
    cache.mkdir(parents=True)
    (cache / "data_0").write_bytes(os.urandom(5000))
    (cache / "index").write_bytes(os.urandom(300))
    msg = refused(cache)
    assert "holds no CURRENT, table, log or MANIFEST among its 2 file(s)" in msg
    assert "data_0, index" in msg

    idb = tmp_path / "IndexedDB"
    database(idb / "https_a.com_0.indexeddb.leveldb")
    database(idb / "https_b.org_0.indexeddb.leveldb")
    blob = idb / "https_a.com_0.indexeddb.blob" / "1" / "00"
    blob.mkdir(parents=True)
    (blob / "3").write_bytes(os.urandom(100))
    assert (
        "it holds 2 LevelDB database(s), one per folder: https_a.com_0.indexeddb.leveldb, "
        "https_b.org_0.indexeddb.leveldb" in refused(idb)
    )
    msg = refused(idb / "https_a.com_0.indexeddb.blob")
    assert "Chrome IndexedDB's blob files" in msg
    assert "https_a.com_0.indexeddb.leveldb beside it" in msg
    # Each database of the folder opens.
    with lt.Db(idb / "https_b.org_0.indexeddb.leveldb") as db:
        assert db.last_sequence == 1439


def test_a_folder_of_chromium_s_sqlite_indexeddb(tmp_path):
    # A SQLite file as Chromium's SQLite IndexedDB starts: the magic, a 4096-byte page,
    # the schema's CREATE statements on page 1.
    page = bytearray(4096)
    page[:16] = b"SQLite format 3\0"
    page[16:18] = (4096).to_bytes(2, "big")
    page[28:32] = (16).to_bytes(4, "big")
    schema = (
        b"CREATE TABLE object_stores (id INTEGER PRIMARY KEY)CREATE TABLE records (row_id "
        b"INTEGER PRIMARY KEY)CREATE TABLE blob_references (row_id INTEGER PRIMARY KEY)"
    )
    page[3000 : 3000 + len(schema)] = schema
    d = tmp_path / "https_example.com_0.indexeddb.sqlite"
    d.mkdir()
    (d / "sample").write_bytes(bytes(page))
    assert "a folder of Chromium's SQLite IndexedDB, not a LevelDB database" in refused(d)
    assert "a SQLite 3 database, not LevelDB" in refused(d / "sample")


def test_leveldb_files_without_current_are_a_damaged_database(tmp_path):
    database(tmp_path / "db")
    (tmp_path / "db" / "CURRENT").unlink()
    with pytest.raises(lt.LevelDBError) as e:
        lt.Db(tmp_path / "db")
    assert e.value.file == "CURRENT"
    assert "missing, though the folder holds LevelDB's" in str(e.value)
    # Salvage reads what is there.
    with lt.Db(tmp_path / "db", salvage=True) as db:
        assert len(list(db.scan())) > 0


def test_files(tmp_path):
    assert refused(BASIC / "000005.ldb").endswith("a LevelDB table: open it with leveldb_table.Table")
    assert "a write-ahead log of a LevelDB database: open its folder" in refused(BASIC / "000008.log")
    assert "a MANIFEST of a LevelDB database" in refused(BASIC / "MANIFEST-000002")
    junk = tmp_path / "random.bin"
    junk.write_bytes(os.urandom(1 << 20))
    assert refused(junk).endswith("a file, not a LevelDB database directory")
