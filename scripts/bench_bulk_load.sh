#!/usr/bin/env bash
# Issue 17's load comparison: loading N entries into C++ LevelDB (Debian's libleveldb-dev
# 1.23) through WriteBatch and compacting until nothing is left to compact, against this
# crate's bulk build of the same entries into a complete directory, side by side:
# ROUNDS alternating rounds per size and input order, medians and speedups as a markdown
# table.
#
# usage: scripts/bench_bulk_load.sh [ROUNDS=3] [N...=1000000 4000000]
#
#   1. builds examples/db_bench.rs (cargo --release) and tools/db_bench_cpp (g++ -O2)
#   2. for each N, in key order and shuffled (the same splitmix64-driven Fisher-Yates
#      order on both sides), each round (LevelDB first in odd rounds, ours first in even):
#        LevelDB  leveldb_db_bench load DIR N [--shuffled]: the entries (16-byte keys
#                 "k" + 15-digit 2i, 100-byte half-compressible values) made in memory
#                 untimed, then timed: DB::Open (create), WriteBatch of 1000 (no sync),
#                 CompactRange(nullptr, nullptr), close
#        ours     db_bench bulk DIR N [--shuffled]: the same entries made in memory
#                 untimed, then timed: BulkBuilder (snappy, bloom 10, 4 KiB blocks, 2 MiB
#                 tables at level 6, every table and the directory fsynced, published by
#                 rename), shuffled input through the ExternalSorter within 64 MiB first;
#                 and the same with --parallel (snappy on a second thread)
#   3. in the first round LevelDB opens a copy of each directory we built and iterates it
#      (entries must equal N)
#   4. prints medians, LevelDB / ours (how many times faster) and the median of the
#      per-round speedups.
set -euo pipefail
ROUNDS=3
SIZES=()
pos=0
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    [0-9]*) if [ $pos -eq 0 ]; then ROUNDS=$a; else SIZES+=("$a"); fi; pos=$((pos + 1)) ;;
    *) echo "unknown argument: $a" >&2; exit 2 ;;
  esac
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 4000000)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_bulk_load.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[bench_bulk $(date +%H:%M:%S)] $*" >&2; }

# shellcheck source=scripts/db_bench_tools.sh
. "$root/scripts/db_bench_tools.sh"

out="$work/results.jsonl"
: > "$out"
run() {  # impl n order command... : one JSON line, tagged
  local impl=$1 n=$2 order=$3 line
  shift 3
  line=$("$@")
  echo "{\"impl\": \"$impl\", \"n\": $n, \"order\": \"$order\", \"round\": $r, ${line#\{}" >> "$out"
}
for n in "${SIZES[@]}"; do
  for order in sorted shuffled; do
    flag=""
    [ "$order" = shuffled ] && flag=--shuffled
    for r in $(seq 1 "$ROUNDS"); do
      log "N=$n $order round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
      leveldb() { rm -rf "$work/l"; run leveldb "$n" "$order" "$cpp" load "$work/l" "$n" $flag; rm -rf "$work/l"; }
      bulk() {
        rm -rf "$work/o"; run ours "$n" "$order" "$ours" bulk "$work/o" "$n" $flag
        rm -rf "$work/o"; run ours_parallel "$n" "$order" "$ours" bulk "$work/o" "$n" $flag --parallel
      }
      if [ $((r % 2)) -eq 1 ]; then leveldb; bulk; else bulk; leveldb; fi
      if [ "$r" -eq 1 ]; then
        rm -rf "$work/check" && cp -r "$work/o" "$work/check"
        got=$("$cpp" scan "$work/check" | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
        [ "$got" = "$n" ] || { echo "LevelDB iterated $got entries of our directory, not $n" >&2; exit 1; }
        rm -rf "$work/check"
      fi
      rm -rf "$work/o"
    done
  done
done

commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- src examples tools || commit="$commit+dirty"
python3 - "$out" "$ROUNDS" "$commit" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
print(f"{sys.argv[2]} alternating rounds per row, commit {sys.argv[3]}")
print()
print("| entries | input order | LevelDB: WriteBatch + CompactRange (s) | ours: bulk build (s) | LevelDB / ours (medians) | median of per-round ratios | tables (LevelDB / ours) | target >= 10x |")
print("| ---: | --- | ---: | ---: | ---: | ---: | --- | --- |")
labels = {"ours": "", "ours_parallel": ", parallel compression"}
for n in sorted({r["n"] for r in rows}):
    for order in ("sorted", "shuffled"):
        sel = lambda impl: {r["round"]: r for r in rows if r["impl"] == impl and r["n"] == n and r["order"] == order}
        l = sel("leveldb")
        for impl, label in labels.items():
            o = sel(impl)
            if not l or not o:
                continue
            ml, mo = med(x["load_s"] for x in l.values()), med(x["load_s"] for x in o.values())
            paired = med(l[k]["load_s"] / o[k]["load_s"] for k in l if k in o)
            lt = sorted({x["tables"] for x in l.values()})
            ot = sorted({x["tables"] for x in o.values()})
            met = "met" if ml / mo >= 10 else "not met"
            print(f"| {n:,} | {order}{label} | {ml:.3f} | {mo:.3f} | {ml/mo:.1f}x | {paired:.1f}x | {lt} / {ot} | {met} |")
PY
