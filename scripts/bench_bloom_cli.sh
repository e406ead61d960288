#!/usr/bin/env bash
# `sst bloom add` and `check` through the CLI, keys/s, on one local redis-server and on a
# local Redis Cluster (3 masters + 3 replicas), side by side in one run with:
#   - the library bench on the same servers (examples/redis_bloom_bench.rs -- --redis ...),
#   - redis-benchmark's per-bit rate: plain SETBIT, one client, no pipelining (one round
#     trip per bit, the design the batched filter replaces), in keys/s at k bits per key,
#   - redis-benchmark SETBIT pipelined 100 deep (what the server can take), for reference.
#
#   bash scripts/bench_bloom_cli.sh [KEYS] [RUNS]      (default 300000 keys, 3 runs)
#
# The filters have the CLI's default capacity (1,000,000 keys at 1%), so the keys go into
# one layer, as in issue 29's measurement.
#
# Servers run on free loopback ports in a temporary directory and are killed on exit
# (also on failure or Ctrl-C). Prints a Markdown table (medians of RUNS) for docs/bloom.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KEYS=${1:-300000}
RUNS=${2:-3}
CAP=1000000
K=8   # probes per key at the first layer's 0.5% (1% target, ratio 0.5): k = round(ln2 * 11.03)

cargo build --release -q -p leveldb-table-cli --bin sst
cargo build --release -q -p sst-bloom --features redis --example redis_bloom_bench
SST=target/release/sst
LIB=target/release/examples/redis_bloom_bench

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  # A free port whose cluster-bus port (+10000) is free too.
  python3 - <<'PY'
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p > 55000: s.close(); continue
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 10000)); t.close(); s.close(); print(p); break
    except OSError:
        s.close(); t.close()
PY
}

start_server() {  # start_server PORT DIR [extra args...]
  local port=$1 dir=$2; shift 2
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --logfile "$dir/redis.log" --daemonize no "$@" >/dev/null 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 600); do
    [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  echo "redis-server on $port did not start" >&2; exit 1
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
# Keys: present (added, then checked).
seq -f 'key:%012g' 1 "$KEYS" > "$WORK/keys.txt"

now() { date +%s.%N; }
rate() { python3 -c "print(round($1 / ($3 - $2)))"; }
median() { python3 -c "import sys,statistics; print(round(statistics.median(map(float, sys.argv[1:]))))" "$@"; }

# cli_rates TARGET... : "add check" keys/s of one fresh filter per run (median of RUNS).
cli_rates() {
  local adds=() checks=() run
  for run in $(seq 1 "$RUNS"); do
    local name="cli$run.$RANDOM"
    local t0 t1 t2
    t0=$(now)
    "$SST" bloom add "$@" --name "$name" --capacity "$CAP" < "$WORK/keys.txt" > /dev/null
    t1=$(now)
    "$SST" bloom check "$@" --name "$name" < "$WORK/keys.txt" > "$WORK/check.out"
    t2=$(now)
    [ "$(grep -c '^maybe' "$WORK/check.out")" -eq "$KEYS" ] || { echo "false negatives" >&2; exit 1; }
    adds+=("$(rate "$KEYS" "$t0" "$t1")")
    checks+=("$(rate "$KEYS" "$t1" "$t2")")
  done
  echo "$(median "${adds[@]}") $(median "${checks[@]}")"
}

lib_rates() {
  local adds=() checks=() run out
  for run in $(seq 1 "$RUNS"); do
    out=$("$LIB" --redis "$@" --keys "$KEYS" --capacity "$CAP" --name "lib$run.$RANDOM")
    adds+=("$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['add_keys_per_s'])" "$out")")
    checks+=("$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['check_present_keys_per_s'])" "$out")")
  done
  echo "$(median "${adds[@]}") $(median "${checks[@]}")"
}

setbit_rate() {  # setbit_rate PORT PIPELINE -> SETBIT requests/s
  redis-benchmark -h 127.0.0.1 -p "$1" -c 1 -P "$2" -n 200000 -r 1000000 --csv \
    SETBIT 'rb:__rand_int__' 7 1 | sed -n 2p | cut -d, -f2 | tr -d '"'
}

# --- one redis-server
PORT=$(free_port)
start_server "$PORT" "$WORK/single"
URL="redis://127.0.0.1:$PORT/"
read -r CLI_ADD CLI_CHECK < <(cli_rates --redis "$URL")
read -r LIB_ADD LIB_CHECK < <(lib_rates "$URL")
SETBIT_1=$(setbit_rate "$PORT" 1)
SETBIT_P=$(setbit_rate "$PORT" 100)

# --- a Redis Cluster: 3 masters, 3 replicas
NODES=()
for i in 1 2 3 4 5 6; do
  p=$(free_port)
  start_server "$p" "$WORK/node$i" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-node-timeout 1000
  NODES+=("127.0.0.1:$p")
done
redis-cli --cluster create "${NODES[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
for _ in $(seq 1 600); do
  ok=1
  for n in "${NODES[@]}"; do
    redis-cli -p "${n#*:}" CLUSTER INFO | grep -q 'cluster_state:ok' || ok=0
  done
  [ $ok = 1 ] && break
  sleep 0.1
done
SEEDS=$(printf 'redis://%s,' "${NODES[@]}"); SEEDS=${SEEDS%,}
read -r CCLI_ADD CCLI_CHECK < <(cli_rates --redis "$SEEDS" --cluster)
read -r CLIB_ADD CLIB_CHECK < <(lib_rates "$SEEDS" --cluster)

PERBIT=$(python3 -c "print(round($SETBIT_1 / $K))")
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
cat <<EOF
$(date -u +%Y-%m-%d) $(redis-server --version | cut -d' ' -f3) $(nproc) cores, $KEYS keys into one layer (capacity $CAP at 1%), median of $RUNS runs, load average before: $LOAD

| | one redis-server | Redis Cluster (3+3, same machine) |
|---|---:|---:|
| \`sst bloom add\`, keys/s | $CLI_ADD | $CCLI_ADD |
| \`sst bloom check\`, keys/s | $CLI_CHECK | $CCLI_CHECK |
| library add (\`redis_bloom_bench\`), keys/s | $LIB_ADD | $CLIB_ADD |
| library check, keys/s | $LIB_CHECK | $CLIB_CHECK |
| library / CLI, add | $(ratio "$LIB_ADD" "$CLI_ADD") | $(ratio "$CLIB_ADD" "$CCLI_ADD") |
| library / CLI, check | $(ratio "$LIB_CHECK" "$CLI_CHECK") | $(ratio "$CLIB_CHECK" "$CCLI_CHECK") |
| per-bit design: redis-benchmark SETBIT -c 1 -P 1 / k=$K, keys/s | $PERBIT | |
| CLI add / per-bit | $(ratio "$CLI_ADD" "$PERBIT") | |
| CLI check / per-bit | $(ratio "$CLI_CHECK" "$PERBIT") | |
| redis-benchmark SETBIT -c 1 -P 100, bits/s (server capacity) | $(printf %.0f "$SETBIT_P") | |
EOF
