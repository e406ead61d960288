#!/usr/bin/env python3
"""Writes testdata/mojang/ with Mojang's LevelDB fork (leveldb-mcpe, Minecraft Bedrock).

The writer is the PyPI package amulet-leveldb 1.0.7 (module `leveldb`), which bundles
leveldb-mcpe and fixes its options: bloom filter 10 bits/key, block_size 163840, compressors[0] =
raw deflate (id 4, ZlibCompressorRaw(-1)), compressors[1] = zlib (id 2, reading only), 4 MiB write
buffer. The binding exposes no other options.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install amulet-leveldb==1.0.7
    /tmp/venv/bin/python tools/gen_mojang.py testdata/mojang

Sessions (each table holds several versions of some keys, because a memtable flush keeps them all):
  1. create; put 300 keys; overwrite 30; delete 20; db.compact() (= CompactRange(NULL, NULL),
     which here only flushes the memtable) -> table `mojang_flush.ldb`; close.
  2. reopen; put 40 new keys; overwrite 15; delete 10 (+ 3 deletes of never-written keys);
     close WITHOUT compaction (writes stay in the log).
  3. reopen: log recovery writes the level-0 table `mojang_recovered.ldb`; close.

X.entries.jsonl (raw internal entries in file order) is produced by this script's own small
table parser (tools/inspect_table.py: block decoding with raw deflate), then cross-checked:
merging both tables (newest seq wins, a deletion hides the key) must equal what the library
itself returns when iterating the DB, and every probe in gets.jsonl is answered by the library's
own get(). Output is not byte-reproducible across runs only if the library's output changes; the
data uses a fixed PRNG seed.
"""
import glob
import json
import os
import random
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inspect_table  # noqa: E402  (our own parser, same directory)

import leveldb  # amulet-leveldb  # noqa: E402

WORDS = ["stone", "dirt", "grass", "oak_log", "water", "lava", "sand", "gravel", "iron_ore"]


def make_value(rng, i):
    if i % 41 == 0:
        return b""
    if i % 29 == 0:
        return bytes(rng.getrandbits(8) for _ in range(24))
    return ("v%d:" % i + ",".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))).encode()


def make_key(rng, i):
    # Bedrock-like chunk keys (little-endian x, z + tag byte) mixed with text keys.
    if i % 3 == 0:
        return struct.pack("<iiB", rng.randint(-500, 500), rng.randint(-500, 500), rng.choice([0x2C, 0x2F, 0x31, 0x76]))
    if i % 3 == 1:
        return ("player_%04d" % rng.randint(0, 9999)).encode()
    return ("~local/%s/%d" % (rng.choice(WORDS), rng.randint(0, 99999))).encode()


def table_entries(path):
    data = open(path, "rb").read()
    info = inspect_table.inspect(path)
    rows = []
    for off, size, ctype, _n, _sep in info["data_blocks"]:
        block = inspect_table.decompress(ctype, data[off:off + size], False)
        for ikey, value in inspect_table.block_entries(block):
            tag = struct.unpack("<Q", ikey[-8:])[0]
            rows.append({"ikey": ikey.hex(), "seq": tag >> 8, "type": tag & 0xFF, "value": value.hex()})
    return rows, info


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/mojang"
    os.makedirs(out, exist_ok=True)
    rng = random.Random(4)
    tmp = tempfile.mkdtemp(prefix="gen_mojang_")
    dbdir = os.path.join(tmp, "db")
    try:
        keys = []
        seen = set()
        while len(keys) < 340:
            k = make_key(rng, len(keys))
            if k not in seen:
                seen.add(k)
                keys.append(k)
        never = [b"never-written-%d" % i for i in range(3)]

        # Session 1
        db = leveldb.LevelDB(dbdir, create_if_missing=True)
        for i, k in enumerate(keys[:300]):
            db.put(k, make_value(rng, i))
        for i in range(30):
            db.put(rng.choice(keys[:300]), b"overwritten-1-%d" % i)
        for _ in range(20):
            db.delete(rng.choice(keys[:300]))
        db.compact()
        db.close()
        tables1 = sorted(glob.glob(os.path.join(dbdir, "*.ldb")))
        assert len(tables1) == 1, tables1

        # Session 2
        db = leveldb.LevelDB(dbdir)
        for i, k in enumerate(keys[300:]):
            db.put(k, make_value(rng, 300 + i))
        for i in range(15):
            db.put(rng.choice(keys), b"overwritten-2-%d" % i)
        for _ in range(10):
            db.delete(rng.choice(keys))
        for k in never:
            db.delete(k)
        db.close()

        # Session 3: recovery of the log into a level-0 table.
        db = leveldb.LevelDB(dbdir)
        tables = sorted(glob.glob(os.path.join(dbdir, "*.ldb")))
        assert len(tables) == 2 and tables[0] == tables1[0], tables
        names = {tables[0]: "mojang_flush", tables[1]: "mojang_recovered"}

        merged = {}
        for path in tables:
            name = names[path]
            shutil.copyfile(path, os.path.join(out, name + ".ldb"))
            rows, info = table_entries(path)
            with open(os.path.join(out, name + ".entries.jsonl"), "w") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
            for r in rows:
                uk = bytes.fromhex(r["ikey"])[:-8]
                if uk not in merged or merged[uk][0] < r["seq"]:
                    merged[uk] = (r["seq"], r["type"], bytes.fromhex(r["value"]))
            print("%s.ldb (%s): %d bytes, %d entries (%d deletions), block ids %s, filter %s"
                  % (name, os.path.basename(path), info["size"], len(rows),
                     sum(r["type"] == 0 for r in rows), info["all_block_ids"],
                     info.get("filter", {}).get("name")))

        visible = {k: v for k, (s, t, v) in merged.items() if t == 1}
        lib_items = dict(db.items())
        assert lib_items == visible, "merged tables differ from the library's iteration"
        with open(os.path.join(out, "contents.jsonl"), "w") as f:
            for k in sorted(visible):
                f.write(json.dumps({"key": k.hex(), "value": visible[k].hex()}) + "\n")

        probes = sorted(set(keys) | set(never) | {b"", b"\x00", b"player_", b"zzz", b"~local/"}
                        | {k + b"\x00" for k in keys[::7]} | {k[:-1] for k in keys[::11] if len(k) > 1})
        with open(os.path.join(out, "gets.jsonl"), "w") as f:
            for k in probes:
                try:
                    v = db.get(k)
                    row = {"key": k.hex(), "found": True, "value": v.hex()}
                    assert visible.get(k) == v
                except KeyError:
                    row = {"key": k.hex(), "found": False}
                    assert k not in visible
                f.write(json.dumps(row) + "\n")
        db.close()
        print("contents: %d visible keys; gets: %d probes" % (len(visible), len(probes)))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
