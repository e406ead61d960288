"""Chromium's SQLite IndexedDB from Python against what Chromium 156 read back
(testdata/idb_sqlite): every record by database, store and key, the Blobs' bytes, the older
versions a killed browser's -wal still holds; and ``profile()`` listing both backends."""

import hashlib
import json

import leveldb_table as lt
from leveldb_table import chrome
from conftest import TESTDATA

ROOT = TESTDATA / "idb_sqlite"
CLEAN = ROOT / "profile" / "Default" / "IndexedDB" / "http_127.0.0.1_42009"
KILLED = ROOT / "killed" / "http_127.0.0.1_42049"


def expected(name):
    return json.loads((ROOT / f"{name}.expected.json").read_text())


def typed(k):
    if isinstance(k, bool):
        raise AssertionError(k)
    if isinstance(k, (int, float)):
        return k
    if isinstance(k, str):
        return k
    if isinstance(k, (bytes, bytearray)):
        return {"type": "binary", "hex": bytes(k).hex()}
    if isinstance(k, list):
        return [typed(x) for x in k]
    return k


def page_key(k):
    t = k["type"]
    if t == "number":
        v = k["value"]
        return float(v) if isinstance(v, str) else v
    if t == "string":
        return k["value"]
    if t == "binary":
        return {"type": "binary", "hex": k["hex"]}
    if t == "array":
        return [page_key(x) for x in k["value"]]
    return k


def test_every_record_by_name_and_key():
    db = lt.SqliteIndexedDb(CLEAN)
    assert sorted(n for n in db.databases) == ["", "corpusdb", "second"]
    got = [(r.database, r.store) for r in db.indexeddb()]
    exp = expected("clean")["records"]
    assert sorted(got) == sorted((r["database"], r["store"]) for r in exp)
    assert all(r.error is None for r in db.indexeddb())
    people = db.indexeddb(database="corpusdb", store="people")
    assert [r.key for r in people] == [1, 2, 3, 5, 6]
    assert people[1].value["name"] == "robert"
    strings = [r for r in db.indexeddb(store="records") if r.key == "strings"][0]
    assert strings.value["wide"] == "\u65e5\u672c\u8a9e"


def test_blob_bytes_past_one_row():
    db = lt.SqliteIndexedDb(CLEAN)
    big = [r for r in db.indexeddb(store="blobs") if r.key == "big"][0]
    blob = big.value["big"]
    assert isinstance(blob, chrome.Blob) and blob.path is None
    data = db.blob("corpusdb", blob.blob_row_id)
    assert len(data) == blob.size > 5 << 20
    want = [b for b in expected("clean")["blobs"] if b["size"] == blob.size][0]
    assert hashlib.sha256(data).hexdigest() == want["sha256"]


def test_killed_browser_older_versions():
    db = lt.SqliteIndexedDb(KILLED)
    assert len(db.indexeddb()) == len(expected("killed")["records"]) == 17
    info = db.info()[0]
    assert info["wal_commits"] == 39 and info["pages_only_in_wal"] == info["pages"]
    older = db.older_records()
    assert sum(o["status"] == "deleted" for o in older) == 5
    assert sum(o["status"] == "shadowed" for o in older) == 34
    assert all(o["place"] == "wal_frame" and o["file"].endswith("-wal") for o in older)
    titles = {o["record"].value["title"] for o in older if o["record"].store == "notes"}
    assert "note 3 v5" in titles and "note 3 v6" not in titles


def test_profile_lists_both_backends():
    rows = lt.profile(ROOT / "profile")
    idb = {r["backend"]: r for r in rows if r["kind"] == "indexeddb"}
    assert idb["sqlite"]["records"] == 76 and idb["sqlite"]["databases"] == 3
    assert idb["leveldb"]["records"] == 5
    assert {r["origin"] for r in rows if r["kind"] == "local_storage"} == {
        expected("leveldb")["origin"],
        expected("clean")["origin"],
    }
    assert all(r["damage"] == [] for r in rows)
