#!/usr/bin/env python3
"""Before/after table of two peers of one run_peers.sh results file, with the run-to-run noise.

usage: before_after.py RESULTS.jsonl [--a before] [--b ours] [--markdown]

For each measure: the median of A's runs and of B's runs (with min-max across the runs), the
ratio B/A of the medians, the range of the per-round ratios (round i of B over round i of A;
run_peers.sh alternates the order each round), and the noise: the larger relative spread
(max/min - 1) of A's and B's own runs. A row is flagged WORSE when B/A - 1 exceeds that noise.
LevelDB's medians (leveldb-cpp) and both ratios to it are printed beside, when present.
Lower is better for every measure here (times, blocks read).
"""
import json
import statistics
import sys

MEASURES = [
    ("build_s", "build (s)", 1),
    ("open_s", "open (ms)", 1e3),
    ("scan_cold_s", "scan, cold (s)", 1),
    ("scan_s", "scan, warm (s)", 1),
    ("get_hit_s_per_op", "get hit, warm (µs)", 1e6),
    ("get_miss_s_per_op", "get miss, warm (µs)", 1e6),
    ("seek_hit_s_per_op", "iterator seek hit (µs)", 1e6),
    ("miss_blocks_read_per_op", "data blocks read per miss", 1),
    ("db_load_compact_s", "db: load until no compaction is due (s)", 1),
    ("db_get_hit_s_per_op", "db: get hit, warm (µs)", 1e6),
    ("db_get_miss_s_per_op", "db: get miss, warm (µs)", 1e6),
    ("db_leveldb_layout_get_hit_s_per_op", "db, LevelDB's layout: get hit (µs)", 1e6),
    ("db_leveldb_layout_get_miss_s_per_op", "db, LevelDB's layout: get miss (µs)", 1e6),
]


def runs_by_peer(path):
    groups = {}
    for line in open(path):
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if "label" in d and "peer" in d and "reader_of" not in d:
            groups.setdefault(d["peer"], []).append(d)
    return groups


def values(runs, field):
    return [r[field] for r in runs if isinstance(r.get(field), (int, float))
            and not isinstance(r.get(field), bool)]


def fmt(x):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.3f}"
    return f"{x:.4g}"


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    a, b, md = "before", "ours", "--markdown" in args
    if "--a" in args:
        a = args[args.index("--a") + 1]
    if "--b" in args:
        b = args[args.index("--b") + 1]
    groups = runs_by_peer(args[0])
    if a not in groups or b not in groups:
        raise SystemExit(f"peers in the file: {sorted(groups)}")
    cpp = groups.get("leveldb-cpp", [])
    head = ["measure", f"{a} median (min-max)", f"{b} median (min-max)", f"{b}/{a}",
            "per-round ratios", "noise (spread)", "LevelDB", f"{a}/LevelDB", f"{b}/LevelDB", "flag"]
    rows = []
    worse = []
    for field, label, scale in MEASURES:
        va, vb = values(groups[a], field), values(groups[b], field)
        if not va or not vb:
            continue
        ma, mb = statistics.median(va), statistics.median(vb)
        ratio = mb / ma if ma else None
        per_round = [y / x for x, y in zip(va, vb) if x]
        spread = [max(v) / min(v) - 1 for v in (va, vb) if min(v) > 0]
        noise = max(spread) if spread else 0.0
        flag = ""
        if ratio is not None and ratio - 1 > noise:
            flag = "WORSE"
            worse.append(label)
        vc = [v for v in values(cpp, field)
              if not field.startswith("db_leveldb_layout")]
        if field.startswith("db_leveldb_layout"):
            vc = values(cpp, field.replace("db_leveldb_layout_", "db_"))
        mc = statistics.median(vc) if vc else None
        rows.append([
            label,
            f"{fmt(ma * scale)} ({fmt(min(va) * scale)}-{fmt(max(va) * scale)})",
            f"{fmt(mb * scale)} ({fmt(min(vb) * scale)}-{fmt(max(vb) * scale)})",
            f"{ratio:.2f}" if ratio is not None else "-",
            f"{min(per_round):.2f}-{max(per_round):.2f}" if per_round else "-",
            f"{noise * 100:.0f}%",
            fmt(mc * scale) if mc else "-",
            f"{ma / mc:.2f}" if mc else "-",
            f"{mb / mc:.2f}" if mc else "-",
            flag,
        ])
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(head) - 2) + ["---"]) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        for r in [head] + rows:
            print("  ".join(str(x).ljust(n) for x, n in zip(r, w)))
    print(f"\nruns: {a} {len(groups[a])}, {b} {len(groups[b])}, leveldb-cpp {len(cpp)}; "
          f"worse than the noise: {', '.join(worse) if worse else 'none'}")


if __name__ == "__main__":
    main()
