#!/usr/bin/env bash
# DB::Open and a full database scan, C++ LevelDB (Debian's libleveldb-dev) against this
# crate's read-only Db, on one directory LevelDB wrote (WriteBatch + CompactRange), side by
# side: ROUNDS alternating rounds, medians and ratios.
#
# usage: scripts/bench_db_open_scan.sh [N=1000000] [ROUNDS=5]
# LevelDB's DB::Open writes to the directory (a new log and MANIFEST, LOCK), so it gets a
# fresh copy every round; the crate's Db never writes and opens the original. The page
# cache holds the files in both cases (the copy was just written).
set -euo pipefail
N=${1:-1000000}
ROUNDS=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++17 -o "$work/leveldb_db_bench" "$root/tools/db_bench_cpp/leveldb_db_bench.cc" -lleveldb
(cd "$root" && cargo build --release --quiet --example db_bench)
ours="$root/target/release/examples/db_bench"
"$work/leveldb_db_bench" make "$work/db" "$N"
echo "directory: $(ls "$work/db" | grep -c '\.ldb$') tables, $(du -sh "$work/db" | cut -f1)" >&2
out="$work/results.jsonl"
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$work/copy" && cp -r "$work/db" "$work/copy"
  "$work/leveldb_db_bench" open "$work/copy" >> "$out"
  "$ours" open "$work/db" >> "$out"
  "$ours" open "$work/db" --mmap >> "$out"
  rm -rf "$work/copy" && cp -r "$work/db" "$work/copy"
  "$work/leveldb_db_bench" scan "$work/copy" >> "$out"
  "$ours" scan "$work/db" >> "$out"
  "$ours" scan "$work/db" --mmap >> "$out"
  "$ours" scan "$work/db" --mmap --no-verify >> "$out"
done
python3 - "$out" "$N" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(peer, field):
    v = [r[field] for r in rows if r["peer"] == peer and field in r]
    return statistics.median(v) if v else None
ents = {r["peer"]: r["entries"] for r in rows if "entries" in r}
assert len(set(ents.values())) == 1, ents
print(f"N = {sys.argv[2]}, {len([r for r in rows if r['peer']=='leveldb' and 'open_s' in r])} rounds, medians")
print("| measure | LevelDB 1.23 | ours (pread) | ours (mmap) | ours (mmap, no CRC) | ratios (pread / mmap / mmap no CRC) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for f in ["open_s", "scan_cold_s", "scan_s"]:
    l, o, m, x = (med(p, f) for p in ("leveldb", "ours", "ours-mmap", "ours-mmap-noverify"))
    fmt = lambda v: "-" if v is None else f"{v*1e3:.2f} ms"
    rat = lambda v: "-" if v is None else f"{v/l:.2f}"
    print(f"| {f} | {fmt(l)} | {fmt(o)} | {fmt(m)} | {fmt(x)} | {rat(o)} / {rat(m)} / {rat(x)} |")
print(f"entries scanned: {list(ents.values())[0]} by each")
PY
