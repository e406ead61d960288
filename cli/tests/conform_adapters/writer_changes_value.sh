#!/usr/bin/env bash
# A deliberately broken adapter (cli/tests/conform.rs): its writer prefixes the first entry's
# value with a 00 byte.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ours=$here/../../../tools/conform/sst/adapter.sh
case "${1:-}" in
  write-table) sed '1s/"value":"/"value":"00/' | "$ours" "$@" ;;
  *) exec "$ours" "$@" ;;
esac
