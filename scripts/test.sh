#!/usr/bin/env bash
# The full test suite (the README's test command): unit, integration, CLI, doc tests,
# and the benches compiled and run once as tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --all-targets
cargo test --doc
