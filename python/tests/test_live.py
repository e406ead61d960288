"""Reading a directory that C++ LevelDB holds open (its LOCK taken) in another process:
the read works, sees what the writer wrote (its tables and its live log), and leaves every
file byte-identical, with the same mtimes, and no file created or removed."""

import subprocess
import sys
import textwrap

import plyvel
import pytest

import leveldb_table as lt
from conftest import dir_state

# The writer: opens the directory with plyvel, writes, compacts (so no background work
# is left), writes more that stays in the live log, says "ready", and holds the database
# open until its stdin closes.
WRITER = textwrap.dedent(
    """
    import sys, plyvel
    db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=64 << 10)
    for i in range(20000):
        db.put(b"k%06d" % i, b"first-%d" % i * 3)
    for i in range(0, 20000, 3):
        db.delete(b"k%06d" % i)
    db.compact_range()
    for i in range(1, 20000, 5):
        db.put(b"k%06d" % i, b"in-the-log-%d" % i)
    print("ready", flush=True)
    sys.stdin.read()
    db.close()
    """
)


def expected():
    out = {}
    for i in range(20000):
        if i % 5 == 1:
            out[b"k%06d" % i] = b"in-the-log-%d" % i
        elif i % 3 != 0:
            out[b"k%06d" % i] = b"first-%d" % i * 3
    return sorted(out.items())


@pytest.fixture
def held(tmp_path):
    path = tmp_path / "live"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield path
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def test_read_while_leveldb_holds_the_directory(held):
    # LevelDB's LOCK is held: LevelDB itself cannot open the directory now.
    with pytest.raises(plyvel.IOError):
        plyvel.DB(str(held))
    before = dir_state(held)
    want = expected()
    with lt.Db(held) as db:
        assert list(db.scan()) == want
        assert list(db.scan(reverse=True)) == want[::-1]
        for k, v in want[::97]:
            assert db.get(k) == v
        assert db.get(b"k000000") is None and db.get(b"k000006") == b"in-the-log-6"
        live = [(r.key, r.value) for r in db.records() if r.status == "live"]
        assert sorted(live) == want
        info = db.info()
        assert info["logs"] and info["logs"][0]["records"] > 0
    with lt.Db(held, salvage=True) as db:
        assert list(db.scan()) == want
    assert dir_state(held) == before
