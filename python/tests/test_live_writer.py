"""Reading a directory while C++ LevelDB writes and compacts it, through the Python package:
a real writer (plyvel, LevelDB 1.22, the smallest write buffer, tests/live/leveldb_writer.py)
commits numbered batches as fast as it can while `leveldb_table.Db` reads the directory over
and over. Every read equals the writer's state after one of its batches (batch i sets
`counter` to i, so a read names the state it must equal); reads opened later never see an
older state; and a scan started before LevelDB deleted a table it had not reached yet goes
on, after the deletion, in the very state it started in. The writer runs until the reads
are done: the assertions are on states, never on times."""

import os
import subprocess
import sys
from pathlib import Path

import leveldb_table as lt

WRITER = Path(__file__).resolve().parents[2] / "tests" / "live" / "leveldb_writer.py"
sys.path.insert(0, str(WRITER.parent))
import leveldb_writer as w  # noqa: E402


def batch_of(rows, what):
    """Checks that `rows` is the state after one batch, and returns that batch."""
    counter = dict(rows).get(b"counter")
    assert counter is not None, f"{what}: no counter among {len(rows)} rows"
    i = int(counter)
    want = w.state(i)
    if rows != want:
        first = next((n for n, (a, b) in enumerate(zip(rows, want)) if a != b), None)
        raise AssertionError(
            f"{what}: {len(rows)} rows, not the {len(want)} of the state after batch {i}; "
            f"first difference at row {first}"
        )
    return i


class Reads:
    """Reads through the package, each checked, never older than the one before."""

    def __init__(self, path):
        self.path = path
        self.seen = 0

    def check(self, rows, what):
        i = batch_of(rows, what)
        assert i >= self.seen, f"{what}: batch {i} after batch {self.seen}"
        self.seen = i
        return i

    def whole(self):
        with lt.Db(self.path) as db:
            i = self.check(list(db.scan()), "Db.scan")
            # Batch i holds 26 records: sequences 26(i-1)+1 ..= 26i.
            assert db.last_sequence == (w.OPS + 1) * i
            return db.info()


def later_tables(info):
    """The tables at levels 1-6 a scan reaches only after its first row."""
    return [f["file"] for lv in info["levels"][1:] for f in lv["files"][1:]]


def test_every_read_of_a_directory_leveldb_writes_and_compacts_is_one_batch_state(tmp_path):
    path = tmp_path / "db"
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        reads = Reads(path)
        # Reads until every key is written and level 1 holds several tables.
        for _ in range(100_000):
            info = reads.whole()
            if reads.seen >= 500 and len(info["levels"][1]["files"]) >= 2:
                break
        else:
            raise AssertionError(f"LevelDB made no second level-1 table by batch {reads.seen}")
        # Then 15 times: a scan takes its first row, then (reads meanwhile) LevelDB deletes
        # a table of it the scan has not reached yet, then the scan goes on to its end.
        for _ in range(15):
            before = reads.seen
            db = lt.Db(path)
            later = later_tables(db.info())
            assert later, f"one table per level at batch {reads.seen}"
            it = db.scan()
            rows = [next(it)]
            waits = 0
            while all(os.path.exists(path / t) for t in later):
                reads.whole()
                waits += 1
                assert waits < 100_000, f"LevelDB deleted none of {later}"
            rows.extend(it)
            i = batch_of(rows, "Db.scan, read on after the deletion")
            assert db.last_sequence == (w.OPS + 1) * i
            reads.whole()
            assert before <= i <= reads.seen
            # A lookup after the deletion answers from the same state.
            assert db.get(b"counter") == str(i).encode()
            db.close()
        proc.stdin.close()
        last = int(proc.stdout.readline())
        assert proc.wait() == 0
        assert last >= reads.seen
        with lt.Db(path) as db:
            assert batch_of(list(db.scan()), "after the writer") == last
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
