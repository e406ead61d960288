#!/usr/bin/env python3
"""Writes the LevelDB database fixtures of testdata/db/ with C++ LevelDB (plyvel, which
bundles LevelDB 1.22), and records what LevelDB itself reads back in each expected.json.

    python3 tools/gen_db.py [OUT_DIR [NAME...]]   (default: testdata/db, every directory)

Directories (each small, with a tiny write buffer so that tables land at several levels):
- basic:    puts, overwrites and deletions over 3 rounds, flushed and compacted into tables at
            levels 0-2, then a last round left only in the live .log (never flushed).
- biglog:   a live log whose batch of 70 KB crosses 32 KiB blocks (FIRST, MIDDLE and LAST
            fragments), never flushed.
- snapshot: a snapshot is held while later overwrites and deletions are compacted, so older
            versions stay in the tables; the snapshot's sequence number is recorded (LevelDB
            gives the first write sequence 1, each record of a batch the next one).
- flush_race: puts in a loop with LevelDB's default options (no flush asked for): a
            memtable flush finishes while the next writes go to the new log, so the
            MANIFEST's last sequence covers batches of the live log. Timing decides it: the
            writer tries again until the directory has that shape.

expected.json holds, hex-encoded: "scan" (LevelDB's full iteration), "gets" (present,
deleted and never-written keys), and for snapshot "snapshot_seq", "snapshot_scan",
"snapshot_gets" (the same through the held snapshot). LevelDB's LOG files are deleted (they
only hold timestamps); CURRENT, LOCK, MANIFEST, tables and logs are kept as LevelDB left them.
"""
import json
import os
import random
import shutil
import sys

import plyvel


def hx(b):
    return b.hex()


def key(i):
    return b"key/%05d" % i


def value(i, round_):
    # Values of varied length, compressible.
    return (b"v%d-%d:" % (round_, i)) + (b"ab" * ((i * 7 + round_) % 13))


def dump(db, snapshot=None):
    src = snapshot if snapshot is not None else db
    return [[hx(k), hx(v)] for k, v in src.iterator()]


def gets(db, keys, snapshot=None):
    src = snapshot if snapshot is not None else db
    out = []
    for k in keys:
        v = src.get(k)
        row = {"key": hx(k), "found": v is not None}
        if v is not None:
            row["value"] = hx(v)
        out.append(row)
    return out


def opened(path):
    return plyvel.DB(
        path,
        create_if_missing=True,
        error_if_exists=True,
        write_buffer_size=64 * 1024,  # LevelDB's minimum: flushes are asked for below
        block_size=1024,
        bloom_filter_bits=10,
        paranoid_checks=True,
    )


def flush(db):
    """Makes LevelDB write its memtable out as a table (CompactRange first compacts the
    memtable) while compacting only one tiny key range, so earlier tables stay where they are."""
    db.compact_range(start=b"key/00000", stop=b"key/00000\x00")


def probe_keys(n):
    ks = [key(i) for i in range(0, n + 40, 7)]
    ks += [b"", b"key/", b"key/99999", b"zzz", b"aaa"]
    return ks


def finish(path, expected):
    for name in ("LOG", "LOG.old"):
        p = os.path.join(path, name)
        if os.path.exists(p):
            os.remove(p)
    with open(os.path.join(path, "expected.json"), "w") as f:
        json.dump(expected, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


def basic(out):
    path = os.path.join(out, "basic")
    db = opened(path)
    rnd = random.Random(7)
    n = 800
    seq = 0
    for round_ in range(3):
        with db.write_batch() as wb:
            for i in range(n):
                if round_ > 0 and rnd.random() < 0.7:
                    continue
                wb.put(key(i), value(i, round_))
                seq += 1
        for i in rnd.sample(range(n), 30):
            db.delete(key(i))
            seq += 1
        if round_ == 0:
            db.compact_range()  # the first round goes down the levels
        else:
            flush(db)  # later rounds: a table each, on top
    # The live log: writes that stay unflushed (overwrites, new keys, deletions).
    for i in range(0, n, 17):
        db.put(key(i), b"in-the-log:" + key(i))
        seq += 1
    for i in range(n, n + 20):
        db.put(key(i), b"new-in-log")
        seq += 1
    for i in range(5, n, 53):
        db.delete(key(i))
        seq += 1
    expected = {
        "last_sequence": seq,
        "scan": dump(db),
        "gets": gets(db, probe_keys(n)),
    }
    db.close()
    finish(path, expected)


def snapshot(out):
    path = os.path.join(out, "snapshot")
    db = opened(path)
    n = 500
    seq = 0
    for i in range(n):
        db.put(key(i), value(i, 0))
        seq += 1
    snap = db.snapshot()
    snap_seq = seq
    for round_ in (1, 2):
        with db.write_batch() as wb:
            for i in range(0, n, 2):
                wb.put(key(i), value(i, round_))
                seq += 1
        for i in range(1, n, 9):
            db.delete(key(i))
            seq += 1
    db.compact_range()  # older versions survive: the snapshot needs them
    for i in range(3, n, 31):
        db.put(key(i), b"after-compaction")
        seq += 1
    expected = {
        "last_sequence": seq,
        "snapshot_seq": snap_seq,
        "scan": dump(db),
        "gets": gets(db, probe_keys(n)),
        "snapshot_scan": dump(db, snap),
        "snapshot_gets": gets(db, probe_keys(n), snap),
    }
    snap.close()
    db.close()
    finish(path, expected)


def biglog(out):
    """A live log whose records cross 32 KiB blocks (FIRST, MIDDLE, LAST fragments)."""
    path = os.path.join(out, "biglog")
    db = opened(path)
    seq = 0
    for i in range(5):
        db.put(key(i), value(i, 0))
        seq += 1
    with db.write_batch() as wb:
        # The big value is deleted in the same batch: the record still spans three blocks,
        # and expected.json stays small.
        wb.put(b"big/70000", bytes((i * 7) % 251 for i in range(70000)))
        wb.delete(b"big/70000")
        wb.delete(key(3))
        wb.put(key(9), b"in the big batch")
        seq += 4
    db.put(b"after", b"small")  # LevelDB switches to a new log here (the memtable is full)
    seq += 1
    expected = {
        "last_sequence": seq,
        "scan": dump(db),
        "gets": gets(db, [key(3), key(4), key(9), b"big/70000", b"after", b"nope"]),
    }
    db.close()
    finish(path, expected)


def read_varint(b, i):
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def log_records(path):
    """The records of a LevelDB log file (32 KiB blocks of crc, length, type, payload)."""
    data = open(path, "rb").read()
    out, frag, i = [], b"", 0
    while i + 7 <= len(data):
        left = 32768 - i % 32768
        if left < 7:
            i += left
            continue
        n, t = int.from_bytes(data[i + 4:i + 6], "little"), data[i + 6]
        payload = data[i + 7:i + 7 + n]
        i += 7 + n
        if t == 1:
            out.append(payload)
        elif t == 2:
            frag = payload
        elif t == 3:
            frag += payload
        elif t == 4:
            out.append(frag + payload)
    return out


def manifest_state(path):
    """(log number, last sequence) after every VersionEdit of the directory's MANIFEST."""
    current = open(os.path.join(path, "CURRENT")).read().strip()
    log_number = last_seq = 0
    for rec in log_records(os.path.join(path, current)):
        i = 0
        while i < len(rec):
            tag, i = read_varint(rec, i)
            if tag in (2, 3, 4, 9):
                v, i = read_varint(rec, i)
                log_number = v if tag == 2 else log_number
                last_seq = v if tag == 4 else last_seq
            elif tag == 1:
                n, i = read_varint(rec, i)
                i += n
            elif tag in (5, 6, 7):
                _, i = read_varint(rec, i)
                if tag == 6:
                    _, i = read_varint(rec, i)
                else:
                    if tag == 7:
                        _, i = read_varint(rec, i)
                        _, i = read_varint(rec, i)
                    for _ in range(2 if tag == 7 else 1):
                        n, i = read_varint(rec, i)
                        i += n
            else:
                raise ValueError(f"unknown VersionEdit tag {tag}")
    return log_number, last_seq


def flush_race(out):
    path = os.path.join(out, "flush_race")
    for attempt in range(20):
        if os.path.exists(path):
            shutil.rmtree(path)
        db = plyvel.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
        n = 1500
        for i in range(n):
            db.put(key(i), value(i, 0) + b"x" * 30)
        expected = {"last_sequence": n, "scan": dump(db)}
        db.close()
        log_number, last_seq = manifest_state(path)
        covered = False
        for name in os.listdir(path):
            if name.endswith(".log") and int(name[:-4]) >= log_number:
                recs = log_records(os.path.join(path, name))
                seqs = [int.from_bytes(r[:8], "little") for r in recs]
                covered |= any(s <= last_seq for s in seqs)
        if covered:
            expected["manifest_last_sequence"] = last_seq
            finish(path, expected)
            return
        print(f"flush_race: attempt {attempt + 1} without the race, again")
    raise SystemExit("flush_race: no run left the MANIFEST covering the live log")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/db"
    wanted = sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    makers = (("basic", basic), ("snapshot", snapshot), ("biglog", biglog), ("flush_race", flush_race))
    for name, make in makers:
        if wanted and name not in wanted:
            continue
        p = os.path.join(out, name)
        if os.path.exists(p):
            shutil.rmtree(p)
        make(out)
        size = sum(os.path.getsize(os.path.join(p, f)) for f in os.listdir(p))
        print(f"{p}: {sorted(os.listdir(p))} ({size} bytes)")


if __name__ == "__main__":
    main()
