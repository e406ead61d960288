#!/usr/bin/env bash
# A deliberately broken adapter (cli/tests/conform.rs): reads tables without verifying block
# checksums, so a damaged block comes back as data.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "${1:-}" in
  read-table) exec "${SST:-sst}" scan "$2" --keys plain --format jsonl --no-verify ;;
  *) exec "$here/../../../tools/conform/sst/adapter.sh" "$@" ;;
esac
