#!/usr/bin/env bash
# Makes a ~30,000-record Chrome IndexedDB directory with a real Chromium (Debian's
# `chromium`, headless) running tools/idb_fixture/bench.html: 27,000 chat messages (with an
# index), 27 settings and 3,000 contacts in two databases. For timing decoders
# (scripts/bench_idb_decode.sh); too large to commit, so made on demand.
#
# usage: tools/gen_idb_bench_dir.sh OUT_DIR    (OUT_DIR/<origin>.indexeddb.leveldb)
#        SQLITE=1 MESSAGES=47000 tools/gen_idb_bench_dir.sh OUT_DIR
#          Chromium's SQLite backend (--enable-features=IdbSqliteBackingStore), 47,000
#          messages (50,047 records): OUT_DIR/<origin>/, one SQLite file per database
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: $0 OUT_DIR}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
server=""
browser=""
cleanup() {
  [ -n "$browser" ] && kill "$browser" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

coproc SRV { python3 "$here/idb_fixture/serve.py" "$work/done.json"; }
server=$SRV_PID
read -r port <&"${SRV[0]}"
"$chromium" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-extensions --disable-background-networking --disable-component-update \
  --disable-sync ${SQLITE:+--enable-features=IdbSqliteBackingStore} \
  --user-data-dir="$work/profile" "http://127.0.0.1:$port/bench.html?messages=${MESSAGES:-27000}" \
  >"$work/chromium.log" 2>&1 &
browser=$!
for _ in $(seq 1 600); do
  [ -s "$work/done.json" ] && break
  sleep 0.5
done
[ -s "$work/done.json" ] || { echo "the page did not finish"; tail -20 "$work/chromium.log"; exit 1; }
if grep -q '"error"' "$work/done.json"; then cat "$work/done.json"; exit 1; fi
kill -TERM "$browser"
wait "$browser" || true
browser=""
mkdir -p "$out"
if [ -n "${SQLITE:-}" ]; then
  src=$(ls -d "$work"/profile/Default/IndexedDB/http_*)
else
  src=$(ls -d "$work"/profile/Default/IndexedDB/*.indexeddb.leveldb)
fi
rm -rf "$out/$(basename "$src")"
mkdir -p "$out/$(basename "$src")"
for f in "$src"/*; do
  case "$(basename "$f")" in LOCK|LOG|LOG.old) ;; *) cp "$f" "$out/$(basename "$src")/" ;; esac
done
cat "$work/done.json"; echo
"$chromium" --version
du -sh "$out/$(basename "$src")"
ls -l "$out/$(basename "$src")"
