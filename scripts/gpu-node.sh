#!/usr/bin/env bash
# The GPU acceptance runs (docs/gpu.md), on a node with a GPU, from a build
# made elsewhere (build/ carried, LD_LIBRARY_PATH set to it): the GPU tests
# at N = 2, 4, 8 and with A2A_NODE_SIZE = 2 and 3, memcheck on the whole GPU
# test, then `a2a bench --device cuda -c` at N = 2, 4, 8 without and with an
# MPS control daemon.  Logs into ${OUT:-results/gpu}.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/gpu}
mkdir -p "$out"
run() { local name=$1; shift; echo "== $name: $*"; "$@" > "$out/$name.log" 2>&1; echo "rc $?" | tee -a "$out/$name.log"; }
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to core)
for n in 2 4 8; do run "cuda_ipc.np$n" "${mpi[@]}" -np $n build/tests/test_cuda_ipc; done
run cuda_ipc.size2.np4 "${mpi[@]}" -np 4 -x A2A_NODE_SIZE=2 build/tests/test_cuda_ipc
run cuda_ipc.size3.np8 "${mpi[@]}" -np 8 -x A2A_NODE_SIZE=3 build/tests/test_cuda_ipc
run memcheck.np2 "${mpi[@]}" -np 2 compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/test_cuda_ipc
for mps in off on; do
  [ $mps = on ] && nvidia-cuda-mps-control -d
  for n in 2 4 8; do
    run "bench.mps-$mps.np$n" timeout 300 "${mpi[@]}" -np $n build/a2a bench --device cuda -c -i 20 -x 3 \
      --csv "$out/bench.mps-$mps.np$n.csv"
  done
  [ $mps = on ] && echo quit | nvidia-cuda-mps-control
done
grep -H "^rc" "$out"/*.log
