#!/usr/bin/env bash
# The Python package's tests (python/, issue 31), run by scripts/test.sh after the Rust
# suite: builds the extension once into a throwaway virtualenv and runs pytest on
# python/tests. Needs what scripts/setup.sh installs (maturin, pytest, plyvel).
#
# Why this way: `maturin develop` builds in cargo's dev profile, in the workspace's target/,
# so it reuses the library the Rust tests just compiled (only pyo3 and the binding are
# compiled again, about 15 s of CPU); no build isolation downloads maturin again (as
# `pip install ./python` would); and the package goes into target/python-venv, not into
# the machine's Python. The venv sees the packages of the `python3` that setup.sh installed
# plyvel, pytest and maturin into (its site-packages and user site-packages, through a .pth
# file; --system-site-packages alone would miss them when that python3 is itself a
# virtualenv, or when they went into the user site).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="$PWD/target/python-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  >"$site/outer-python.pth"
# maturin from the machine's Python (setup.sh installs it there); VIRTUAL_ENV says where to
# install.
(cd python && VIRTUAL_ENV="$venv" python3 -m maturin develop --quiet)
# -p no:cacheprovider: pytest writes no .pytest_cache into the repository.
"$venv/bin/python" -m pytest python/tests -p no:cacheprovider -q "$@"
