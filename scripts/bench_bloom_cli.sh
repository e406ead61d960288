#!/usr/bin/env bash
# `sst bloom add` and `check` through the CLI, keys/s, on one local redis-server and on a
# local Redis Cluster (3 masters + 3 replicas), side by side in one run with:
#   - the library bench on the same servers (examples/redis_bloom_bench.rs -- --redis ...),
#   - redis-benchmark's per-bit rate: plain SETBIT, one client, no pipelining (one round
#     trip per bit, the design the batched filter replaces), in keys/s at k bits per key,
#   - redis-benchmark SETBIT pipelined 100 deep (what the server can take), for reference.
#
#   bash scripts/bench_bloom_cli.sh [KEYS] [RUNS]      (default 300000 keys, 5 runs)
#
# The filters have the CLI's default capacity (1,000,000 keys at 1%; 10/3 of KEYS when that is
# more: a layer filled to capacity opens the next), so the keys go into one layer, as in issue 29's measurement. The CLI's times include starting the
# process, connecting and reading/writing the lines; the library's do not: use millions of
# keys (e.g. 3000000) so that these fixed costs do not decide the ratio.
#
# Servers run on free loopback ports in a temporary directory and are killed on exit
# (also on failure or Ctrl-C). Prints a Markdown table (medians of RUNS) for docs/bloom.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KEYS=${1:-300000}
RUNS=${2:-5}
CAP=$(( KEYS * 10 / 3 > 1000000 ? KEYS * 10 / 3 : 1000000 ))  # one layer, filled to 30% at most
BATCH=65536  # keys per batch: the CLI's (cli/src/cmd/bloom/io.rs), given to the library bench too
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

rate() { python3 -c "print(round($1 / ($3 - $2)))"; }
median() { python3 -c "import sys,statistics; print(round(statistics.median(map(float, sys.argv[1:]))))" "$@"; }

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]) or 0)" "$1" "$2"; }

# One CLI add+check of a fresh filter: "add check" keys/s.
cli_once() {
  local name="cli.$RANDOM.$RANDOM" t0 t1 t2
  # The last round's 27 MB of rows are deleted here: truncating them in the redirection
  # below took ~6 ms inside the timed span.
  rm -f "$WORK/check.out"
  t0=${EPOCHREALTIME/,/.}  # bash's clock: no process forked inside the timed span
  "$SST" bloom add "$@" --name "$name" --capacity "$CAP" < "$WORK/keys.txt" > /dev/null
  t1=${EPOCHREALTIME/,/.}
  "$SST" bloom check "$@" --name "$name" < "$WORK/keys.txt" > "$WORK/check.out"
  t2=${EPOCHREALTIME/,/.}
  [ "$(grep -c '^maybe' "$WORK/check.out")" -eq "$KEYS" ] || { echo "false negatives" >&2; exit 1; }
  echo "$(rate "$KEYS" "$t0" "$t1") $(rate "$KEYS" "$t1" "$t2")"
}

# One library add+check (and the redis crate's cluster check when asked): "add check crate".
lib_once() {
  local out
  out=$("$LIB" --redis "$@" --keys "$KEYS" --capacity "$CAP" --batch "$BATCH" --name "lib.$RANDOM.$RANDOM")
  echo "$(field "$out" add_keys_per_s) $(field "$out" check_present_keys_per_s) $(field "$out" redis_crate_cluster_check_keys_per_s)"
}

# paired SERVERS [--cluster]: RUNS rounds, each a CLI run and a library run on the same
# servers, in alternating order (the machine's load drifts), and on one server the per-bit
# rate (redis-benchmark SETBIT, one client, no pipelining) in the same round; prints the
# medians "cli_add cli_check lib_add lib_check crate_check setbit_per_s load" (load: the
# 1-minute load average, median of the rounds).
paired() {
  local servers=$1; shift
  local ca=() cc=() la=() lc=() cr=() sb=() ld=() run a b c d e f g
  local crate=()
  [ "${1:-}" = --cluster ] && crate=(--crate-cluster)
  for run in $(seq 1 "$RUNS"); do
    if [ $((run % 2)) = 1 ]; then
      read -r a b < <(cli_once --redis "$servers" "$@")
      read -r c d e < <(lib_once "$servers" "$@" "${crate[@]+"${crate[@]}"}")
    else
      read -r c d e < <(lib_once "$servers" "$@" "${crate[@]+"${crate[@]}"}")
      read -r a b < <(cli_once --redis "$servers" "$@")
    fi
    if [ -n "${PERBIT_PORT:-}" ]; then sb+=("$(setbit_rate "$PERBIT_PORT" 1 20000)"); else sb+=(0); fi
    ld+=("$(cut -d' ' -f1 /proc/loadavg)")
    ca+=("$a"); cc+=("$b"); la+=("$c"); lc+=("$d"); cr+=("$e")
    echo "round $run: cli add ${a} check ${b}, library add ${c} check ${d}, SETBIT -P 1 ${sb[-1]}/s, load ${ld[-1]}" >&2
  done
  echo "$(median "${ca[@]}") $(median "${cc[@]}") $(median "${la[@]}") $(median "${lc[@]}") $(median "${cr[@]}") $(median "${sb[@]}") $(python3 -c "import sys,statistics; print(statistics.median(map(float, sys.argv[1:])))" "${ld[@]}")"
}

setbit_rate() {  # setbit_rate PORT PIPELINE [REQUESTS] -> SETBIT requests/s
  redis-benchmark -h 127.0.0.1 -p "$1" -c 1 -P "$2" -n "${3:-200000}" -r 1000000 --csv \
    SETBIT 'rb:__rand_int__' 7 1 | sed -n 2p | cut -d, -f2 | tr -d '"'
}

# --- one redis-server
PORT=$(free_port)
start_server "$PORT" "$WORK/single"
URL="redis://127.0.0.1:$PORT/"
PERBIT_PORT=$PORT
read -r CLI_ADD CLI_CHECK LIB_ADD LIB_CHECK _ SETBIT_1 LOAD_1 < <(paired "$URL")
PERBIT_PORT=
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
read -r CCLI_ADD CCLI_CHECK CLIB_ADD CLIB_CHECK CRATE_CHECK _ LOAD_C < <(paired "$SEEDS" --cluster)

PERBIT=$(python3 -c "print(round($SETBIT_1 / $K))")
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
cat <<EOF
$(date -u +%Y-%m-%d) $(redis-server --version | cut -d' ' -f3) $(nproc) cores, $KEYS keys into one layer (capacity $CAP at 1%), median of $RUNS rounds, load average before: $LOAD, during (median of the rounds' 1-minute load): $LOAD_1 (one server), $LOAD_C (cluster), batches of $BATCH keys

| | one redis-server | Redis Cluster (3+3, same machine) |
|---|---:|---:|
| \`sst bloom add\`, keys/s | $CLI_ADD | $CCLI_ADD |
| \`sst bloom check\`, keys/s | $CLI_CHECK | $CCLI_CHECK |
| library add (\`redis_bloom_bench\`), keys/s | $LIB_ADD | $CLIB_ADD |
| library check, keys/s | $LIB_CHECK | $CLIB_CHECK |
| check through the \`redis\` crate's cluster client (\`cluster_pipe\`), keys/s | | $CRATE_CHECK |
| library check / \`redis\` crate's cluster check | | $(ratio "$CLIB_CHECK" "$CRATE_CHECK") |
| library / CLI, add | $(ratio "$LIB_ADD" "$CLI_ADD") | $(ratio "$CLIB_ADD" "$CCLI_ADD") |
| library / CLI, check | $(ratio "$LIB_CHECK" "$CLI_CHECK") | $(ratio "$CLIB_CHECK" "$CCLI_CHECK") |
| per-bit design: redis-benchmark SETBIT -c 1 -P 1 / k=$K, keys/s (median of the rounds) | $PERBIT | |
| CLI add / per-bit | $(ratio "$CLI_ADD" "$PERBIT") | |
| CLI check / per-bit | $(ratio "$CLI_CHECK" "$PERBIT") | |
| redis-benchmark SETBIT -c 1 -P 100, bits/s (server capacity) | $(printf %.0f "$SETBIT_P") | |
EOF
