#!/usr/bin/env bash
# The main job: builds a2a and benchmarks every algorithm against the MPI
# library's own MPI_Alltoall at P = 4, 8 and 16 on this machine, printing the
# tables and writing results/bench-p{4,8,16}.csv and results/bench.png; then
# A2A_Alltoallv against MPI_Alltoallv at P = 8 (results/bench-v-p8.csv); then
# the node-aware algorithms at P = 16 on virtual nodes (results/bench-*p16-a2a-node-*.csv).
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
# Node-aware algorithms against native and their flat counterparts at P = 16
# on virtual nodes: four nodes of 4, and unequal nodes of 2, 3, 5, 6.
for layout in "A2A_NODE_SIZE=4" "A2A_NODE_SIZES=2,3,5,6"; do
  name=$(echo "$layout" | tr -c 'A-Za-z0-9\n' '-' | tr 'A-Z' 'a-z')
  env "$layout" mpirun -x "${layout%%=*}" -np 16 build/a2a bench -m 16:4096 -i 50 -x 5 -c --error-check local \
    -a tra2 -a tra:radix=auto -a clustered -a factor -a spread-out --csv "results/bench-p16-$name.csv" "$@"
  env "$layout" mpirun -x "${layout%%=*}" -np 16 build/a2a bench --collective alltoallv --workload uniform \
    -m 16:4096 -i 50 -x 5 -c --error-check local -a tuna-hier:variant=coalesced -a tuna-hier:variant=staggered \
    -a tuna:radix=auto -a clustered -a factor -a spread-out --csv "results/bench-v-p16-$name.csv" "$@"
done
# A2A_Alltoallv at P = 8, uniform workload with S = 16 B .. 16 KiB per block.
mpirun -np 8 build/a2a bench --collective alltoallv --workload uniform -m 16:16384 -i 100 -x 10 -c \
  --error-check local --csv results/bench-v-p8.csv "$@"
# Debian's python3 (with python3-matplotlib), not whichever python3 is first on PATH.
/usr/bin/python3 tools/plot_bench.py results/bench.png results/bench-p4.csv results/bench-p8.csv results/bench-p16.csv results/bench-v-p8.csv
