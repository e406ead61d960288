#!/usr/bin/env bash
# Makes testdata/idb/many: the IndexedDB LevelDB directory a real Chromium (Debian's
# `chromium`, headless) writes for tools/idb_fixture/many.html (ids past one byte: 300
# databases in one origin, a database of 300 object stores, a store of 240 indexes; then
# object stores and whole databases deleted), and testdata/idb/many.expected.json: what
# Chromium reads back through IndexedDB: every record the deletions removed (read by
# many.html before deleting) and the live state after them (read by readback.html).
#
# usage: tools/gen_idb_many_fixture.sh [OUT_DIR]   (as root, Chromium needs --no-sandbox)
#
# Chromium cleans up deleted ranges right after the deletions commit and compacts them away,
# so Chromium is killed as soon as many.html posts (as a crash would stop it): the deleted
# metadata and records, and the deletions, stay in the log and tables. The directory is copied
# then, and Chromium is started again on the profile to read the live state back (its
# recovery replays the log and finishes the clean-up; the copy keeps the state before it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/idb}
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

# run PAGE RESULT [PORT]: serves tools/idb_fixture/ (on PORT if given), opens PAGE in
# Chromium on the profile, and SIGKILLs Chromium the moment the page's RESULT is posted.
run() {
  coproc SRV { python3 "$here/idb_fixture/serve.py" "$2" ${3:-}; }
  server=$SRV_PID
  read -r port <&"${SRV[0]}"
  "$chromium" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-extensions --disable-background-networking --disable-component-update \
    --disable-sync --user-data-dir="$work/profile" "http://127.0.0.1:$port/$1" \
    >>"$work/chromium.log" 2>&1 &
  browser=$!
  for _ in $(seq 1 60000); do
    [ -s "$2" ] && break
    sleep 0.01
  done
  kill -KILL "$browser" 2>/dev/null || true
  wait "$browser" 2>/dev/null || true
  browser=""
  wait "$server" 2>/dev/null || true
  server=""
  [ -s "$2" ] || { echo "$1 did not finish; chromium said:"; tail -20 "$work/chromium.log"; exit 1; }
  if grep -q '"error"' "$2"; then cat "$2"; exit 1; fi
}

run many.html "$work/written.json"
src=$(ls -d "$work"/profile/Default/IndexedDB/*.indexeddb.leveldb)
rm -rf "$out/many"
mkdir -p "$out/many"
for f in "$src"/*; do
  case "$(basename "$f")" in
    LOCK|LOG|LOG.old) ;;                 # the lock and LevelDB's text log are not data
    *) cp "$f" "$out/many/" ;;
  esac
done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["origin"].rsplit(":",1)[1])' "$work/written.json")
run readback.html "$work/read.json" "$port"
python3 - "$work/written.json" "$work/read.json" > "$out/many.expected.json" <<'PY'
import json, sys
written, read = (json.load(open(p)) for p in sys.argv[1:3])
assert written["origin"] == read["origin"], (written["origin"], read["origin"])
written.update(read)
json.dump(written, sys.stdout, indent=1, sort_keys=True)
PY
{
  "$chromium" --version | sed 's/^/chromium: /'
  echo "origin directory: $(basename "$src")"
} > "$out/many.version"
ls -l "$out/many"
du -sh "$out/many" "$out/many.expected.json"
