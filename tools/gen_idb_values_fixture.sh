#!/usr/bin/env bash
# Makes testdata/idb/values/: what a real Chromium (Debian's `chromium`, headless) writes for
# tools/idb_fixture/values.html: two IndexedDB databases of every value kind the JSON
# contract maps (IndexedDB/<origin>.indexeddb.leveldb and its .indexeddb.blob folder of blob
# files), the profile's localStorage (local_storage/) and sessionStorage
# (session_storage/) databases; and testdata/idb/values.expected.json: every record read
# back by the page through cursors, mapped as the contract says, and the storage items.
#
# usage (as root, for the tmpfs mount): tools/gen_idb_values_fixture.sh [OUT_DIR]
#
# The IndexedDB folder sits on a 9 MiB tmpfs, as for tools/gen_idb_fixture.sh: Chromium
# sizes LevelDB's write buffer from the disk (1 MiB for disks of 10 MiB or less), so the
# page's bulk writes flush the first records into a table and the rest stays in the log.
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

"$chromium" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-extensions --disable-background-networking --disable-component-update \
  --disable-sync --user-data-dir="$work/profile" "http://127.0.0.1:$port/values.html" \
  >"$work/chromium.log" 2>&1 &
browser=$!

for _ in $(seq 1 240); do
  [ -s "$work/done.json" ] && break
  sleep 0.5
done
[ -s "$work/done.json" ] || { echo "the page did not finish; chromium said:"; tail -20 "$work/chromium.log"; exit 1; }
if grep -q '"error"' "$work/done.json"; then cat "$work/done.json"; exit 1; fi

# localStorage and sessionStorage commit their writes after a delay; then a clean
# shutdown (SIGTERM) makes Chromium close every database.
sleep 10
kill -TERM "$browser"
wait "$browser" || true
browser=""

copy_db() {  # copy_db SRC DST: a LevelDB folder without its lock and text log
  rm -rf "$2"
  mkdir -p "$2"
  for f in "$1"/*; do
    case "$(basename "$f")" in
      LOCK|LOG|LOG.old) ;;
      *) cp -r "$f" "$2/" ;;
    esac
  done
}
dst=$out/values
rm -rf "$dst"
mkdir -p "$dst/IndexedDB"
src=$(ls -d "$work"/profile/Default/IndexedDB/*.indexeddb.leveldb)
name=$(basename "$src" .leveldb)
copy_db "$src" "$dst/IndexedDB/$name.leveldb"
if [ -d "$work/profile/Default/IndexedDB/$name.blob" ]; then
  cp -r "$work/profile/Default/IndexedDB/$name.blob" "$dst/IndexedDB/"
fi
copy_db "$work/profile/Default/Local Storage/leveldb" "$dst/local_storage"
copy_db "$work/profile/Default/Session Storage" "$dst/session_storage"
python3 -m json.tool "$work/done.json" > "$out/values.expected.json"
{
  "$chromium" --version | sed 's/^/chromium: /'
  echo "origin directory: $name.leveldb"
} > "$out/values.version"
find "$dst" -type f | sort | xargs ls -l
du -sh "$dst"
