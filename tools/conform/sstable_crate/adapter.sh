#!/usr/bin/env bash
# The conformance kit's adapter for the `sstable` crate (crates.io):
#   sst conform --impl tools/conform/sstable_crate/adapter.sh
# Builds this cargo project (outside the workspace; crates.io must be reachable the first
# time) into target/conform/ of this repository (CONFORM_BUILD_DIR overrides), then runs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${CONFORM_BUILD_DIR:-$here/../../../target/conform}
bin=$out/sstable_crate/release/conform-sstable
if [ ! -x "$bin" ] || [ "$here/src/main.rs" -nt "$bin" ] || [ "$here/Cargo.toml" -nt "$bin" ]; then
  if ! cargo build --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$out/sstable_crate" >&2; then
    echo "sstable adapter: cargo build failed" >&2
    exit 2
  fi
fi
exec "$bin" "$@"
