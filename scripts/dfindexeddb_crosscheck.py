#!/usr/bin/env python3
"""Cross-checks `sst`'s decoded IndexedDB values against dfindexeddb's (PyPI `dfindexeddb`).

usage: scripts/dfindexeddb_crosscheck.py [--sst PATH] DIR...

DIR is a Chrome IndexedDB LevelDB folder (`<origin>.indexeddb.leveldb`, its `.blob` sibling
beside it), e.g. the Chrome test data of dfindexeddb's own repository
(test_data/indexeddb/chrome/{linux,win11}_109_64/file__0.indexeddb.leveldb; not part of this
repository: take it from github.com/google/dfindexeddb).

For every object-store record dfindexeddb decodes (its `db` command; for a value Chrome moved
into a blob file, its `blink` command on that file), the record `sst db records --format
jsonl` gives for the same key and sequence number must hold the same value. The two tools
write values differently (dfindexeddb: dates as ISO text, Maps as dicts, Sets as lists,
boxed primitives unboxed, bytes as printable text; sst: docs/indexeddb.md's mapping), so
both are brought to one form first, losing only what dfindexeddb's form loses. Prints each
record's verdict and a summary; exits 1 on any disagreement, 2 when a tool cannot run.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

# dfindexeddb's JSON encoder keeps these bytes as characters and writes the rest as \\xHH
# (dfindexeddb/indexeddb/cli.py, _VALID_PRINTABLE_CHARACTERS).
PRINTABLE = set(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~.")
# V8's RegExp flag bits (src/regexp/regexp-flags.h), which dfindexeddb prints as a number.
REGEXP_BITS = {"d": 1 << 7, "g": 1, "i": 2, "l": 1 << 6, "m": 4, "s": 1 << 5, "u": 1 << 4,
               "v": 1 << 8, "y": 8}
VIEW_NAMES = {"INT8_ARRAY": "Int8Array", "UINT8_ARRAY": "Uint8Array",
              "UINT8_CLAMPED_ARRAY": "Uint8ClampedArray", "INT16_ARRAY": "Int16Array",
              "UINT16_ARRAY": "Uint16Array", "INT32_ARRAY": "Int32Array",
              "UINT32_ARRAY": "Uint32Array", "FLOAT32_ARRAY": "Float32Array",
              "FLOAT64_ARRAY": "Float64Array", "BIGINT64_ARRAY": "BigInt64Array",
              "BIGUINT64_ARRAY": "BigUint64Array", "DATAVIEW": "DataView"}
# The same by V8's view sub-tag byte (value-serializer.cc, ArrayBufferViewTag), which
# dfindexeddb's `blink` command prints as a number.
VIEW_TAGS = {ord("b"): "Int8Array", ord("B"): "Uint8Array", ord("C"): "Uint8ClampedArray",
             ord("w"): "Int16Array", ord("W"): "Uint16Array", ord("d"): "Int32Array",
             ord("D"): "Uint32Array", ord("h"): "Float16Array", ord("f"): "Float32Array",
             ord("F"): "Float64Array", ord("q"): "BigInt64Array", ord("Q"): "BigUint64Array",
             ord("?"): "DataView"}


def printable(b):
    return "".join(chr(x) if chr(x) in PRINTABLE else f"\\x{x:02X}" for x in b)


def number(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 2 ** 63:
        return int(x)
    return x


def ours(v):
    """sst's contract mapping -> the common form."""
    if isinstance(v, list):
        return ["array", [ours(x) for x in v], {}]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return number(v)
    if not isinstance(v, dict):
        return v
    t = v.get("$type")
    if t is None:
        return {k: ours(x) for k, x in v.items()}
    if t == "undefined":
        return ["undefined"]
    if t == "number":
        return ["number", v["value"]]
    if t == "bigint":
        return int(v["value"])
    if t == "date":
        return ["date", v["value"]]
    if t == "regexp":
        return ["regexp", v["source"], sum(REGEXP_BITS[c] for c in v["flags"])]
    if t == "boxed":
        return ours(v["value"])
    if t == "map":
        return {str(ours(k)): ours(x) for k, x in v["entries"]}
    if t == "set":
        return ["set", sorted((ours(x) for x in v["values"]), key=repr)]
    if t == "array":
        return ["sparse", {k: ours(x) for k, x in v["elements"].items()},
                {k: ours(x) for k, x in v["properties"].items()}]
    if t == "ArrayBuffer":  # dfindexeddb prints a buffer's bytes as text, nothing more
        return printable(bytes.fromhex(v["hex"]))
    if t in VIEW_NAMES.values():
        return ["view", t, printable(bytes.fromhex(v["hex"]))]
    return {k: ours(x) for k, x in v.items()}


def theirs(v):
    """dfindexeddb's JSON -> the common form."""
    if isinstance(v, list):  # a Set
        return ["set", sorted((theirs(x) for x in v), key=repr)]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return ["number", "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")]
        return number(v)
    if isinstance(v, str):
        try:  # dates are ISO text (naive UTC)
            d = datetime.datetime.fromisoformat(v)
            if len(v) >= 19 and v[4] == "-" and v[10] == "T":
                return ["date", round(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)]
        except ValueError:
            pass
        if v == "<undefined>":
            return ["undefined"]
        if v == "<null>":
            return None
        return v
    if not isinstance(v, dict):
        return v
    t = v.get("__type__")
    if t == "Undefined":
        return ["undefined"]
    if t == "Null":
        return None
    if t == "JSArray":
        values = v["values"]
        if all(not (isinstance(x, dict) and x.get("__type__") == "Hole") for x in values) and not v["properties"]:
            return ["array", [theirs(x) for x in values], {}]
        elements = {str(i): theirs(x) for i, x in enumerate(values)
                    if not (isinstance(x, dict) and x.get("__type__") == "Hole")}
        return ["sparse", elements, {str(k): theirs(x) for k, x in v["properties"].items()}]
    if t == "RegExp":
        return ["regexp", v["pattern"], int(v["flags"])]
    if t == "ArrayBufferView":
        raw = v["buffer"]
        tag = VIEW_TAGS.get(v["tag"]) if isinstance(v["tag"], int) else VIEW_NAMES.get(v["tag"])
        return ["view", tag or v["tag"], view_slice(raw, v["offset"], v["length"])]
    return {k: theirs(x) for k, x in v.items()}


def view_slice(printed, offset, length):
    """The bytes offset..offset+length of a buffer dfindexeddb printed (\\xHH escapes)."""
    out, i = [], 0
    while i < len(printed):
        if printed.startswith("\\x", i) and i + 4 <= len(printed):
            out.append(printed[i:i + 4])
            i += 4
        else:
            out.append(printed[i])
            i += 1
    return "".join(out[offset:offset + length])


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout


def check_dir(sst, d):
    # Ours: every record of every file, by (key hex, sequence).
    rows = {}
    for line in run([sst, "db", "records", d, "--format", "jsonl"]).splitlines():
        r = json.loads(line)
        rows[(r["key"], r["seq"])] = r
    agree = disagree = theirs_failed = 0
    out = run(["dfindexeddb", "db", "-s", d, "-f", "chrome", "-o", "jsonl", "--include_raw_data"])
    for line in out.splitlines():
        r = json.loads(line)
        if r["key"].get("__type__") != "ObjectStoreDataKey":
            continue
        key_hex = bytes(r["raw_key"], "latin-1").hex() if isinstance(r["raw_key"], str) else None
        ours_row = rows.get((key_hex, r["sequence_number"])) if key_hex else None
        if ours_row is None:  # raw_key printed with escapes: match on key text instead
            ours_row = next((x for (k, s), x in rows.items() if s == r["sequence_number"]
                             and x.get("idb", {}).get("kind") == "record"), None)
        label = f"{os.path.basename(d)} seq {r['sequence_number']} key {r['key'].get('encoded_user_key', {}).get('value')}"
        value = (r.get("value") or {})
        decoded = value.get("value")
        how = "db"
        if decoded is None and value.get("blob_size") and ours_row:
            path = ours_row["idb"]["value"].get("path")
            if path:
                blink = subprocess.run(["dfindexeddb", "blink", "-s", path, "-o", "jsonl"],
                                       capture_output=True, text=True)
                if blink.returncode == 0 and blink.stdout.strip():
                    decoded, how = json.loads(blink.stdout), "blink on " + os.path.relpath(path, os.path.dirname(d))
        if decoded is None:
            theirs_failed += 1
            print(f"  dfindexeddb did not decode {label}")
            continue
        if ours_row is None or "data" not in ours_row["idb"]:
            disagree += 1
            print(f"  DISAGREE {label}: sst has no value ({ours_row and ours_row['idb'].get('data_error')})")
            continue
        a, b = ours(ours_row["idb"]["data"]), theirs(decoded)
        if a == b:
            agree += 1
            print(f"  agree    {label} (dfindexeddb {how})")
        else:
            disagree += 1
            print(f"  DISAGREE {label} (dfindexeddb {how}):\n    sst:         {json.dumps(a)[:600]}\n"
                  f"    dfindexeddb: {json.dumps(b)[:600]}")
    return agree, disagree, theirs_failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sst", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "sst"))
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    total = [0, 0, 0]
    for d in a.dirs:
        print(d)
        for i, n in enumerate(check_dir(a.sst, d)):
            total[i] += n
    print(f"records dfindexeddb decodes: {total[0] + total[1]}; agree {total[0]}, disagree {total[1]}; "
          f"records dfindexeddb could not decode: {total[2]}")
    sys.exit(1 if total[1] else 0)


if __name__ == "__main__":
    main()
