#!/usr/bin/env bash
# Criterion benches of two builds side by side: ROUNDS alternating rounds (the order reversed
# every round), each bench binary of build A then B (or B then A), then per bench the medians
# of each build's estimates (min-max) and B/A with the per-round ratios.
#
#   scripts/ab_criterion.sh ROUNDS DIR_A DIR_B BENCH...
#
# DIR_A and DIR_B hold each build's bench executables under the bench's name (copied from
# target/release/deps/BENCH-<hash> after `cargo bench --no-run --bench BENCH` on each commit).
# Example (docs/performance.md, the partial decode): scripts/ab_criterion.sh 6 with without
# db_get table_get
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,11p "$0"; exit 2; }
rounds=$1 a=$(realpath "$2") b=$(realpath "$3"); shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    dir=$a; [ "$side" = B ] && dir=$b
    for bench in "$@"; do
      echo "round $r $side $bench, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
      (cd "$out" && CARGO_TARGET_DIR="$out/target_$side" "$dir/$bench" --bench --noplot) \
        | sed "s/^/$r $side /" >> "$out/log"
    done
  done
done
python3 - "$out/log" <<'PY'
import re, statistics as st, sys
unit = {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}
data, cur = {}, None
for line in open(sys.argv[1]):
    r, side, rest = line.split(" ", 2)
    m = re.match(r"([A-Za-z0-9_]+/[A-Za-z0-9_]+)", rest)
    if m:
        cur = m[1]
        continue
    m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", rest)
    if m and cur and "%" not in rest:
        data.setdefault(cur, {}).setdefault(side, {})[int(r)] = float(m[1]) * unit[m[2]]
for name, d in data.items():
    a, b = d.get("A", {}), d.get("B", {})
    rs = sorted(set(a) & set(b))
    if not rs:
        continue
    ma, mb = st.median(a.values()), st.median(b.values())
    per = " ".join("%.2f" % (b[r] / a[r]) for r in rs)
    print(f"{name}: A {ma:.1f} µs ({min(a.values()):.1f}-{max(a.values()):.1f}), "
          f"B {mb:.1f} µs ({min(b.values()):.1f}-{max(b.values()):.1f}), B/A {mb / ma:.2f}, per round {per}")
PY
