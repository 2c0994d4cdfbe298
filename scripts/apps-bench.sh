#!/usr/bin/env bash
# The applications against the MPI library's collectives, at P = 8 and 16 on
# this machine: a2a-fft (a uniform 64^3 FFT, a non-uniform 60x60x64 one and
# the TuNA paper's N1 and N2 shapes) and a2a-closure (random-large.txt).
# Each run compares native and a2a's algorithms in turn (--compare, medians
# of interleaved runs, ratios to native from the same run); the tables go to
# runs/apps/apps-*.txt.  Expects a built tree (build/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
mkdir -p runs/apps
fft=build/apps/a2a-fft closure=build/apps/a2a-closure
uniform=(--compare native --compare auto --compare linear --compare spread-out --compare scattered
         --compare pairwise --compare tra:radix=auto --compare tra:radix=2 --compare bruck-zero-rotation)
varying=(--compare native --compare auto --compare linear --compare spread-out --compare scattered
         --compare tuna:radix=auto --compare tuna:radix=2 --compare two-phase-bruck --compare padded-bruck
         --compare padded-alltoall)
for np in 8 16; do
  mpirun -np "$np" $fft -n 64,64,64 -i 3 --repeat 7 "${uniform[@]}" | tee "runs/apps/apps-fft-uniform-p$np.txt"
  mpirun -np "$np" $fft -n 60,60,64 -i 3 --repeat 7 "${varying[@]}" | tee "runs/apps/apps-fft-nonuniform-p$np.txt"
  for case in n1 n2; do
    mpirun -np "$np" $fft --case $case --transpose alltoallv -i 20 --repeat 7 "${varying[@]}" |
      tee "runs/apps/apps-fft-$case-p$np.txt"
  done
  mpirun -np "$np" $closure apps/data/random-large.txt --repeat 7 "${varying[@]}" |
    tee "runs/apps/apps-closure-p$np.txt"
done
