"""Databases written by C++ LevelDB (plyvel, LevelDB 1.22), for the tests and for
scripts/bench_python.sh.

`write_million(path)`: 1,020,000 keys put in a scattered order (a permutation of the key
numbers) through WriteBatches of 10,000, with a 4 MiB write buffer, so LevelDB flushes and
compacts into several levels; then 60,000 overwrites and 20,000 deletions, the last of them
left in the live log (LevelDB's close does not flush the memtable): 1,000,000 live keys.
"""

import plyvel

KEYS = 1_020_000
DELETED = 20_000
OVERWRITTEN = 60_000
# i -> i * STEP mod KEYS visits every key number once (STEP is prime and divides nothing
# of KEYS = 2^5 * 3 * 5^4 * 17).
STEP = 7919


def key(n):
    return b"key/%010d" % n


def value(n, round_=0):
    return b"v%d:%d:" % (round_, n) + b"abcdefghij"[: n % 10] * (1 + n % 7)


def deleted(n):
    """Whether key number n is deleted at the end (every 51st)."""
    return n % 51 == 7


def overwritten(n):
    """Whether key number n is overwritten (every 17th not deleted)."""
    return n % 17 == 3 and not deleted(n)


def live_value(n):
    """The value of key number n at the end, or None."""
    if deleted(n):
        return None
    return value(n, 1) if overwritten(n) else value(n)


def write_million(path):
    """Writes the directory (see the module doc) and closes it."""
    db = plyvel.DB(path, create_if_missing=True, error_if_exists=True, write_buffer_size=4 << 20)
    try:
        wb = db.write_batch()
        for i in range(KEYS):
            n = i * STEP % KEYS
            wb.put(key(n), value(n))
            if i % 10_000 == 9_999:
                wb.write()
                wb = db.write_batch()
        wb.write()
        wb = db.write_batch()
        for n in range(KEYS):
            if overwritten(n):
                wb.put(key(n), value(n, 1))
            elif deleted(n):
                wb.delete(key(n))
            if n % 10_000 == 9_999:
                wb.write()
                wb = db.write_batch()
        wb.write()
    finally:
        db.close()


if __name__ == "__main__":
    import sys

    write_million(sys.argv[1])
