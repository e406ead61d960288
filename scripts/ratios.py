#!/usr/bin/env python3
"""Ratios of this crate to C++ LevelDB from one run_peers.sh results file, against the targets.

usage: ratios.py RESULTS.jsonl [--ours NAME] [--markdown]

Medians per peer over the runs in the file (as summarize.py), then ours / leveldb-cpp and
ours / leveldb-cpp+verify_checksums for each measure with a target. Lower is better for
every ratio (times, and blocks read per miss).
"""
import json
import statistics
import sys

# (field, label, target ratio or None, how the target reads)
TARGETS = {
    "snappy": [
        ("build_s", "build", 0.6, "<= 0.6"),
        ("scan_s", "warm full scan", 0.6, "<= 0.6"),
        ("get_hit_s_per_op", "warm get hit", 0.5, "<= 0.5"),
        ("get_miss_s_per_op", "warm get miss", 0.5, "<= 0.5"),
        ("miss_blocks_read_per_op", "data blocks read per miss", 1.0, "= 1 (equal)"),
        ("open_s", "open", 1.0, "<= 1"),
        ("open_with_filter_s", "open + filter load (like C++ open)", None, "(info)"),
    ],
    "none": [
        ("build_s", "build", None, "(info)"),
        ("scan_s", "warm full scan", 0.6, "<= 0.6"),
        ("get_hit_s_per_op", "warm get hit", 0.6, "<= 0.6"),
        ("get_miss_s_per_op", "warm get miss", None, "(info)"),
        ("miss_blocks_read_per_op", "data blocks read per miss", 1.0, "= 1 (equal)"),
        ("open_s", "open", None, "(info)"),
    ],
}


def medians(path):
    groups = {}
    for line in open(path):
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if "label" in d:
            groups.setdefault(d.get("peer", d["label"]), []).append(d)
    out = {}
    for peer, runs in groups.items():
        m = {"runs": len(runs), "compression": runs[0]["compression"], "n": runs[0]["n"]}
        for k in runs[0]:
            vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))
                    and not isinstance(r.get(k), bool)]
            if vals:
                m[k] = statistics.median(vals)
        out[peer] = m
    return out


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    ours = "ours"
    if "--ours" in args:
        i = args.index("--ours")
        ours = args[i + 1]
        del args[i:i + 2]
    md = "--markdown" in args
    args = [a for a in args if a != "--markdown"]
    m = medians(args[0])
    o, c, cv = m[ours], m["leveldb-cpp"], m.get("leveldb-cpp+verify_checksums", {})
    rows = [["measure", "ours", "C++", "C++ +verify", "ours/C++", "ours/C++verify", "target",
             "met (vs C++)"]]
    for field, label, target, how in TARGETS[o["compression"]]:
        if field not in o:
            continue
        # C++ reads its filter at open: compare open+filter with C++'s open
        cf = "open_s" if field == "open_with_filter_s" else field
        r = o[field] / c[cf] if c.get(cf) else float("nan")
        rv = o[field] / cv[cf] if cv.get(cf) else float("nan")
        if target is None:
            met = "-"
        elif how.startswith("="):
            met = "yes" if abs(r - target) < 1e-9 else "no"
        else:
            met = "yes" if r <= target + 1e-9 else "no"
        scale = 1e6 if field.endswith("per_op") and "blocks" not in field else 1
        fmt = (lambda x: f"{x * scale:.3f}") if scale != 1 else (lambda x: f"{x:.4g}")
        rows.append([label, fmt(o[field]), fmt(c[cf]), fmt(cv[cf]) if cf in cv else "-",
                     f"{r:.2f}", f"{rv:.2f}", how, met])
    print(f"n={o['n']} compression={o['compression']} runs={o['runs']} "
          f"(per-op times in microseconds, others in seconds or blocks)")
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        if md:
            print("| " + " | ".join(x.ljust(n) for x, n in zip(r, w)) + " |")
            if i == 0:
                print("|" + "|".join("-" * (n + 2) for n in w) + "|")
        else:
            print("  ".join(x.ljust(n) for x, n in zip(r, w)))


if __name__ == "__main__":
    main()
