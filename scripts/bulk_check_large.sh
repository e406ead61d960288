#!/usr/bin/env bash
# Large bulk builds checked by C++ LevelDB (plyvel, paranoid checks): `sst db build` writes
# directories of N entries; LevelDB must open each, iterate exactly the input, get every key,
# and start no compaction (leveldb.stats shows only the bulk level, with no compaction work;
# the table files stay as written). Prints one line per case with the build's wall time and
# peak memory (/usr/bin/time).
#
# usage: scripts/bulk_check_large.sh [N_LARGE=4000000] [N_SMALL=1000000]
set -euo pipefail
NL=${1:-4000000}
NS=${2:-1000000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && cargo build --release --quiet -p leveldb-table-cli)
sst="$root/target/release/sst"

gen() {  # gen N FILE [shuffle]
  python3 - "$@" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
order = list(range(n))
if len(sys.argv) > 3:
    random.Random(7).shuffle(order)
with open(path, "w") as f:
    for i in order:
        f.write("key%012d\t%s\n" % (i, ("value %d " % i) * (1 + i % 9)))
PY
}

check() {  # check DIR N
  python3 - "$1" "$2" <<'PY'
import os, sys, plyvel
d, n = sys.argv[1], int(sys.argv[2])
tables = lambda: sorted((f, os.path.getsize(os.path.join(d, f))) for f in os.listdir(d) if f.endswith(".ldb"))
before = tables()
db = plyvel.DB(d, paranoid_checks=True)
it = db.iterator()
for i in range(n):
    k, v = next(it)
    assert k == b"key%012d" % i and v == (("value %d " % i) * (1 + i % 9)).encode(), (i, k)
assert next(it, None) is None, "more entries than the input"
for i in range(n):
    assert db.get(b"key%012d" % i) is not None, i
assert db.get(b"key") is None and db.get(b"key%012d" % n) is None
stats = db.get_property(b"leveldb.stats").decode()
rows = [[float(x) for x in l.split()] for l in stats.splitlines() if len(l.split()) == 6 and l.split()[0].isdigit()]
assert all(r[0] == 6 and r[3:] == [0.0, 0.0, 0.0] for r in rows), stats
db.close()
assert tables() == before, "LevelDB rewrote tables"
print("ok %d tables" % len(before))
PY
}

run() {  # run NAME N INPUT ARGS...
  local name=$1 n=$2 input=$3; shift 3
  local out="$work/$name"
  /usr/bin/time -v "$sst" db build "$out" --from "$input" --format tsv "$@" 2> "$work/time.txt" >/dev/null
  local wall rss
  wall=$(grep "Elapsed (wall clock)" "$work/time.txt" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$work/time.txt" | awk '{print $NF}')
  local verdict
  verdict=$(check "$out" "$n")
  printf '| %s | %d | %s | %s | %d MB | %s, no compaction |\n' "$name" "$n" "$*" "$wall" $((rss / 1024)) "$verdict"
  rm -rf "$out"
}

gen "$NL" "$work/large.tsv"
gen "$NL" "$work/large_shuffled.tsv" shuffle
gen "$NS" "$work/small.tsv"
echo "| case | entries | options | build wall | peak RSS | LevelDB |"
echo "| --- | ---: | --- | ---: | ---: | --- |"
run snappy_bloom_sorted "$NL" "$work/large.tsv" --bloom-bits 10
run snappy_bloom_shuffled_sort64 "$NL" "$work/large_shuffled.tsv" --bloom-bits 10 --sort --memory-mb 64
run none_nofilter "$NS" "$work/small.tsv" --compression none --no-filter
run snappy_bloom_small "$NS" "$work/small.tsv" --bloom-bits 10
