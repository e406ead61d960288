#!/usr/bin/env bash
# A/B of two peer_bench binaries one phase at a time (peer_bench --only PHASE --repeat 3),
# alternating which runs first each round; prints each round's seconds per repeat, then per
# phase the medians, after/before and the per-round ratios. For checking one row of the
# shared harness (docs/performance.md, "Before/after the regroup") with less noise.
#
# usage: scripts/ab_phases.sh ROUNDS BEFORE AFTER WORKLOAD [PHASE...]
#   PHASE: build open scan get-hit get-miss seek-hit (default: build scan get-hit get-miss)
#   WORKLOAD: the harness's workload file, e.g. /tmp/bench/build/workload_n1000000_h200000_s42.bin
# Tables are written beside the workload (ab_before.ldb, ab_after.ldb).
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,10p' "$0"; exit 2; }
rounds=$1 before=$2 after=$3 w=$4; shift 4
phases=("$@"); [ ${#phases[@]} -gt 0 ] || phases=(build scan get-hit get-miss)
dir=$(dirname "$w") out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ph in "${phases[@]}"; do
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order=(before after); else order=(after before); fi
    for side in "${order[@]}"; do
      if [ "$side" = before ]; then bin=$before; else bin=$after; fi
      v=$("$bin" --workload "$w" --table "$dir/ab_$side.ldb" --compression snappy --cache-mb 64 \
            --only "$ph" --repeat 3 | python3 -c 'import json,sys; print(json.load(sys.stdin)["s_per_repeat"])')
      echo "$ph $r $side $v" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    ph, r, side, v = line.split()
    d[(ph, side)][int(r)] = float(v)
for ph in dict.fromkeys(k[0] for k in d):
    a, b = d[(ph, "before")], d[(ph, "after")]
    rr = [b[k] / a[k] for k in a]
    print(f"{ph}: before {st.median(a.values()):.4f} s, after {st.median(b.values()):.4f} s, "
          f"after/before {st.median(b.values()) / st.median(a.values()):.3f}; per-round ratios "
          f"median {st.median(rr):.3f}, {min(rr):.3f}-{max(rr):.3f}, "
          f"{sum(x > 1 for x in rr)} of {len(rr)} rounds slower")
PY
