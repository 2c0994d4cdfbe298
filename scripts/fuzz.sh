#!/usr/bin/env bash
# Fuzzes every parser of outside input with libFuzzer (clang, AddressSanitizer
# and UndefinedBehaviorSanitizer): spec strings, node maps, tuning files,
# workload specs, A2A_COST_MODEL and a2a-closure's edge lists.
#   bash scripts/fuzz.sh [SECONDS per target, default 30]
#   bash scripts/fuzz.sh --runs N   (N inputs per target from seed 1: the same
#                                    inputs every time, as CI needs)
# Corpora start from fuzz/corpus/ and grow in build-fuzz/corpus/ across runs.
# Prints each target's executions; exits non-zero on any crash, leak, hang
# (-timeout=5 s per input) or sanitizer report, leaving the input in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --runs ]; then
  limit=(-runs="$2" -seed=1)
else
  limit=(-max_total_time="${1:-30}")
fi
# The library and the fuzz targets only (the benchmarks' smoke test runs in
# the other builds); line tables (-g1) for the reports.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA2A_FUZZ=ON -DA2A_CUDA=OFF \
  -DA2A_BUILD_TESTS=OFF -DA2A_BUILD_TOOLS=OFF -DA2A_BUILD_APPS=OFF -DA2A_BUILD_BENCHMARKS=OFF -DBUILD_SHARED_LIBS=OFF \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build-fuzz -j "$(nproc)"
# One target per core at a time (each is one thread; with --runs the same
# inputs whatever runs beside it); lines printed in target order.
fuzz_target() {  # TARGET: its run, its line or its failure in build-fuzz/fuzz_TARGET.line
  local t=$1 corpus=build-fuzz/corpus/$1 log=build-fuzz/fuzz_$1.log line=build-fuzz/fuzz_$1.line
  mkdir -p "$corpus"
  cp -n fuzz/corpus/$t/* "$corpus"/ 2>/dev/null || true
  if (cd build-fuzz && ./fuzz/fuzz_$t "corpus/$t" "${limit[@]}" -timeout=5 -rss_limit_mb=2048 \
        -print_final_stats=1 >"fuzz_$t.log" 2>&1); then
    printf '%-12s %12s %8s\n' "$t" "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" \
      "$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")" >"$line"
  else
    { echo "fuzz_$t FAILED (see $log):"; tail -30 "$log"; } >"$line"
    return 1
  fi
}
targets=(spec node_map tuning workload cost_model graph)
rm -f build-fuzz/fuzz_*.line
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_target "$t" &
done
wait
status=0
printf '%-12s %12s %8s\n' target executions seconds
for t in "${targets[@]}"; do
  cat "build-fuzz/fuzz_$t.line"
  grep -q "^fuzz_$t FAILED" "build-fuzz/fuzz_$t.line" && status=1
done
exit $status
