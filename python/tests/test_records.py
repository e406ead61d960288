"""Db.records(): every record of every file with what became of it and where it is, as
`sst db records` lists them; Db.info() as `sst db info --format json`."""

import json
import subprocess

import pytest

import leveldb_table as lt
from conftest import BYTEWISE_DIRS, REPO, TESTDATA

STATUSES = {"live", "shadowed", "deleted", "obsolete_file"}


@pytest.mark.parametrize("src", BYTEWISE_DIRS, ids=lambda p: p.name)
def test_records_agree_with_the_scan(src):
    db = lt.Db(src)
    records = list(db.records())
    assert records
    live = [(r.key, r.value) for r in records if r.status == "live"]
    assert live == list(db.scan())
    for r in records:
        assert r.status in STATUSES
        assert r.kind in ("value", "deletion")
        assert (src / r.file).is_file()
        if r.file.endswith(".log"):
            assert r.batch_offset == r.offset and r.offset_in_batch >= 12
            assert r.block_offset is None
        else:
            assert r.block_offset == r.offset and r.block_size > 0
            assert r.offset_in_block is not None and r.batch_offset is None
        if r.kind == "deletion":
            assert r.value == b"" and r.status != "live"


def test_records_locate_the_bytes():
    """A record in an uncompressed log batch: its key is in the file right after the
    record's tag and key length, at the offset the record gives."""
    db = lt.Db(TESTDATA / "db" / "basic")
    log = [r for r in db.records() if r.file == "000008.log"]
    assert log
    data = (TESTDATA / "db" / "basic" / "000008.log").read_bytes()
    for r in log[:20]:
        # One batch per physical record here: the 7-byte record header, then the batch.
        at = r.batch_offset + 7 + r.offset_in_batch
        assert data[at] == (1 if r.kind == "value" else 0)
        assert data[at + 2 : at + 2 + len(r.key)] == r.key


def test_record_as_dict_matches_the_cli_fields():
    db = lt.Db(TESTDATA / "db" / "snapshot")
    d = next(iter(db.records())).as_dict()
    assert {"key", "value", "seq", "kind", "status", "file", "offset"} <= set(d)


def test_info_fields():
    db = lt.Db(TESTDATA / "db" / "basic")
    info = db.info()
    assert info["comparator"] == "leveldb.BytewiseComparator"
    assert info["comparator_from"] == "manifest"
    assert info["manifest"] == "MANIFEST-000002"
    assert info["last_sequence"] == db.last_sequence == 1439
    assert len(info["levels"]) == 7
    files = [f["file"] for lv in info["levels"] for f in lv["files"]]
    assert sorted(files) == ["000005.ldb", "000007.ldb", "000009.ldb"]
    assert info["logs"][0]["number"] == 8
    assert info["files_not_in_manifest"] == ["expected.json"]
    expected = json.loads((TESTDATA / "db" / "basic" / "expected.json").read_text())
    assert info["last_sequence"] == expected["last_sequence"]


def test_snapshot_reads():
    src = TESTDATA / "db" / "snapshot"
    expected = json.loads((src / "expected.json").read_text())
    db = lt.Db(src)
    at = expected["snapshot_seq"]
    want = [(bytes.fromhex(k), bytes.fromhex(v)) for k, v in expected["snapshot_scan"]]
    assert list(db.scan(at_seq=at)) == want
    assert list(db.scan(at_seq=at, reverse=True)) == want[::-1]
    for g in expected["snapshot_gets"]:
        v = db.get(bytes.fromhex(g["key"]), at_seq=at)
        assert v == (bytes.fromhex(g["value"]) if g["found"] else None)
