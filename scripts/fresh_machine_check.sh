#!/usr/bin/env bash
# Proves the README's two commands on a fresh Debian 12 with nothing but rustup's toolchain.
#
#   sudo bash scripts/fresh_machine_check.sh [--dir DIR] [--rev REV] [--keep]
#
# 1. Makes a minimal Debian 12 (bookworm) root with debootstrap in DIR (default
#    /var/tmp/leveldb-table-fresh), from the Debian mirror this machine's apt already uses.
# 2. Copies in only rustup's toolchain (~/.rustup and ~/.cargo/bin): no C compiler, no
#    LevelDB, no Python, nothing the tests need.
# 3. Clones this repository at REV (default HEAD) into it.
# 4. As an unprivileged user: `bash scripts/setup.sh` must stop at once with one line naming
#    what is missing and exit 3.
# 5. As root, with CI=true and no stdin: the README's main-job command, then its test
#    command, exactly as the README writes them (checked against README.md), each timed.
#
# The transcript goes to DIR/transcript.log and is printed at the end. Root is needed
# (debootstrap, chroot, bind mounts). Only the machine's network set-up is carried over
# (resolv.conf and the CA bundle), as a fresh machine of the same network would have it.
set -euo pipefail

dir=/var/tmp/leveldb-table-fresh
rev=HEAD
keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --rev) rev=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--dir DIR] [--rev REV] [--keep]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine_check: run as root (debootstrap, chroot)" >&2; exit 2; }
repo=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse "$rev")

# The two commands, as the README shows them (a check fails if the README changes them).
main_cmd=$(grep -m1 -E '^bash scripts/setup.sh build && cargo run --release -- ' "$repo/README.md" || true)
test_cmd=$(grep -m1 -E '^bash scripts/test.sh$' "$repo/README.md" || true)
[ -n "$main_cmd" ] && [ -n "$test_cmd" ] || {
  echo "fresh_machine_check: README.md no longer shows the two commands this script runs" >&2
  exit 2
}

command -v debootstrap >/dev/null || {
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
# The mirror this machine's apt uses (deb822 "URIs:" or a one-line "deb URI suite" entry).
mirror=$(grep -h -m1 -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=$(grep -h -m1 -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}')

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ "$keep" -eq 0 ]; then rm -rf "$dir/root/.rustup" "$dir/work"; fi
}
trap cleanup EXIT
bind() { mkdir -p "$dir$1"; mount --bind "$1" "$dir$1"; mounts+=("$dir$1"); }

log=$dir.transcript.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }
say "== fresh machine check of $commit ($(date -u +%FT%TZ))"

if [ ! -e "$dir/.debootstrap-done" ]; then
  rm -rf "$dir"
  t0=$(date +%s)
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1
  touch "$dir/.debootstrap-done"
  say "debootstrap (minbase bookworm): $(($(date +%s) - t0)) s"
else
  say "reusing the Debian 12 root in $dir (delete it for a new one)"
fi
# Every run starts from the fresh root: nothing a previous run installed may help it.
if [ ! -e "$dir.pristine.tar" ]; then
  tar -C "$dir" -cf "$dir.pristine.tar" .
else
  find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  tar -C "$dir" -xf "$dir.pristine.tar"
fi

bind /proc
bind /sys
bind /dev
bind /dev/pts
cp /etc/resolv.conf "$dir/etc/resolv.conf"
for ca in /etc/ssl/certs/ca-certificates.crt; do
  [ -e "$ca" ] && install -D -m 0644 "$ca" "$dir$ca"
done
# The network's CA bundle also under a name apt never rewrites: installing `ca-certificates`
# (python3-pip pulls it in) regenerates ca-certificates.crt without a network's own CA.
[ -e /etc/ssl/certs/ca-certificates.crt ] &&
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/network-ca.pem"

# rustup's toolchain, and nothing else of this machine's.
mkdir -p "$dir/root/.cargo/bin"
cp -a "${RUSTUP_HOME:-$HOME/.rustup}" "$dir/root/.rustup"
cp -a "${CARGO_HOME:-$HOME/.cargo}/bin/." "$dir/root/.cargo/bin/"

rm -rf "$dir/work"
git clone -q --no-local "$repo" "$dir/work/leveldb-table"
git -C "$dir/work/leveldb-table" checkout -q "$commit"
chmod -R a+rX "$dir/work"

env_in=(env -i HOME=/root PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  RUSTUP_HOME=/root/.rustup CARGO_HOME=/root/.cargo CI=true LANG=C.UTF-8
  SSL_CERT_FILE=/etc/ssl/network-ca.pem PIP_CERT=/etc/ssl/network-ca.pem
  REQUESTS_CA_BUNDLE=/etc/ssl/network-ca.pem CARGO_HTTP_CAINFO=/etc/ssl/network-ca.pem)

# 4. No rights to install: one line, exit 3, nothing run.
chroot "$dir" useradd -m tester 2>/dev/null || true
set +e
out=$(chroot "$dir" su tester -s /bin/bash -c 'cd /work/leveldb-table && bash scripts/test.sh' </dev/null 2>&1)
code=$?
set -e
say "-- as a user without rights: bash scripts/test.sh -> exit $code, $(printf '%s\n' "$out" | wc -l) line(s):"
say "$out"
if [ "$code" -ne 3 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
  say "FAIL: expected exit 3 and one line"
  exit 1
fi

# 5. The README's two commands, as root.
run() {
  local what=$1 cmd=$2 t0 code
  say "-- $what: $cmd"
  t0=$(date +%s)
  set +e
  chroot "$dir" "${env_in[@]}" bash -c "cd /work/leveldb-table && $cmd" </dev/null >>"$log" 2>&1
  code=$?
  set -e
  say "-- $what: exit $code after $(($(date +%s) - t0)) s"
  return "$code"
}
run "main job (first build)" "$main_cmd"
run "main job (built)" "$main_cmd"
run "test suite" "$test_cmd"
say "== all passed"
grep -E '^(== |-- |setup: |test result: |debootstrap)' "$log"
