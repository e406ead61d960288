#!/usr/bin/env bash
# Times the Python package against its peers side by side in one run
# (scripts/bench_python.py): a full scan of a 1M-entry directory C++ LevelDB wrote
# (Db.scan() against plyvel's iterator), and, when IDB_DIR names a Chrome IndexedDB
# directory (tools/gen_idb_bench_dir.sh makes a 30,000-record one), decoding every
# record (Db.indexeddb() against dfindexeddb's `db` command).
#
#   bash scripts/bench_python.sh                 RUNS=3 rounds, a fresh 1M directory
#   BENCH_DIR=/tmp/b IDB_DIR=/tmp/idb/http_127.0.0.1_1.indexeddb.leveldb RUNS=5 \
#     bash scripts/bench_python.sh               reuse /tmp/b/million, add IndexedDB
#
# The extension is built in the release profile into target/python-bench-venv (not the
# test venv, whose build is the dev profile). Needs maturin and plyvel (scripts/setup.sh),
# and dfindexeddb for IDB_DIR (pip install dfindexeddb).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="$PWD/target/python-bench-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# The venv sees the packages of this python3 (plyvel, maturin, dfindexeddb), as in
# scripts/test_python.sh.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  >"$site/outer-python.pth"
(cd python && VIRTUAL_ENV="$venv" python3 -m maturin develop --release --quiet)
if [ -n "${IDB_DIR:-}" ] && ! "$venv/bin/python" -c "import dfindexeddb" 2>/dev/null; then
  echo "IDB_DIR needs dfindexeddb: pip install dfindexeddb" >&2
  exit 2
fi
nproc_note=$(nproc)
echo "machine: $nproc_note cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$venv/bin/python" scripts/bench_python.py
