#!/usr/bin/env bash
# The conformance kit's adapter for this project's `sst` (docs/conformance.md):
#   sst conform --impl tools/conform/sst/adapter.sh
# SST names the sst binary (default: `sst` on PATH).
set -euo pipefail
sst=${SST:-sst}
verb=${1:-}
shift || true
case "$verb" in
  capabilities)
    version=$("$sst" --version)
    printf '{"name": "leveldb-table (%s)", "verbs": ["read-table", "read-db", "write-table"], "compressions": ["none", "snappy", "zstd", "zlib", "deflate"], "comparators": ["leveldb.BytewiseComparator", "idb_cmp1"]}\n' "$version"
    ;;
  read-table)
    # Keys as stored (--keys plain: a database table's internal keys too), checksums verified.
    exec "$sst" scan "$1" --keys plain --format jsonl
    ;;
  read-db)
    exec "$sst" db scan "$1" --format jsonl --decode none
    ;;
  write-table)
    file=$1
    shift
    args=(--keys plain --no-filter)
    while [ $# -gt 0 ]; do
      case "$1" in
        --block-size | --restart-interval | --compression) args+=("$1" "$2") ;;
        --bloom-bits) args=("${args[@]/--no-filter/}" --bloom-bits "$2") ;;
        *) echo "write-table: unknown flag $1" >&2; exit 3 ;;
      esac
      shift 2
    done
    # Empty elements left by the --no-filter removal are dropped.
    set --
    for a in "${args[@]}"; do [ -n "$a" ] && set -- "$@" "$a"; done
    exec "$sst" build "$file" --from - "$@"
    ;;
  *)
    echo "sst adapter: unsupported verb '$verb'" >&2
    exit 3
    ;;
esac
