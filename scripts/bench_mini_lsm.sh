#!/usr/bin/env bash
# db_bench's workloads on the example engine (examples/mini_lsm) and on C++ LevelDB
# (Debian's libleveldb-dev 1.23) side by side: ROUNDS alternating rounds, medians and the
# ratio ours / LevelDB (time per operation: lower is better, <= 1.0 is as fast or faster).
#
# usage: scripts/bench_mini_lsm.sh [NUM=1000000] [ROUNDS=3]
#
#   1. builds tools/db_bench_cpp/leveldb_lsm_bench.cc (g++ -O2 -lleveldb) and the example
#      (cargo --release)
#   2. each round runs, on each side, in one process: fillseq, fillrandom (each on a fresh
#      database), overwrite, readrandom, readseq (on the fillrandom database), NUM entries of
#      16-byte keys and 100-byte values (half compressible), one Put per write, sync off,
#      LevelDB's default options with a 10-bit bloom filter on both sides; the same keys in
#      the same order (splitmix64 streams computed alike by both programs)
#   3. prints a markdown table (wall time per operation as db_bench reports it, and the CPU
#      seconds of all threads, which the machine's other load disturbs less); fails when the sides disagree on the keys found
#      (readrandom) or the entries scanned (readseq)
set -euo pipefail
NUM=${1:-1000000}
ROUNDS=${2:-3}
LIST=fillseq,fillrandom,overwrite,readrandom,readseq
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_mini_lsm.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[bench_mini_lsm $(date +%H:%M:%S)] $*" >&2; }

log "building (g++ -O2; cargo build --release --example mini_lsm)"
"${CXX:-g++}" -O2 -std=c++17 -Wall -Wextra -o "$work/leveldb_lsm_bench" \
  "$root/tools/db_bench_cpp/leveldb_lsm_bench.cc" -lleveldb
(cd "$root" && cargo build --release --quiet --example mini_lsm)
target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
ours="$target_dir/release/examples/mini_lsm"
cpp="$work/leveldb_lsm_bench"

out="$work/results.jsonl"
: > "$out"
run() {  # name command...: its JSON lines, tagged with the side and the round
  local name=$1 line
  shift
  "$@" | while read -r line; do
    echo "{\"impl\": \"$name\", \"round\": $r, ${line#\{}" >> "$out"
  done
  rm -rf "$work/db_$name"
  sync
}
leveldb_side() { run leveldb "$cpp" "$work/db_leveldb" "$NUM" "$LIST"; }
our_side() { run ours "$ours" "$work/db_ours" bench --num "$NUM" --benchmarks "$LIST" --fresh --json; }
for r in $(seq 1 "$ROUNDS"); do
  log "round $r/$ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ $((r % 2)) -eq 1 ]; then leveldb_side; our_side; else our_side; leveldb_side; fi
done

commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- src examples tools || commit="$commit+dirty"
python3 - "$out" "$NUM" "$ROUNDS" "$commit" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
print(f"NUM = {sys.argv[2]}, {sys.argv[3]} alternating rounds, commit {sys.argv[4]}")
print()
print("| benchmark | LevelDB 1.23 (µs/op) | mini_lsm (µs/op) | ratio (medians) | median of per-round ratios | CPU s, LevelDB / ours (ratio) | tables per level after (LevelDB / ours) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
bad = False
for b in ["fillseq", "fillrandom", "overwrite", "readrandom", "readseq"]:
    s = {i: {r["round"]: r for r in rows if r["impl"] == i and r["bench"] == b} for i in ("leveldb", "ours")}
    lo = med(r["micros_per_op"] for r in s["leveldb"].values())
    oo = med(r["micros_per_op"] for r in s["ours"].values())
    paired = med(s["ours"][k]["micros_per_op"] / s["leveldb"][k]["micros_per_op"] for k in s["ours"] if k in s["leveldb"])
    last = max(s["ours"])
    tl, to = s["leveldb"][last]["tables"], s["ours"][last]["tables"]
    cl = med(r["cpu_s"] for r in s["leveldb"].values())
    co = med(r["cpu_s"] for r in s["ours"].values())
    print(f"| {b} | {lo:.3f} | {oo:.3f} | {oo / lo:.2f} | {paired:.2f} | {cl:.2f} / {co:.2f} ({co / max(cl, 0.01):.2f}) | {tl} / {to} |")
    found = {(r["impl"], r["found"]) for r in rows if r["bench"] == b}
    if len({f for _, f in found}) > 1:
        print(f"THE SIDES DISAGREE on {b}: {sorted(found)}", file=sys.stderr)
        bad = True
sys.exit(1 if bad else 0)
PY
