#!/usr/bin/env bash
# The main job: a2a against the MPI library's own collectives on this
# machine, side by side, ending with a verdict.
#  - A2A_Alltoall and A2A_Alltoallv (uniform and power-law workloads) at
#    P = 2 (a rank per core here) and P = 4, 8 (time-sliced on 2 cores),
#    16 B .. 8 MiB blocks at P = 2, .. 1 MiB above: MPI's own call, auto,
#    shm and spread-out, interleaved every
#    iteration, data validated (`a2a bench -c`);
#  - a2a-fft and a2a-closure at P = 2 and 4, auto against native (their
#    all-to-all time, medians of interleaved runs);
#  - where a CUDA device is found, `a2a bench --device cuda` (skipped here);
#  - the verdict (tools/verdict.py): per P and collective, auto/native and
#    the best a2a row/native (geometric mean and worst size), and where auto
#    was more than 5 % slower than the MPI library.
# Everything goes to $A2A_BENCH_OUT (default bench-out/, which git
# ignores): each run's table (.txt) and CSV, and plots (a2a plot).  The
# committed tables in docs/ change only when someone reruns
# scripts/parity.sh on purpose.  Compare ratios within one run: 2 shared
# cores make absolute times noisy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
out=${A2A_BENCH_OUT:-bench-out}
mkdir -p "$out"
a2a=build/a2a
echo "== a2a against $(mpirun --version | head -1) on $(nproc) cores; tables, CSVs and plots in $out/"
csvs=()
for np in 2 4 8; do
  max=$([ "$np" = 2 ] && echo 8388608 || echo 1048576)
  batch=$([ "$np" = 2 ] && echo 4 || echo 1)  # P = 2: 4 calls per sample, as call overheads are sub-microsecond
  for run in alltoall alltoallv:uniform alltoallv:power-law; do
    coll=${run%%:*}
    args=(--collective "$coll")
    [ "$run" != "$coll" ] && args+=(--workload "${run#*:}")

    name=${run/:/-}-p$np
    # 40 warm-up iterations: auto's trial (at most 40 calls) before the timing
    mpirun -np "$np" $a2a bench "${args[@]}" -m "16:$max" -i 20 -x 40 -b "$batch" -c \
      -a auto -a shm -a spread-out --csv "$out/$name.csv" >"$out/$name.txt"
    csvs+=("$out/$name.csv")
    echo "  $name: $(grep -m1 '# summary: auto/native' "$out/$name.txt" | sed 's/# summary: //')"
  done
done
apps=()
for np in 2 4; do
  mpirun -np "$np" build/apps/a2a-fft -n 64,64,64 -i 3 --repeat 7 --compare native --compare auto \
    >"$out/fft-p$np.txt"
  mpirun -np "$np" build/apps/a2a-closure apps/data/random-large.txt --repeat 7 --compare native --compare auto \
    >"$out/closure-p$np.txt"
  apps+=("$out/fft-p$np.txt" "$out/closure-p$np.txt")
done
# Device buffers, where there is a GPU (a2a bench --device cuda at P = 2, 4, 8 ranks sharing it).
if build/tests/test_cuda_ipc --probe 2>/dev/null; then
  for np in 2 4 8; do
    mpirun -np "$np" $a2a bench --device cuda -i 20 -x 3 -c --csv "$out/gpu-p$np.csv" >"$out/gpu-p$np.txt"
  done
  echo "  GPU: $out/gpu-p*.txt"
fi
$a2a plot --out "$out" "${csvs[@]}" >/dev/null
echo
/usr/bin/python3 tools/verdict.py "${csvs[@]}" --apps "${apps[@]}" | tee "$out/verdict.md"
