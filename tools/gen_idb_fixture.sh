#!/usr/bin/env bash
# Makes testdata/idb/chromium: a Chrome IndexedDB LevelDB directory written by a real
# Chromium (Debian's `chromium`, headless), and testdata/idb/chromium.expected.json: every
# store and index read back by the page with cursors, in Chromium's order.
#
# usage (as root, for the tmpfs mount): tools/gen_idb_fixture.sh [OUT_DIR]
#
# The IndexedDB directory sits on a 9 MiB tmpfs: Chromium sizes LevelDB's write buffer from
# the disk's size (leveldb_env::WriteBufferSize: 1 MiB for disks of 10 MiB or less), so the
# page's ~1.2 MB of compressible writes flush the memtable to a table (.ldb) and the fixture
# holds a table and a log while staying small.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/idb}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
server=""
browser=""
cleanup() {
  [ -n "$browser" ] && kill "$browser" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  mountpoint -q "$work/profile/Default/IndexedDB" && umount "$work/profile/Default/IndexedDB"
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/profile/Default/IndexedDB"
mount -t tmpfs -o size=9m tmpfs "$work/profile/Default/IndexedDB"

coproc SRV { python3 "$here/idb_fixture/serve.py" "$work/done.json"; }
server=$SRV_PID
read -r port <&"${SRV[0]}"
echo "serving on 127.0.0.1:$port"

"$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run \
  --disable-extensions --disable-background-networking --disable-sync \
  --user-data-dir="$work/profile" "http://127.0.0.1:$port/page.html" \
  >"$work/chromium.log" 2>&1 &
browser=$!

for _ in $(seq 1 240); do
  [ -s "$work/done.json" ] && break
  sleep 0.5
done
[ -s "$work/done.json" ] || { echo "the page did not finish; chromium said:"; tail -20 "$work/chromium.log"; exit 1; }
if grep -q '"error"' "$work/done.json"; then cat "$work/done.json"; exit 1; fi

# A clean shutdown: SIGTERM makes Chromium close its databases.
kill -TERM "$browser"
wait "$browser" || true
browser=""

src=$(ls -d "$work"/profile/Default/IndexedDB/*.indexeddb.leveldb)
rm -rf "$out/chromium"
mkdir -p "$out/chromium"
for f in "$src"/*; do
  case "$(basename "$f")" in
    LOCK|LOG|LOG.old) ;;                 # the lock and LevelDB's text log are not data
    *) cp "$f" "$out/chromium/" ;;
  esac
done
python3 -m json.tool "$work/done.json" > "$out/chromium.expected.json"
"$chromium" --version | sed 's/^/chromium: /' > "$out/chromium.version"
echo "origin directory: $(basename "$src")" >> "$out/chromium.version"
ls -l "$out/chromium"
echo "comparator: $(strings "$out"/chromium/MANIFEST-* | head -1)"
