#!/usr/bin/env bash
# A bounded run of every fuzz target (SECONDS_PER_TARGET each, default 15: about a minute in
# all), seeded from the conformance cases. Used by .ci/run; exits non-zero on any finding.
# Works on the stable toolchain: cargo-fuzz's flags need RUSTC_BOOTSTRAP there.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECONDS_PER_TARGET:-15}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none
python3 fuzz/seed_corpus.py >/dev/null
mkdir -p fuzz/corpus/reply_roundtrip
for t in parse_request reply_roundtrip dispatch lua_sandbox; do
  echo "-- $t (${SECS}s)"
  cargo fuzz run -s none "$t" "fuzz/corpus/$t" -- -max_total_time="$SECS" -rss_limit_mb=3072 \
    -timeout=30 -print_final_stats=1 2>&1 | grep -E "^stat::number_of_executed_units|^Done|panicked|ERROR" || true
  # Any one kind of finding fails the run (ls of several globs fails when one is missing).
  if [ -n "$(find "fuzz/artifacts/$t" -maxdepth 1 \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \) 2>/dev/null)" ]; then
    echo "fuzz target $t found a failing input (fuzz/artifacts/$t)"; exit 1
  fi
done
