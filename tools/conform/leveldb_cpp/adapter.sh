#!/usr/bin/env bash
# The conformance kit's adapter for C++ LevelDB (Debian's libleveldb-dev):
#   sst conform --impl tools/conform/leveldb_cpp/adapter.sh
# Builds adapter.cc with g++ on first use (or when it changed) into target/conform/ of this
# repository (CONFORM_BUILD_DIR overrides), then runs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${CONFORM_BUILD_DIR:-$here/../../../target/conform}
bin=$out/leveldb_cpp_adapter
if [ ! -x "$bin" ] || [ "$here/adapter.cc" -nt "$bin" ]; then
  mkdir -p "$out"
  tmp=$(mktemp "$out/.leveldb_cpp_adapter.XXXXXX")
  if ! g++ -O2 -std=c++17 -o "$tmp" "$here/adapter.cc" -lleveldb >&2; then
    rm -f "$tmp"
    echo "leveldb_cpp adapter: g++ failed (needs g++ and libleveldb-dev)" >&2
    exit 2
  fi
  mv -f "$tmp" "$bin"
fi
exec "$bin" "$@"
