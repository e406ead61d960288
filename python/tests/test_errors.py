"""Errors are exceptions of leveldb_table.errors that say what and where: the file, the
file offset, the block. Salvage reads past what is damaged and lists it."""

import shutil

import pytest

import leveldb_table as lt
from conftest import TESTDATA

CORRUPT = TESTDATA / "corrupt"


def test_hierarchy():
    assert issubclass(lt.CorruptionError, lt.LevelDBError)
    assert issubclass(lt.NotFoundError, FileNotFoundError)
    assert issubclass(lt.NotFoundError, lt.LevelDBIOError)
    assert issubclass(lt.LevelDBIOError, OSError)
    assert issubclass(lt.InvalidArgumentError, ValueError)


def test_missing_directory(tmp_path):
    with pytest.raises(lt.NotFoundError) as e:
        lt.Db(tmp_path / "nothing-here")
    assert e.value.errno == 2
    assert e.value.file == str(tmp_path / "nothing-here")
    assert e.value.kind == "Io"


def test_not_a_table():
    with pytest.raises(lt.CorruptionError) as e:
        lt.Table(CORRUPT / "bad_magic.ldb")
    assert e.value.kind == "BadMagic"
    assert e.value.file == str(CORRUPT / "bad_magic.ldb")
    assert e.value.offset == (CORRUPT / "bad_magic.ldb").stat().st_size - 8


def test_truncated_table():
    with pytest.raises(lt.CorruptionError) as e:
        lt.Table(CORRUPT / "truncated_47.ldb")
    assert e.value.kind == "TooShort"
    assert e.value.offset == 0


def test_damaged_block_in_a_table_scan_and_verify():
    path = CORRUPT / "data_block_bitflip_nocompress.ldb"
    t = lt.Table(path)
    with pytest.raises(lt.CorruptionError) as e:
        list(t.scan())
    assert e.value.kind == "ChecksumMismatch"
    assert e.value.offset == 0
    assert e.value.block == ("data", 0, 1039)
    assert e.value.file == str(path)
    report = t.verify()
    assert not report["ok"]
    p = report["problems"][0]
    assert (p["kind"], p["offset"], p["block"]) == ("ChecksumMismatch", 0, ("data", 0, 1039))
    # Without checksums the flipped byte is read as data, as LevelDB reads it.
    unchecked = lt.Table(path, verify_checksums=False)
    rows = list(unchecked.scan())
    assert len(rows) == 2000
    key = bytes.fromhex("6b2f30303030302f787a627a6379617a0101000000000000")
    assert rows[0] == (key, bytes.fromhex("103a64622061"))


def damaged_copy(tmp_path):
    """testdata/db/basic with a byte of the first data block of 000005.ldb flipped."""
    copy = tmp_path / "basic"
    shutil.copytree(TESTDATA / "db" / "basic", copy)
    table = copy / "000005.ldb"
    data = bytearray(table.read_bytes())
    data[20] ^= 0x40
    table.write_bytes(bytes(data))
    return copy


def test_damaged_database_names_file_and_offset(tmp_path):
    copy = damaged_copy(tmp_path)
    db = lt.Db(copy)
    with pytest.raises(lt.CorruptionError) as e:
        list(db.scan())
    assert e.value.file == "000005.ldb"
    assert e.value.offset == 0
    assert e.value.block[0] == "data"
    assert "000005.ldb" in str(e.value)


def test_scan_hands_out_entries_before_the_error(tmp_path):
    copy = damaged_copy(tmp_path)
    db = lt.Db(copy)
    clean = lt.Db(TESTDATA / "db" / "basic")
    got = []
    with pytest.raises(lt.CorruptionError):
        for kv in db.scan():
            got.append(kv)
    # What came before the error is exactly the clean directory's prefix.
    assert got == list(clean.scan())[: len(got)]


def test_salvage_reads_past_the_damage(tmp_path):
    copy = damaged_copy(tmp_path)
    db = lt.Db(copy, salvage=True)
    rows = list(db.scan())
    clean = dict(lt.Db(TESTDATA / "db" / "basic").scan())
    assert rows and len(rows) < len(clean)
    for k, v in rows:
        assert clean[k] == v
    damage = db.damage()
    assert damage and damage[0]["file"] == "000005.ldb" and damage[0]["offset"] == 0
    assert db.info()["damage"] == damage
    # Salvage's three views agree: every scanned key is a live record and a get finds it.
    live = {r.key: r.value for r in db.records() if r.status == "live"}
    assert live == dict(rows)
    for k, v in rows:
        assert db.get(k) == v


def test_closed_database():
    db = lt.Db(TESTDATA / "db" / "basic")
    it = db.scan()
    db.close()
    with pytest.raises(ValueError):
        db.get(b"key/00001")
    # A scan started before close keeps its own reference.
    assert sum(1 for _ in it) == 744


def test_salvage_reads_forward_only(tmp_path):
    db = lt.Db(damaged_copy(tmp_path), salvage=True)
    with pytest.raises(lt.InvalidArgumentError) as e:
        list(db.scan(reverse=True))
    assert "backward is not supported under salvage" in str(e.value)
