#!/usr/bin/env bash
# Makes testdata/idb_sqlite/: what a real Chromium (Debian's `chromium`, headless) writes
# with its SQLite IndexedDB backend (--enable-features=IdbSqliteBackingStore), running
# tools/idb_fixture/sqlite.html, and what the page read back through IndexedDB.
#
#   profile/     one user-data folder, two runs: the first without the feature (an origin's
#                IndexedDB in LevelDB, localStorage, sessionStorage), the second with it
#                (another origin's IndexedDB in SQLite: three databases of every key and
#                value kind, Blobs and Files, one past 5 MiB; more localStorage and
#                sessionStorage); each run ends with a clean exit (SIGTERM). Trimmed to the
#                storage folders.
#   killed/      IndexedDB/<origin>/ of a third run (fresh folder) killed with SIGKILL while
#                its connection was open: the -wal file holds committed transactions not
#                yet checkpointed (overwrites of the same rows, deletions).
#   *.expected.json  each run's read-back (records, index entries, Blob digests).
#
# usage (as root): tools/gen_idb_sqlite_fixture.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/idb_sqlite}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
server=""
browser=""
cleanup() {
  [ -n "$browser" ] && kill -KILL "$browser" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# run_page PROFILE MODE FEATURES SIGNAL: serves the page, runs Chromium on it until the page
# posts its read-back (to $work/MODE.json), then stops Chromium with SIGNAL.
run_page() {
  local profile=$1 mode=$2 features=$3 signal=$4
  rm -f "$work/$mode.json"
  coproc SRV { python3 "$here/idb_fixture/serve.py" "$work/$mode.json"; }
  server=$SRV_PID
  read -r port <&"${SRV[0]}"
  echo "$mode: serving on 127.0.0.1:$port"
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    ${features:+--enable-features=$features} --user-data-dir="$profile" \
    "http://127.0.0.1:$port/sqlite.html?mode=$mode" >"$work/$mode.log" 2>&1 &
  browser=$!
  for _ in $(seq 1 600); do
    [ -s "$work/$mode.json" ] && break
    sleep 0.5
  done
  [ -s "$work/$mode.json" ] || { echo "the page did not finish:"; tail -20 "$work/$mode.log"; exit 1; }
  if grep -q '"error"' "$work/$mode.json"; then cat "$work/$mode.json"; exit 1; fi
  if [ "$signal" = TERM ]; then
    sleep 10   # localStorage and sessionStorage commit after a delay
  else
    sleep 2
  fi
  kill "-$signal" "$browser"
  wait "$browser" || true
  browser=""
  wait "$server" 2>/dev/null || true
  server=""
}

run_page "$work/profile" leveldb "" TERM
run_page "$work/profile" clean IdbSqliteBackingStore TERM
run_page "$work/killed" killed IdbSqliteBackingStore KILL

rm -rf "$out/profile" "$out/killed"
mkdir -p "$out/profile/Default" "$out/killed"
# The storage folders of the profile (the rest is the browser's own state). Other LevelDB
# stores Chromium keeps there are kept too, for `sst profile` to list.
for d in IndexedDB "Local Storage" "Session Storage" "Site Characteristics Database" \
         "Sync Data" "shared_proto_db" "Extension State" "Service Worker"; do
  [ -e "$work/profile/Default/$d" ] && cp -a "$work/profile/Default/$d" "$out/profile/Default/"
done
find "$out/profile" \( -name LOCK -o -name LOG -o -name LOG.old \) -delete
origin=$(ls "$work/killed/Default/IndexedDB/")
cp -a "$work/killed/Default/IndexedDB/$origin" "$out/killed/"
for m in leveldb clean killed; do python3 -m json.tool "$work/$m.json" > "$out/$m.expected.json"; done
"$chromium" --version | sed 's/^/chromium: /' > "$out/chromium.version"
find "$out" -type f -print0 | sort -z | xargs -0 ls -l
