#!/usr/bin/env bash
# What only a real node can show, from a build made elsewhere and carried
# (A2A_BUILD=dir, LD_LIBRARY_PATH holding dir's liba2a and what the node
# lacks): `bash scripts/node.sh [gpu] [cpu | auto trial]`, gpu and cpu by
# default.
#   gpu  the GPU tests at N = 2, 4, 8 and A2A_NODE_SIZE = 2, 3, memcheck on
#        the whole GPU test, `a2a bench --device cuda -c` at N = 2 and 8
#        without and at 8 with an MPS control daemon (docs/gpu.md)
#   cpu  auto, then trial, one rank per core:
#   auto   which single copy Open MPI uses, the auto tests at P = 16 (also
#          a wrong model overturned, a slow pick dropped)
#   trial  issue 27's trial at P = 8 and 16 (NODE_TRIAL_NP) with single copy and without
#          (scripts/parity.sh trial, blocks to 2 MiB), a2a-fft auto against
#          native at P = 16 (docs/results.md)
# On an H200 node with 16 cores (2026-11-26) gpu took about 100 s, auto 20 s,
# trial 60 s.
# Logs into ${OUT:-runs/node}; `python3 tools/parity_tables.py --node DIR`
# makes the trial table.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
out=${OUT:-runs/node}
build=${A2A_BUILD:-build}
mkdir -p "$out"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(gpu cpu)
# run NAME LIMIT CMD...: a run past LIMIT seconds leaves its ranks' stacks
# (cuda-gdb, the debugger the node has) in its log, then is stopped.
run() {
  local name=$1 limit=$2; shift 2
  echo "== $name: $*"
  "$@" >"$out/$name.log" 2>&1 &
  local job=$! t=0
  while kill -0 $job 2>/dev/null && [ $t -lt "$limit" ]; do sleep 1; t=$((t + 1)); done
  if kill -0 $job 2>/dev/null; then
    for p in $(pgrep -f "$build/"); do
      [ "$(cat /proc/$p/comm 2>/dev/null)" = mpirun ] && continue
      echo "== stacks of $p ($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null))" >>"$out/$name.log"
      timeout 30 cuda-gdb -p $p -batch -ex "thread apply all bt" >>"$out/$name.log" 2>&1
    done
    kill $job; sleep 2; pkill -9 -f "$build/"
  fi
  wait $job
  echo "rc $? after ${t}s" | tee -a "$out/$name.log"
}
mpi=(mpirun --bind-to core)

gpu() {
  for n in 2 4 8; do run "cuda_ipc.np$n" 60 "${mpi[@]}" -np $n $build/tests/test_cuda_ipc; done
  run cuda_ipc.size2.np4 60 "${mpi[@]}" -np 4 -x A2A_NODE_SIZE=2 $build/tests/test_cuda_ipc
  run cuda_ipc.size3.np8 60 "${mpi[@]}" -np 8 -x A2A_NODE_SIZE=3 $build/tests/test_cuda_ipc
  run memcheck.np2 150 "${mpi[@]}" -np 2 compute-sanitizer --tool memcheck --error-exitcode 1 \
    $build/tests/test_cuda_ipc
  for mps in off on; do
    nps="2 8"
    [ $mps = on ] && { nvidia-cuda-mps-control -d; nps=8; }
    for n in $nps; do
      run "bench.mps-$mps.np$n" 60 "${mpi[@]}" -np $n $build/a2a bench --device cuda -c -i 20 -x 3 \
        --csv "$out/bench.mps-$mps.np$n.csv"
    done
    [ $mps = on ] && echo quit | nvidia-cuda-mps-control
  done
}

auto() {
  echo "ptrace_scope $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)" | tee "$out/single-copy.log"
  ompi_info --param btl vader --level 9 2>&1 | grep -i single_copy_mechanism | tee -a "$out/single-copy.log"
  run auto.np16 120 "${mpi[@]}" -np 16 $build/tests/test_auto
  # ctest's mpi.auto.wrong_model and mpi.auto.drift at P = 16: a model made
  # wrong on purpose, a pick made slow on purpose.
  run auto.wrong_model.np16 120 "${mpi[@]}" -np 16 -x A2A_TEST_WRONG_MODEL=1 -x A2A_MAX_MESSAGE_BYTES=64 \
    -x A2A_COST_MODEL=alpha_intra=1e-7,beta_intra=1e-12,alpha_inter=1e-7,beta_inter=1e-12,overhead=1e-8,copy=1e-13,persistent=0.01,flag=0.01,flag_round=0.01,round=1e-3 \
    $build/tests/test_auto --gtest_filter=Auto.TrialOverturnsAWrongModel
  run auto.drift.np16 120 "${mpi[@]}" -np 16 -x A2A_TEST_SLOWDOWN=10 \
    -x A2A_COST_MODEL=alpha_intra=1e-6,beta_intra=1e-10,alpha_inter=1e-6,beta_inter=1e-10,overhead=1e-7,copy=1e-11,flag=1e-8,flag_round=1e-8 \
    $build/tests/test_auto --gtest_filter=Auto.DriftRunsTheTrialAgain
}

trial() {
  PARITY_OUT=$out A2A_BUILD=$build TRIAL_NP="${NODE_TRIAL_NP:-8 16}" TRIAL_MAX=2097152 \
    TRIAL_RUNS="node-cma:mpirun --bind-to core --mca btl_vader_single_copy_mechanism cma;node-none:mpirun --bind-to core --mca btl_vader_single_copy_mechanism none" \
    bash scripts/parity.sh trial 2>&1 | tee "$out/trial.log"
  run fft.np16 120 "${mpi[@]}" -np 16 $build/apps/a2a-fft -n 64,64,64 -i 3 --repeat 9 --compare native --compare auto
}

cpu() { auto; trial; }

for phase in "${phases[@]}"; do "$phase"; done
grep -H "^rc" "$out"/*.log
