"""Side-by-side timings for the Python package (run by scripts/bench_python.sh).

  full scan of a 1M-entry directory LevelDB wrote: leveldb_table's Db.scan() against
  plyvel's iterator (each on its own copy: plyvel writes to a directory it opens), both
  taking every (key, value) pair as Python bytes; alternated, RUNS rounds
  (optional) decoding a Chrome IndexedDB directory: Db.indexeddb() (every object-store
  record with names and its value as Python objects) against dfindexeddb's `db` command

Prints each run (wall and CPU seconds) and the medians and ratios.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))

import dbgen  # noqa: E402
import plyvel  # noqa: E402

import leveldb_table as lt  # noqa: E402


def timed(f):
    w, c = time.perf_counter(), time.process_time()
    n = f()
    return time.perf_counter() - w, time.process_time() - c, n


def scan_ours(path):
    db = lt.Db(path)
    n = 0
    for _k, _v in db.scan():
        n += 1
    db.close()
    return n


def scan_plyvel(path):
    db = plyvel.DB(path)
    n = 0
    for _k, _v in db.iterator():
        n += 1
    db.close()
    return n


def report(results):
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v), v[0][2]) for k, v in results.items()}
    for k, (w, c, n) in med.items():
        print(f"  {k:32} median wall {w:7.3f} s  cpu {c:7.3f} s  ({n} rows)")
    return med


def bench_scan(base, runs):
    ours = os.path.join(base, "million")
    theirs = os.path.join(base, "million-plyvel")
    if not os.path.exists(ours):
        t = time.perf_counter()
        dbgen.write_million(ours)
        print(f"wrote the 1M-entry directory with plyvel in {time.perf_counter() - t:.1f} s")
    shutil.rmtree(theirs, ignore_errors=True)
    shutil.copytree(ours, theirs)
    # plyvel compacts what it opens: open it once first, so every timed run reads the same.
    scan_plyvel(theirs)
    results = {}
    for r in range(runs):
        for name, f, p in (("leveldb_table Db.scan()", scan_ours, ours), ("plyvel DB.iterator()", scan_plyvel, theirs)):
            w, c, n = timed(lambda: f(p))
            results.setdefault(name, []).append((w, c, n))
            print(f"run {r + 1}: {name:28} wall {w:7.3f} s  cpu {c:7.3f} s  rows {n}")
    med = report(results)
    (ow, oc, on), (pw, pc, pn) = med["leveldb_table Db.scan()"], med["plyvel DB.iterator()"]
    assert on == pn == dbgen.KEYS - dbgen.DELETED
    print(f"  full scan, plyvel / leveldb_table: wall {pw / ow:.2f}x, cpu {pc / oc:.2f}x")


def decode_ours(path):
    n = 0
    for r in lt.Db(path).indexeddb():
        assert r.error is None, r.error
        n += 1
    return n


DFI16 = """
import sys
from dfindexeddb.indexeddb.chromium import v8
v8.ValueDeserializer.LATEST_VERSION = 16
from dfindexeddb.indexeddb.cli import App
sys.argv[0] = "dfindexeddb"
App()
"""


def decode_dfindexeddb(path):
    # dfindexeddb 20260210 stops at V8 version 16 (Chrome 156) with "Unsupported header";
    # its ceiling is raised to 16 at run time, nothing else changed (version 16 is
    # version 15 for values without 4 GiB ArrayBuffers), so it decodes every record.
    out = subprocess.run(
        [sys.executable, "-c", DFI16, "db", "-s", path, "-f", "chrome", "-o", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return out.stdout.count(b"\n")


def timed_child(f):
    """Wall and CPU (this process and its children) seconds of f()."""
    w = time.perf_counter()
    t0 = os.times()
    n = f()
    t1 = os.times()
    cpu = sum(getattr(t1, a) - getattr(t0, a) for a in ("user", "system", "children_user", "children_system"))
    return time.perf_counter() - w, cpu, n


def bench_idb(path, runs):
    os.makedirs(path[: -len(".leveldb")] + ".blob", exist_ok=True)
    results = {}
    for r in range(runs):
        for name, f in (("leveldb_table Db.indexeddb()", decode_ours), ("dfindexeddb db (V8 16)", decode_dfindexeddb)):
            w, c, n = timed_child(lambda: f(path))
            results.setdefault(name, []).append((w, c, n))
            print(f"run {r + 1}: {name:28} wall {w:7.3f} s  cpu {c:7.3f} s  rows {n}")
    med = report(results)
    (ow, oc, on), (dw, dc, dn) = med["leveldb_table Db.indexeddb()"], med["dfindexeddb db (V8 16)"]
    print(f"  IndexedDB decoding, dfindexeddb / leveldb_table: wall {dw / ow:.0f}x, cpu {dc / oc:.0f}x "
          f"({on} object-store records decoded; dfindexeddb printed {dn} rows of every kind)")


def main():
    runs = int(os.environ.get("RUNS", "3"))
    base = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="bench-python-")
    os.makedirs(base, exist_ok=True)
    print(f"leveldb_table from {lt.__file__}; plyvel {plyvel.__version__} (LevelDB {plyvel.__leveldb_version__})")
    print(f"== full scan, 1M-entry directory ({base})")
    bench_scan(base, runs)
    idb = os.environ.get("IDB_DIR")
    if idb:
        print(f"== Chrome IndexedDB decoding ({idb})")
        bench_idb(idb.rstrip("/"), runs)
    else:
        print("== Chrome IndexedDB decoding: skipped (IDB_DIR not set; tools/gen_idb_bench_dir.sh makes one)")


if __name__ == "__main__":
    main()
