#!/usr/bin/env bash
# The published conformance results: runs `sst conform` against every adapter in
# tools/conform/ whose toolchain is on this machine, and writes the results table and every
# failure (with the command that reproduces it) into docs/conformance.md, between the
# `results` markers; the case list between the `cases` markers.
#
#   bash scripts/conform_results.sh            all implementations
#   bash scripts/conform_results.sh --check    also fail (exit 1) if ours fails a case or
#                                              C++ LevelDB fails one outside "damaged"
#
# Needs: cargo, g++ and libleveldb-dev (C++ LevelDB, also the reference for writes); each
# peer when present: golang + golang-github-syndtr-goleveldb-dev + golang-github-golang-snappy-dev
# (goleveldb), crates.io reachable (rusty-leveldb, sstable), python3 + plyvel, node + npm
# (classic-level, installed into tools/conform/classic_level/node_modules). A peer whose
# toolchain is missing gets a row saying so. Raw rows: target/conform/results/NAME.jsonl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
check=${1:-}
out=target/conform/results
mkdir -p "$out"
rm -f "$out"/*.jsonl "$out"/*.err "$out"/*.skip

cargo build --release --quiet -p leveldb-table-cli
sst=$PWD/target/release/sst
export SST=$sst
reference=tools/conform/leveldb_cpp/adapter.sh

# name | adapter command | what it needs (a shell test)
impls=(
  "sst|tools/conform/sst/adapter.sh|true"
  "leveldb_cpp|tools/conform/leveldb_cpp/adapter.sh|command -v g++ && test -e /usr/include/leveldb/table.h"
  "goleveldb|tools/conform/goleveldb/adapter.sh|command -v go && test -d /usr/share/gocode/src/github.com/syndtr/goleveldb"
  "goleveldb_default|GOLEVELDB_STRICT=default tools/conform/goleveldb/adapter.sh|command -v go && test -d /usr/share/gocode/src/github.com/syndtr/goleveldb"
  "sstable|tools/conform/sstable_crate/adapter.sh|command -v cargo"
  "rusty_leveldb|tools/conform/rusty_leveldb/adapter.sh|command -v cargo"
  "plyvel|python3 tools/conform/plyvel/adapter.py|python3 -c 'import plyvel'"
  "classic_level|node tools/conform/classic_level/adapter.mjs|command -v node && command -v npm"
)

if command -v npm >/dev/null && [ ! -d tools/conform/classic_level/node_modules ]; then
  (cd tools/conform/classic_level && npm ci --no-audit --no-fund --silent) || true
fi

start=$(date +%s)
for entry in "${impls[@]}"; do
  IFS='|' read -r name cmd needs <<<"$entry"
  if ! bash -c "$needs" >/dev/null 2>&1; then
    echo "missing: $needs" >"$out/$name.skip"
    echo "$name: not run (missing: $needs)"
    continue
  fi
  caps=$(sh -c "$cmd capabilities" 2>"$out/$name.err") || {
    echo "capabilities failed: $(head -c 300 "$out/$name.err")" >"$out/$name.skip"
    echo "$name: not run (capabilities failed)"
    continue
  }
  echo "$caps" >"$out/$name.caps"
  echo "$cmd" >"$out/$name.cmd"
  t0=$(date +%s)
  code=0
  "$sst" conform --impl "$cmd" --reference "$reference" --format jsonl \
    >"$out/$name.jsonl" 2>"$out/$name.err" || code=$?
  if [ "$code" -gt 1 ]; then
    echo "$name: the kit stopped (exit $code): $(tail -1 "$out/$name.err")" >&2
    exit 2
  fi
  echo "$name: $(($(date +%s) - t0)) s, exit $code"
done
total=$(($(date +%s) - start))
"$sst" conform --list --format jsonl >"$out/cases.jsonl"

python3 - "$out" "$reference" "$total" "$check" <<'EOF'
import json, os, re, sys

out, reference, total, check = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
order = ["sst", "leveldb_cpp", "goleveldb", "goleveldb_default", "sstable", "rusty_leveldb",
         "plyvel", "classic_level"]
groups = ["tables", "directories", "writes", "damaged"]

def read(name, ext):
    p = os.path.join(out, f"{name}.{ext}")
    return open(p).read().strip() if os.path.exists(p) else None

def clean(detail):
    detail = re.sub(r"/tmp/sst-conform-[A-Za-z0-9]+/run/[^/ ]+/", "", detail)
    detail = re.sub(r"thread 'main' \(\d+\)", "thread 'main'", detail)
    detail = re.sub(r"/root/\.cargo/registry/src/[^/]+/", "", detail)
    return detail.replace("|", "\\|")

lines = ["| implementation | tables | directories | writes | damaged |",
         "| --- | --- | --- | --- | --- |"]
failures = []
problems = []
for name in order:
    skip = read(name, "skip")
    if skip is not None:
        lines.append(f"| `{name}`: not run ({skip}) | | | | |")
        continue
    caps = json.loads(read(name, "caps"))
    cmd = read(name, "cmd")
    rows = [json.loads(l) for l in read(name, "jsonl").splitlines() if l.strip()]
    cells = []
    for g in groups:
        n = {r: sum(1 for x in rows if x["group"] == g and x["result"] == r)
             for r in ("pass", "fail", "skip")}
        cell = f"{n['pass']} pass"
        if n["fail"]:
            cell += f", **{n['fail']} fail**"
        if n["skip"]:
            cell += f", {n['skip']} skip"
        cells.append(cell)
    lines.append(f"| {caps['name']} (`{cmd}`) | " + " | ".join(cells) + " |")
    failed = [r for r in rows if r["result"] == "fail"]
    if name == "sst" and failed:
        problems.append(f"ours fails {len(failed)} case(s)")
    if name == "leveldb_cpp" and any(r["group"] != "damaged" for r in failed):
        problems.append("C++ LevelDB fails outside damaged")
    if failed and name != "sst":
        failures.append(f"\n#### {caps['name']}\n")
        failures.append("| case | group | what happened | reproduce |")
        failures.append("| --- | --- | --- | --- |")
        for r in failed:
            ref = f" --reference {reference}" if r["verb"] == "write-table" else ""
            repro = f"`sst conform --impl '{cmd}'{ref} --case {r['case']}`"
            failures.append(f"| `{r['case']}` | {r['group']} | {clean(r['detail'])} | {repro} |")

cases = [json.loads(l) for l in read("cases", "jsonl").splitlines() if l.strip()]
case_lines = ["| case | group | verb | needs | what it holds |", "| --- | --- | --- | --- | --- |"]
for c in cases:
    needs = ", ".join(c["compressions"] + ([c["comparator"]] if c["comparator"] != "leveldb.BytewiseComparator" else []))
    case_lines.append(f"| `{c['case']}` | {c['group']} | {c['verb']} | {needs} | {c['about'].replace('|', '/')} |")

results = "\n".join(lines) + "\n\nEvery row above ran in one invocation of `bash scripts/conform_results.sh` " \
    f"({total} s for all the runs on this 2-core machine, adapters already built), " \
    f"with `--reference {reference}`.\n\n### Failures, with the command that reproduces each\n" + "\n".join(failures) + "\n"
doc_path = "docs/conformance.md"
doc = open(doc_path).read()
for marker, body in (("results", results), ("cases", "\n".join(case_lines) + "\n")):
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    i, j = doc.index(begin) + len(begin), doc.index(end)
    doc = doc[:i] + "\n" + body + doc[j:]
open(doc_path, "w").write(doc)
print(f"docs/conformance.md: {len(lines) - 2} implementations, {len(cases)} cases")
if check == "--check" and problems:
    print("; ".join(problems), file=sys.stderr)
    sys.exit(1)
EOF
