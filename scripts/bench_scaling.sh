#!/usr/bin/env bash
# Scaling run of the shared SSTable peer benchmark: runs `run_peers.sh` (C++ LevelDB,
# C++ LevelDB + verify_checksums, the `sstable` crate and this crate's examples/peer_bench)
# at several table sizes N, collects the medians into a CSV, measures the peak memory of
# our build alone at each N, and draws docs/perf_scaling.svg.
#
# usage: scripts/bench_scaling.sh [--sizes "100000 1000000 4000000"] [--runs R]
#                                 [--big-runs R4] [--compression snappy|none] [--out DIR]
#   --runs R      rounds per size (default 3)
#   --big-runs R4 rounds for sizes >= 4,000,000 (default 3: ~4 min on a quiet 2-core VM, ~15 min
#                 when other jobs load it; use 1 then)
#   --out DIR     where the logs, JSONL and CSVs go (default target/bench-scaling/<time>)
# Environment:
#   SHARED_BENCH  the harness folder (default: ../shared/bench next to the repository); it is
#                 copied to BENCH_DIR because run_peers.sh writes build/ and target/ beside
#                 itself and shared/ is read-only
#   BENCH_DIR     working copy of the harness (default /tmp/bench; reused if present)
#   CARGO_TARGET_DIR  where our peer is built (default target/)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZES="100000 1000000 4000000" RUNS=3 BIG_RUNS=3 COMP=snappy OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) SIZES="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --big-runs) BIG_RUNS="$2"; shift 2 ;;
    --compression) COMP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
log() { echo "[bench_scaling $(date +%H:%M:%S)] $*" >&2; }

SHARED_BENCH="${SHARED_BENCH:-$repo/../shared/bench}"
BENCH_DIR="${BENCH_DIR:-/tmp/bench}"
TARGET="${CARGO_TARGET_DIR:-$repo/target}"
OUT="${OUT:-$TARGET/bench-scaling/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if [ ! -x "$BENCH_DIR/run_peers.sh" ]; then
  [ -d "$SHARED_BENCH" ] || { echo "harness not found: $SHARED_BENCH (set SHARED_BENCH)" >&2; exit 1; }
  log "copying $SHARED_BENCH to $BENCH_DIR"
  mkdir -p "$BENCH_DIR"
  cp -r "$SHARED_BENCH/." "$BENCH_DIR/"
fi

log "building examples/peer_bench (release)"
(cd "$repo" && CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --example peer_bench)
PEER="$TARGET/release/examples/peer_bench"

for n in $SIZES; do
  r="$RUNS"
  [ "$n" -ge 4000000 ] && r="$BIG_RUNS"
  log "N=$n: run_peers.sh --runs $r --compression $COMP"
  start=$SECONDS
  rc=0
  "$BENCH_DIR/run_peers.sh" "$n" --runs "$r" --compression "$COMP" \
    --peer "ours=$PEER" > "$OUT/run_n$n.out" 2> "$OUT/run_n$n.err" || rc=$?
  echo "$n $((SECONDS - start)) $r $rc" >> "$OUT/durations.txt"
  [ "$rc" -eq 0 ] || log "N=$n: run_peers.sh exited $rc (wrong answers?), see $OUT/run_n$n.err"
  jsonl="$(sed -n 's/^# medians (results in \(.*\)):$/\1/p' "$OUT/run_n$n.out")"
  cp "$BENCH_DIR/$jsonl" "$OUT/results_n$n.jsonl"
  log "N=$n: $((SECONDS - start)) s"

  # Peak memory of our build alone (workload loaded first; the build streams, so what it adds
  # is bounded by the index and filter blocks, not by the data).
  w="$BENCH_DIR/build/workload_n${n}_h200000_s42.bin"
  /usr/bin/time -v "$PEER" --workload "$w" --table "$BENCH_DIR/build/scaling_mem.ldb" \
    --compression "$COMP" --build-only > "$OUT/mem_n$n.json" 2> "$OUT/mem_n$n.time"
  rm -f "$BENCH_DIR/build/scaling_mem.ldb"
done

python3 - "$OUT" $SIZES <<'PY'
import csv, json, statistics, sys, re, os
out, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
fields = ["build_s", "build_mb_s", "file_bytes", "open_s", "scan_cold_s", "scan_s", "scan_mb_s",
          "scan_file_reads", "get_hit_cold_s_per_op", "get_hit_s_per_op", "get_hit_file_reads",
          "get_miss_cold_s_per_op", "get_miss_s_per_op", "miss_blocks_read",
          "miss_blocks_read_per_op", "seek_hit_s_per_op", "seek_miss_s_per_op", "errors"]
rows = []
for n in sizes:
    groups = {}
    with open(f"{out}/results_n{n}.jsonl") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if "label" in d:
                groups.setdefault(d.get("peer", d["label"]), []).append(d)
    for peer, runs in groups.items():
        row = {"n": n, "peer": peer, "runs": len(runs)}
        for k in fields:
            vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
            if vals:
                row[k] = max(vals) if k == "errors" else statistics.median(vals)
        rows.append(row)
with open(f"{out}/scaling.csv", "w", newline="") as f:
    w = csv.DictWriter(f, ["n", "peer", "runs"] + fields)
    w.writeheader()
    w.writerows(rows)
mem = []
for n in sizes:
    d = json.load(open(f"{out}/mem_n{n}.json"))
    t = open(f"{out}/mem_n{n}.time").read()
    maxrss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
    mem.append({
        "n": n,
        "workload_file_bytes": d["workload_file_bytes"],
        "table_file_bytes": d["file_bytes"],
        "data_blocks": d["data_blocks"],
        "rss_before_build_bytes": d["rss_before_build_bytes"],
        "hwm_after_build_bytes": d["hwm_after_build_bytes"],
        "build_added_peak_bytes": d["hwm_after_build_bytes"] - d["rss_before_build_bytes"],
        "max_rss_bytes_time_v": maxrss_kb * 1024,
        "build_s": d["build_s"],
    })
with open(f"{out}/memory.csv", "w", newline="") as f:
    w = csv.DictWriter(f, list(mem[0].keys()))
    w.writeheader()
    w.writerows(mem)
print(f"wrote {out}/scaling.csv and {out}/memory.csv")
PY

python3 "$repo/scripts/plot_scaling.py" "$OUT/scaling.csv" "$repo/docs/perf_scaling.svg" \
  --memory "$OUT/memory.csv"
log "done: $OUT (durations: $(tr '\n' ';' < "$OUT/durations.txt"))"
