#!/usr/bin/env bash
# The main job: builds a2a and benchmarks every algorithm against the MPI
# library's own MPI_Alltoall at P = 4, 8 and 16 on this machine, printing the
# tables and writing results/bench-p{4,8,16}.csv and results/bench.png; then
# A2A_Alltoallv against MPI_Alltoallv at P = 8 (results/bench-v-p8.csv).
# a2a rows run with A2A_ERROR_CHECK=local (no per-call agreement, as MPI);
# the agree/auto row prices the default mode.  Extra arguments go to
# `a2a bench` (e.g. -m 16:1024 -i 100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
mkdir -p results
for np in 4 8 16; do
  mpirun -np "$np" build/a2a bench -m 16:65536 -i 100 -x 10 -c --error-check local --csv "results/bench-p$np.csv" "$@"
done
# Debian's python3 (with python3-matplotlib), not whichever python3 is first on PATH.
# A2A_Alltoallv at P = 8, uniform workload with S = 16 B .. 16 KiB per block.
mpirun -np 8 build/a2a bench --collective alltoallv --workload uniform -m 16:16384 -i 100 -x 10 -c \
  --error-check local --csv results/bench-v-p8.csv "$@"
/usr/bin/python3 tools/plot_bench.py results/bench.png results/bench-p4.csv results/bench-p8.csv results/bench-p16.csv results/bench-v-p8.csv
