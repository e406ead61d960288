#!/usr/bin/env bash
# Installs what the test suite needs, when it is missing, and says nothing when it is there.
# Called by scripts/test.sh (the README's test command) and so by .ci/run.
#
# - Debian packages through apt-get, as root or through sudo without a password.
# - Python packages through pip (the interpreter's own `python3 -m pip`).
# - Without the rights to install, it stops at once with one line naming what is missing and
#   the command that installs it (exit 3), before any test runs.
#
# Each need is one line below: a check, then the package. Add new needs here, nowhere else.
set -euo pipefail

# Debian packages: "package-name:check-command" (the check succeeds when it is installed).
apt_needs=(
  "g++:command -v g++"
  "libleveldb-dev:test -e /usr/include/leveldb/db.h"
  "libsnappy-dev:test -e /usr/include/snappy.h"
  "redis-server:command -v redis-server"
)
# Python packages: "pip-name:import-name".
pip_needs=(
)

missing_apt=()
for need in "${apt_needs[@]}"; do
  pkg=${need%%:*}
  check=${need#*:}
  bash -c "$check" >/dev/null 2>&1 || missing_apt+=("$pkg")
done
missing_pip=()
for need in "${pip_needs[@]+"${pip_needs[@]}"}"; do
  pkg=${need%%:*}
  module=${need#*:}
  python3 -c "import $module" >/dev/null 2>&1 || missing_pip+=("$pkg")
done

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
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_apt[@]}" >/dev/null
fi

if [ "${#missing_pip[@]}" -gt 0 ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: missing Python packages: ${missing_pip[*]}, and pip; install them with: apt-get install -y python3-pip && python3 -m pip install ${missing_pip[*]}" >&2
    exit 3
  fi
  echo "setup: installing ${missing_pip[*]} (pip)"
  python3 -m pip install --quiet --disable-pip-version-check "${missing_pip[@]}" ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${missing_pip[@]}"
fi
