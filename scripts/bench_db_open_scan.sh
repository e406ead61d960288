#!/usr/bin/env bash
# DB::Open, a full database scan and point lookups, C++ LevelDB (Debian's libleveldb-dev
# 1.23) against this crate's read-only Db, on one directory LevelDB wrote (WriteBatch +
# CompactRange), side by side: ROUNDS alternating rounds, medians and ratios (ours /
# LevelDB) as a markdown table.
#
# usage: scripts/bench_db_open_scan.sh [N=1000000] [ROUNDS=5] [--shuffled]
#
#   1. builds examples/db_bench.rs (cargo --release) and tools/db_bench_cpp (g++ -O2)
#   2. LevelDB writes N entries shaped as the shared workload (16-byte keys "k" + 15-digit
#      2i, 100-byte half-compressible values) in key order (--shuffled: in a fixed shuffled
#      order), WriteBatch of 1000, snappy, bloom 10, then CompactRange: the master directory,
#      in a mktemp folder removed on exit
#   3. each round gives every open its own fresh copy of the master (cp -r, then sync: page cache warm
#      for both sides; DB::Open writes to its directory, ours writes nothing but gets a copy
#      too) and runs, LevelDB first in odd rounds and ours first in even ones:
#        open  DB::Open (64 MiB cache, bloom 10) | Db::open | Db::open_mmap
#        scan  each opens (untimed), then two full forward passes (cold: empty block cache,
#              warm: the second): leveldb::Iterator (no checksum verification, LevelDB's
#              default) | Db::view, pread, checksums verified (our default) | the same
#              through maps | maps with checksums off (as LevelDB reads)
#        get   each opens (untimed), 200,000 present and 200,000 absent keys (the same
#              splitmix64-chosen probes on both sides), one untimed pass of each, then a
#              timed pass of each: DB::Get (default ReadOptions) | Db::get_into through maps
#              (as LevelDB's Env reads tables) and through pread, checksums verified
#   4. prints medians, the ratio of the medians and the median of the per-round ratios;
#      fails when the sides disagree on the table count, entries or the value-byte checksum,
#      or a lookup answers wrongly.
set -euo pipefail
N=1000000 ROUNDS=5 ORDER=""
pos=0
for a in "$@"; do
  case "$a" in
    --shuffled) ORDER=--shuffled ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    [0-9]*) if [ $pos -eq 0 ]; then N=$a; else ROUNDS=$a; fi; pos=$((pos + 1)) ;;
    *) echo "unknown argument: $a" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_db_open_scan.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[bench_db $(date +%H:%M:%S)] $*" >&2; }

# shellcheck source=scripts/db_bench_tools.sh
. "$root/scripts/db_bench_tools.sh"

log "LevelDB writes $N entries ${ORDER:-(key order)} + CompactRange"
"$cpp" make "$work/db" "$N" $ORDER >&2
log "directory: $(ls "$work/db" | grep -c '\.ldb$') tables, $(du -sh "$work/db" | cut -f1)"

out="$work/results.jsonl"
: > "$out"
# The copy is synced before it is read: its writeback would otherwise run during the timing.
fresh() { rm -rf "$work/c_$1" && cp -r "$work/db" "$work/c_$1" && sync; }
run() {  # name op command... : one JSON line, tagged with the round
  local name=$1 op=$2 line
  shift 2
  line=$("$@")
  echo "{\"impl\": \"$name\", \"op\": \"$op\", \"round\": $r, ${line#\{}" >> "$out"
}
leveldb_side() {
  fresh leveldb && run leveldb open "$cpp" open "$work/c_leveldb"
  fresh leveldb && run leveldb scan "$cpp" scan "$work/c_leveldb"
  fresh leveldb && run leveldb get "$cpp" get "$work/c_leveldb" "$N"
}
our_side() {
  fresh ours && run ours open "$ours" open "$work/c_ours"
  fresh ours && run ours_mmap open "$ours" open "$work/c_ours" --mmap
  fresh ours && run ours scan "$ours" scan "$work/c_ours"
  run ours_mmap scan "$ours" scan "$work/c_ours" --mmap
  run ours_mmap_nv scan "$ours" scan "$work/c_ours" --mmap --no-verify
  fresh ours && run ours_mmap get "$ours" get "$work/c_ours" "$N" --mmap
  run ours get "$ours" get "$work/c_ours" "$N"
}
for r in $(seq 1 "$ROUNDS"); do
  log "round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ $((r % 2)) -eq 1 ]; then leveldb_side; our_side; else our_side; leveldb_side; fi
done

commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- src examples tools || commit="$commit+dirty"
python3 - "$out" "$N" "$ROUNDS" "$commit" "${ORDER:-key order}" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
def series(impl, op, field):
    return {r["round"]: r[field] for r in rows if r["impl"] == impl and r["op"] == op}
print(f"N = {sys.argv[2]} ({sys.argv[5]}), {sys.argv[3]} alternating rounds, commit {sys.argv[4]}")
print()
print("| measure | LevelDB 1.23 | ours | ours / LevelDB (medians) | median of per-round ratios | target |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
lines = [
    ("open, `Db::open`", "ours", "open", "open_s", "<= 1.0"),
    ("open, `Db::open_mmap`", "ours_mmap", "open", "open_s", ""),
    ("scan cold, `Db::open` (pread, checksums verified)", "ours", "scan", "scan_cold_s", "<= 1.0"),
    ("scan cold, `Db::open_mmap`", "ours_mmap", "scan", "scan_cold_s", ""),
    ("scan cold, `Db::open_mmap`, checksums off", "ours_mmap_nv", "scan", "scan_cold_s", ""),
    ("scan warm, `Db::open` (pread, checksums verified)", "ours", "scan", "scan_s", "<= 1.0"),
    ("scan warm, `Db::open_mmap`", "ours_mmap", "scan", "scan_s", ""),
    ("scan warm, `Db::open_mmap`, checksums off", "ours_mmap_nv", "scan", "scan_s", ""),
    ("get hit, `Db::open_mmap` (checksums verified)", "ours_mmap", "get", "hit_s_per_op", "<= 0.5"),
    ("get miss, `Db::open_mmap`", "ours_mmap", "get", "miss_s_per_op", "<= 0.5"),
    ("get hit, `Db::open` (pread)", "ours", "get", "hit_s_per_op", ""),
    ("get miss, `Db::open` (pread)", "ours", "get", "miss_s_per_op", ""),
]
for label, impl, op, field, target in lines:
    o, b = series(impl, op, field), series("leveldb", op, field)
    mo, mb = med(o.values()), med(b.values())
    paired = med(o[k] / b[k] for k in o if k in b)
    unit, scale = ("ms", 1e3) if op != "get" else ("µs/op", 1e6)
    if target:
        bound = float(target.split()[-1])
        target = f"{target}: {'met' if mo / mb <= bound else 'not met'}"
    print(f"| {label} ({unit}) | {mb*scale:.3f} | {mo*scale:.3f} | {mo/mb:.2f} | {paired:.2f} | {target} |")
ents = {(r["entries"], r["check"]) for r in rows if r["op"] == "scan"}
gets = {(r["found"], r["wrong"], r["check"]) for r in rows if r["op"] == "get"}
tabs = {r["tables"] for r in rows if r["op"] == "open"}
n = next(iter(ents))[0]
print()
print(f"scan speed warm (M entries/s): LevelDB {n / med(series('leveldb', 'scan', 'scan_s').values()) / 1e6:.2f}, "
      f"ours (pread) {n / med(series('ours', 'scan', 'scan_s').values()) / 1e6:.2f}, "
      f"ours (mmap) {n / med(series('ours_mmap', 'scan', 'scan_s').values()) / 1e6:.2f}")
print(f"tables seen by every open: {sorted(tabs)}; entries and checksum of every scan: {sorted(ents)}")
print(f"gets (found, wrong, value checksum): {sorted(gets)}")
if len(ents) != 1 or len(tabs) != 1 or len(gets) != 1 or next(iter(gets))[1] != 0:
    print("THE SIDES DISAGREE", file=sys.stderr)
    sys.exit(1)
PY
