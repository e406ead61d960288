#!/usr/bin/env bash
# Makes testdata/idb/contract/: what a real Chromium (Debian's `chromium`, headless) writes
# for tools/idb_fixture/contract.html: one IndexedDB database, `contract`, holding what the
# JSON contract must keep apart (plain objects shaped like its own forms beside the real
# types, Errors with causes and stacks, lone surrogates in keys and values, an ImageBitmap,
# File System Access handles, own `__proto__` properties) and keys of every type for
# `sst db get --database --store KEY`; and testdata/idb/contract.expected.json: everything
# the page read back through IndexedDB (cursors and get()), mapped as the contract says.
#
# usage (as root, for the tmpfs mount): tools/gen_idb_contract_fixture.sh [OUT_DIR]
#
# The IndexedDB folder sits on a 9 MiB tmpfs, as for tools/gen_idb_fixture.sh: Chromium
# sizes LevelDB's write buffer from the disk (1 MiB for disks of 10 MiB or less), so the
# page's bulk writes flush the lookup keys into a table and the rest stays in the log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/idb}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
server=""
browser=""
cleanup() {
  [ -n "$browser" ] && { kill "$browser" 2>/dev/null; wait "$browser" 2>/dev/null; } || true
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

"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-extensions --disable-background-networking --disable-component-update \
  --disable-sync --user-data-dir="$work/profile" "http://127.0.0.1:$port/contract.html" \
  >"$work/chromium.log" 2>&1 &
browser=$!

for _ in $(seq 1 240); do
  [ -s "$work/done.json" ] && break
  sleep 0.5
done
[ -s "$work/done.json" ] || { echo "the page did not finish; chromium said:"; tail -20 "$work/chromium.log"; exit 1; }
if grep -q '"error"' "$work/done.json"; then cat "$work/done.json"; exit 1; fi

# A clean shutdown (SIGTERM) makes Chromium close every database.
sleep 2
kill -TERM "$browser"
wait "$browser" || true
browser=""

dst=$out/contract
rm -rf "$dst"
mkdir -p "$dst/IndexedDB"
src=$(ls -d "$work"/profile/Default/IndexedDB/*.indexeddb.leveldb)
name=$(basename "$src" .leveldb)
mkdir -p "$dst/IndexedDB/$name.leveldb"
for f in "$src"/*; do
  case "$(basename "$f")" in
    LOCK|LOG|LOG.old) ;;
    *) cp "$f" "$dst/IndexedDB/$name.leveldb/" ;;
  esac
done
if [ -d "$work/profile/Default/IndexedDB/$name.blob" ]; then
  cp -r "$work/profile/Default/IndexedDB/$name.blob" "$dst/IndexedDB/"
fi
python3 -m json.tool "$work/done.json" > "$out/contract.expected.json"
{
  "$chromium" --version | sed 's/^/chromium: /'
  echo "origin directory: $name.leveldb"
} > "$out/contract.version"
find "$dst" -type f | sort | xargs ls -l
du -sh "$dst"
