#!/usr/bin/env bash
# An adapter that misbehaves in every way the kit must survive (cli/tests/conform.rs), by case
# file name: it hangs, leaves a process holding its output, crashes, prints garbage, or says a
# verb is not supported.
set -uo pipefail
case "${1:-}" in
  capabilities)
    echo '{"name": "misbehaves", "verbs": ["read-table", "read-db"], "compressions": ["none", "snappy"]}' ;;
  read-table)
    case "$2" in
      */table-none.ldb) sleep 600 ;;
      */table-snappy.ldb) sleep 600 & echo '{"key": "00", "value": "00"}' ;;
      */table-one-entry.ldb) kill -SEGV $$ ;;
      */table-no-filter.ldb) echo 'this is not a row' ;;
      *) exit 3 ;;
    esac ;;
  *) exit 3 ;;
esac
