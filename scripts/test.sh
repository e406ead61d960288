#!/usr/bin/env bash
# The full test suite (the README's test command): installs what the tests need when it is
# missing (scripts/setup.sh), then unit, integration, CLI, doc tests, and the benches
# compiled and run once as tests, for the library and the `sst` crate; then the Python
# package's pytest suite (scripts/test_python.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cargo test --workspace --all-targets --features leveldb-table/quick-cache
cargo test --workspace --doc
bash scripts/test_python.sh
