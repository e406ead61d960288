#!/usr/bin/env bash
# How long `sst bloom check` takes to ride a failover of the master holding the filter's
# metadata, against how long the cluster takes to promote the replica: for each
# cluster-node-timeout given, a fresh local Redis Cluster (3 masters + 3 replicas), a filter
# of 150,000 keys (capacity 300,000, bitmaps of 8,192 bits: every master holds some), then
#   STOP: the master SIGSTOPped (hung) and a check of the 150,000 keys started at once,
#         given every node as a seed;
#   KILL: the master SIGKILLed and the check given the surviving nodes as seeds;
# the replica's role polled every 50 ms meanwhile. The check gets an I/O timeout of 30 s,
# so ending sooner means the hung master was given up because its replica took over.
#
#   bash scripts/bloom_failover_times.sh [NODE_TIMEOUT_MS...]    (default 2000 5000 15000)
#
# Prints a Markdown table for docs/bloom.md. Servers run on free loopback ports in a
# temporary directory and are killed on exit (also on failure or Ctrl-C).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TIMEOUTS=("${@:-2000 5000 15000}")
# shellcheck disable=SC2206
TIMEOUTS=(${TIMEOUTS[*]})
KEYS=150000

cargo build -q -p leveldb-table-cli --bin sst
SST=$PWD/target/debug/sst

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
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

now() { echo "${EPOCHREALTIME/,/.}"; }
since() { python3 -c "print(f'{$2 - $1:.2f}')"; }

seq -f 'key:%09g' 1 "$KEYS" > "$WORK/keys"
echo "| cluster-node-timeout | fault | replica promoted after | check done after | check exit, maybe |"
echo "|---:|---|---:|---:|---|"
for nt in "${TIMEOUTS[@]}"; do
  for fault in STOP KILL; do
    ports=() pids=()
    for _ in 1 2 3 4 5 6; do
      p=$(free_port); d="$WORK/$nt-$fault-$p"; mkdir -p "$d"
      redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-node-timeout "$nt" --save '' --appendonly no --dir "$d" --logfile "$d/log" \
        --daemonize no >/dev/null 2>&1 &
      PIDS+=($!); pids+=($!); ports+=("$p")
    done
    for p in "${ports[@]}"; do
      for _ in $(seq 1 100); do [ "$(redis-cli -p "$p" PING 2>/dev/null)" = PONG ] && break; sleep 0.1; done
    done
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 --cluster-yes >/dev/null
    for _ in $(seq 1 600); do
      ok=1
      for p in "${ports[@]}"; do
        redis-cli -p "$p" CLUSTER INFO | grep -q cluster_state:ok || ok=0
        redis-cli -p "$p" INFO replication | grep -qE 'role:master|master_link_status:up' || ok=0
      done
      [ $ok = 1 ] && break; sleep 0.1
    done
    seeds=$(printf 'redis://127.0.0.1:%s,' "${ports[@]}"); seeds=${seeds%,}
    "$SST" bloom add --cluster --redis "$seeds" --name f --bitmap-bits 8192 --capacity 300000 \
      < "$WORK/keys" > /dev/null
    slot=$(redis-cli -p "${ports[0]}" CLUSTER KEYSLOT 'bloom:{f}:meta')
    # The master serving the metadata's slot, its pid and its replica.
    victim=$(redis-cli -p "${ports[0]}" CLUSTER NODES | awk -v s="$slot" '$3 ~ /master/ {
      for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1];
        if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) { split($2, a, "[:@]"); print a[2] } } }')
    vid=$(redis-cli -p "$victim" CLUSTER MYID)
    replica=$(redis-cli -p "${ports[0]}" CLUSTER NODES | awk -v id="$vid" '$4 == id { split($2, a, "[:@]"); print a[2] }')
    for i in "${!ports[@]}"; do [ "${ports[$i]}" = "$victim" ] && vpid=${pids[$i]}; done
    survivors=$(printf 'redis://127.0.0.1:%s,' "${ports[@]}" | sed "s|redis://127.0.0.1:$victim,||"); survivors=${survivors%,}
    rm -f "$WORK/done"
    t0=$(now)
    if [ "$fault" = STOP ]; then
      kill -STOP "$vpid"; given=$seeds
    else
      kill -9 "$vpid"; wait "$vpid" 2>/dev/null || true; given=$survivors
    fi
    ( "$SST" bloom check --cluster --redis "$given" --name f --io-timeout-ms 30000 \
        < "$WORK/keys" > "$WORK/out" 2> "$WORK/err"; echo "$? $(now)" > "$WORK/done" ) &
    promoted=""
    while [ ! -s "$WORK/done" ]; do
      if [ -z "$promoted" ] && redis-cli -p "$replica" INFO replication | grep -q role:master; then promoted=$(now); fi
      sleep 0.05
    done
    read -r rc ended < "$WORK/done"
    [ -n "$promoted" ] || promoted=$ended
    echo "| $nt ms | SIG$fault | $(since "$t0" "$promoted") s | $(since "$t0" "$ended") s | $rc, $(grep -c '^maybe' "$WORK/out") of $KEYS |"
    [ "$rc" = 0 ] || cat "$WORK/err" >&2
    for p in "${pids[@]}"; do
      kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true  # reaped here, quietly
    done
  done
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
