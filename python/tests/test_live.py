"""Reading a directory that C++ LevelDB holds open (its LOCK taken) in another process:
the read works, sees what the writer wrote (its tables and its live log), and leaves every
file byte-identical, with the same mtimes, and no file created or removed.

LevelDB may still be compacting in the background when the writer says it is ready (it
compacts when it reopens a directory). So that whatever changes during the read is ours
alone, the writer is stopped (SIGSTOP: its background thread too, its LOCK still held)
for the read, and resumed after: the reader meets the directory as LevelDB left it at any
instant, possibly in the middle of a compaction."""

import os
import signal
import subprocess
import sys
import textwrap

import plyvel
import pytest

import leveldb_table as lt
from conftest import dir_state

# The writer: writes with plyvel, compacts and closes (so LevelDB has no background work
# left), opens the directory again (taking the LOCK), writes a little more that stays in
# the live log (less than the write buffer, so nothing is flushed or compacted), says
# "ready", and holds the database open until its stdin closes.
WRITER = textwrap.dedent(
    """
    import sys, plyvel
    db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=64 << 10)
    for i in range(20000):
        db.put(b"k%06d" % i, b"first-%d" % i * 3)
    for i in range(0, 20000, 3):
        db.delete(b"k%06d" % i)
    db.compact_range()
    db.close()
    db = plyvel.DB(sys.argv[1], write_buffer_size=64 << 10)
    for i in range(1, 20000, 40):
        db.put(b"k%06d" % i, b"in-the-log-%d" % i)
    print("ready", flush=True)
    sys.stdin.read()
    db.close()
    """
)


def expected():
    out = {}
    for i in range(20000):
        if i % 40 == 1:
            out[b"k%06d" % i] = b"in-the-log-%d" % i
        elif i % 3 != 0:
            out[b"k%06d" % i] = b"first-%d" % i * 3
    return sorted(out.items())


def stopped(pid):
    """Whether process `pid` is stopped (state T in /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


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
        os.kill(proc.pid, signal.SIGSTOP)
        while not stopped(proc.pid):
            os.sched_yield()
        yield path
    finally:
        os.kill(proc.pid, signal.SIGCONT)
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
        assert db.get(b"k000000") is None and db.get(b"k000081") == b"in-the-log-81"
        info = db.info()
        assert info["logs"] and info["logs"][0]["records"] > 0
    with lt.Db(held, salvage=True) as db:
        assert list(db.scan()) == want
        # Under salvage, so that a table LevelDB is writing at this instant (not in the
        # MANIFEST yet, so listed as an old file) is read as far as it goes, not an error.
        live = [(r.key, r.value) for r in db.records() if r.status == "live"]
        assert live == want
    assert dir_state(held) == before
