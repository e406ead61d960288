# Sourced by scripts/bench_db_open_scan.sh and scripts/bench_bulk_load.sh: builds the two
# sides of the database benchmarks into "$work" (set by the caller, with "$root" and log()):
# the C++ LevelDB tool (tools/db_bench_cpp, g++ -O2 against Debian's libleveldb-dev) and
# examples/db_bench.rs (cargo --release). Sets $cpp and $ours to the two programs.
log "building (g++ -O2; cargo build --release --example db_bench)"
"${CXX:-g++}" -O2 -std=c++17 -Wall -Wextra -o "$work/leveldb_db_bench" \
  "$root/tools/db_bench_cpp/leveldb_db_bench.cc" -lleveldb
(cd "$root" && cargo build --release --quiet --example db_bench)
target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
ours="$target_dir/release/examples/db_bench"
cpp="$work/leveldb_db_bench"
