"""Records the history of a LevelDB directory while a browser writes it: every few tens of
milliseconds, every process of the browser (ROOT_PID and its descendants, every thread) is
stopped (SIGSTOP), the directory's files are read (an exact instant of the directory: no
write is half done in a stopped process), and the browser is resumed (SIGCONT); until
DONE_FILE appears, and two more seconds (LevelDB may still be compacting).

usage: record_history.py ROOT_PID PARENT_DIR DONE_FILE OUT_FILE
  PARENT_DIR: the folder the LevelDB directory appears in (the first *.leveldb in it)

OUT_FILE (zstd, level 19, by the `zstd` command) holds one JSON line, then the file contents
it refers to, back to back:
  {"dir": NAME, "blobs": [[file name, length], ...],
   "states": [[[file name, blob index, size], ...], ...]}
Each state is the directory at one instant (LOCK and LevelDB's text LOG left out), its files
in name order; a file is the first `size` bytes of its blob (LevelDB only appends to a log
or a MANIFEST, so every version of one is a prefix of its last). Consecutive identical
states are kept once.
"""

import json
import os
import signal
import subprocess
import sys
import time

SKIP = {"LOCK", "LOG", "LOG.old"}


def children(pids):
    """`pids` and every descendant (from /proc/PID/task/TID/children)."""
    found = set(pids)
    todo = list(pids)
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{pid}/task/{t}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            for k in kids:
                if k not in found:
                    found.add(k)
                    todo.append(k)
    return found


def stopped(pid):
    """Whether every thread of `pid` is stopped (or gone)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t", "Z", "X"):
                    return False
        except OSError:
            pass
    return True


def stop_all(root):
    """Stops `root` and its descendants (new ones too), waits until every thread is."""
    done = set()
    while True:
        pids = children({root}) - done
        if not pids:
            return done
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        done |= pids
        while not all(stopped(p) for p in pids):
            time.sleep(0.0005)


def resume(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGCONT)
        except ProcessLookupError:
            pass


def main():
    root, parent, done_file, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    blobs = []  # [name, bytes]
    states = []
    last = None
    end = None
    leveldb = None
    seen = {}  # name -> (inode, bytes) as last read
    while end is None or time.monotonic() < end:
        if end is None and os.path.exists(done_file):
            end = time.monotonic() + 2.0
        if leveldb is None:
            dirs = sorted(d for d in os.listdir(parent) if d.endswith(".leveldb")) if os.path.isdir(parent) else []
            if not dirs:
                time.sleep(0.01)
                continue
            leveldb = os.path.join(parent, dirs[0])
        pids = stop_all(root)
        try:
            files = {}
            for name in sorted(os.listdir(leveldb)):
                if name in SKIP:
                    continue
                path = os.path.join(leveldb, name)
                st = os.stat(path)
                had = seen.get(name)
                if had and had[0] == st.st_ino and len(had[1]) <= st.st_size:
                    # The same file, appended to (or not): read what is new.
                    with open(path, "rb") as f:
                        f.seek(len(had[1]))
                        data = had[1] + f.read()
                else:
                    with open(path, "rb") as f:
                        data = f.read()
                seen[name] = (st.st_ino, data)
                files[name] = data
        finally:
            resume(pids)
        state = []
        for name, data in files.items():
            for i, (n, b) in enumerate(blobs):
                if n != name:
                    continue
                if b.startswith(data):
                    break
                if data.startswith(b):
                    blobs[i][1] = data
                    break
            else:
                blobs.append([name, data])
                i = len(blobs) - 1
            state.append([name, i, len(data)])
        if state != last:
            states.append(state)
            last = state
        time.sleep(0.01)
    header = {
        "dir": os.path.basename(leveldb),
        "blobs": [[n, len(b)] for n, b in blobs],
        "states": states,
    }
    raw = json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"".join(b for _, b in blobs)
    subprocess.run(["zstd", "-19", "-q", "-f", "-o", out + ".tmp"], input=raw, check=True)
    os.replace(out + ".tmp", out)
    print(f"{len(states)} states, {len(blobs)} file versions, {sum(len(b) for _, b in blobs)} bytes")


if __name__ == "__main__":
    main()
