#!/usr/bin/env bash
# Installs what building and testing need, when it is missing, and says nothing when it is there.
#
#   bash scripts/setup.sh          what the test suite needs (called by scripts/test.sh, the
#                                  README's test command, and so by .ci/run)
#   bash scripts/setup.sh build    only what `cargo build` needs (a C compiler and linker: the
#                                  zstd codec is C, and rustc links through `cc`)
#
# - Debian packages through apt-get, as root or through sudo without a password.
# - Python packages through pip (the interpreter's own `python3 -m pip`).
# - Without the rights to install, it stops at once with one line naming what is missing and
#   the command that installs it (exit 3), before anything is built or tested.
#
# Each need is one line below: a package and the check that it is there. Add new needs here.
set -euo pipefail

# Debian packages: "package-name:check-command" (the check succeeds when it is installed).
build_needs=(
  "gcc:command -v cc"
  "libc6-dev:test -e /usr/include/stdio.h"
)
apt_needs=(
  "g++:command -v g++"
  "libleveldb-dev:test -e /usr/include/leveldb/db.h"
  "libsnappy-dev:test -e /usr/include/snappy.h"
  "redis-server:command -v redis-server"
  "redis-tools:command -v redis-cli"
  "python3:command -v python3"
  "python3-venv:python3 -c 'import ensurepip, venv'"
)
# Python packages: "pip-name:import-name".
pip_needs=(
  "plyvel:plyvel"
  "maturin:maturin"
  "pytest:pytest"
)

if [ "${1:-}" = build ]; then
  apt_needs=()
  pip_needs=()
fi

missing_apt=()
for need in "${build_needs[@]}" "${apt_needs[@]+"${apt_needs[@]}"}"; do
  check=${need#*:}
  bash -c "$check" >/dev/null 2>&1 || missing_apt+=("${need%%:*}")
done
missing_pip=()
for need in "${pip_needs[@]+"${pip_needs[@]}"}"; do
  python3 -c "import ${need#*:}" >/dev/null 2>&1 || missing_pip+=("${need%%:*}")
done
# pip itself, when a Python package is missing (Debian's python3-pip brings python3 along).
if [ "${#missing_pip[@]}" -gt 0 ] && ! python3 -m pip --version >/dev/null 2>&1; then
  missing_apt+=(python3-pip)
fi

if [ "${#missing_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: missing Debian packages: ${missing_apt[*]}; install them with: sudo apt-get install -y ${missing_apt[*]}" >&2
    exit 3
  fi
  echo "setup: installing ${missing_apt[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >/dev/null
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_apt[@]}" >/dev/null 2>&1 ||
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
fi

if [ "${#missing_pip[@]}" -gt 0 ]; then
  echo "setup: installing ${missing_pip[*]} (pip)"
  pip=(python3 -m pip install --quiet --disable-pip-version-check)
  # Debian's own Python refuses system-wide pip installs unless told (PEP 668).
  if [ "$(id -u)" -ne 0 ]; then
    pip+=(--user)
  fi
  "${pip[@]}" "${missing_pip[@]}" 2>/dev/null || "${pip[@]}" --break-system-packages "${missing_pip[@]}"
fi
