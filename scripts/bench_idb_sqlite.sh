#!/usr/bin/env bash
# `sst db scan --format jsonl` on a 50,047-record Chromium SQLite IndexedDB folder (two
# databases, made by `SQLITE=1 MESSAGES=47000 tools/gen_idb_bench_dir.sh DIR`) against
# dfindexeddb (pip install dfindexeddb) on the same files, side by side with hyperfine.
# Each tool reads its own fresh copy (dfindexeddb's sqlite3 open creates a -shm file).
#
# usage: scripts/bench_idb_sqlite.sh ORIGIN_DIR [SST]
set -euo pipefail
py=$(command -v python3)
src=${1:?usage: $0 ORIGIN_DIR [SST]}
sst=${2:-target/release/sst}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$src" "$work/ours"
cp -a "$src" "$work/theirs"
files=$(cd "$work/theirs" && ls | grep -v -e '-wal$' -e '-shm$')
echo "records (sst): $("$sst" db scan "$work/ours" --format jsonl | grep -c '"kind":"record"')"
keys_only="$work/dfindexeddb_keys.py"
cat >"$keys_only" <<'PY'
import sys
from dfindexeddb.indexeddb.chromium import sqlite
n = 0
for f in sys.argv[1:]:
    for r in sqlite.DatabaseReader(f).Records(parse_value=False, load_blobs=False):
        n += 1
print(n)
PY
set +e
for f in $files; do
  echo "dfindexeddb db -s $f:"; dfindexeddb db -s "$work/theirs/$f" -f chromium -o jsonl 2>&1 | tail -1
done
echo "dfindexeddb keys only: $(cd "$work/theirs" && "$py" "$keys_only" $files)"
set -e
theirs=$(for f in $files; do printf '%s ' "$work/theirs/$f"; done)
# -N: no shell between hyperfine and the commands (their output is discarded).
hyperfine -N --warmup 1 --runs 5 \
  -n "sst db scan --format jsonl" "$sst db scan $work/ours --format jsonl" \
  -n "sst db scan (text)" "$sst db scan $work/ours" \
  -n "dfindexeddb keys only (values not parsed)" "$py $keys_only $theirs"
ls "$work/ours" "$work/theirs"
