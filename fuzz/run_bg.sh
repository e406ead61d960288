#!/bin/sh
# Usage: fuzz/run_bg.sh TARGET SECONDS [extra libFuzzer flags]  (from the repository root)
# Runs one target in the background with the project's standard flags; log in fuzz/logs/.
t=$1; secs=$2; shift 2
mkdir -p fuzz/corpus/$t fuzz/logs
RUSTC_BOOTSTRAP=1 nohup cargo fuzz run -s none -a "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
  -runs=10000000 -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -timeout=30 -print_final_stats=1 "$@" > "fuzz/logs/$t.log" 2>&1 &
echo $! > "fuzz/logs/$t.pid"
