"""A C++ LevelDB writer (plyvel, LevelDB 1.22) committing numbered batches into a directory
while readers read it, for the live-read tests (cli/tests/db_live.rs,
python/tests/test_live_writer.py).

usage: python3 leveldb_writer.py DIR     (DIR is created)

Batch i (1, 2, ...) sets `counter` to the decimal i and makes OPS writes: operation t =
i*OPS + j (j = 0..OPS) goes to key `k%05d` % (t % KEYS), a deletion when (i + j) % 4 == 0,
else a put of `value(t)`. Every state the directory can be read in is therefore the state
after one batch i, and `state(i)` computes it in closed form (the newest operation at or
before batch i on each key), so a reader checks a whole scan against the `counter` it read.

Batches sweep the key space (batch i writes keys 25i .. 25i+24, modulo 12,000), the live
data (about 3 MB) fills two or three level-1 tables (LevelDB's 2 MiB), and with the smallest
write buffer LevelDB allows (64 KiB) the memtable is flushed to a table every 10 batches:
level-0 tables and the level-1 table the sweep is in are compacted (and deleted) all the
time. The
writer prints `ready` after its first batch, then writes until its stdin closes, then prints
the last batch number, closes the database and exits.
"""

import os
import select
import sys

KEYS = 12000
OPS = 25


def key(k):
    return b"k%05d" % k


def value(t):
    """The value operation t puts: 100-399 bytes that do not compress (splitmix64 from t)."""
    mask = (1 << 64) - 1
    n = 100 + (t * 7919) % 300
    out = bytearray()
    x = t
    while len(out) < n:
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out += (z ^ (z >> 31)).to_bytes(8, "little")
    return bytes(out[:n])


def state(i):
    """The directory's user keys and values after batch i, sorted: `counter` and the keys
    whose newest operation is a put."""
    out = {b"counter": str(i).encode()} if i > 0 else {}
    last = i * OPS + OPS - 1
    for k in range(KEYS):
        t = last - ((last - k) % KEYS)
        if t < OPS:
            continue  # never written (batch 0 does not exist)
        b, j = divmod(t, OPS)
        if (b + j) % 4 != 0:
            out[key(k)] = value(t)
    return sorted(out.items())


def main():
    import plyvel

    db = plyvel.DB(
        sys.argv[1],
        create_if_missing=True,
        write_buffer_size=64 << 10,
    )
    i = 0
    while True:
        i += 1
        with db.write_batch() as wb:
            wb.put(b"counter", str(i).encode())
            for j in range(OPS):
                t = i * OPS + j
                if (i + j) % 4 == 0:
                    wb.delete(key(t % KEYS))
                else:
                    wb.put(key(t % KEYS), value(t))
        if i == 1:
            print("ready", flush=True)
        if select.select([sys.stdin], [], [], 0)[0] and not os.read(sys.stdin.fileno(), 1):
            break
    db.close()
    print(i, flush=True)


if __name__ == "__main__":
    main()
