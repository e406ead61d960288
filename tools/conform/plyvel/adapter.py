#!/usr/bin/env python3
"""The conformance kit's adapter for plyvel (PyPI; its wheels bundle C++ LevelDB 1.22):

    sst conform --impl 'python3 tools/conform/plyvel/adapter.py'

read-db only (plyvel opens databases, not single tables): DB(paranoid_checks=True) and an
iterator with verify_checksums=True. Exit 1 on any error plyvel raises, 3 for other verbs.
"""
import json
import sys

import plyvel


def read_db(path):
    try:
        db = plyvel.DB(path, create_if_missing=False, paranoid_checks=True)
    except plyvel.Error as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    out = sys.stdout
    try:
        for k, v in db.iterator(verify_checksums=True, fill_cache=False):
            out.write('{"key":"%s","value":"%s"}\n' % (k.hex(), v.hex()))
    except plyvel.Error as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    finally:
        db.close()
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["capabilities"]:
        name = f"plyvel {plyvel.__version__} (LevelDB {plyvel.__leveldb_version__})"
        caps = {"name": name, "verbs": ["read-db"], "compressions": ["none", "snappy"]}
        print(json.dumps(caps))
        return 0
    if args[:1] == ["read-db"] and len(args) == 2:
        return read_db(args[1])
    print(f"unsupported: {args[:1]}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
