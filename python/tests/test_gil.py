"""The GIL is released while the Rust side reads: shown without any clock.

The database's CURRENT (or the table file, or the blob file Chrome moved a large IndexedDB
value to) is a named pipe. Opening it blocks the reading
call inside Rust until some process opens the pipe for writing. A Python thread of the same
process does that: it polls with a non-blocking open (each try needs the GIL) and then
writes CURRENT's text. If the reading call held the GIL while it blocks, that thread could
never run, and the process would hang; so the check runs in a child process, and a hang
fails the test (after a generous limit) instead of hanging pytest."""

import subprocess
import sys
import textwrap

from conftest import TESTDATA

CHILD = textwrap.dedent(
    """
    import errno, hashlib, os, shutil, sys, threading, time
    import leveldb_table as lt

    def digest(rows):
        text = repr([(r.key, r.value, r.error) for r in rows])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    src, work, what = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.copytree(src, work)
    if what == "db":
        pipe = os.path.join(work, "CURRENT")
        with open(pipe, "rb") as f:
            text = f.read()
    elif what == "idb":
        # The value of record "in a blob" of database "second", store "large" (70,028
        # bytes: more than a pipe holds, so reader and writer take turns).
        pipe = os.path.join(work, "http_127.0.0.1_55229.indexeddb.blob", "2", "00", "2")
        with open(pipe, "rb") as f:
            text = f.read()
    else:
        pipe = os.path.join(work, "table.ldb")
        text = b"far too short for a table"
    if os.path.exists(pipe):
        os.remove(pipe)
    os.mkfifo(pipe)
    fed = []

    def feed():
        while True:
            try:
                fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: nobody has it open for reading yet
                    raise
                time.sleep(0.001)
        fed.append(True)  # the reader has the pipe open: the reading call is under way
        os.set_blocking(fd, True)
        view = memoryview(text)
        try:
            while view:
                view = view[os.write(fd, view):]
        except BrokenPipeError:  # the table reader closed it already (a pipe has no size)
            pass
        if what == "db":
            # The database reader reads CURRENT again once it has read the directory (to
            # see that the owner did not change it meanwhile): before the reader can see the
            # end of the pipe, CURRENT becomes a regular file with the same text, as an
            # owner replaces it (write, then rename).
            with open(pipe + ".tmp", "wb") as f:
                f.write(text)
            os.replace(pipe + ".tmp", pipe)
        os.close(fd)

    t = threading.Thread(target=feed)
    t.start()
    if what == "db":
        db = lt.Db(work)  # blocks in Rust reading CURRENT until feed() opens the pipe
        t.join()
        print(len(list(db.scan())), len(fed))
    elif what == "idb":
        db = lt.Db(os.path.join(work, "http_127.0.0.1_55229.indexeddb.leveldb"))
        # Blocks in Rust reading the blob file until feed() opens the pipe.
        rows = list(db.indexeddb(database="second", store="large"))
        t.join()
        print(digest(rows), len(fed))
    else:
        try:
            lt.Table(pipe)  # blocks in Rust opening the file until feed() opens the pipe
        except lt.LevelDBError as e:
            t.join()
            print(type(e).__name__, len(fed))
    """
)


def run_child(tmp_path, what, src=TESTDATA / "db" / "basic"):
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(tmp_path / "work"), what],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_db_open_releases_the_gil(tmp_path):
    import leveldb_table as lt

    want = len(list(lt.Db(TESTDATA / "db" / "basic").scan()))
    assert want > 0
    assert run_child(tmp_path, "db") == [str(want), "1"]


def test_table_open_releases_the_gil(tmp_path):
    # A pipe has no size: once open, the table is refused as too short, as an exception.
    assert run_child(tmp_path, "table") == ["CorruptionError", "1"]


def test_indexeddb_blob_file_read_releases_the_gil(tmp_path):
    import hashlib

    import leveldb_table as lt

    idb = TESTDATA / "idb" / "values" / "IndexedDB"
    rows = list(
        lt.Db(idb / "http_127.0.0.1_55229.indexeddb.leveldb").indexeddb(
            database="second", store="large"
        )
    )
    assert "in a blob" in [r.key for r in rows] and all(r.error is None for r in rows)
    text = repr([(r.key, r.value, r.error) for r in rows])
    want = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert run_child(tmp_path, "idb", src=idb) == [want, "1"]
