#!/usr/bin/env python3
"""Draws docs/perf_scaling.svg from the CSV written by scripts/bench_scaling.sh.

usage: plot_scaling.py SCALING.csv OUT.svg [--memory MEMORY.csv]

Small multiples, one panel per measure, throughput (higher is better) against the table size N
(log scale), one line per peer: build MB/s, warm scan MB/s, warm get-hit and get-miss
lookups per second. With --memory, a fifth panel shows the peak memory our build adds on top
of the loaded workload. Pure Python (standard library only): no matplotlib needed.
"""
import csv
import math
import sys
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
PANELS = [
    # (title, function(row) -> value or None, unit)
    ("build, MB/s of key+value", lambda r: f(r, "build_mb_s"), "MB/s"),
    ("warm full scan, MB/s", lambda r: f(r, "scan_mb_s"), "MB/s"),
    ("warm get hit, lookups/s (millions)", lambda r: inv(r, "get_hit_s_per_op"), "M/s"),
    ("warm get miss, lookups/s (millions)", lambda r: inv(r, "get_miss_s_per_op"), "M/s"),
]


def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError, TypeError):
        return None


def inv(r, k):
    v = f(r, k)
    return None if not v else 1e-6 / v


def nice_max(v):
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def fmt_n(n):
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k"


def panel(svg, x0, y0, w, h, title, series, ns, unit):
    """series: [(name, color, [(n, value)])]"""
    pad_l, pad_b, pad_t = 48, 28, 22
    px0, py0, pw, ph = x0 + pad_l, y0 + pad_t, w - pad_l - 10, h - pad_t - pad_b
    vmax = nice_max(max([v for _, _, pts in series for _, v in pts] + [0]))
    lo, hi = math.log10(min(ns)), math.log10(max(ns))
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    lo, hi = lo - 0.06 * span, hi + 0.06 * span

    def X(n):
        return px0 + (math.log10(n) - lo) / (hi - lo) * pw

    def Y(v):
        return py0 + ph - v / vmax * ph

    svg.append(f'<text x="{x0 + w / 2:.1f}" y="{y0 + 14}" text-anchor="middle" '
               f'font-size="12" font-weight="bold">{escape(title)}</text>')
    svg.append(f'<rect x="{px0}" y="{py0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i in range(6):
        v = vmax * i / 5
        y = Y(v)
        svg.append(f'<line x1="{px0}" y1="{y:.1f}" x2="{px0 + pw}" y2="{y:.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{px0 - 4}" y="{y + 3:.1f}" text-anchor="end" font-size="9">{v:g}</text>')
    for n in ns:
        x = X(n)
        svg.append(f'<line x1="{x:.1f}" y1="{py0}" x2="{x:.1f}" y2="{py0 + ph}" stroke="#eee"/>')
        svg.append(f'<text x="{x:.1f}" y="{py0 + ph + 12}" text-anchor="middle" font-size="9">'
                   f'{fmt_n(n)}</text>')
    svg.append(f'<text x="{px0 + pw / 2:.1f}" y="{py0 + ph + 24}" text-anchor="middle" '
               f'font-size="9">entries N (log scale)</text>')
    svg.append(f'<text x="{x0 + 10}" y="{py0 + ph / 2:.1f}" font-size="9" text-anchor="middle" '
               f'transform="rotate(-90 {x0 + 10} {py0 + ph / 2:.1f})">{escape(unit)}</text>')
    for name, color, pts in series:
        pts = sorted(p for p in pts if p[1] is not None)
        if not pts:
            continue
        d = " ".join(f"{X(n):.1f},{Y(v):.1f}" for n, v in pts)
        svg.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
        for n, v in pts:
            svg.append(f'<circle cx="{X(n):.1f}" cy="{Y(v):.1f}" r="3" fill="{color}">'
                       f'<title>{escape(name)} N={n}: {v:.4g} {escape(unit)}</title></circle>')


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    mem_csv = None
    if "--memory" in args:
        i = args.index("--memory")
        mem_csv = args[i + 1]
        del args[i:i + 2]
    src, dst = args
    rows = list(csv.DictReader(open(src)))
    peers = []
    for r in rows:
        if r["peer"] not in peers:
            peers.append(r["peer"])
    ns = sorted({int(r["n"]) for r in rows})
    panels = list(PANELS)
    mem_rows = list(csv.DictReader(open(mem_csv))) if mem_csv else []

    cols, pw, ph = 2, 380, 250
    npanels = len(panels) + (1 if mem_rows else 0)
    nrows = math.ceil(npanels / cols)
    legend_h = 24 + 16 * len(peers)
    W, H = cols * pw + 20, nrows * ph + legend_h + 30
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">'
           f'SSTable peers vs table size (medians; higher is better)</text>']
    for i, (title, fn, unit) in enumerate(panels):
        series = []
        for j, p in enumerate(peers):
            pts = [(int(r["n"]), fn(r)) for r in rows if r["peer"] == p]
            series.append((p, COLORS[j % len(COLORS)], pts))
        panel(svg, 10 + (i % cols) * pw, 26 + (i // cols) * ph, pw, ph, title, series, ns, unit)
    if mem_rows:
        i = len(panels)
        pts_added = [(int(r["n"]), int(r["build_added_peak_bytes"]) / 1e6) for r in mem_rows]
        pts_table = [(int(r["n"]), int(r["table_file_bytes"]) / 1e6) for r in mem_rows]
        series = [("ours: memory the build adds", "#d62728", pts_added),
                  ("table file size (for scale)", "#999999", pts_table)]
        panel(svg, 10 + (i % cols) * pw, 26 + (i // cols) * ph, pw, ph,
              "our build: peak memory added vs table size, MB", series,
              sorted(int(r["n"]) for r in mem_rows), "MB")
        lx, ly = 10 + (i % cols) * pw + 60, 26 + (i // cols) * ph + 40
        for k, (name, color, _) in enumerate(series):
            svg.append(f'<rect x="{lx}" y="{ly + 14 * k - 8}" width="10" height="10" fill="{color}"/>')
            svg.append(f'<text x="{lx + 14}" y="{ly + 14 * k + 1}" font-size="9">{escape(name)}</text>')
    ly = 26 + nrows * ph + 10
    for j, p in enumerate(peers):
        y = ly + 16 * j
        svg.append(f'<rect x="40" y="{y}" width="12" height="12" fill="{COLORS[j % len(COLORS)]}"/>')
        svg.append(f'<text x="58" y="{y + 10}" font-size="11">{escape(p)}</text>')
    svg.append("</svg>")
    with open(dst, "w") as out:
        out.write("\n".join(svg) + "\n")
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
