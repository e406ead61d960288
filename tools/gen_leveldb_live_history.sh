#!/usr/bin/env bash
# Makes testdata/live/leveldb_history.zst: the history of a directory C++ LevelDB (plyvel,
# LevelDB 1.22) writes, flushes and compacts: 1,000 batches of 10 small compressible values
# over 1,500 keys with the smallest write buffer (64 KiB), one batch a millisecond, recorded
# by tools/record_history.py (the writer stopped, the directory read, the writer
# resumed, every few milliseconds). src/db/reader/live_tests.rs replays it between the steps
# of an opening. Bytewise order, so the library's own tests read it.
#
# usage: tools/gen_leveldb_live_history.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../testdata/live}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parent" "$out"
python3 - "$work/parent/db.leveldb" <<'PY' &
import sys, time, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=64 << 10)
for i in range(1, 1001):
    with db.write_batch() as wb:
        wb.put(b"counter", b"%d" % i)
        for j in range(10):
            t = i * 10 + j
            if (i + j) % 4 == 0:
                wb.delete(b"k%05d" % (t % 1500))
            else:
                wb.put(b"k%05d" % (t % 1500), (b"value %d " % t) * 8)
    time.sleep(0.001)
db.close()
PY
writer=$!
python3 "$here/record_history.py" "$writer" "$work/parent" "$work/done" \
  "$out/leveldb_history.zst" &
recorder=$!
wait "$writer"
touch "$work/done"
wait "$recorder"
python3 -c 'import plyvel; print("plyvel", plyvel.__version__, "LevelDB", plyvel.__leveldb_version__)' \
  | tee "$out/leveldb_history.version"
ls -l "$out/leveldb_history.zst"
