#!/usr/bin/env bash
# Makes testdata/live/chromium_history.zst (and .version): the history of a Chrome IndexedDB
# LevelDB directory while a real Chromium (Debian's `chromium`, headless) writes it round after
# round (tools/idb_fixture/live.html) and its LevelDB flushes and compacts, deleting tables
# and logs: every state of the directory at the instants tools/record_history.py
# stopped the browser (all its processes) to read it. tests/db_live_history.rs replays that
# history under readers in the middle of their reads.
#
# usage (as root, for the tmpfs mount): tools/gen_idb_live_history.sh [OUT_DIR]
#
# The IndexedDB folder sits on a 9 MiB tmpfs: Chromium sizes LevelDB's write buffer from the
# disk's size (1 MiB for disks of 10 MiB or less), so the page's ~5 MB of very compressible
# writes flush the memtable some five times, each time followed by compactions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/live}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
server=""
browser=""
cleanup() {
  [ -n "$browser" ] && kill -CONT "$browser" 2>/dev/null && kill "$browser" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  mountpoint -q "$work/profile/Default/IndexedDB" && umount "$work/profile/Default/IndexedDB"
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/profile/Default/IndexedDB" "$out"
mount -t tmpfs -o size=9m tmpfs "$work/profile/Default/IndexedDB"

coproc SRV { python3 "$here/idb_fixture/serve.py" "$work/done.json"; }
server=$SRV_PID
read -r port <&"${SRV[0]}"

"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-extensions --disable-background-networking --disable-component-update \
  --disable-sync --user-data-dir="$work/profile" "http://127.0.0.1:$port/live.html" \
  >"$work/chromium.log" 2>&1 &
browser=$!

python3 "$here/record_history.py" "$browser" "$work/profile/Default/IndexedDB" \
  "$work/done.json" "$out/chromium_history.zst"
if grep -q '"error"' "$work/done.json"; then cat "$work/done.json"; exit 1; fi
kill -TERM "$browser"
wait "$browser" || true
browser=""
cat "$work/done.json"; echo
"$chromium" --version | tee "$out/chromium_history.version"
ls -l "$out/chromium_history.zst"
