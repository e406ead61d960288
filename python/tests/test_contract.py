"""Db.indexeddb_get and the contract's values from Python, against what a real Chromium
wrote and read back (testdata/idb/contract, tools/gen_idb_contract_fixture.sh): every
lookup the page made answers as its get() did, every record looks itself up, Errors carry
their stack and cause, File System Access handles say where they point."""

import datetime
import json
import math

import pytest

import leveldb_table as lt
from leveldb_table import chrome
from conftest import TESTDATA
from test_chrome import mapping

CONTRACT = next((TESTDATA / "idb" / "contract" / "IndexedDB").glob("*.indexeddb.leveldb"))
EXPECTED = json.loads((TESTDATA / "idb" / "contract.expected.json").read_text())
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def py_key(k):
    """A key in the contract's JSON form (already parsed) as Python gives keys."""
    if isinstance(k, dict):
        t = k["$type"]
        if t == "number":
            return float(k["value"]) if k["value"] != "-0" else -0.0
        if t == "date":
            try:
                return EPOCH + datetime.timedelta(milliseconds=k["value"])
            except OverflowError:  # past year 9999: Db.indexeddb() gives chrome.Date
                return chrome.Date(k["value"])
        if t == "ArrayBuffer":
            return bytes.fromhex(k["hex"])
        raise AssertionError(k)
    if isinstance(k, list):
        return [py_key(x) for x in k]
    return k


def test_lookups_answer_as_chromium_get_did():
    db = lt.Db(CONTRACT)
    n = 0
    for lookup in EXPECTED["lookups"]:
        key = py_key(json.loads(lookup["key"]))
        r = db.indexeddb_get(key, store=lookup["store"], database="contract")
        assert (r is not None) == lookup["found"], lookup
        if r is not None:
            assert (r.database, r.store) == ("contract", lookup["store"])
            assert r.error is None
            assert mapping(r.value) == json.loads(lookup["data"]), lookup
        n += 1
    assert n == 56


def test_every_record_looks_itself_up():
    db = lt.Db(CONTRACT)
    rows = list(db.indexeddb(database="contract"))
    assert len(rows) == len(EXPECTED["records"])
    for r in rows:
        got = db.indexeddb_get(r.key, r.store)
        assert got is not None, (r.store, r.key)
        assert (got.raw_key, got.raw_value, got.version) == (r.raw_key, r.raw_value, r.version)
    # Keys as a page holds them: a tuple for an array, a bytearray or memoryview for binary,
    # a chrome.TypedArray's data, a lone surrogate in a str.
    assert db.indexeddb_get((1, "a"), "keys").value == {"i": 32, "note": "key 32"}
    assert db.indexeddb_get(bytearray(b"\x00\xff"), "keys").value["i"] == 28
    assert db.indexeddb_get(memoryview(b"\x01\x02\x03"), "keys").value["i"] == 29
    assert db.indexeddb_get(chrome.TypedArray("Uint8Array", b"\x09\x08"), "keys").value["i"] == 30
    assert db.indexeddb_get("a\ud800b", "surrogates").value["key"] == "a\ud800b"
    assert db.indexeddb_get(["a\ud800"], "keys").value["i"] == 36
    assert db.indexeddb_get(chrome.Date(0), "keys").value["i"] == 12
    assert db.indexeddb_get(2, "keys") is None
    assert db.indexeddb_get("deleted", "keys") is None


def test_what_is_not_a_key_or_a_store_is_an_error():
    db = lt.Db(CONTRACT)
    for bad in (True, None, {"a": 1}, chrome.BigInt(1), 1j):
        with pytest.raises(TypeError):
            db.indexeddb_get(bad, "keys")
    for bad in (math.nan, datetime.datetime(2020, 1, 1), chrome.Date(math.nan)):
        with pytest.raises(ValueError):
            db.indexeddb_get(bad, "keys")
    with pytest.raises(ValueError, match='no object store named "nope"'):
        db.indexeddb_get(1, "nope")
    with pytest.raises(ValueError, match='in a database named "other"'):
        db.indexeddb_get(1, "keys", database="other")
    with pytest.raises(ValueError, match="not a Chrome IndexedDB directory"):
        lt.Db(TESTDATA / "idb" / "values" / "local_storage").indexeddb_get(1, "keys")


def test_errors_carry_their_stack_and_cause():
    db = lt.Db(CONTRACT)
    e = db.indexeddb_get("nested causes", "errors").value
    chain = [e, e.cause, e.cause.cause]
    assert [x.name for x in chain] == ["Error", "TypeError", "RangeError"]
    assert all("/contract.html:" in x.stack for x in chain)
    assert (e.has_cause, e.cause.cause.has_cause) == (True, False)
    assert e.cause.cause.cause is None
    loop = db.indexeddb_get("cycle through cause", "errors").value
    assert loop["err"].cause is loop
    null = db.indexeddb_get("null cause", "errors").value
    assert (null.cause, null.has_cause) == (None, True)
    assert db.indexeddb_get("undefined cause", "errors").value.cause is chrome.undefined
    assert db.indexeddb_get("stack not a string", "errors").value.stack is None
    plain = db.indexeddb_get("plain object cause", "errors").value
    assert plain.cause["$type"] == "date" and plain.cause["code"] == 42


def test_handles_and_bitmaps():
    db = lt.Db(CONTRACT)
    h = db.indexeddb_get("handles", "media").value
    assert h["file"].type == "FileSystemFileHandle"
    assert h["file"].fields["file_system"] == "sandboxed"
    assert h["file"].fields["virtual_path"] == "notes.txt"
    assert h["dir"].fields["virtual_path"] == "sub dir"
    assert h["root"].fields["virtual_path"] == ""
    b = db.indexeddb_get("bitmap", "media").value
    assert (b.type, b.fields["width"], b.fields["height"]) == ("ImageBitmap", 2, 2)
    assert b.fields["pixel_format"] == "BGRA8"
    assert len(b.fields["pixels"]) == 16
