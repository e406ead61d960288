"""Table: every real table of testdata/ (written by LevelDB through plyvel, goleveldb,
LevelDB main with zstd and Mojang's LevelDB) against the entries and lookups their writers
recorded."""

import gzip
import hashlib
import json

import pytest

import leveldb_table as lt
from conftest import TESTDATA

WRITERS = ("cases", "goleveldb", "leveldb_zstd", "mojang")


def jsonl(path):
    if path.exists():
        text = path.read_text()
    else:
        text = gzip.open(path.with_name(path.name + ".gz"), "rt").read()
    return [json.loads(line) for line in text.splitlines() if line]


def entry_files():
    for w in WRITERS:
        for f in sorted((TESTDATA / w).rglob("*.entries.jsonl*")):
            yield f.with_name(f.name.split(".entries.jsonl")[0] + ".ldb")


TABLES = list(entry_files())
# Lookups recorded per table (goleveldb, zstd) or per set of tables (plyvel cases, Mojang).
GET_SETS = [t.with_suffix(".gets.jsonl") for t in TABLES if t.with_suffix(".gets.jsonl").exists()]
GET_SETS += sorted(TESTDATA.glob("cases/*/gets.jsonl")) + [TESTDATA / "mojang" / "gets.jsonl"]


def tid(p):
    return f"{p.parent.name}/{p.name}"


def expected_entries(table):
    return jsonl(table.with_name(table.stem + ".entries.jsonl"))


def value_matches(e, value):
    """A recorded value: in hex, or its length and SHA-256 for the big ones."""
    if "value" in e:
        return bytes.fromhex(e["value"]) == value
    return value is not None and (len(value), hashlib.sha256(value).hexdigest()) == (
        e["value_len"],
        e["value_sha256"],
    )


def matches(e, key, value):
    k = bytes.fromhex(e["ikey"] if "ikey" in e else e["key"])
    return k == key and value_matches(e, value)


def test_every_writer_is_covered():
    assert {t.parent.name for t in TABLES} >= {"goleveldb", "leveldb_zstd", "mojang", "small_snappy"}
    assert len(TABLES) >= 15


@pytest.mark.parametrize("path", TABLES, ids=tid)
def test_scan_equals_writer(path):
    want = expected_entries(path)
    t = lt.Table(path)
    got = list(t.scan())
    assert len(got) == len(want)
    for e, (k, v) in zip(want, got):
        assert matches(e, k, v), e
    assert list(t.scan(reverse=True)) == got[::-1]
    assert {"ikey" in e for e in want} <= {t.internal_keys}
    # Ranges (user keys for internal tables): [a, b) both ways.
    user = [lt.parse_internal_key(k)[0] if t.internal_keys else k for k, _ in got]
    keys = sorted(set(user))
    a = keys[len(keys) // 4] if keys else b"a"
    b = keys[3 * len(keys) // 4] if keys else b"z"
    inside = [kv for kv, u in zip(got, user) if a <= u < b]
    assert list(t.scan(a, b)) == inside
    assert list(t.scan(a, b, reverse=True)) == inside[::-1]
    assert list(t.scan(start=a)) == [kv for kv, u in zip(got, user) if a <= u]
    assert list(t.scan(stop=b, reverse=True)) == [kv for kv, u in zip(got, user) if u < b][::-1]


@pytest.mark.parametrize("gets", GET_SETS, ids=tid)
def test_lookups_equal_writer(gets):
    # The tables the lookups were made against; with several, the version with the
    # highest sequence wins, as in LevelDB's Get.
    if gets.name == "gets.jsonl":
        tables = [lt.Table(p) for p in TABLES if p.parent == gets.parent]
    else:
        tables = [lt.Table(gets.with_name(gets.name.replace(".gets.jsonl", ".ldb")))]
    assert tables
    probes = jsonl(gets)
    assert probes
    for g in probes:
        key = bytes.fromhex(g["key"])
        answers = [r for r in (t.lookup(key) for t in tables) if r is not None]
        newest = max(answers, key=lambda r: r[2] or 0) if answers else None
        got = newest[1] if newest else None
        assert value_matches(g, got) if g["found"] else got is None, g["key"]
        if len(tables) == 1:
            assert tables[0].get(key) == got


@pytest.mark.parametrize("path", TABLES, ids=tid)
def test_verify_and_stats(path):
    t = lt.Table(path)
    report = t.verify()
    assert report["ok"], report["problems"]
    assert report["problem_count"] == 0 and report["problems"] == []
    assert report["entries"] == len(expected_entries(path))
    s = t.stats()
    assert s["file_size"] == path.stat().st_size
    assert s["data_blocks"] == report["data_blocks"]
    assert s["internal_keys"] == t.internal_keys
    assert 0 <= s["data_end"] < s["file_size"]


def test_bad_arguments(tmp_path):
    path = TESTDATA / "cases" / "small_snappy" / "000005.ldb"
    with pytest.raises(ValueError):
        lt.Table(path, keys="other")
    with pytest.raises(ValueError):
        lt.Table(path, comparator="nope")
    with pytest.raises(lt.NotFoundError):
        lt.Table(tmp_path / "missing.ldb")
    with pytest.raises(TypeError):
        lt.Table(path).get("a str, not bytes")


def test_chrome_table_in_its_own_order():
    """A table of Chrome's IndexedDB is ordered by idb_cmp1: read in that order it checks
    out and scans as the directory holds it; read bytewise, verify finds the order broken."""
    path = TESTDATA / "idb" / "chromium" / "000005.ldb"
    t = lt.Table(path, comparator="idb_cmp1")
    report = t.verify()
    assert report["ok"], report["problems"][:2]
    rows = list(t.scan())
    assert len(rows) == report["entries"] > 0
    assert list(t.scan(reverse=True)) == rows[::-1]
    bytewise = lt.Table(path).verify()
    assert not bytewise["ok"]
    assert bytewise["problems"][0]["kind"] == "KeyOrder"
