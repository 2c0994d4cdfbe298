#!/usr/bin/env bash
# The main job, on this machine: tune, then bench and plot.
#  1. `a2a tune` at P = 4, 8, 16 writes results/tuning.json (alltoall, and
#     alltoallv on uniform and power-law workloads, 16 B .. 256 KiB).
#  2. `a2a bench`, every algorithm against MPI_Alltoall at P = 4, 8, 16
#     (results/bench-p*.csv), A2A_Alltoallv against MPI_Alltoallv at P = 8,
#     the node-aware algorithms at P = 16 on virtual nodes, and radix sweeps
#     (results/sweep-*.csv); auto rows use the tuning file.
#  3. auto against the best fixed algorithm, P = 4, 8, 16, 16 B .. 256 KiB,
#     uniform and non-uniform, once with the tuning file and once with the
#     cost model alone, and alltoallv once more in the agree error mode
#     (results/auto-vs-best.md).
#  4. `a2a plot` draws docs/*.png from those CSVs.
#  5. The applications (scripts/apps-bench.sh): a2a-fft and a2a-closure at
#     P = 8 and 16, native against a2a's algorithms (results/apps-*.txt).
#  6. Where a CUDA device is found: `a2a bench --device cuda` at P = 2, 4, 8
#     ranks sharing the GPU(s), alltoall 16 B .. 64 MiB and alltoallv
#     (results/gpu-*.csv, tables in results/gpu-*.txt); skipped otherwise.
# a2a rows run in the library's default error mode (local, as MPI); the
# agree/auto row prices the agree mode.  Compare ratios within one run: 2
# shared cores make absolute times noisy.  The summary lines of every run
# (auto and the best a2a row against native) come last.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
mkdir -p results docs
a2a=build/a2a

# 1. Tune.
rm -f results/tuning.json
for np in 4 8 16; do
  mpirun -np "$np" $a2a tune -m 16:262144 --merge -o results/tuning.json
done
export A2A_TUNING_FILE=$PWD/results/tuning.json
run() { mpirun -x A2A_TUNING_FILE "$@"; }

# 2. Bench.
for np in 4 8 16; do
  run -np "$np" $a2a bench -m 16:65536 -i 100 -x 10 -c --csv "results/bench-p$np.csv"
  run -np "$np" $a2a bench --sweep-radix -m 16:65536 -i 30 -x 3 -c --csv "results/sweep-p$np.csv"
done
run -np 8 $a2a bench --collective alltoallv --workload uniform -m 16:16384 -i 100 -x 10 -c \
  --csv results/bench-v-p8.csv
for np in 4 8 16; do
  run -np "$np" $a2a bench --collective alltoallv --workload uniform --sweep-radix -m 16:16384 -i 30 -x 3 -c \
    --csv "results/sweep-v-p$np.csv"
done
# Node-aware algorithms on virtual nodes: four nodes of 4, and unequal nodes of 2, 3, 5, 6.
for layout in "A2A_NODE_SIZE=4" "A2A_NODE_SIZES=2,3,5,6"; do
  name=$(echo "$layout" | tr -c 'A-Za-z0-9\n' '-' | tr 'A-Z' 'a-z')
  env "$layout" mpirun -x "${layout%%=*}" -np 16 $a2a bench -m 16:4096 -i 50 -x 5 -c \
    -a tra2 -a tra:radix=auto -a clustered -a factor -a spread-out --csv "results/bench-p16-$name.csv"
  env "$layout" mpirun -x "${layout%%=*}" -np 16 $a2a bench --collective alltoallv --workload uniform \
    -m 16:4096 -i 50 -x 5 -c -a tuna-hier:variant=coalesced -a tuna-hier:variant=staggered \
    -a tuna:radix=auto -a clustered -a factor -a spread-out --csv "results/bench-v-p16-$name.csv"
done

# 3. auto against the best fixed choice (same run), tuned and model-only.
fixed=(-a linear -a spread-out -a scattered -a pairwise -a factor -a auto)
for np in 4 8 16; do
  for mode in tuned model; do
    env_run=(run); [ $mode = model ] && env_run=(env -u A2A_TUNING_FILE mpirun)
    "${env_run[@]}" -np "$np" $a2a bench --sweep-radix "${fixed[@]}" -a bruck-zero-rotation -m 16:262144 -i 20 -x 3 \
      -c --csv "results/avb-$mode-p$np.csv"
    for w in uniform power-law; do
      "${env_run[@]}" -np "$np" $a2a bench --collective alltoallv --workload $w --sweep-radix "${fixed[@]}" \
        -a padded-bruck -a two-phase-bruck -m 16:262144 -i 20 -x 3 -c \
        --csv "results/avb-$mode-v-$w-p$np.csv"
    done
  done
done
# Alltoallv again with every row agreeing on errors (the agree mode): auto's
# global mean/max allreduce is then the agreement one, shared by all rows.
for np in 4 8 16; do
  for w in uniform power-law; do
    run -np "$np" $a2a bench --collective alltoallv --workload $w --sweep-radix "${fixed[@]}" \
      -a padded-bruck -a two-phase-bruck -m 16:262144 -i 20 -x 3 -c --error-check agree \
      --csv "results/avb-agree-v-$w-p$np.csv"
  done
done
/usr/bin/python3 tools/auto_vs_best.py tuned="$(ls results/avb-tuned-*.csv | paste -sd,)" \
  model="$(ls results/avb-model-*.csv | paste -sd,)" tuned-agree="$(ls results/avb-agree-*.csv | paste -sd,)" \
  | tee results/auto-vs-best.md

# 4. Plot.
$a2a plot --out docs results/bench-p4.csv results/bench-p8.csv results/bench-p16.csv results/bench-v-p8.csv \
  results/sweep-p*.csv results/sweep-v-p*.csv
/usr/bin/python3 tools/plot_bench.py results/bench.png results/bench-p4.csv results/bench-p8.csv \
  results/bench-p16.csv results/bench-v-p8.csv

# 5. The applications.
bash scripts/apps-bench.sh

# 6. Device buffers, where there is a GPU.
if build/tests/test_cuda_ipc --probe; then
  for np in 2 4 8; do
    mpirun -np "$np" $a2a bench --device cuda -i 20 -x 3 -c --csv "results/gpu-p$np.csv" | tee "results/gpu-p$np.txt"
    mpirun -np "$np" $a2a bench --device cuda --collective alltoallv --workload uniform -m 16:16777216 -i 20 -x 3 -c \
      --csv "results/gpu-v-p$np.csv" | tee "results/gpu-v-p$np.txt"
  done
else
  echo "no CUDA device here: the GPU bench (step 6) is skipped"
fi

# The summary lines of every bench run: auto and the best a2a row over native.
echo "== summary (auto and the best a2a row over native, per run)"
for f in results/bench-p*.csv results/bench-v-p*.csv results/avb-*.csv; do
  /usr/bin/python3 tools/summarize_bench.py --summary "$f"
done
