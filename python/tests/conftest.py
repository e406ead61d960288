"""Shared fixtures: the repository's testdata, directory snapshots (bytes and mtimes), and
a 1M-entry database written by C++ LevelDB (plyvel) once per test session."""

import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TESTDATA = REPO / "testdata"
sys.path.insert(0, str(HERE))

import dbgen  # noqa: E402  (python/tests/dbgen.py: the writer shared with the benchmark)



def manifest_names_idb_cmp1(current):
    """Whether the MANIFEST that `current` (a CURRENT file) names records Chrome's
    IndexedDB order, idb_cmp1 (LevelDB writes the comparator's name into it as text)."""
    manifest = current.parent / current.read_text().strip()
    return b"idb_cmp1" in manifest.read_bytes()


# Every database directory of testdata/: in LevelDB's bytewise order, those LevelDB and
# goleveldb wrote (testdata/db/) and Chrome's localStorage and sessionStorage
# (testdata/idb/values/); in Chrome's idb_cmp1 order, its IndexedDB directories (plyvel
# opens them with idb_cmp1.py, and test_chrome.py checks them against Chromium's own
# read-back too).
# (testdata/idb_sqlite/ is a whole profile, its LevelDB stores tiny or empty: test_sqlite.py
# and the CLI's tests read it.)
ALL_DIRS = sorted(
    p.parent for p in TESTDATA.rglob("CURRENT") if "idb_sqlite" not in p.relative_to(TESTDATA).parts
)
BYTEWISE_DIRS = [p for p in ALL_DIRS if not manifest_names_idb_cmp1(p / "CURRENT")]
IDB_DIRS = [p for p in ALL_DIRS if manifest_names_idb_cmp1(p / "CURRENT")]


def dir_state(path):
    """Every file under `path`: name -> (sha256, size, mtime_ns); and the directory's own
    mtime. Two equal states mean nothing was written, created, removed or touched."""
    files = {}
    for root, _dirs, names in os.walk(path):
        for name in names:
            p = Path(root) / name
            st = p.stat()
            files[str(p.relative_to(path))] = (
                hashlib.sha256(p.read_bytes()).hexdigest(),
                st.st_size,
                st.st_mtime_ns,
            )
    return files, Path(path).stat().st_mtime_ns


@pytest.fixture(scope="session")
def million(tmp_path_factory):
    """A directory C++ LevelDB wrote with 1,000,000 live keys (tables at several levels and
    a live log holding the last writes), and a second copy of it for plyvel to open (plyvel
    writes to a directory it opens, the reader under test never does)."""
    base = tmp_path_factory.mktemp("million")
    ours = base / "db"
    dbgen.write_million(str(ours))
    theirs = base / "plyvel-copy"
    shutil.copytree(ours, theirs)
    return ours, theirs
