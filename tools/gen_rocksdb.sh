#!/bin/bash
# Writes the RocksDB fixtures under testdata/rocksdb/ with Debian's RocksDB tools
# (package rocksdb-tools 7.8.3: `ldb`, `sst_dump`) and python3 for the JSONL files.
#
#   tools/gen_rocksdb.sh [OUTDIR]        # default OUTDIR: testdata/rocksdb
#
# Each table: 100 keys "rkey0000".."rkey0099" loaded with `ldb load`, then `ldb compact`
# (a full compaction into one bottommost table, so every sequence number is 0), and the single
# .sst is copied out. `ldb` has no flag for format_version or the table factory, so the variants
# are made by editing the OPTIONS-* file of a freshly created DB before loading: later `ldb`
# runs load the options from that file (--try_load_options defaults to true for existing DBs).
#
# X.entries.jsonl rows are {"ikey","seq","type","value"} in file order (user key ascending).
# Block-based tables: from `sst_dump --command=scan --output_hex`. PlainTable: sst_dump cannot
# scan it here ("Bad address" on pread, it wants mmap reads), so rows come from
# `ldb scan --hex` on the DB with seq 0 / type 1 (the file stores each key's internal-key
# suffix as the single byte 0xff, PlainTable's marker for "seq 0, type value").
#
# Not byte-reproducible: the table properties block records a DB session id, a DB identity
# UUID, the host name, file numbers and creation times.
set -euo pipefail

OUT=${1:-testdata/rocksdb}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/gen_rocksdb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# 100 keys; values of varied length ("value-N " + 0..29 'x').
for i in $(seq 0 99); do
  printf 'rkey%04d ==> value-%d %s\n' "$i" "$i" "$(head -c $((i % 30)) /dev/zero | tr '\0' x)"
done > "$WORK/load.txt"

# edit_options DBDIR PYTHON-CODE: rewrites the newest OPTIONS-* file (variable s = its text).
edit_options() {
  local opt
  opt=$(ls "$1"/OPTIONS-* | sort | tail -1)
  python3 - "$opt" "$2" <<'EOF'
import sys
p, code = sys.argv[1], sys.argv[2]
s = open(p).read()
def sub(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
exec(code)
open(p, "w").write(s)
EOF
}

# make_table NAME "LDB CREATE FLAGS" "OPTIONS EDIT CODE" [plain]
make_table() {
  local name=$1 flags=$2 code=$3 kind=${4:-block}
  local db="$WORK/$name"
  # shellcheck disable=SC2086
  ldb --db="$db" --create_if_missing $flags load < /dev/null
  if [ -n "$code" ]; then edit_options "$db" "$code"; fi
  ldb --db="$db" load < "$WORK/load.txt"
  ldb --db="$db" compact
  local ssts=("$db"/*.sst)
  if [ ${#ssts[@]} -ne 1 ]; then echo "expected one .sst in $db, got ${ssts[*]}" >&2; exit 1; fi
  cp "${ssts[0]}" "$OUT/$name.sst"
  if [ "$kind" = block ]; then
    sst_dump --file="${ssts[0]}" --command=scan --output_hex 2>/dev/null |
      python3 -c '
import sys, re, json
for line in sys.stdin:
    m = re.match(r"^\x27([0-9A-F]*)\x27 seq:(\d+), type:(\d+) => ([0-9A-F]*)$", line.strip())
    if not m:
        continue
    k, seq, typ, v = m.group(1).lower(), int(m.group(2)), int(m.group(3)), m.group(4).lower()
    tag = ((seq << 8) | typ).to_bytes(8, "little").hex()
    print(json.dumps({"ikey": k + tag, "seq": seq, "type": typ, "value": v}))
' > "$OUT/$name.entries.jsonl"
  else
    ldb --db="$db" scan --hex |
      python3 -c '
import sys, json
for line in sys.stdin:
    k, v = line.strip().split(" : ")
    k, v = k[2:].lower(), v[2:].lower()
    print(json.dumps({"ikey": k + (1).to_bytes(8, "little").hex(), "seq": 0, "type": 1, "value": v}))
' > "$OUT/$name.entries.jsonl"
  fi
  local n
  n=$(wc -l < "$OUT/$name.entries.jsonl")
  if [ "$n" -ne 100 ]; then echo "$name: $n entries, expected 100" >&2; exit 1; fi
  echo "$name.sst: $(stat -c %s "$OUT/$name.sst") bytes, $n entries, magic $(tail -c 8 "$OUT/$name.sst" | od -An -tx8 | tr -d ' '), u32@size-12 = $(tail -c 12 "$OUT/$name.sst" | head -c 4 | od -An -tu4 | tr -d ' ')"
}

COMMON="--bloom_bits=10 --block_size=1024"

# 1. Defaults of RocksDB 7.8 (format_version 5, checksum kXXH3), bloom 10, snappy.
make_table rocksdb_fv5 "$COMMON --compression_type=snappy" ""

# 2. format_version 1 (the first version with the new magic), checksum kXXH3 (type 4), snappy.
make_table rocksdb_fv1_xxh3 "$COMMON --compression_type=snappy" \
  'sub("  format_version=5\n", "  format_version=1\n")'

# 3. format_version 0: LevelDB's legacy magic and 48-byte footer. Needs checksum kCRC32c:
#    with kXXH3 RocksDB silently writes format_version 1 instead.
make_table rocksdb_fv0_legacy_magic "$COMMON --compression_type=snappy" \
  'sub("  format_version=5\n", "  format_version=0\n"); sub("  checksum=kXXH3\n", "  checksum=kCRC32c\n")'

# 4. format_version 0 with zlib (RocksDB compression id 2 = zlib stream; no size prefix for fv<2).
make_table rocksdb_fv0_zlib "$COMMON --compression_type=zlib" \
  'sub("  format_version=5\n", "  format_version=0\n"); sub("  checksum=kXXH3\n", "  checksum=kCRC32c\n")'

# 5. PlainTable (legacy PlainTable magic). Needs allow_mmap_reads and ttl=0.
make_table rocksdb_plain_table "--compression_type=no" '
sub("table_factory=BlockBasedTable", "table_factory=PlainTable")
sub("allow_mmap_reads=false", "allow_mmap_reads=true")
import re
s = re.sub(r"\n  ttl=\d+\n", "\n  ttl=0\n", s)
s = s[:s.index("[TableOptions/BlockBasedTable \"default\"]")] + """[TableOptions/PlainTable "default"]
  user_key_len=0
  bloom_bits_per_key=10
  hash_table_ratio=0
  index_sparseness=16
  huge_page_tlb_size=0
  encoding_type=kPlain
  full_scan_mode=false
  store_index_in_file=false
"""
' plain
