#!/usr/bin/env bash
# The engine (examples/mini_lsm) against LevelDB's own db_bench, built here from LevelDB's
# source, side by side: ROUNDS alternating rounds of the same workloads with matching flags,
# medians, and the ratio ours / LevelDB of wall time and of CPU time (lower is better;
# <= 1.0 is as fast as LevelDB or faster).
#
# usage: scripts/bench_mini_lsm.sh LEVELDB_SRC [NUM=1000000] [ROUNDS=5]
#        MINI_LSM_BEFORE=path/to/an/older/mini_lsm scripts/bench_mini_lsm.sh ...  (a third
#        side in the same rounds: an earlier build of the engine, for before/after tables)
#
#   LEVELDB_SRC  a checkout of github.com/google/leveldb (submodules not needed); nothing
#                of it is copied into this repository.
#
#   1. builds LevelDB's library with its own CMake build (Release: -O3 -DNDEBUG; C++17,
#      which its sources need; snappy found by CMake as in any build with libsnappy-dev)
#      into $DB_BENCH_BUILD (default target/db_bench_leveldb), then db_bench.cc,
#      util/histogram.cc and util/testutil.cc with g++ and CMake's flags for the library
#      (its own benchmark target also wants third_party/benchmark, a submodule db_bench does
#      not use); needs cmake, g++, libsnappy-dev, libgtest-dev, libgmock-dev
#   2. builds the engine (cargo build --release --example mini_lsm)
#   3. each round runs both programs, one after the other (the order alternates), each in
#      one process: --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq --num=NUM
#      --value_size=100 --bloom_bits=10 --compression=1 (snappy), the rest db_bench's
#      defaults (LevelDB's Options: 4 MiB write buffer, 2 MiB tables, 8 MiB block cache,
#      sync off). The engine's `bench` draws the same keys from the same generator
#      (LevelDB's Random, seeded as db_bench seeds it) and the same values (db_bench's
#      RandomGenerator), so both sides hold the same data and find the same keys
#   4. wall time per operation is each program's own (db_bench's micros/op); CPU time is
#      the process's (all threads, user + system, from /proc/PID/stat) between one
#      benchmark's result line and the next, so it includes the background work a
#      workload leaves (both sides measured alike)
#   5. prints a markdown table of medians; fails when the sides disagree on the keys found
#      (readrandom), or when LevelDB runs without snappy
set -euo pipefail
SRC=${1:?usage: scripts/bench_mini_lsm.sh LEVELDB_SRC [NUM] [ROUNDS]}
NUM=${2:-1000000}
ROUNDS=${3:-5}
SRC=$(cd "$SRC" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DB_BENCH_BUILD:-$root/target/db_bench_leveldb}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_mini_lsm.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "[bench_mini_lsm $(date +%H:%M:%S)] $*" >&2; }

for tool in cmake g++; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install cmake g++ libsnappy-dev libgtest-dev libgmock-dev)" >&2; exit 2; }
done
log "building LevelDB from $SRC (cmake, Release) into $build"
cmake -S "$SRC" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
  -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF -DLEVELDB_INSTALL=OFF >"$build.cmake.log" 2>&1 ||
  { cat "$build.cmake.log" >&2; exit 2; }
cmake --build "$build" --target leveldb -j 2 >"$build.build.log" 2>&1 || { tail -30 "$build.build.log" >&2; exit 2; }
grep -q '^HAVE_SNAPPY:INTERNAL=1' "$build/CMakeCache.txt" || { echo "LevelDB's build found no snappy (apt-get install libsnappy-dev)" >&2; exit 2; }
libs=(-lsnappy)
grep -q '^HAVE_ZSTD:INTERNAL=1' "$build/CMakeCache.txt" && libs+=(-lzstd)
grep -q '^HAVE_CRC32C:INTERNAL=1' "$build/CMakeCache.txt" && libs+=(-lcrc32c)
grep -q '^HAVE_TCMALLOC:INTERNAL=1' "$build/CMakeCache.txt" && libs+=(-ltcmalloc)
"${CXX:-g++}" -O3 -DNDEBUG -std=c++17 -fno-exceptions -fno-rtti -DLEVELDB_PLATFORM_POSIX=1 \
  -I"$SRC" -I"$SRC/include" -I"$build/include" \
  "$SRC/benchmarks/db_bench.cc" "$SRC/util/histogram.cc" "$SRC/util/testutil.cc" \
  "$build/libleveldb.a" "${libs[@]}" -lgmock -lgtest -lpthread -o "$build/db_bench"
leveldb_version=$( (git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo "source") | head -1)

log "building the engine (cargo build --release --example mini_lsm)"
(cd "$root" && cargo build --release --quiet --example mini_lsm)
target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- examples/mini_lsm src || commit="$commit+dirty"

python3 - "$build/db_bench" "$target_dir/release/examples/mini_lsm" "$work" "$NUM" "$ROUNDS" \
  "$commit" "$leveldb_version" "${MINI_LSM_BEFORE:-}" <<'PY'
import os, re, statistics, subprocess, sys, time
leveldb, ours, work, num, rounds, commit, version, before = sys.argv[1:9]
num, rounds = int(num), int(rounds)
BENCHES = ["fillseq", "fillrandom", "overwrite", "readrandom", "readseq"]
LINE = re.compile(r"^(\w+)\s*:\s*([0-9.]+) micros/op;(.*)$")
TICK = os.sysconf("SC_CLK_TCK")

def cpu_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK

def run(side):
    db = os.path.join(work, side)
    flags = dict(benchmarks=",".join(BENCHES), num=num, value_size=100, bloom_bits=10)
    if side == "leveldb":
        cmd = [leveldb] + [f"--{k}={v}" for k, v in flags.items()] + ["--compression=1", f"--db={db}"]
    else:
        exe = before if side == "before" else ours
        cmd = [exe, db, "bench", "--fresh"] + [a for k, v in flags.items() for a in (f"--{k}", str(v))]
    errfile = open(os.path.join(work, f"{side}.stderr"), "w+")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True)
    out, last, text = {}, cpu_of(p.pid), []
    for line in p.stdout:
        text.append(line)
        m = LINE.match(line)
        if m and m.group(1) in BENCHES:
            cpu = cpu_of(p.pid)
            found = re.search(r"\((\d+) of \d+ found\)", m.group(3))
            out[m.group(1)] = dict(us=float(m.group(2)), cpu=cpu - last,
                                   found=found and int(found.group(1)))
            last = cpu
    if p.wait() != 0 or len(out) != len(BENCHES):
        errfile.seek(0)
        sys.exit(f"{side} failed:\n{''.join(text)}{errfile.read()[-3000:]}")
    if side == "leveldb":
        if any("Snappy compression is not enabled" in l for l in text):
            sys.exit("db_bench runs without snappy")
        errfile.seek(0)
        lines = errfile.read().splitlines() + text
        versions.update(l.split("version", 1)[1].strip() for l in lines if l.startswith("LevelDB:"))
    subprocess.run(["rm", "-rf", db], check=True)
    os.sync()
    return out

sides = ["leveldb", "ours"] + (["before"] if before else [])
results = {s: [] for s in sides}
versions, loads = set(), []
for r in range(rounds):
    load = open("/proc/loadavg").read().split()[:3]
    loads.append(float(load[0]))
    print(f"[bench_mini_lsm] round {r + 1}/{rounds} (load average {' '.join(load)})", file=sys.stderr)
    for side in (sides if r % 2 == 0 else sides[::-1]):
        results[side].append(run(side))

med = statistics.median
print(f"NUM = {num}, {rounds} alternating rounds, db_bench of LevelDB {'/'.join(sorted(versions))} "
      f"({version}), mini_lsm {commit}; 1-minute load average {min(loads):.1f}-{max(loads):.1f} "
      f"at the rounds' starts")
print()
print("| benchmark | LevelDB db_bench (µs/op) | mini_lsm (µs/op) | wall ratio (medians) | median of per-round wall ratios | CPU s, LevelDB / mini_lsm | CPU ratio (medians) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
bad = False
for b in BENCHES:
    l = [r[b] for r in results["leveldb"]]
    o = [r[b] for r in results["ours"]]
    lw, ow = med(x["us"] for x in l), med(x["us"] for x in o)
    lc, oc = med(x["cpu"] for x in l), med(x["cpu"] for x in o)
    paired = med(y["us"] / x["us"] for x, y in zip(l, o))
    print(f"| {b} | {lw:.3f} | {ow:.3f} | {ow / lw:.2f} | {paired:.2f} | {lc:.2f} / {oc:.2f} | {oc / max(lc, 0.01):.2f} |")
    if before:
        bw = med(x["us"] for x in (r[b] for r in results["before"]))
        bc = med(x["cpu"] for x in (r[b] for r in results["before"]))
        print(f"|   before: {b} | {lw:.3f} | {bw:.3f} | {bw / lw:.2f} | | {lc:.2f} / {bc:.2f} | {bc / max(lc, 0.01):.2f} |")
    founds = {x["found"] for x in l + o}
    if len(founds) > 1:
        print(f"THE SIDES DISAGREE on {b}: found {sorted(map(str, founds))}", file=sys.stderr)
        bad = True
sys.exit(1 if bad else 0)
PY
