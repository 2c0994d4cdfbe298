#!/usr/bin/env bash
# a2a against the MPI library it wraps, on this machine (docs/results.md):
#   overhead  the call path at P = 1 and 2 (no oversubscription), 16 B .. 1 KiB:
#             MPI, a2a's native, a started plan, spread-out and auto, in the
#             default (local) and the agree mode; -b 100 calls per sample
#   twins     each a2a algorithm against the library's own forced to the same
#             algorithm (a2a bench --twins) at P = 2, 4, 8, Open MPI and MPICH
#   tune      a2a tune at P = 2, 4, 8, 16 into runs/parity/tuning.json
#   avb       auto against every fixed row of the same run at P = 2, 4, 8, 16,
#             alltoall and alltoallv (uniform, power-law), 16 B .. 256 KiB,
#             with the tuning file and with the cost model alone
#   apps      a2a-fft and a2a-closure (auto against native, interleaved), and
#             hpcc and the FFTW round trip under the shim (auto) against the
#             MPI library alone, both timed by tests' mpi_timer, at P = 2, 4, 8, 16
#             (PARITY_NP: some of them; phases own_apps and shim_apps run either half)
#   shm       the shared-memory exchange against the library at P = 2, 4, 8,
#             alltoall and alltoallv (uniform), 16 B .. 8 MiB, with auto; and
#             alltoall 16 B .. 1 KiB back to back (-b 100)
#   intra     tra2, tuna-hier and clustered with intra=shm against intra=p2p
#             on virtual nodes of 4 (A2A_NODE_SIZE=4) at P = 8 and 16
#   trial     auto after its trial against MPI_Alltoall(v) at P = 2, 4, 8,
#             alltoall and alltoallv (uniform, power-law), 16 B .. 8 MiB,
#             Open MPI with single copy (CMA) and without, and MPICH at
#             P = 2 (-a shm -a auto, -b 4 at P = 2 as issue 27 measured,
#             40 warm-up iterations, alltoallv's small sizes 1064 calls:
#             the trial's calls are not timed);
#             and every one of auto's first 100 calls per size (-x 0,
#             means; 5 processes at P = 2), its trial included
#   shim_nb   the shim's MPI_Ialltoall + MPI_Wait against its blocking call, and
#             its overlap against the library's own MPI_Ialltoall (libNBC),
#             MPI_Test every 10 us of compute (a2a bench --nonblocking --shim)
#             for tra, shm and auto at P = 2 and 4, 16 B .. 1 MiB, with
#             single copy (CMA) and without
#   overhead_vs  the overhead phase's runs alternating with the same runs on
#             another build's library (A2A_BASE=dir holding liba2a.so, default
#             /tmp/base/build), this build's bench for both, 3 each, for
#             alltoall and alltoallv: what a change adds to the library's
#             call path, in one run
#   first_vs  auto's first 100 calls per size (as in trial) at P = 2, Open MPI
#             with single copy and without, 7 processes of each library
#             alternating (A2A_BASE as in overhead_vs): what a change does to
#             the first calls, in one run
# `bash scripts/parity.sh [PHASE...]` (all phases by default) writes
# runs/parity/; `python3 tools/parity_tables.py --dir runs/parity` writes the tables' CSVs.
# Expects build/ (and build-mpich/ for the MPICH twins) built.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
out=${PARITY_OUT:-runs/parity}
build=${A2A_BUILD:-build}  # a build carried elsewhere (scripts/node.sh)
mkdir -p "$out"
a2a=$build/a2a
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(overhead twins tune avb apps shm intra)

overhead() {
  for np in 1 2; do
    mpirun -np "$np" $a2a bench -m 16:1024 -b 100 -i 300 -x 20 -a a2a/native -a plan/native -a spread-out -a auto \
      -a agree/native -a agree/spread-out -a agree/auto --csv "$out/overhead-p$np.csv" | tee "$out/overhead-p$np.txt"
  done
}

twins() {
  for np in 2 4 8; do
    batch=1; [ "$np" -eq 2 ] && batch=10
    mpirun -np "$np" $a2a bench --twins -m 16:65536 -b $batch -i 200 -x 10 -c --csv "$out/twins-ompi-p$np.csv" |
      tee "$out/twins-ompi-p$np.txt"
    if [ -x build-mpich/a2a ]; then
      # Oversubscribed MPICH takes a 4 ms scheduling slice per call: fewer iterations.
      iters=100; [ "$np" -gt 2 ] && iters=15
      mpiexec.mpich -n "$np" build-mpich/a2a bench --twins -m 16:65536 -b $batch -i $iters -x 2 -c \
        --csv "$out/twins-mpich-p$np.csv" | tee "$out/twins-mpich-p$np.txt"
    fi
  done
}

tune() {
  rm -f "$out/tuning.json"
  for np in 2 4 8 16; do
    mpirun -np "$np" $a2a tune -m 16:262144 --step 2 -i 60 -x 3 -q --merge -o "$out/tuning.json" |
      tee "$out/tune-p$np.txt"
  done
}

shim_nb() {
  for np in 2 4; do
    for spec in tra shm auto; do
      for copy in cma none; do
        A2A_ALLTOALL=$spec mpirun -np "$np" --mca btl_vader_single_copy_mechanism $copy \
          $a2a bench --nonblocking --shim -a "$spec" -m 16:1048576 -i 50 -x 5 -c --csv "$out/shim-nb-p$np-$spec-$copy.csv" |
          tee "$out/shim-nb-p$np-$spec-$copy.txt"
      done
    done
  done
}

avb() {
  fixed=(-a linear -a spread-out -a scattered -a pairwise -a factor -a shm -a auto)
  for np in 2 4 8 16; do
    for mode in tuned model; do
      envs=(env -u A2A_TUNING_FILE)
      [ $mode = tuned ] && envs=(env A2A_TUNING_FILE="$PWD/$out/tuning.json")
      "${envs[@]}" mpirun -np "$np" $a2a bench --sweep-radix "${fixed[@]}" -a bruck-zero-rotation -a bruck-modified \
        -m 16:262144 -i 60 -x 5 -c --csv "$out/avb-$mode-p$np.csv" > "$out/avb-$mode-p$np.txt"
      tail -4 "$out/avb-$mode-p$np.txt"
      for w in uniform power-law; do
        "${envs[@]}" mpirun -np "$np" $a2a bench --collective alltoallv --workload $w --sweep-radix "${fixed[@]}" \
          -a padded-bruck -a two-phase-bruck -m 16:262144 -i 60 -x 5 -c --csv "$out/avb-$mode-v-$w-p$np.csv" \
          > "$out/avb-$mode-v-$w-p$np.txt"
        tail -4 "$out/avb-$mode-v-$w-p$np.txt"
      done
    done
  done
}

# The all-to-all seconds rank 0 reports: the shim's summary lines, or mpi_timer's.
a2a_seconds() { awk '/^a2a shim: communicator /{for (i = 1; i < NF; ++i) if ($(i + 1) == "s;") s += $i} END {printf "%.6f\n", s}' "$1"; }

apps() { own_apps; shim_apps; }

shm() {
  for np in 2 4 8; do
    batch=1; [ "$np" -eq 2 ] && batch=10
    for coll in alltoall alltoallv; do
      mpirun -np "$np" $a2a bench --collective $coll -m 16:8388608 -b $batch -i 50 -x 5 -c -a shm -a auto \
        --csv "$out/shm-$coll-p$np.csv" | tee "$out/shm-$coll-p$np.txt"
    done
    # Back to back: 100 calls per sample, no barrier between them (the steady
    # state of repeated exchanges; a barrier's exit skew is in every row above).
    mpirun -np "$np" $a2a bench -m 16:1024 -b 100 -i 30 -x 3 -c -a shm -a auto \
      --csv "$out/steady-alltoall-p$np.csv" | tee "$out/steady-alltoall-p$np.txt"
  done
}

own_apps() {
  # Many runs: one run's all-to-all time (a closure's 62 shuffles, about
  # 1 ms at P = 2) moves 10-20 % between runs, and 9 runs' medians by 10 %;
  # one process's median of 31-51 runs still by 5-20 % from the next: at
  # P = 2 five processes (their median ratio), and native twice (the
  # spread of two identical set-ups).
  local np k procs
  for np in ${PARITY_NP:-2 4 8 16}; do
    procs=1; [ "$np" -eq 2 ] && procs=5
    : >"$out/apps-fft-uniform-p$np.txt"; : >"$out/apps-fft-nonuniform-p$np.txt"; : >"$out/apps-closure-p$np.txt"
    for k in $(seq $procs); do
      mpirun -np "$np" $build/apps/a2a-fft -n 64,64,64 -i 3 --repeat 31 --compare native --compare auto --compare native |
        tee -a "$out/apps-fft-uniform-p$np.txt"
      mpirun -np "$np" $build/apps/a2a-fft -n 60,60,64 -i 3 --repeat 31 --compare native --compare auto --compare native |
        tee -a "$out/apps-fft-nonuniform-p$np.txt"
      mpirun -np "$np" $build/apps/a2a-closure apps/data/random-large.txt --repeat 51 --compare native --compare auto \
        --compare native | tee -a "$out/apps-closure-p$np.txt"
    done
  done
}

shim_apps() {
  for np in ${PARITY_NP:-2 4 8 16}; do
    # hpcc and the FFTW round trip, unchanged: the shim with auto against
    # the library alone, alternating, 7 runs each (FFTW's four calls, each
    # the first on its communicator, vary most: 41); fftw-x20: its plans
    # reused for 20 more round trips (FFTW_ROUNDTRIP_REPEAT), 15 runs; rank
    # 0's all-to-all time.  The FFTW runs add a control, the library alone
    # again in the same rotation: how far two identical set-ups differ.
    for app in ${PARITY_APPS:-hpcc fftw fftw-x20}; do  # PARITY_APPS, PARITY_NP: a part again
      runs=7 repeat=0
      [ $app = fftw ] && runs=41
      [ $app = fftw-x20 ] && runs=15 repeat=20
      cmd=("$PWD/build/tests/fftw_roundtrip")
      [ $app = hpcc ] && cmd=(hpcc)
      : > "$out/apps-$app-p$np.tsv"
      for run in $(seq $runs); do
        kinds="native auto"
        [ $app != hpcc ] && kinds="native auto control"
        for kind in $kinds; do
          # The same outer timer for both; with the shim behind it (A2A_VERBOSE
          # off, so nothing of the shim's reporting is timed).
          lib=$PWD/build/tests/libmpi_timer.so
          [ $kind = auto ] && lib=$lib:$PWD/build/liba2a_pmpi.so
          dir=$(mktemp -d)
          cp tests/apps/hpccinf.txt "$dir/"
          (cd "$dir" && FFTW_ROUNDTRIP_REPEAT=$repeat mpirun -np "$np" -x LD_PRELOAD="$lib" -x FFTW_ROUNDTRIP_REPEAT "${cmd[@]}" \
            > run.log 2>&1) || { echo "$app $kind failed"; cat "$dir/run.log"; exit 1; }
          printf '%s\t%s\t%s\n' "$kind" "$run" "$(a2a_seconds "$dir/run.log")" >> "$out/apps-$app-p$np.tsv"
          rm -rf "$dir"
        done
      done
      cat "$out/apps-$app-p$np.tsv"
    done
  done
}

intra() {
  for np in 8 16; do
    A2A_NODE_SIZE=4 mpirun -np "$np" -x A2A_NODE_SIZE $a2a bench -m 16:65536 -i 40 -x 5 -c \
      -a tra2 -a tra2:intra=shm -a clustered -a clustered:intra=shm \
      --csv "$out/intra-alltoall-p$np.csv" | tee "$out/intra-alltoall-p$np.txt"
    A2A_NODE_SIZE=4 mpirun -np "$np" -x A2A_NODE_SIZE $a2a bench --collective alltoallv -m 16:65536 -i 40 -x 5 -c \
      -a tuna-hier -a tuna-hier:intra=shm -a tuna-hier:variant=staggered -a tuna-hier:variant=staggered,intra=shm \
      -a clustered -a clustered:intra=shm \
      --csv "$out/intra-alltoallv-p$np.csv" | tee "$out/intra-alltoallv-p$np.txt"
  done
}

# auto's first 100 calls per size (-x 0) into $1.csv and $1.txt: the rest
# of the arguments launch the a2a command (the caller's `args` chose the
# collective and workload).
first_calls() {
  local to=$1
  shift
  "$@" bench "${args[@]}" -m 16:${max:-8388608} -i 100 -x 0 -b 1 -a auto --csv "$to.csv" >"$to.txt"
}

# auto after its trial and over its first 100 calls.  Sizes from 512 KiB
# take fewer iterations (a call at P = 8, 8 MiB moves 512 MiB).
trial() {
  # TRIAL_RUNS ("name:launcher;..."), TRIAL_NP, TRIAL_MAX: another machine's set (scripts/node.sh).
  local runs=("ompi-cma:mpirun --mca btl_vader_single_copy_mechanism cma"
              "ompi-none:mpirun --mca btl_vader_single_copy_mechanism none")
  [ -x build-mpich/a2a ] && runs+=("mpich:mpiexec.mpich")
  [ -n "${TRIAL_RUNS:-}" ] && IFS=';' read -r -a runs <<<"$TRIAL_RUNS"
  local max=${TRIAL_MAX:-8388608}
  for run in "${runs[@]}"; do
    lib=${run%%:*} launch=(${run#*:})
    bin=$a2a; [ $lib = mpich ] && bin=build-mpich/a2a
    nps=${TRIAL_NP:-2 4 8}; [ $lib = mpich ] && nps=2  # MPICH polls: time-sliced ranks crawl (README)
    for np in $nps; do
      # Calls back to back per sample, as the trial times them and programs
      # make them (a call after another row's inherits its exit skew and
      # caches): 4 at P = 2 (as issue 27 measured), a pair above.
      batch=2; [ "$np" -eq 2 ] && batch=4
      for w in alltoall uniform power-law; do
        args=(--collective alltoallv --workload $w); [ $w = alltoall ] && args=()
        name=$lib-$w-p$np
        # After the trial: 40 warm-up iterations (a trial takes at most 40
        # calls).  alltoallv's class of every size notices moved sizes at
        # its next agreement on them, up to 1024 calls later (kFirstCheck;
        # 100-310 here at small sizes), and tries then: warm-ups of 1064
        # calls, or its trial fell in the timed samples (at P = 2, in 2 of
        # 3 runs seen with A2A_VERBOSE=1).  Time-sliced ranks (P > 2) vary
        # more per sample: with 30 small and 12 large samples a cell of auto
        # running native itself came out 1.10-1.13 of the library's in some
        # runs; at P = 2 with 30 small samples, 1.108 (alltoallv, 256 KiB).
        small_iters=90
        small_warm=40; [ $w != alltoall ] && small_warm=$(((1024 + 40 + batch - 1) / batch))
        "${launch[@]}" -n "$np" $bin bench "${args[@]}" -m 16:262144 -i $small_iters -x $small_warm -b $batch -c -a shm -a auto \
          --csv "$out/trial-$name-small.csv" >"$out/trial-$name-small.txt"
        # 40 samples at P = 2, where 12 left single sizes 10-30 % apart.
        large_iters=40
        "${launch[@]}" -n "$np" $bin bench "${args[@]}" -m 524288:$max -i $large_iters -x 40 -b $batch -c -a shm -a auto \
          --csv "$out/trial-$name-large.csv" >"$out/trial-$name-large.txt"
        # The first 100 calls per size, in fresh processes (5 at P = 2, 1
        # above), as a program meets them (world prepared first, as the
        # shim's MPI_Init does); means over the calls, so one descheduled
        # call weighs: the table takes the median over the processes.
        local k runs_first=1
        [ "$np" -eq 2 ] && runs_first=5
        for k in $(seq $runs_first); do
          first_calls "$out/first-$name-$k" "${launch[@]}" -n "$np" $bin
        done
        echo "$name: $(grep -h '# summary: auto/native geo' "$out/trial-$name-small.txt" "$out/trial-$name-large.txt" | tr '\n' ' ')"
      done
    done
  done
}

overhead_vs() {
  local base=${A2A_BASE:-/tmp/base/build}
  for np in 1 2; do
    for k in 1 2 3; do
      for which in base new; do
        # This build's bench on either library (LD_LIBRARY_PATH before its
        # RUNPATH): the library's call path compared, not the benches'.
        # alltoall (overhead-vs-*) and alltoallv of equal blocks (overheadv-vs-*).
        lib=$build; [ $which = base ] && lib=$base
        for coll in alltoall alltoallv; do
          name=overhead; [ $coll = alltoallv ] && name=overheadv
          LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} mpirun -x LD_LIBRARY_PATH -np "$np" $a2a bench --collective $coll \
            -m 16:1024 -b 100 -i 300 -x 20 -a a2a/native -a plan/native -a spread-out -a auto \
            --csv "$out/$name-vs-$which-p$np-$k.csv" > "$out/$name-vs-$which-p$np-$k.txt"
        done
      done
    done
  done
}

first_vs() {
  local base=${A2A_BASE:-/tmp/base/build} k which lib mech w
  for k in $(seq 7); do
    for mech in cma none; do
      for w in alltoall uniform power-law; do
        args=(--collective alltoallv --workload $w); [ $w = alltoall ] && args=()
        for which in base new; do
          lib=$build; [ $which = base ] && lib=$base
          LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} first_calls "$out/firstvs-$which-ompi-$mech-$w-p2-$k" \
            mpirun -x LD_LIBRARY_PATH --mca btl_vader_single_copy_mechanism $mech -np 2 $a2a
        done
      done
    done
  done
}

for phase in "${phases[@]}"; do
  echo "== $phase"
  "$phase"
done
