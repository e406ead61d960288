"""Chrome's storage from Python against what a real Chromium's page read back
(testdata/idb/values.expected.json): every IndexedDB record by database and store name,
key and decoded value; every localStorage and sessionStorage item."""

import datetime
import json
import math

import pytest

import leveldb_table as lt
from leveldb_table import chrome
from conftest import TESTDATA

VALUES = TESTDATA / "idb" / "values"
IDB = VALUES / "IndexedDB" / "http_127.0.0.1_55229.indexeddb.leveldb"
EXPECTED = json.loads((TESTDATA / "idb" / "values.expected.json").read_text())
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def number(x):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x) or (x == 0 and math.copysign(1, x) < 0)):
        name = "NaN" if math.isnan(x) else ("-0" if x == 0 else ("Infinity" if x > 0 else "-Infinity"))
        return {"$type": "number", "value": name}
    return x


def ms(d):
    if isinstance(d, chrome.Date):
        return number(d.ms)
    delta = d - EPOCH
    return (delta.days * 86_400_000) + delta.seconds * 1000 + delta.microseconds // 1000


def mapping(v, open_=None):
    """A decoded Python value in the JSON mapping of docs/indexeddb.md (a cycle as
    {"$ref": "?"}: V8's object numbers are not kept)."""
    open_ = open_ if open_ is not None else set()
    if isinstance(v, (dict, list, chrome.Array, chrome.Map, chrome.Set)):
        if id(v) in open_:
            return {"$ref": "?"}
        open_ = open_ | {id(v)}
    m = lambda x: mapping(x, open_)  # noqa: E731
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, chrome.BigInt):
        return {"$type": "bigint", "value": str(int(v))}
    if isinstance(v, (int, float)):
        return number(v)
    if v is chrome.undefined:
        return {"$type": "undefined"}
    if isinstance(v, dict):
        return {k: m(x) for k, x in v.items()}
    if isinstance(v, list):
        return [m(x) for x in v]
    if isinstance(v, bytes):
        return {"$type": "ArrayBuffer", "hex": v.hex()}
    if isinstance(v, (datetime.datetime, chrome.Date)):
        return {"$type": "date", "value": ms(v)}
    if isinstance(v, chrome.Array):
        return {
            "$type": "array",
            "length": v.length,
            "elements": {str(i): m(x) for i, x in v.elements.items()},
            "properties": {k: m(x) for k, x in v.properties.items()},
        }
    if isinstance(v, chrome.Map):
        return {"$type": "map", "entries": [[m(a), m(b)] for a, b in v.entries]}
    if isinstance(v, chrome.Set):
        return {"$type": "set", "values": [m(x) for x in v.values]}
    if isinstance(v, chrome.TypedArray):
        return {"$type": v.type, "hex": v.data.hex()}
    if isinstance(v, chrome.Boxed):
        return {"$type": "boxed", "value": m(v.value)}
    if isinstance(v, chrome.RegExp):
        return {"$type": "regexp", "source": v.source, "flags": v.flags}
    if isinstance(v, chrome.JSError):
        return {"$type": "error", "name": v.name, "message": v.message}
    if isinstance(v, chrome.FileList):
        return {"$type": "filelist", "files": [m(f) for f in v.files]}
    if isinstance(v, chrome.Blob):
        out = {"$type": "file" if isinstance(v, chrome.File) else "blob", "size": v.size, "mime": v.mime}
        if isinstance(v, chrome.File):
            out["name"] = v.name
            if v.last_modified is not None:
                out["last_modified"] = ms(v.last_modified)
        for k in ("uuid", "error"):
            if getattr(v, k) is not None:
                out[k] = getattr(v, k)
        return out
    if isinstance(v, chrome.HostObject):
        fields = {k: (x.hex() if isinstance(x, bytes) else m(x)) for k, x in v.fields.items()}
        return {"$type": v.type, **fields}
    raise AssertionError(f"unmapped {type(v)}")


def matches(got, want, key_data):
    """As cli/tests/idb_values.rs: "$subset" objects match on the fields they list; "$ref"
    ids are not compared; "$key_data" stands for the CryptoKey's bytes."""
    if isinstance(got, dict) and isinstance(want, dict):
        if "$ref" in want:
            return "$ref" in got
        subset = want.get("$subset") is True
        wanted = {k: x for k, x in want.items() if k != "$subset"}
        if not subset and set(got) != set(wanted):
            return False
        return all(
            k in got and (got[k] == key_data if x == "$key_data" else matches(got[k], x, key_data))
            for k, x in wanted.items()
        )
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(matches(a, b, key_data) for a, b in zip(got, want))
    if isinstance(got, (int, float)) and isinstance(want, (int, float)) and not isinstance(got, bool):
        return float(got) == float(want)
    return got == want


def key_mapping(k):
    if isinstance(k, str):
        return {"type": "string", "value": k}
    if isinstance(k, (int, float)):
        return {"type": "number", "value": k}
    raise AssertionError(k)


def test_every_record_decodes_to_what_chromium_read_back():
    rows = list(lt.Db(IDB).indexeddb())
    assert len(rows) == len(EXPECTED["records"]) == 31
    got = {}
    for r in rows:
        assert r.error is None, (r.key, r.error)
        got.setdefault((r.database, r.store), []).append(r)
    want = {}
    for w in EXPECTED["records"]:
        want.setdefault((w["database"], w["store"]), []).append(w)
    assert sorted(got) == sorted(want)
    key_data = EXPECTED["contents"]["key_data"]
    for store, ws in want.items():
        for r, w in zip(got[store], ws):
            assert key_mapping(r.key) == w["key"]
            assert matches(mapping(r.value), json.loads(w["data"]), key_data), (store, r.key, mapping(r.value), w["data"])


def test_blobs_and_files_name_their_bytes():
    rows = {r.key: r for r in lt.Db(IDB).indexeddb(store="blobs")}
    contents = EXPECTED["contents"]["blobs"]
    assert sorted(rows) == sorted(contents)
    for key, blobs in contents.items():
        v = rows[key].value
        found = [v] if isinstance(v, chrome.Blob) else list(v.files) if isinstance(v, chrome.FileList) else list(v.values())
        # Each blob file once (a record may hold the same File twice).
        paths = {b.path for b in found if isinstance(b, chrome.Blob)}
        assert sorted(open(p, "rb").read().hex() for p in paths) == sorted(blobs)


def test_cycles_and_shared_objects_are_python_objects():
    rows = {r.key: r.value for r in lt.Db(IDB).indexeddb(database="corpusdb", store="records")}
    cyc = rows["cycles"]["cyc"]
    assert cyc["self"] is cyc
    arr = rows["cycles"]["cycArr"]
    assert arr[1] is arr
    shared = rows["shared"]
    assert shared["a"] is shared["b"]
    assert rows["bigints"][1] == 123 and isinstance(rows["bigints"][1], chrome.BigInt)
    assert rows["numbers"][:3] == [0, -0.0, 1.5] and math.copysign(1, rows["numbers"][1]) < 0
    assert rows["oddballs"][3] is chrome.undefined
    assert rows["strings"]["lone"] == "a\ud800b"


def test_filters_by_name():
    all_rows = list(lt.Db(IDB).indexeddb())
    second = list(lt.Db(IDB).indexeddb(database="second"))
    assert second and {r.database for r in second} == {"second"}
    assert len(second) == sum(1 for r in all_rows if r.database == "second")
    # A name that matches nothing is an error naming what there is, as `sst` says it.
    with pytest.raises(lt.InvalidArgumentError, match='no database named "no such database"; the databases .* are: corpusdb'):
        lt.Db(IDB).indexeddb(database="no such database")
    with pytest.raises(lt.InvalidArgumentError, match='no object store named "nope"'):
        lt.Db(IDB).indexeddb(database="second", store="nope")
    with pytest.raises(ValueError):
        lt.Db(TESTDATA / "db" / "basic").indexeddb()


def test_local_storage_items():
    items = list(lt.Db(VALUES / "local_storage").local_storage())
    got = sorted((json.dumps(i.key), json.dumps(i.value)) for i in items)
    want = sorted((json.dumps(json.loads(w["key"])), json.dumps(json.loads(w["value"]))) for w in EXPECTED["local_storage"])
    assert got == want
    assert {i.origin for i in items} == {EXPECTED["origin"]}


def test_session_storage_items():
    items = list(lt.Db(VALUES / "session_storage").session_storage())
    got = sorted((json.dumps(i.key), json.dumps(i.value)) for i in items)
    want = sorted((json.dumps(json.loads(w["key"])), json.dumps(json.loads(w["value"]))) for w in EXPECTED["session_storage"])
    assert got == want
    assert all(i.namespaces and i.origin.startswith(EXPECTED["origin"]) for i in items)


def test_decode_v8_bytes():
    # {"a": 1} as Chrome 156 stores it (the library's doc example).
    data = b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x10o\"\x01aI\x02{\x01"
    assert lt.decode_v8(data) == {"a": 1}
    with pytest.raises(ValueError):
        lt.decode_v8(data[:-3])


# testdata/idb/chromium: the first fixture (testdata/idb/README.md): every IndexedDB key
# type, deletions and overwrites in the live log over a flushed table; Chromium's cursors
# read every store back in its order (chromium.expected.json).
CHROMIUM = TESTDATA / "idb" / "chromium"
CHROMIUM_EXPECTED = json.loads((TESTDATA / "idb" / "chromium.expected.json").read_text())


def typed_key(k):
    """A key of chromium.expected.json ({"type": ..., ...}) as Db.indexeddb() gives it."""
    t = k["type"]
    if t == "number":
        v = k["value"]
        return float(v) if isinstance(v, str) else v  # "Infinity", "-Infinity"
    if t == "date":
        return EPOCH + datetime.timedelta(milliseconds=k["ms"])
    if t == "string":
        return k["value"]
    if t == "binary":
        return bytes.fromhex(k["hex"])
    if t == "array":
        return [typed_key(x) for x in k["value"]]
    raise AssertionError(f"unknown key type {t}")


def test_chromium_fixture_reads_as_chromium_read_it_back():
    stores = CHROMIUM_EXPECTED["stores"]
    assert set(stores) == {"keys", "people", "auto", "bulk"}
    rows = list(lt.Db(CHROMIUM).indexeddb())
    assert {r.database for r in rows} == {CHROMIUM_EXPECTED["database"]}
    for name, store in stores.items():
        got = [(r.key, r.value) for r in rows if r.store == name]
        want = [(typed_key(x["key"]), x["value"]) for x in store["records"]]
        if name == "bulk":
            # The page reads bulk's keys back, not its values: what it put (page.html,
            # `put("b".repeat(900) + i, batch * 1000 + i)`, batch 0 kept).
            assert all(v is None for _, v in want)
            want = [(k, "b" * 900 + str(k)) for k, _ in want]
        assert len(got) == len(want) > 0, name
        for i, (g, w) in enumerate(zip(got, want)):
            # type() too: 1 == 1.0 == True in Python, not in IndexedDB.
            assert g == w and type(g[0]) is type(w[0]), f"{name} record {i}: {g!r} != {w!r}"
        assert [(r.key, r.value) for r in lt.Db(CHROMIUM).indexeddb(store=name)] == got
    assert {r.store for r in rows} == set(stores)
    assert all(r.error is None for r in rows)


def test_storage_of_another_kind_is_an_error():
    with pytest.raises(lt.InvalidArgumentError, match="not a localStorage directory: it is Chrome IndexedDB"):
        lt.Db(IDB).local_storage()
    with pytest.raises(lt.InvalidArgumentError, match="not a sessionStorage directory: it is localStorage"):
        lt.Db(VALUES / "local_storage").session_storage()
    with pytest.raises(lt.InvalidArgumentError, match="not a localStorage directory: it is sessionStorage"):
        lt.Db(VALUES / "session_storage").local_storage()


MANY = TESTDATA / "idb" / "many"
MANY_EXPECTED = json.loads((TESTDATA / "idb" / "many.expected.json").read_text())


def plain(v):
    """A value as the page's JSON.stringify wrote it (-0 as 0)."""
    if isinstance(v, float) and v == 0:
        return 0
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def test_ids_past_one_byte_name_every_record():
    # 300 databases in one origin (ids past 127 and 255), 301 stores: every record Chromium
    # read back, under its names, with its value.
    got = sorted((r.database, r.store, json.dumps(r.key), json.dumps(plain(r.value), sort_keys=True))
                 for r in lt.Db(MANY).indexeddb() if r.database is not None)
    want = sorted((w["database"], w["store"], json.dumps(w["key"]["value"]), json.dumps(w["value"], sort_keys=True))
                  for w in MANY_EXPECTED["live"])
    assert [g[:3] for g in got] == [w[:3] for w in want]
    assert got == want
    last = list(lt.Db(MANY).indexeddb(database="db299"))
    assert len(last) == 2 and {r.database for r in last} == {"db299"} and all(r.database_id > 255 for r in last)


def test_a_partial_catalog_warns_and_says_so(tmp_path):
    import shutil
    import warnings

    copy = tmp_path / "many"
    shutil.copytree(MANY, copy)
    table = copy / "000005.ldb"
    data = bytearray(table.read_bytes())
    data[231_929 + 40] ^= 1  # the block of most database names
    table.write_bytes(bytes(data))
    with pytest.raises(lt.CorruptionError, match="000005.ldb"):
        lt.Db(copy).indexeddb()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        it = lt.Db(copy, salvage=True).indexeddb()
    assert any("IndexedDB names may be missing" in str(x.message) for x in w)
    assert "000005.ldb" in it.names_partial
    assert lt.Db(MANY).indexeddb().names_partial is None
