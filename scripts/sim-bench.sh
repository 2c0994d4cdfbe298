#!/usr/bin/env bash
# Simulated scale runs on SimGrid SMPI (the SMPI build, CMake preset smpi):
# a2a's algorithms against SMPI's ports of the MPICH, Open MPI and MVAPICH2
# selectors ("native" under --cfg=smpi/alltoall:SEL and smpi/alltoallv:SEL)
# on the Theta-like platforms of sim/ (64 ranks per node, Aries-like
# dragonfly; numbers and sources in sim/platform.py, docs/simulation.md).
#
#   bash scripts/sim-bench.sh [PHASE ...]     (default: every phase)
#
# A2A_SIM_SIZES="16 1024" limits the alltoallv, hier and p4096 phases to those S.
# Phases: p256 (validated, every byte checked), radix (TRA vs radix, P=1024),
# alltoall (a2a vs the selectors, P=1024), alltoallv (TuNA vs the selectors,
# P=1024), hier (hierarchical TuNA and auto, P=1024), auto (auto alone,
# P=1024, alltoall and alltoallv: it replaces the earlier auto rows of the
# tables), p4096, plans (a persistent alltoallv's start against the plain
# call, P=1024), nb (nonblocking against blocking, P=128..1024), overlap
# (a2a bench --nonblocking, P=1024), config (SimGrid's settings against
# the default, P=1024), polaris (the Polaris-like platform, P=256 and
# 1024), replaycheck (trace replay against online SMPI, P=256 and 1024),
# p4096r, p4096sweep, p4096sizes, p4096tra2 and p16384 (replayed, P=4096
# and 16384), polaris4096 and polaris16384 (the Polaris-like platform at
# P=4096 and 16384, replayed),
# p4096x1 (p4096's a2a rows after a warm-up call), autopick (auto at P=1024,
# 4096 and 16384: its model's trial candidates, replayed; autopickv: the same
# for alltoallv at P=1024), p4096hier (tuna-hier
# at P=4096 with 4 messages in flight), powerlaw (alltoallv with power-law
# blocks at P=1024, replayed, checked online at P=256), p16384sizes (TRA's
# sweep at P=16384, 2 and 8 KiB), p16384s128 (the same at 128 B); issue 57, the k-port
# form: ports (P=64 and 256, validated), ports1024 (replayed), portsv
# (alltoallv) and portsreplay (replay against online, P=256).  Simulated
# time is deterministic, so one timed call per size is enough and the runs
# may share the machine with anything; each phase may run in its own shell
# at the same time (one core each).  At
# P >= 1024 A2A_SIM_SHARED=1 shares all buffers between the simulated ranks
# (timing only, data not validated).  Every run writes results/sim/NAME.csv
# (a2a bench's CSV) and results/sim/NAME.time ("wall_s max_rss_kB" of the
# whole simulation); tools/sim_table.py turns them into docs/simulation.md's
# tables.  Rows whose native algorithm is O(P^2) messages posted at once are
# slow to simulate (minutes per call at P = 1024), so natives run in runs of
# their own (-a native) and the a2a rows with --without-native.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset smpi >/dev/null && cmake --build build-smpi -j "$(nproc)" >/dev/null || exit 1
# The host build's `a2a trace` writes the replay phases' traces.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j "$(nproc)" --target a2a_cli >/dev/null ||
  exit 1
mkdir -p results/sim
# SMPI maps every shared buffer block by block (1 MiB each): 1024 ranks with
# several MiB of scratch each pass the kernel's default 65530 mappings
# ("Could not map folded virtual memory").
if (($(sysctl -n vm.max_map_count) < 1048576)); then
  sysctl -qw vm.max_map_count=1048576 || echo "warning: vm.max_map_count is low; large shared-buffer runs may abort" >&2
fi

# Shared buffers on huge pages: SMPI maps its shared block at every 1 MiB
# of every rank's buffers, and each rank's first touch of each 4 KiB page
# faults (15-30 thousand faults a second on this VM, 30 us each): TRA at
# P = 4096 and 1 KiB was still in its first round after 13 minutes, and
# with 2 MiB pages runs whole in 3.  The simulated times do not change
# (results/sim/smpi-limits-2026-11-29.txt).
HUGE=""
huge_pages() {
  local mnt free
  mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
  if [ -z "$mnt" ]; then
    mnt=/dev/hugepages
    mkdir -p "$mnt" && mount -t hugetlbfs none "$mnt" 2>/dev/null || return 1
  fi
  free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
  if ((free < 2)); then
    sysctl -qw vm.nr_hugepages=$(($(sysctl -n vm.nr_hugepages) + 2 - free)) 2>/dev/null || return 1
  fi
  (($(awk '/^HugePages_Free/ {print $2}' /proc/meminfo) >= 2)) || return 1
  HUGE="--cfg=smpi/shared-malloc-hugepage:$mnt --cfg=smpi/shared-malloc-blocksize:2097152"
}
huge_pages || echo "warning: no huge pages; runs with shared buffers fault on every 4 KiB page (slower)" >&2

# The MPICH selector without its node-aware set-up (p4096, config).
SMP_FREE="--cfg=smpi/bcast:default --cfg=smpi/allreduce:rdb"

# A run whose results are there, or that failed before, is not run again
# unless A2A_SIM_RERUN=1 (an interrupted script resumes where it stopped).
settled() {  # NAME
  local out=results/sim/$1
  [ -n "${A2A_SIM_RERUN:-}" ] && return 1
  if [ -s "$out.csv" ] && [ -s "$out.time" ]; then
    echo "== $1: done before (A2A_SIM_RERUN=1 runs it again)"
  elif grep -qs "^# failed" "$out.txt"; then
    echo "== $1: failed before, see $out.txt (A2A_SIM_RERUN=1 tries again)"
  else
    return 1
  fi
}

run() {  # NAME PLATFORM SELECTOR a2a-bench-arguments...
  local name=$1 platform=$2 sel=$3
  shift 3
  local np huge=""
  np=${A2A_SIM_NP:-$(awk -F: '{n += $2} END {print n}' "sim/$platform.hosts")}  # or the first A2A_SIM_NP slots
  [ "${A2A_SIM_SHARED:-0}" = 1 ] && huge=$HUGE
  settled "$name" && return
  echo "== $name: P=$np on $platform, native = SMPI $sel: a2a bench $*"
  local out=results/sim/$name
  # SimGrid 3.32's bandwidth solver aborts in some runs ("Cannot saturate
  # more a constraint that has no active element ... change the maxmin
  # precision"); the failure is recorded and the run not retried: a coarser
  # precision (1e-4) hit the same abort just above it, and a finer one
  # (1e-8) segfaults at start-up from P = 1024.
  if /usr/bin/time -f "%e %M" -o "$out.time" \
      smpirun -platform "sim/$platform.xml" -hostfile "sim/$platform.hosts" --cfg=smpi/simulate-computation:no ${A2A_SIM_CFG:-} \
      $huge --cfg=smpi/coll-selector:mpich --cfg=smpi/alltoall:"$sel" --cfg=smpi/alltoallv:"$sel" \
      --log=root.thres:critical -np "$np" build-smpi/a2a bench --error-check local \
      --csv "$out.csv" "$@" >"$out.txt" 2>&1; then
    grep -v '^#' "$out.txt"
  else
    echo "   failed, see $out.txt"
    sed -i "1i # failed: exit status in $out.time" "$out.txt"
  fi
}

# A replayed run (issue 29): `a2a trace` (the host build) writes one call of
# ROW as a time-independent trace of every rank's actions, SMPI replays it
# (smpirun -replay: no program, no data), and tools/replay_time.py takes the
# call's time from the replay's log into the same CSV as a2a bench's.
replay() {  # NAME PLATFORM COLLECTIVE ROW BYTES [WORKLOAD: alltoallv's block sizes, default uniform]
  local name=$1 platform=$2 coll=$3 row=$4 s=$5 workload=""
  [ "$coll" = alltoallv ] && workload=${6:-uniform}
  local np q out=results/sim/$name
  np=$(awk -F: '{n += $2} END {print n}' "sim/$platform.hosts")
  q=$(head -1 "sim/$platform.hosts" | cut -d: -f2)
  settled "$name" && return
  echo "== $name: replay, P=$np on $platform, native = SMPI mpich: $coll $row, $s B${workload:+, $workload}"
  local trace=build-smpi/traces/$name.trace
  mkdir -p build-smpi/traces
  build/a2a trace -p "$np" --node-size "$q" --collective "$coll" --workload "${workload:-uniform}" -a "$row" -m "$s" \
    -o "$trace" >"$out.txt" 2>&1 || {
    sed -i "1i # failed: a2a trace" "$out.txt"
    return
  }
  echo "$PWD/$trace" >"$trace.list"
  # SMPI's replay allocates and frees a buffer per message: glibc's mmap
  # for each one of 128 KiB or more cost a fifth of the run (perf).
  if GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456 \
      /usr/bin/time -f "%e %M" -o "$out.time" \
      smpirun -platform "sim/$platform.xml" -hostfile "sim/$platform.hosts" --cfg=smpi/simulate-computation:no \
      ${A2A_SIM_CFG:-} --cfg=smpi/coll-selector:mpich --cfg=smpi/alltoall:mpich --cfg=smpi/alltoallv:mpich \
      --log=smpi_replay.thres:verbose "--log=smpi_replay.fmt:%.12r;%m%n" --log=root.thres:critical \
      -np "$np" -replay "$trace.list" 2>&1 |
      python3 tools/replay_time.py --csv "$out.csv" --collective "$coll" --workload "$workload" --procs "$np" \
        --bytes "$s" --algorithm "$row" >>"$out.txt" 2>&1 && [ "${PIPESTATUS[0]}" = 0 ]; then
    grep -v '^#' "$out.txt"
  else
    echo "   failed, see $out.txt"
    rm -f "$out.csv"
    sed -i "1i # failed: exit status in $out.time" "$out.txt"
  fi
  rm -f "$trace"  # up to a few hundred MB at P = 16384; a2a trace writes it again
}

p256() {  # 4 nodes x 64, every log-step algorithm, validated, against each selector
  local logstep=(-a tra:radix=2 -a tra:radix=4 -a tra:radix=8 -a tra:radix=16 -a tra:radix=32 -a tra:radix=64
                 -a bruck-zero-rotation -a tra2 -a auto)
  A2A_SIM_SHARED=0 run p256-mpich theta-4x64 mpich -m 16:512 -i 2 -x 1 -c "${logstep[@]}"
  for sel in ompi mvapich2; do
    A2A_SIM_SHARED=0 run p256-$sel theta-4x64 $sel -m 16:512 -i 2 -x 1 -c -a tra:radix=16
  done
}

radix() {  # (a) TRA at every power-of-two radix, around sqrt(P) and P; native = SMPI's Bruck (MPICH's port)
  for s in 16 128 512 2048; do
    A2A_SIM_SHARED=1 run p1024-radix-$s theta-16x64 bruck -m $s:$s -i 1 -x 0 --sweep-radix
  done
}

alltoall() {  # (b) the selectors' own MPI_Alltoall, then a2a's rows (one warm-up: tra2 builds its communicators)
  for s in 32 1024; do
    for sel in mpich ompi mvapich2; do
      A2A_SIM_SHARED=1 run p1024-native-$sel-$s theta-16x64 $sel -m $s:$s -i 1 -x 0 -a native
    done
    A2A_SIM_SHARED=1 run p1024-a2a-$s theta-16x64 bruck -m $s:$s -i 1 -x 1 --without-native \
      -a tra:radix=2 -a tra:radix=32 -a tra:radix=auto -a bruck-basic -a bruck-modified -a bruck-zero-copy \
      -a bruck-zero-rotation -a tra2 -a auto
  done
}

alltoallv() {  # (c) uniform block sizes 0..S: TuNA by radix, hierarchical TuNA, the selectors' alltoallv
  local v=(--collective alltoallv --workload uniform) tuna=()
  # Radices up to 128: TuNA at radix 256..P sends O(P) messages (plus as
  # many metadata messages) per rank, as slow to simulate as the natives.
  for r in 2 4 8 16 32 64 128; do tuna+=(-a tuna:radix=$r); done
  for s in ${A2A_SIM_SIZES:-16 1024 16384}; do
    A2A_SIM_SHARED=1 run p1024-v-radix-$s theta-16x64 mpich "${v[@]}" -m $s:$s -i 1 -x 0 --without-native "${tuna[@]}"
    # Hierarchical TuNA and auto run in the hier phase, a row per run:
    # SimGrid's solver aborts in some of them (after 20 minutes in runs that
    # mixed them with these rows, results/sim/p1024-v-a2a-*.aborted.txt),
    # and an abort then loses only that row.
    local rows=(-a tuna:radix=auto -a two-phase-bruck)
    A2A_SIM_SHARED=1 run p1024-v-a2a-$s theta-16x64 mpich "${v[@]}" -m $s:$s -i 1 -x 1 --without-native "${rows[@]}"
  done
  # The selectors' own alltoallv: MPICH's posts every message at once.
  # Open MPI's and MVAPICH2's are the same pairwise exchange in SMPI
  # (identical simulated times at P = 64 for every S from 16 B to 16 KiB),
  # and at P = 1024 SimGrid 3.32 segfaulted in it after 43 minutes (16 B),
  # so it is not run here (results/sim/p1024-v-native-ompi-16.txt).
  for s in ${A2A_SIM_SIZES:-16 1024 16384}; do
    A2A_SIM_SHARED=1 run p1024-v-native-mpich-$s theta-16x64 mpich "${v[@]}" -m $s:$s -i 1 -x 0 -a native
  done
}

hier() {  # (c) hierarchical TuNA, each variant and auto in runs of their own
  local v=(--collective alltoallv --workload uniform)
  for row in tuna-hier:variant=coalesced auto tuna-hier:variant=staggered; do
    local tag=${row##*=}
    local warm=1; [ $row = auto ] && warm=2  # auto's first call on a communicator runs native, deciding nothing
    for s in ${A2A_SIM_SIZES:-1024 16384 16}; do
      A2A_SIM_SHARED=1 run p1024-v-hier-$tag-$s theta-16x64 mpich "${v[@]}" -m $s:$s -i 1 -x $warm --without-native -a $row
    done
  done
}

auto() {  # (b) and (c) auto in runs of its own, as it chooses now (native a candidate: it runs the
           # library's own unless another algorithm is modelled at most 0.8 of its time), the
           # library it wraps being SMPI with MPICH's selector.  Two warm-up calls: auto's first
           # on a communicator runs native and decides nothing, its second decides and sets up.
  for s in 32 1024; do
    A2A_SIM_SHARED=1 run p1024-auto-$s theta-16x64 mpich -m $s:$s -i 1 -x 2 --without-native -a auto
  done
  for s in ${A2A_SIM_SIZES:-16 1024 16384}; do
    A2A_SIM_SHARED=1 run p1024-v-auto-$s theta-16x64 mpich --collective alltoallv --workload uniform -m $s:$s -i 1 \
      -x 2 --without-native -a auto
  done
}

p4096() {  # 64 nodes x 64 (issue 29, table (f)), a run per row: each row's wall time and memory
  # SMPI's MPICH selector learns a new communicator's nodes on its first
  # broadcast or allreduce with a ring allgather, P - 1 rounds of P
  # messages (16.7 million at P = 4096; sim/repro/smpi_comm_dup.c): SMPI's
  # default broadcast and recursive doubling for allreduce instead, as MPICH
  # runs on a communicator without nodes (docs/simulation.md, table (e)).
  # Rows in the order of their cost to simulate: radix P (4095 rounds of
  # P messages) last.
  local cfg="$SMP_FREE" s row
  for s in ${A2A_SIM_SIZES:-16 1024}; do
    for row in tra:radix=2 tra:radix=64 tra2 tra2:radix-inter=8 tra2:radix-inter=4; do
      A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run "p4096-$s-${row//[:=]/-}" theta-64x64 mpich -m $s:$s -i 1 -x 0 \
        --without-native -a "$row"
    done
    A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run "p4096-$s-native-mpich" theta-64x64 mpich -m $s:$s -i 1 -x 0 -a native
    if ((s == 16)); then
      A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p4096-v-16-tuna-hier theta-64x64 mpich --collective alltoallv \
        --workload uniform -m 16:16 -i 1 -x 0 --without-native -a tuna-hier
      # SimGrid's solver aborted that run after 749 s ("Cannot saturate
      # more a constraint"); without the acknowledgements' reverse traffic
      # as at P = 1024 (2-4 % less simulated time, table (e)).
      A2A_SIM_CFG="$cfg --cfg=network/crosstraffic:0" A2A_SIM_SHARED=1 run p4096-v-16-tuna-hier-xt0 theta-64x64 \
        mpich --collective alltoallv --workload uniform -m 16:16 -i 1 -x 0 --without-native -a tuna-hier
      A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p4096-v-16-native-mpich theta-64x64 mpich --collective alltoallv \
        --workload uniform -m 16:16 -i 1 -x 0 -a native
    fi
  done
  for s in ${A2A_SIM_SIZES:-16 1024}; do
    A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run "p4096-$s-tra-radix-4096" theta-64x64 mpich -m $s:$s -i 1 -x 0 \
      --without-native -a tra:radix=4096
  done
}

plans() {  # (issue 28) a persistent alltoallv's start against the plain call, the metadata exchanged at init
  A2A_SIM_SHARED=1 run p256-v-plan-16 theta-4x64 mpich --collective alltoallv --workload uniform -m 16:16 -i 1 \
    -x 1 --without-native -a tuna -a plan/tuna
  A2A_SIM_SHARED=1 run p1024-v-plan-16 theta-16x64 mpich --collective alltoallv --workload uniform -m 16:16 -i 1 \
    -x 1 --without-native -a tuna -a plan/tuna
}

nb() {  # (issue 28) the nonblocking call and its wait at once against the blocking call, P = 128 (two
        # nodes), every byte checked.  A wait polls (A2A_Test's step): SMPI charges each MPI_Test
        # smpi/test (0.1 ms by default), which would be the whole of a nonblocking row's time; 10 ns
        # here (0 stops the clock: polling never yields).  P >= 256 with shared buffers (timing only).
  local cfg=--cfg=smpi/test:1e-8
  A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=0 run p128-nb theta-4x64 mpich -m 16:1024 -i 1 -x 1 -c --without-native \
    -a tra -a i/tra -a tra2 -a i/tra2
  A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=0 run p128-v-nb theta-4x64 mpich --collective alltoallv --workload uniform \
    -m 16:1024 -i 1 -x 1 -c --without-native -a tuna -a i/tuna -a tuna-hier -a i/tuna-hier
  # Larger, with shared buffers (timing only): TRA at 16 B, then issue 28's
  # P = 1024 rows at 16 B and 1 KiB (they finish since the cost model stopped
  # building O(P^2) schedules on every simulated rank).
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p256-nb-16 theta-4x64 mpich -m 16:16 -i 1 -x 1 --without-native -a tra -a i/tra
  for s in 16 1024; do
    A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-nb-$s theta-16x64 mpich -m $s:$s -i 1 -x 1 --without-native \
      -a tra -a i/tra -a tra2 -a i/tra2
  done
  local v=(--collective alltoallv --workload uniform --without-native -i 1 -x 1)
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-v-nb-16 theta-16x64 mpich "${v[@]}" -m 16:16 \
    -a tuna -a i/tuna -a tuna-hier -a i/tuna-hier
  # At 1 KiB SimGrid's solver aborts with the default settings (results/sim/
  # p1024-v-nb-1024.txt): tuna runs with a finer maxmin precision, tuna-hier
  # (which aborts at 1e-6 and 1e-7 too) without the reverse traffic of
  # acknowledgements; X and i/X of a row share its settings.
  A2A_SIM_CFG="$cfg --cfg=maxmin/precision:1e-6" A2A_SIM_SHARED=1 run p1024-v-nb-1024-tuna theta-16x64 mpich \
    "${v[@]}" -m 1024:1024 -a tuna -a i/tuna
  A2A_SIM_CFG="$cfg --cfg=network/crosstraffic:0" A2A_SIM_SHARED=1 run p1024-v-nb-1024-hier theta-16x64 mpich \
    "${v[@]}" -m 1024:1024 -a tuna-hier -a i/tuna-hier
}

overlap() {  # (issue 28) a2a bench --nonblocking at P = 1024, 1 KiB: the compute phase is simulated
             # time, a test every 10 us of it; the library's own MPI_Ialltoall(v) in runs of their own
  local cfg=--cfg=smpi/test:1e-8 ov=(--nonblocking -m 1024:1024 -i 1 -x 1) v=(--collective alltoallv --workload uniform)
  # P = 128 (two nodes of theta-4x64), where SMPI's own MPI_Ialltoall(v)
  # still run (above it they crash: sim/repro/smpi_ialltoall.c): the
  # library's rows and a2a's, then a2a's at each progress patience
  # (A2A_PROGRESS_PATIENCE, us; 2 is the default, 0 the steps before it).
  A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p128-overlap-1024 theta-4x64 mpich "${ov[@]}" -a tra -a tra2
  A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p128-v-overlap-1024 theta-4x64 mpich "${v[@]}" "${ov[@]}" \
    -a tuna-hier
  local pt
  for pt in 0 1 2 5 10 20; do
    A2A_PROGRESS_PATIENCE=$pt A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p128-overlap-1024-pat$pt theta-4x64 \
      mpich "${ov[@]}" --without-native -a tra -a tra2
    A2A_PROGRESS_PATIENCE=$pt A2A_SIM_NP=128 A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p128-v-overlap-1024-pat$pt theta-4x64 \
      mpich "${v[@]}" "${ov[@]}" --without-native -a tuna-hier
  done
  # P = 1024 with the default patience (p1024-overlap-1024 and
  # p1024-v-overlap-1024 are the runs before it, as patience 0).
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-overlap-1024-pat2 theta-16x64 mpich "${ov[@]}" --without-native -a tra -a tra2
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-v-overlap-1024-pat2 theta-16x64 mpich "${v[@]}" "${ov[@]}" --without-native \
    -a tuna-hier
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-overlap-native-1024 theta-16x64 mpich "${ov[@]}" -a native
  A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-v-overlap-native-1024 theta-16x64 mpich "${v[@]}" "${ov[@]}" -a native
}

polaris() {  # (issue 29) the Polaris-like platform: P = 256 validated against the MPICH selector, P = 1024
  A2A_SIM_SHARED=0 run polaris-p256-mpich polaris-8x32 mpich -m 16:512 -i 2 -x 1 -c -a tra:radix=16
  A2A_SIM_CFG="$SMP_FREE" A2A_SIM_SHARED=1 run polaris-p1024-16 polaris-32x32 mpich -m 16:16 -i 1 -x 1 \
    -a tra:radix=2 -a tra:radix=32 -a tra2
}

config() {  # (issue 29) SimGrid's settings, each against the default: wall time and simulated time, P = 1024
  local name cfg
  for name in default crosstraffic0 optim-full maxmin-1e-6 ctx-thread ctx-ucontext ctx-nthreads2 bcast-default smp-free; do
    case $name in
      default) cfg= ;;
      crosstraffic0) cfg=--cfg=network/crosstraffic:0 ;;
      optim-full) cfg=--cfg=network/optim:Full ;;
      maxmin-1e-6) cfg=--cfg=maxmin/precision:1e-6 ;;
      ctx-thread) cfg=--cfg=contexts/factory:thread ;;
      ctx-ucontext) cfg=--cfg=contexts/factory:ucontext ;;
      ctx-nthreads2) cfg=--cfg=contexts/nthreads:2 ;;
      bcast-default) cfg=--cfg=smpi/bcast:default ;;
      smp-free) cfg=$SMP_FREE ;;
    esac
    A2A_SIM_CFG=$cfg A2A_SIM_SHARED=1 run p1024-cfg-$name theta-16x64 mpich -m 16:16 -i 1 -x 1 --without-native \
      -a tra:radix=32 -a tra:radix=2
  done
}

replaycheck() {  # (issue 29) replay against online SMPI, the same rows at P = 256 and 1024 (-x 1 online)
  # Online at P = 256 (P = 1024's online rows are the alltoall, hier and
  # native runs of the phases above).
  A2A_SIM_SHARED=1 run p256-check theta-4x64 mpich -m 16:1024 -i 1 -x 1 -a tra:radix=2 -a tra:radix=16 -a tra2
  A2A_SIM_SHARED=1 run p256-v-check theta-4x64 mpich --collective alltoallv --workload uniform -m 16:1024 -i 1 -x 1 \
    -a tuna-hier:variant=coalesced
  local s row
  for s in 16 128 1024; do
    for row in native tra:radix=2 tra:radix=16 tra2; do
      replay "r256-$s-${row//[:=]/-}" theta-4x64 alltoall "$row" $s
    done
  done
  for s in 32 1024; do
    for row in native tra:radix=2 tra:radix=32 tra2; do
      replay "r1024-$s-${row//[:=]/-}" theta-16x64 alltoall "$row" $s
    done
  done
  for s in 16 1024; do
    replay "r256-v-$s-tuna-hier-variant-coalesced" theta-4x64 alltoallv tuna-hier:variant=coalesced $s
    replay "r1024-v-$s-tuna-hier-variant-coalesced" theta-16x64 alltoallv tuna-hier:variant=coalesced $s
  done
  # The selector's alltoallv posts every message at once: 16 B only (its
  # online run at P = 1024 and 1 KiB took 46 minutes).
  replay r256-v-16-native theta-4x64 alltoallv native 16
  replay r1024-v-16-native theta-16x64 alltoallv native 16
}

p4096x1() {  # (issue 29) p4096's a2a rows again with a warm-up call: without one, the timed call of tra2
             # carried its node and port communicators' set-up (6251 us against 1329 replayed); 1 KiB
             # runs online since its shared buffers are on huge pages
  local row s
  for s in ${A2A_SIM_SIZES:-16 1024}; do
    for row in tra2 tra:radix=64 tra:radix=2; do
      A2A_SIM_CFG=$SMP_FREE A2A_SIM_SHARED=1 run "p4096-x1-$s-${row//[:=]/-}" theta-64x64 mpich -m $s:$s -i 1 -x 1 \
        --without-native -a "$row"
    done
  done
}

p4096r() {  # (issue 29) P = 4096 replayed: the rows online simulation did not finish
  local s row
  for s in 16 1024; do
    for row in tra:radix=2 tra:radix=64 tra2; do
      replay "r4096-$s-${row//[:=]/-}" theta-64x64 alltoall "$row" $s
    done
  done
  replay r4096-16-native theta-64x64 alltoall native 16
  replay r4096-v-16-tuna-hier-variant-coalesced theta-64x64 alltoallv tuna-hier:variant=coalesced 16
  # SimGrid's solver aborted that replay after 495 s, as it did online:
  # without the acknowledgements' reverse traffic (network/crosstraffic:0),
  # and with it the rows P = 16384 runs so, for the difference it makes.
  local xt0=--cfg=network/crosstraffic:0
  for row in tra:radix=2 tra2 tra:radix=64; do
    A2A_SIM_CFG=$xt0 replay "r4096-16-${row//[:=]/-}-xt0" theta-64x64 alltoall "$row" 16
  done
  A2A_SIM_CFG=$xt0 replay r1024-v-16-tuna-hier-xt0 theta-16x64 alltoallv tuna-hier:variant=coalesced 16
  A2A_SIM_CFG=$xt0 replay r4096-v-16-tuna-hier-xt0 theta-64x64 alltoallv tuna-hier:variant=coalesced 16
  # That one's clock crawled (5 ns a second at 98 us): its inter-node phase
  # keeps 32 messages a rank in flight, 131,072 flows for the solver.  With
  # 4 in flight (block=4; 1.58x slower at P = 1024, 16 B):
  replay r1024-v-16-tuna-hier-block-4 theta-16x64 alltoallv tuna-hier:variant=coalesced,block=4 16
  replay r4096-v-16-tuna-hier-block-4 theta-64x64 alltoallv tuna-hier:variant=coalesced,block=4 16
  # Not run: the selector at 1 KiB (every message posted at once), radix P
  # and the selector's alltoallv: 16.7 million messages each, which at
  # P = 1024 (1 million) took 13 minutes to replay.
}

p4096sweep() {  # (issue 29) TRA's radix sweep at P = 4096 and 1 KiB, replayed (radix 2 and 64: p4096r)
  local r
  for r in 4 8 16 32 128; do
    replay "r4096-1024-tra-radix-$r" theta-64x64 alltoall "tra:radix=$r" 1024
  done
}

p16384() {  # (issue 29) P = 16384 replayed, without the reverse traffic (a run takes 2x less; p4096r
            # measures the difference), cheapest first: radix P is 268 million messages, not run.  At 16 B
            # the replays slow down with the radix (radix 8 had simulated 2.9 ms after 13 minutes, where
            # radix 4's whole call is 18.5 ms), so 512 B first.
  local xt0=--cfg=network/crosstraffic:0 r s
  for r in 2 4; do
    for s in 16 512; do
      A2A_SIM_CFG=$xt0 replay "r16384-$s-tra-radix-$r" theta-256x64 alltoall "tra:radix=$r" $s
    done
  done
  A2A_SIM_CFG=$xt0 replay r16384-16-native theta-256x64 alltoall native 16
  for r in 8 16 32 128 64 256; do
    A2A_SIM_CFG=$xt0 replay "r16384-512-tra-radix-$r" theta-256x64 alltoall "tra:radix=$r" 512
  done
  A2A_SIM_CFG=$xt0 replay r16384-16-tra2 theta-256x64 alltoall tra2 16
  A2A_SIM_CFG=$xt0 replay r16384-v-16-tuna-hier-variant-coalesced theta-256x64 alltoallv tuna-hier:variant=coalesced 16
  for r in 8 16 128 32 64; do
    A2A_SIM_CFG=$xt0 replay "r16384-16-tra-radix-$r" theta-256x64 alltoall "tra:radix=$r" 16
  done
}

p4096sizes() {  # (issue 29) TRA's radix sweep at P = 4096 and 8 KiB, 2 KiB, 128 B, replayed (1 KiB: p4096sweep);
                # radix P, 16.7 million messages of under 64 KiB each, is not run (see p16384)
  local r s
  for s in 8192 2048 128; do
    for r in 2 4 8 16 32 64 128; do
      replay "r4096-$s-tra-radix-$r" theta-64x64 alltoall "tra:radix=$r" $s
    done
  done
}

p4096tra2() {  # (issue 29) TRA2's radices at P = 4096 (64 nodes of 64), 16 B and 1 KiB, replayed: the default
               # (intra sqrt(Q) = 8, inter N = 64) is p4096r's tra2 row
  local a e s
  for s in 16 1024; do
    for a in 2 8 64; do
      for e in 2 4 8 16 64; do
        [ "$a.$e" = 8.64 ] && continue
        replay "r4096-$s-tra2-$a-$e" theta-64x64 alltoall "tra2:radix-intra=$a,radix-inter=$e" $s
      done
    done
  done
}

polaris4096() {  # (issue 29) the Polaris-like platform at P = 4096 (128 nodes of 32), replayed
  local s row
  for s in 16 1024; do
    for row in tra:radix=2 tra:radix=64 tra2; do
      replay "polaris-r4096-$s-${row//[:=]/-}" polaris-128x32 alltoall "$row" $s
    done
  done
  replay polaris-r4096-16-native polaris-128x32 alltoall native 16
}

# A replay's run name for ROW: tra2's radices as tra2-INTRA-INTER (p4096tra2), else its
# spec with - for : = and ,.
row_name() {  # ROW
  if [[ $1 =~ ^tra2:radix-intra=([0-9]+),radix-inter=([0-9]+)$ ]]; then
    echo "tra2-${BASH_REMATCH[1]}-${BASH_REMATCH[2]}"
  else
    local r=${1//[:=]/-}
    echo "${r//,/-}"
  fi
}

measured_machine() {  # the machine as auto measured it online at P = 256 (autopick's first run), for --cost-model
  local model
  model=$(sed -n 's/.*machine measured in [0-9.]* ms: \([^;]*\);.*/\1/p' results/sim/p256-auto-model.txt | head -1)
  [ -n "$model" ] || { echo "   no measured machine in results/sim/p256-auto-model.txt (autopick runs it)" >&2; return 1; }
  echo "$model"
}

autopick() {  # (issue 29, table (l)) auto at P = 1024, 4096 and 16384.  Online, auto's trial (up to 24 calls)
              # would take hours of simulation there, so: the machine as auto measures this platform (an
              # online auto run at P = 256, its first 4 nodes, A2A_VERBOSE=1), its cost model's ranking at the
              # large P (`a2a model --rank`; library "other": SMPI's version string names none), and each
              # trial candidate replayed: auto keeps the fastest, as its trial would.  SMPI has no shared
              # window, so a candidate's intra=shm phase runs point to point there: replayed without it.
  A2A_VERBOSE=1 A2A_SIM_SHARED=1 run p256-auto-model theta-4x64 mpich -m 16:16 -i 1 -x 2 --without-native -a auto
  local model
  model=$(measured_machine) || return
  # At P = 16384 the model is ranked but its candidates (TRA2 with 255 inter-node rounds of messages
  # under 64 KiB) are not replayed: such replays crawl (docs/simulation.md, "Not done yet").
  # P = 1024 checks the method against auto's online runs (table (b): at 32 B it ran TRA2 at radices 2
  # and 16) and fills its 1 KiB cell, where the online run did not finish.
  local P s row nodes cands sizes
  for P in 1024 4096 16384; do
    nodes=$(printf '64,%.0s' $(seq $((P / 64))))
    sizes="16 128 1024"
    ((P == 1024)) && sizes="32 1024"
    for s in $sizes; do
      build/a2a model --rank --procs $P --node-sizes "${nodes%,}" --bytes $s --library other \
        --cost-model "$model,shm_copy=0,cma=0" >"results/sim/auto-r$P-$s.rank"
      ((P == 16384)) && continue
      mapfile -t cands < <(sed -n "s/^auto's trial times: //p" "results/sim/auto-r$P-$s.rank" | sed 's/, /\n/g')
      for row in "${cands[@]}"; do
        row=${row//,intra=shm/}
        if [ "$row" = native ] && ((s >= 256)); then
          echo "== r$P-$s-native: not run (the selector posts every message at once: P^2 messages)"
          continue
        fi
        replay "r$P-$s-$(row_name "$row")" "theta-$((P / 64))x64" alltoall "$row" $s
      done
    done
  done
}

p16384s128() {  # (issue 29) TRA's sweep at P = 16384 and 128 B, replayed without the reverse traffic as p16384,
                # up to radix 32: from radix 64 the messages (P/r blocks of 128 B) are under 64 KiB, detached,
                # and such replays crawl (results/sim/smpi-limits-2026-11-29.txt)
  local r
  for r in 2 4 8 16 32; do
    A2A_SIM_CFG=--cfg=network/crosstraffic:0 replay "r16384-128-tra-radix-$r" theta-256x64 alltoall "tra:radix=$r" 128
  done
}

autopickv() {  # (issue 29) auto for alltoallv at P = 1024 as autopick does for alltoall: the online run at 16 KiB
               # aborted in SimGrid's solver (table (c)).  Block sizes uniform in 0..S: auto's model sees a mean
               # block of S/2 and a largest of S.  16 B checks the method against auto's online run there.
  local model s row cands nodes
  model=$(measured_machine) || return
  nodes=$(printf '64,%.0s' $(seq 16))
  for s in 16 1024 16384; do
    build/a2a model --rank --procs 1024 --node-sizes "${nodes%,}" --collective alltoallv \
      --bytes $((s / 2)) --max-block $s --library other --cost-model "$model,shm_copy=0,cma=0" \
      >"results/sim/auto-r1024-v-$s.rank"
    mapfile -t cands < <(sed -n "s/^auto's trial times: //p" "results/sim/auto-r1024-v-$s.rank" | sed 's/, /\n/g')
    for row in "${cands[@]}"; do
      row=${row//,intra=shm/}
      [ "$row" = native ] && continue  # the selector's alltoallv: its online run (table (c))
      replay "r1024-v-$s-$(row_name "$row")" theta-16x64 alltoallv "$row" $s
    done
  done
}

polaris16384() {  # (issue 29) the Polaris-like platform at P = 16384 (512 nodes of 32), replayed without the
                  # reverse traffic as p16384: TRA at radix 2 and sqrt(P) = 128, the selector at 16 B
  local xt0=--cfg=network/crosstraffic:0 r s
  for s in 16 512; do
    for r in 2 128; do
      ((s == 16 && r == 128)) && continue  # 2 KiB messages: detached, they crawl (p16384)
      A2A_SIM_CFG=$xt0 replay "polaris-r16384-$s-tra-radix-$r" polaris-512x32 alltoall "tra:radix=$r" $s
    done
  done
  A2A_SIM_CFG=$xt0 replay polaris-r16384-16-native polaris-512x32 alltoall native 16
  for r in 4 16 64; do
    A2A_SIM_CFG=$xt0 replay "polaris-r16384-512-tra-radix-$r" polaris-512x32 alltoall "tra:radix=$r" 512
  done
}

p4096hier() {  # (issue 29) tuna-hier at P = 4096, 16 B, with 4 inter-node messages in flight a rank (block=4),
               # without the reverse traffic: p4096r's replay with it was stopped at 435 us after 43 minutes
  A2A_SIM_CFG=--cfg=network/crosstraffic:0 replay r4096-v-16-tuna-hier-block-4-xt0 theta-64x64 alltoallv \
    tuna-hier:variant=coalesced,block=4 16
}

powerlaw() {  # (issue 29, table (n)) alltoallv with the TuNA paper's power-law blocks (exponent 0.95, as its
              # figure 16) at P = 1024, replayed; the flat rows' traces checked against online SMPI at P = 256
  local pl=power-law:exponent=0.95 s row
  A2A_SIM_SHARED=1 run pl256-check theta-4x64 mpich --collective alltoallv --workload $pl -m 16:1024 -i 1 -x 1 \
    -a tuna:radix=16 -a two-phase-bruck -a padded-bruck -a tuna-hier:variant=coalesced
  for s in 16 1024; do
    for row in native tuna:radix=16 two-phase-bruck padded-bruck tuna-hier:variant=coalesced; do
      replay "pl256-v-$s-$(row_name "$row")" theta-4x64 alltoallv "$row" $s $pl
    done
  done
  for s in 16 1024; do
    for row in tuna:radix=2 tuna:radix=4 tuna:radix=8 tuna:radix=16 tuna:radix=32 tuna:radix=64 tuna:radix=128 \
      two-phase-bruck padded-bruck tuna-hier:variant=coalesced; do
      replay "pl1024-v-$s-$(row_name "$row")" theta-16x64 alltoallv "$row" $s $pl
    done
  done
  # The selector's alltoallv posts all 1,047,552 messages at once (13 minutes at 16 B, uniform).
  for s in 16 1024; do
    replay "pl1024-v-$s-native" theta-16x64 alltoallv native $s $pl
  done
  # Staggered hierarchical TuNA (a message per block across nodes) last: at 16 B its replay had
  # simulated 270 us after 15 minutes, where the coalesced one's whole call takes 80 us.
  for s in 16 1024; do
    replay "pl1024-v-$s-tuna-hier-variant-staggered" theta-16x64 alltoallv tuna-hier:variant=staggered $s $pl
  done
}

p16384sizes() {  # (issue 29) TRA's radix sweep at P = 16384 and 2 KiB, 8 KiB, replayed without the reverse
                 # traffic as p16384; every radix up to 128 sends messages of 64 KiB or more (not detached),
                 # which replay in minutes.  Radix 2 and sqrt(P) first.
  local r s
  for r in 2 128 64 16 4 8 32; do
    for s in 2048 8192; do
      A2A_SIM_CFG=--cfg=network/crosstraffic:0 replay "r16384-$s-tra-radix-$r" theta-256x64 alltoall "tra:radix=$r" $s
    done
  done
}

# Issue 57, the k-port form (ports=B).  SimGrid 3.32's bandwidth solver
# aborts or crashes with a digit's messages in flight together at its
# default precision (maxmin/precision 1e-5) from P = 256; 1e-4 runs them,
# so every row of these phases, the selectors' included, runs at 1e-4
# (docs/simulation.md, "The k-port form").  Each row is a run of its own:
# a solver failure loses only that row.
PORTS_CFG=--cfg=maxmin/precision:1e-4
ports_rows() {  # NAME PLATFORM S ROW...: one run per row at size S, the selector's own first
  local name=$1 platform=$2 s=$3 row
  shift 3
  A2A_SIM_CFG=$PORTS_CFG run "$name-$s-native" "$platform" mpich -m $s:$s -i 1 -x 0 -a native
  for row in "$@"; do
    A2A_SIM_CFG=$PORTS_CFG run "$name-$s-$(row_name "$row")" "$platform" mpich -m $s:$s -i 1 -x 1 --without-native -a "$row"
  done
}

ports() {  # (issue 57) P = 64 (two Polaris-like nodes, the issue's table, SimGrid's default precision:
           # nothing aborts there), one port against all, then 64 calls back to back (-b 64: the barrier's
           # skew spread over them); P = 256, every byte validated, Theta- and Polaris-like: TRA by radix
           # with one exchange at a time and a digit's at once, TRA2 with ports, against the MPICH selector
  A2A_SIM_NP=64 A2A_SIM_SHARED=0 run ports-p64 polaris-8x32 mpich -m 16:65536 -i 1 -x 1 -c -a tra:radix=2 \
    -a tra:radix=8,ports=1 -a tra:radix=8 -a tra:radix=64,ports=1 -a tra:radix=64
  A2A_SIM_NP=64 A2A_SIM_SHARED=0 run ports-p64-b64 polaris-8x32 mpich -m 16:1024 -i 1 -x 1 -b 64 --without-native \
    -a tra:radix=64,ports=1
  local rows=() r
  for r in 2 4 8 16 32; do rows+=(-a tra:radix=$r,ports=1 -a tra:radix=$r); done
  rows+=(-a tra2:ports-intra=1,ports-inter=1 -a tra2)
  local plat
  for plat in theta-4x64 polaris-8x32; do
    A2A_SIM_SHARED=0 A2A_SIM_CFG=$PORTS_CFG run ports-p256-$plat $plat mpich -m 16:16384 -i 1 -x 1 -c "${rows[@]}"
  done
}

ports1024() {  # (issue 57) P = 1024 (16 nodes of 64), replayed (portsreplay checks replay against online):
               # TRA's radices around sqrt(P) and TRA2's inter-node radix, one port and all, against the selector
  local s row rows
  for s in 16 32 1024; do
    rows=(native)
    for row in tra:radix=8 tra:radix=16 tra:radix=32 tra:radix=64 tra2 tra2:radix-intra=2 \
        tra2:radix-intra=8,radix-inter=8; do
      if [[ $row == tra2* ]]; then
        rows+=("$row" "$row$([[ $row == *:* ]] && echo , || echo :)ports-intra=1,ports-inter=1")
      else
        rows+=("$row" "$row,ports=1")
      fi
    done
    for row in "${rows[@]}"; do
      A2A_SIM_CFG=$PORTS_CFG replay "ports-r1024-$s-$(row_name "$row")" theta-16x64 alltoall "$row" $s
    done
  done
}

portsv() {  # (issue 57) alltoallv: TuNA and hierarchical TuNA with ports, uniform and power-law blocks,
            # P = 256 validated, P = 1024 replayed
  local v=(--collective alltoallv) w rows=() r
  for r in 4 16; do rows+=(-a tuna:radix=$r,ports=1 -a tuna:radix=$r); done
  rows+=(-a tuna-hier:ports=1 -a tuna-hier)
  for w in uniform power-law:exponent=0.95; do
    A2A_SIM_SHARED=0 A2A_SIM_CFG=$PORTS_CFG run "portsv-p256-${w%%:*}" theta-4x64 mpich "${v[@]}" --workload "$w" \
      -m 16:4096 -i 1 -x 1 -c "${rows[@]}"
  done
  local s row
  for s in 16 1024; do
    for row in native tuna:radix=32 tuna:radix=32,ports=1 tuna-hier tuna-hier:ports=1; do
      A2A_SIM_CFG=$PORTS_CFG replay "portsv-r1024-$s-$(row_name "$row")" theta-16x64 alltoallv "$row" $s
    done
  done
}

portsreplay() {  # (issue 57) replay against online at P = 256 for tra and tuna with ports 1, 2 and all
  local s row
  for s in 16 1024; do
    for row in tra:radix=16,ports=1 tra:radix=16,ports=2 tra:radix=16; do
      A2A_SIM_CFG=$PORTS_CFG replay "portsr-p256-$s-$(row_name "$row")" theta-4x64 alltoall "$row" $s
    done
    for row in tuna:radix=16,ports=1 tuna:radix=16,ports=2 tuna:radix=16; do
      A2A_SIM_CFG=$PORTS_CFG replay "portsr-p256-v-$s-$(row_name "$row")" theta-4x64 alltoallv "$row" $s
    done
  done
  # online: the same rows (ports's runs hold tra's at every power of two; here ports=2 and tuna's)
  A2A_SIM_SHARED=0 A2A_SIM_CFG=$PORTS_CFG run portsr-p256-online theta-4x64 mpich -m 16:1024 -i 1 -x 1 -c \
    --without-native -a tra:radix=16,ports=1 -a tra:radix=16,ports=2 -a tra:radix=16
  A2A_SIM_SHARED=0 A2A_SIM_CFG=$PORTS_CFG run portsr-p256-v-online theta-4x64 mpich --collective alltoallv \
    --workload uniform -m 16:1024 -i 1 -x 1 -c --without-native -a tuna:radix=16,ports=1 -a tuna:radix=16,ports=2 \
    -a tuna:radix=16
}

modelcheck() {  # (issue 57) auto's cost model against online SMPI at P = 256 (tools/model_vs_sim.py, over the
                # ports and portsv runs), and TRA and TRA2 again without SimGrid's reverse traffic
                # (network/crosstraffic:0: each flow also loads the other direction with 5 % of its bytes, which
                # the model's one-way measured link does not see)
  A2A_SIM_SHARED=0 A2A_SIM_CFG="$PORTS_CFG --cfg=network/crosstraffic:0" run ports-p256-xt0 theta-4x64 mpich \
    -m 1024:16384 -i 1 -x 1 -c -a tra:radix=16 -a tra:radix=2 -a tra2
  python3 tools/model_vs_sim.py
}

# Every phase, in the order a bare run takes them.
all_phases=(p256 radix alltoall alltoallv hier auto p4096 plans nb overlap config polaris replaycheck p4096r p4096x1
            p4096sweep p16384 p4096sizes p4096tra2 polaris4096 autopick p4096hier powerlaw p16384sizes polaris16384
            autopickv p16384s128 ports ports1024 portsv portsreplay modelcheck)
phases=("$@")
((${#phases[@]})) || phases=("${all_phases[@]}")
for phase in "${phases[@]}"; do
  if [[ " ${all_phases[*]} " == *" $phase "* ]]; then
    $phase
  else
    echo "unknown phase $phase (${all_phases[*]})" >&2
    exit 2
  fi
done
