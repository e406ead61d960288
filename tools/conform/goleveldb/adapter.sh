#!/usr/bin/env bash
# The conformance kit's adapter for goleveldb:
#   sst conform --impl tools/conform/goleveldb/adapter.sh
# Needs Debian's golang, golang-github-syndtr-goleveldb-dev and golang-github-golang-snappy-dev
# (built without Go modules, against /usr/share/gocode). Builds main.go on first use (or when
# it changed) into target/conform/ of this repository (CONFORM_BUILD_DIR overrides).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${CONFORM_BUILD_DIR:-$here/../../../target/conform}
bin=$out/goleveldb_adapter
if [ ! -x "$bin" ] || [ "$here/main.go" -nt "$bin" ]; then
  mkdir -p "$out"
  tmp=$(mktemp "$out/.goleveldb_adapter.XXXXXX")
  if ! (cd "$here" && GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$tmp" main.go) >&2; then
    rm -f "$tmp"
    echo "goleveldb adapter: go build failed (needs golang and golang-github-syndtr-goleveldb-dev)" >&2
    exit 2
  fi
  mv -f "$tmp" "$bin"
fi
exec "$bin" "$@"
