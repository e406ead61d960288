#!/usr/bin/env bash
# Times decoding and printing every record of a Chrome IndexedDB directory, side by side in
# one run: `sst db scan DIR --format jsonl` (the live records) and `sst db records DIR
# --format jsonl` (every record of every file, the rows dfindexeddb prints) against
# dfindexeddb's `db` command (PyPI `dfindexeddb`), each writing to a file, alternated RUNS
# times; prints each run's wall and CPU (user + sys) seconds, the medians and the ratios.
#
# usage: scripts/bench_idb_decode.sh DIR [RUNS]     (DIR: tools/gen_idb_bench_dir.sh makes one)
#        SST_BEFORE=OLD/sst scripts/bench_idb_decode.sh DIR [RUNS]
#          the two sst commands of another build (e.g. an older commit's) against this one's
#          instead of dfindexeddb, alternating which runs first each round; after/before ratios
#
# dfindexeddb 20260210 refuses V8 version 16 (Chrome 156's) with "Unsupported header" at
# the first value and stops. Its second run here raises its version ceiling to 16 at run
# time (ValueDeserializer.LATEST_VERSION; nothing else changed): for values without
# ArrayBuffers of 4 GiB or more, version 16 is byte for byte version 15, so it then decodes
# every record. The stock run is timed too, until it stops.
set -euo pipefail
dir=${1:?usage: $0 DIR [RUNS]}
runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
sst=${SST:-$here/../target/release/sst}
[ -x "$sst" ] || { echo "build sst first: cargo build --release --bin sst"; exit 2; }
before=${SST_BEFORE:-}
[ -z "$before" ] || [ -x "$before" ] || { echo "SST_BEFORE=$before is not an executable"; exit 2; }
[ -n "$before" ] || command -v dfindexeddb >/dev/null || { echo "pip install dfindexeddb"; exit 2; }
# dfindexeddb wants the .blob folder beside the LevelDB one, even when there are no blobs.
[ -n "$before" ] || mkdir -p "${dir%.leveldb}.blob"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/dfi16.py" <<'PY'
import sys
from dfindexeddb.indexeddb.chromium import v8
v8.ValueDeserializer.LATEST_VERSION = 16
from dfindexeddb.indexeddb.cli import App
sys.argv[0] = "dfindexeddb"
App()
PY
measure() {  # measure NAME CMD...: one run; prints "NAME wall cpu rows"
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" > "$tmp/out" 2> "$tmp/err" || true
  read -r wall user sys < <(tail -1 "$tmp/t")
  echo "$name $wall $(echo "$user + $sys" | bc) $(wc -l < "$tmp/out")"
}
echo "load at start: $(uptime)"
if [ -n "$before" ]; then
  for r in $(seq 1 "$runs"); do
    if [ $((r % 2)) -eq 1 ]; then order=(-before ""); else order=("" -before); fi
    for side in "${order[@]}"; do
      bin=$sst; [ -z "$side" ] || bin=$before
      measure "sst$side" "$bin" db scan "$dir" --format jsonl
      measure "sst-records$side" "$bin" db records "$dir" --format jsonl
    done
  done | tee "$tmp/runs"
else
  for r in $(seq 1 "$runs"); do
    measure sst "$sst" db scan "$dir" --format jsonl
    measure sst-records "$sst" db records "$dir" --format jsonl
    measure dfindexeddb-16 python3 "$tmp/dfi16.py" db -s "$dir" -f chrome -o jsonl
    measure dfindexeddb dfindexeddb db -s "$dir" -f chrome -o jsonl
  done | tee "$tmp/runs"
  echo "stock dfindexeddb's last words: $(grep -m1 -o 'ParserError: .*' "$tmp/err" || echo none)"
fi
echo "load at end: $(uptime)"
python3 - "$tmp/runs" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, wall, cpu, n = line.split()
    rows.setdefault(name, []).append((float(wall), float(cpu), int(n)))
med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v), v[0][2]) for k, v in rows.items()}
for k, (w, c, n) in med.items():
    print(f"{k:15} median wall {w:8.2f} s   cpu {c:8.2f} s   rows printed {n}")
for ours in ("sst", "sst-records"):
    s = med[ours]
    if ours + "-before" in med:
        w, c, n = med[ours + "-before"]
        spread = {k: f"{min(x[0] for x in rows[k]):.2f}-{max(x[0] for x in rows[k]):.2f}" for k in (ours, ours + "-before")}
        print(f"{ours} after/before: wall {s[0] / w:.3f}, cpu {s[1] / c:.3f}; rows {s[2]} after, {n} before"
              f"{'' if s[2] == n else ' (DIFFER)'}; wall ranges {spread[ours]} s after, {spread[ours + '-before']} s before")
        continue
    for k in ("dfindexeddb-16", "dfindexeddb"):
        w, c, _ = med[k]
        print(f"{k} / {ours}: wall {w / s[0]:.0f}x, cpu {c / s[1]:.0f}x")
PY
