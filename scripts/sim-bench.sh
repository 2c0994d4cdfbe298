#!/usr/bin/env bash
# Simulated scale runs on SimGrid SMPI (CMake preset smpi): a2a's algorithms against SMPI's ports of the
# MPICH, Open MPI and MVAPICH2 selectors ("native" under --cfg=smpi/alltoall:SEL and smpi/alltoallv:SEL) on
# the Theta- and Polaris-like platforms of sim/ (numbers and sources in sim/platform.py).
#
#   sudo bash scripts/sim-bench.sh host-setup   the one verb that changes the host (hugetlbfs, sysctl)
#   bash scripts/sim-bench.sh [PHASE ...]       run phases (default: every phase, in the table's order)
#   bash scripts/sim-bench.sh list [PHASE ...]  print each run's command instead (also: --dry-run)
#
# The phases are the table at the end: one line per run or loop of runs.  Each run writes
# ${SIM_OUT:-runs/sim}/NAME.csv (a2a bench's CSV), NAME.time ("wall_s max_rss_kB" of the simulation) and
# NAME.txt (its log); tools/sim_table.py turns them into docs/simulation.md's tables.  A run whose results
# are there, or that failed before ("# failed" in NAME.txt), is not run again unless A2A_SIM_RERUN=1.
# A2A_SIM_SIZES="16 1024" limits the sizes of the lines marked ~ (alltoallv, hier, auto, p4096, p4096x1).
# Simulated time is deterministic: one timed call per size, and phases may run in parallel shells.
# Shared buffers (opt sh, P >= 1024: timing only, data not validated) need host-setup: SMPI maps them
# block by block (1 MiB each, past the kernel's default 65530 mappings: vm.max_map_count), and on 4 KiB
# pages every rank's first touch faults (TRA at P = 4096 and 1 KiB: 13 minutes unfinished, 3 with 2 MiB
# pages; the simulated times do not change).  Native rows (O(P^2) messages at once, slow to simulate)
# run in runs of their own (-a native), a2a's with --without-native.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${SIM_OUT:-runs/sim}
DRY="" MAPS=1048576 HUGE="" HOST_OK=""
if [ "${1:-}" = list ] || [ "${1:-}" = --dry-run ]; then DRY=1; shift; fi

host_setup() {  # hugetlbfs at /dev/hugepages with 2 free huge pages, vm.max_map_count; says what it changes
  local free n
  if (($(sysctl -n vm.max_map_count) < MAPS)); then
    echo "host-setup: vm.max_map_count $(sysctl -n vm.max_map_count) -> $MAPS"; sysctl -qw vm.max_map_count=$MAPS || return 1
  fi
  if ! awk '$3 == "hugetlbfs" {f = 1} END {exit !f}' /proc/mounts; then
    echo "host-setup: mount -t hugetlbfs none /dev/hugepages"
    mkdir -p /dev/hugepages && mount -t hugetlbfs none /dev/hugepages || return 1
  fi
  free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
  if ((free < 2)); then
    n=$(($(sysctl -n vm.nr_hugepages) + 2 - free))
    echo "host-setup: vm.nr_hugepages $(sysctl -n vm.nr_hugepages) -> $n"; sysctl -qw vm.nr_hugepages=$n || return 1
  fi
  echo "host-setup: done"
}
need_host() {  # checks only: stops the script when host-setup has not run
  [ -n "$HOST_OK" ] && return
  local mnt
  mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
  if [ -n "$DRY" ] || { (($(sysctl -n vm.max_map_count) >= MAPS)) && [ -n "$mnt" ] &&
       (($(awk '/^HugePages_Free/ {print $2}' /proc/meminfo) >= 2)); }; then
    HOST_OK=1 HUGE="--cfg=smpi/shared-malloc-hugepage:${mnt:-/dev/hugepages} --cfg=smpi/shared-malloc-blocksize:2097152"
    return
  fi
  echo "shared-buffer runs need vm.max_map_count >= $MAPS and 2 free huge pages on hugetlbfs:" \
    "run \`sudo bash scripts/sim-bench.sh host-setup\` once" >&2
  exit 3
}

# A run whose results are there, or that failed before, is not run again
# unless A2A_SIM_RERUN=1 (an interrupted script resumes where it stopped).
settled() {  # NAME
  local out=$OUT/$1
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
  [ "${A2A_SIM_SHARED:-0}" = 1 ] && { need_host; huge=$HUGE; }
  np=${A2A_SIM_NP:-$(awk -F: '{n += $2} END {print n}' "sim/$platform.hosts")}  # or the first A2A_SIM_NP slots
  [ -z "$DRY" ] && settled "$name" && return
  echo "== $name: P=$np on $platform, native = SMPI $sel: a2a bench $*"
  local out=$OUT/$name
  if [ -n "$DRY" ]; then
    echo "${A2A_PROGRESS_PATIENCE:+A2A_PROGRESS_PATIENCE=$A2A_PROGRESS_PATIENCE }${A2A_VERBOSE:+A2A_VERBOSE=$A2A_VERBOSE }smpirun" \
      "-platform sim/$platform.xml -hostfile sim/$platform.hosts --cfg=smpi/simulate-computation:no ${A2A_SIM_CFG:-}" \
      "$huge --cfg=smpi/coll-selector:mpich --cfg=smpi/alltoall:$sel --cfg=smpi/alltoallv:$sel" \
      "--log=root.thres:critical -np $np build-smpi/a2a bench --error-check local --csv $out.csv $*"
    return
  fi
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
  local np q out=$OUT/$name
  np=$(awk -F: '{n += $2} END {print n}' "sim/$platform.hosts")
  q=$(head -1 "sim/$platform.hosts" | cut -d: -f2)
  [ -z "$DRY" ] && settled "$name" && return
  echo "== $name: replay, P=$np on $platform, native = SMPI mpich: $coll $row, $s B${workload:+, $workload}"
  local trace=build-smpi/traces/$name.trace
  if [ -n "$DRY" ]; then
    echo "build/a2a trace -p $np --node-size $q --collective $coll --workload ${workload:-uniform} -a $row -m $s -o $trace"
    echo "smpirun -platform sim/$platform.xml -hostfile sim/$platform.hosts --cfg=smpi/simulate-computation:no" \
      "${A2A_SIM_CFG:-} ... -np $np -replay $trace.list | python3 tools/replay_time.py --csv $out.csv" \
      "--collective $coll --workload $workload --procs $np --bytes $s --algorithm $row"
    return
  fi
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
  model=$(sed -n 's/.*machine measured in [0-9.]* ms: \([^;]*\);.*/\1/p' "$OUT/p256-auto-model.txt" | head -1)
  [ -n "$model" ] || { echo "   no measured machine in $OUT/p256-auto-model.txt (autopick runs it)" >&2; return 1; }
  echo "$model"
}

# Phases too irregular for a line (a table line "PHASE | @FUNC" calls FUNC).
autopick_replays() {  # auto at P = 1024, 4096 and 16384 (table (l)): online, its trial (up to 24 calls) would
  # take hours of simulation, so the machine as auto measured it at P = 256 (p256-auto-model), its cost
  # model's ranking at the large P (`a2a model --rank`, library "other"), and each trial candidate replayed
  # (without intra=shm: SMPI has no shared window); at P = 16384 ranked only (such replays crawl).
  local model P s row nodes cands sizes rank
  model=$(measured_machine) || return
  for P in 1024 4096 16384; do
    nodes=$(printf '64,%.0s' $(seq $((P / 64)))) sizes="16 128 1024" rank=$OUT/auto-r$P-
    ((P == 1024)) && sizes="32 1024"
    for s in $sizes; do
      build/a2a model --rank --procs $P --node-sizes "${nodes%,}" --bytes $s --library other \
        --cost-model "$model,shm_copy=0,cma=0" >"$rank$s.rank"
      ((P == 16384)) && continue
      mapfile -t cands < <(sed -n "s/^auto's trial times: //p" "$rank$s.rank" | sed 's/, /\n/g')
      for row in "${cands[@]}"; do
        row=${row//,intra=shm/}
        if [ "$row" = native ] && ((s >= 256)); then
          echo "== r$P-$s-native: not run (the selector posts every message at once: P^2 messages)"; continue
        fi
        replay "r$P-$s-$(row_name "$row")" "theta-$((P / 64))x64" alltoall "$row" $s
      done
    done
  done
}

autopickv_replays() {  # the same for alltoallv at P = 1024 (uniform blocks in 0..S: mean S/2, largest S)
  local model s row cands nodes
  model=$(measured_machine) || return
  nodes=$(printf '64,%.0s' $(seq 16))
  for s in 16 1024 16384; do
    build/a2a model --rank --procs 1024 --node-sizes "${nodes%,}" --collective alltoallv \
      --bytes $((s / 2)) --max-block $s --library other --cost-model "$model,shm_copy=0,cma=0" >"$OUT/auto-r1024-v-$s.rank"
    mapfile -t cands < <(sed -n "s/^auto's trial times: //p" "$OUT/auto-r1024-v-$s.rank" | sed 's/, /\n/g')
    for row in "${cands[@]}"; do
      row=${row//,intra=shm/}
      [ "$row" = native ] && continue  # the selector's alltoallv: its online run (table (c))
      replay "r1024-v-$s-$(row_name "$row")" theta-16x64 alltoallv "$row" $s
    done
  done
}

model_vs_sim() {  # auto's cost model against online SMPI at P = 256, over the ports and portsv runs
  if [ -n "$DRY" ]; then echo "python3 tools/model_vs_sim.py --results $OUT"; else python3 tools/model_vs_sim.py --results "$OUT"; fi
}

# Opts: sh shared buffers (needs host-setup), val validated (not shared), np=N the first N slots, pat=N
# A2A_PROGRESS_PATIENCE, verbose A2A_VERBOSE=1, v alltoallv uniform, one all rows in one run (else a run
# per row), byrow rows outer (else sizes outer); the rest name SimGrid settings (A2A_SIM_CFG), as below.
declare -A CFG=([none]="" [xt0]=--cfg=network/crosstraffic:0 [ports]=--cfg=maxmin/precision:1e-4
  [mm6]=--cfg=maxmin/precision:1e-6 [test]=--cfg=smpi/test:1e-8 [optim]=--cfg=network/optim:Full
  [thread]=--cfg=contexts/factory:thread [ucontext]=--cfg=contexts/factory:ucontext
  [nthreads2]=--cfg=contexts/nthreads:2 [bcast]=--cfg=smpi/bcast:default
  [smpfree]="--cfg=smpi/bcast:default --cfg=smpi/allreduce:rdb")  # smpfree: MPICH's without its node set-up

line() {  # NAME PLATFORM SEL SIZES ROWS OPTS ARGS: the runs of one table line
  local name=$1 plat=$2 sels=$3 sizes=$4 rows=$5 opts=$6 args=$7 o s sel row n one="" byrow="" p pairs=()
  local env=() cfg="" hascfg="" m ra
  for o in ${opts//,/ }; do
    case $o in
      -) ;; sh) env+=(A2A_SIM_SHARED=1); need_host ;; val) env+=(A2A_SIM_SHARED=0) ;;
      np=*) env+=(A2A_SIM_NP=${o#np=}) ;; pat=*) env+=(A2A_PROGRESS_PATIENCE=${o#pat=}) ;;
      verbose) env+=(A2A_VERBOSE=1) ;; v) args="--collective alltoallv --workload uniform $args" ;;
      one) one=1 ;; byrow) byrow=1 ;; *) cfg+=" ${CFG[$o]}" hascfg=1 ;;
    esac
  done
  [ -n "$hascfg" ] && env+=("A2A_SIM_CFG=${cfg# }")
  case $sizes in
    '~'*) sizes=${A2A_SIM_SIZES:-${sizes#\~}} ;;
    '&'*) sizes=${sizes#&}; [ -z "${A2A_SIM_SIZES:-}" ] || [[ " $A2A_SIM_SIZES " == *" $sizes "* ]] || return 0 ;;
  esac
  eval "rows=($rows)"; rows=("${rows[@]//@/,}")
  [ -n "$one" ] && rows=("${rows[*]/#/-a }")
  [ "${rows[*]}" = - ] && rows=("")
  if [ -n "$byrow" ]; then
    for row in "${rows[@]}"; do for s in $sizes; do pairs+=("$s"$'\t'"$row"); done; done
  else
    for s in $sizes; do for row in "${rows[@]}"; do pairs+=("$s"$'\t'"$row"); done; done
  fi
  for p in "${pairs[@]}"; do
    s=${p%%$'\t'*} row=${p#*$'\t'}
    for sel in $sels; do
      n=${name//\{s\}/$s} n=${n//\{sel\}/$sel} n=${n//\{r\}/$(row_name "$row")}
      if [[ $sel == alltoall* ]]; then
        ([ ${#env[@]} = 0 ] || export "${env[@]}"; replay "$n" "$plat" "$sel" "$row" "$s" $args)
      else
        m=$s; [[ $s == *:* ]] || m=$s:$s
        ra=$row; [ -z "$one" ] && [ -n "$row" ] && ra="-a $row"
        ([ ${#env[@]} = 0 ] || export "${env[@]}"; run "$n" "$plat" "$sel" -m "$m" $args $ra)
      fi
    done
  done
}

# The phases: a line per run, or a loop of runs over SIZES (outer) and ROWS (bash brace expansion, @ for a
# comma inside braces).  NAME's {s} is the size, {sel} the selector, {r} the row (- for : = and ,).
# SEL: a selector (a2a bench online, -m S:S or the range given) or alltoall/alltoallv (a replay: `a2a trace`
# writes the call, smpirun -replay times it; ARGS is then the workload).  SIZES ~: A2A_SIM_SIZES replaces
# them; &S: S unless A2A_SIM_SIZES leaves it out.
read -r -d '' TABLE <<'EOF_TABLE'
# phase     | name                        | platform      | sel                 | sizes          | rows | opts | args
p256        | p256-mpich                  | theta-4x64    | mpich               | 16:512         | tra:radix={2,4,8,16,32,64} bruck-zero-rotation tra2 auto | val,one | -i 2 -x 1 -c
p256        | p256-{sel}                  | theta-4x64    | ompi mvapich2       | 16:512         | tra:radix=16 | val | -i 2 -x 1 -c
radix       | p1024-radix-{s}             | theta-16x64   | bruck               | 16 128 512 2048 | - | sh | -i 1 -x 0 --sweep-radix
alltoall    | p1024-native-{sel}-{s}      | theta-16x64   | mpich ompi mvapich2 | 32 1024        | native | sh | -i 1 -x 0
alltoall    | p1024-a2a-{s}               | theta-16x64   | bruck               | 32 1024        | tra:radix={2,32,auto} bruck-{basic,modified,zero-copy,zero-rotation} tra2 auto | sh,one | -i 1 -x 1 --without-native
alltoallv   | p1024-v-radix-{s}           | theta-16x64   | mpich               | ~16 1024 16384 | tuna:radix={2,4,8,16,32,64,128} | sh,v,one | -i 1 -x 0 --without-native
alltoallv   | p1024-v-a2a-{s}             | theta-16x64   | mpich               | ~16 1024 16384 | tuna:radix=auto two-phase-bruck | sh,v,one | -i 1 -x 1 --without-native
alltoallv   | p1024-v-native-mpich-{s}    | theta-16x64   | mpich               | ~16 1024 16384 | native | sh,v | -i 1 -x 0
hier        | p1024-v-hier-coalesced-{s}  | theta-16x64   | mpich               | ~1024 16384 16 | tuna-hier:variant=coalesced | sh,v | -i 1 -x 1 --without-native
hier        | p1024-v-hier-auto-{s}       | theta-16x64   | mpich               | ~1024 16384 16 | auto | sh,v | -i 1 -x 2 --without-native
hier        | p1024-v-hier-staggered-{s}  | theta-16x64   | mpich               | ~1024 16384 16 | tuna-hier:variant=staggered | sh,v | -i 1 -x 1 --without-native
auto        | p1024-auto-{s}              | theta-16x64   | mpich               | 32 1024        | auto | sh | -i 1 -x 2 --without-native
auto        | p1024-v-auto-{s}            | theta-16x64   | mpich               | ~16 1024 16384 | auto | sh,v | -i 1 -x 2 --without-native
p4096       | p4096-{s}-{r}               | theta-64x64   | mpich               | ~16 1024       | tra:radix={2,64} tra2 tra2:radix-inter={8,4} | sh,smpfree | -i 1 -x 0 --without-native
p4096       | p4096-{s}-native-mpich      | theta-64x64   | mpich               | ~16 1024       | native | sh,smpfree | -i 1 -x 0
p4096       | p4096-v-16-tuna-hier        | theta-64x64   | mpich               | &16            | tuna-hier | sh,smpfree,v | -i 1 -x 0 --without-native
p4096       | p4096-v-16-tuna-hier-xt0    | theta-64x64   | mpich               | &16            | tuna-hier | sh,smpfree,xt0,v | -i 1 -x 0 --without-native
p4096       | p4096-v-16-native-mpich     | theta-64x64   | mpich               | &16            | native | sh,smpfree,v | -i 1 -x 0
p4096       | p4096-{s}-{r}               | theta-64x64   | mpich               | ~16 1024       | tra:radix=4096 | sh,smpfree | -i 1 -x 0 --without-native
plans       | p256-v-plan-16              | theta-4x64    | mpich               | 16             | tuna plan/tuna | sh,v,one | -i 1 -x 1 --without-native
plans       | p1024-v-plan-16             | theta-16x64   | mpich               | 16             | tuna plan/tuna | sh,v,one | -i 1 -x 1 --without-native
nb          | p128-nb                     | theta-4x64    | mpich               | 16:1024        | {,i/}tra {,i/}tra2 | np=128,test,val,one | -i 1 -x 1 -c --without-native
nb          | p128-v-nb                   | theta-4x64    | mpich               | 16:1024        | {,i/}tuna {,i/}tuna-hier | np=128,test,val,v,one | -i 1 -x 1 -c --without-native
nb          | p256-nb-16                  | theta-4x64    | mpich               | 16             | {,i/}tra | test,sh,one | -i 1 -x 1 --without-native
nb          | p1024-nb-{s}                | theta-16x64   | mpich               | 16 1024        | {,i/}tra {,i/}tra2 | test,sh,one | -i 1 -x 1 --without-native
nb          | p1024-v-nb-16               | theta-16x64   | mpich               | 16             | {,i/}tuna {,i/}tuna-hier | test,sh,v,one | -i 1 -x 1 --without-native
nb          | p1024-v-nb-1024-tuna        | theta-16x64   | mpich               | 1024           | {,i/}tuna | test,mm6,sh,v,one | -i 1 -x 1 --without-native
nb          | p1024-v-nb-1024-hier        | theta-16x64   | mpich               | 1024           | {,i/}tuna-hier | test,xt0,sh,v,one | -i 1 -x 1 --without-native
overlap     | p128-overlap-1024           | theta-4x64    | mpich               | 1024           | tra tra2 | np=128,test,sh,one | --nonblocking -i 1 -x 1
overlap     | p128-v-overlap-1024         | theta-4x64    | mpich               | 1024           | tuna-hier | np=128,test,sh,v | --nonblocking -i 1 -x 1
overlap     | p128-overlap-1024-pat0      | theta-4x64    | mpich               | 1024           | tra tra2 | pat=0,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat0    | theta-4x64    | mpich               | 1024           | tuna-hier | pat=0,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-overlap-1024-pat1      | theta-4x64    | mpich               | 1024           | tra tra2 | pat=1,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat1    | theta-4x64    | mpich               | 1024           | tuna-hier | pat=1,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-overlap-1024-pat2      | theta-4x64    | mpich               | 1024           | tra tra2 | pat=2,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat2    | theta-4x64    | mpich               | 1024           | tuna-hier | pat=2,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-overlap-1024-pat5      | theta-4x64    | mpich               | 1024           | tra tra2 | pat=5,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat5    | theta-4x64    | mpich               | 1024           | tuna-hier | pat=5,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-overlap-1024-pat10     | theta-4x64    | mpich               | 1024           | tra tra2 | pat=10,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat10   | theta-4x64    | mpich               | 1024           | tuna-hier | pat=10,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-overlap-1024-pat20     | theta-4x64    | mpich               | 1024           | tra tra2 | pat=20,np=128,test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p128-v-overlap-1024-pat20   | theta-4x64    | mpich               | 1024           | tuna-hier | pat=20,np=128,test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p1024-overlap-1024-pat2     | theta-16x64   | mpich               | 1024           | tra tra2 | test,sh,one | --nonblocking -i 1 -x 1 --without-native
overlap     | p1024-v-overlap-1024-pat2   | theta-16x64   | mpich               | 1024           | tuna-hier | test,sh,v | --nonblocking -i 1 -x 1 --without-native
overlap     | p1024-overlap-native-1024   | theta-16x64   | mpich               | 1024           | native | test,sh | --nonblocking -i 1 -x 1
overlap     | p1024-v-overlap-native-1024 | theta-16x64   | mpich               | 1024           | native | test,sh,v | --nonblocking -i 1 -x 1
config      | p1024-cfg-default           | theta-16x64   | mpich               | 16             | tra:radix={32,2} | none,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-crosstraffic0     | theta-16x64   | mpich               | 16             | tra:radix={32,2} | xt0,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-optim-full        | theta-16x64   | mpich               | 16             | tra:radix={32,2} | optim,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-maxmin-1e-6       | theta-16x64   | mpich               | 16             | tra:radix={32,2} | mm6,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-ctx-thread        | theta-16x64   | mpich               | 16             | tra:radix={32,2} | thread,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-ctx-ucontext      | theta-16x64   | mpich               | 16             | tra:radix={32,2} | ucontext,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-ctx-nthreads2     | theta-16x64   | mpich               | 16             | tra:radix={32,2} | nthreads2,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-bcast-default     | theta-16x64   | mpich               | 16             | tra:radix={32,2} | bcast,sh,one | -i 1 -x 1 --without-native
config      | p1024-cfg-smp-free          | theta-16x64   | mpich               | 16             | tra:radix={32,2} | smpfree,sh,one | -i 1 -x 1 --without-native
polaris     | polaris-p256-mpich          | polaris-8x32  | mpich               | 16:512         | tra:radix=16 | val | -i 2 -x 1 -c
polaris     | polaris-p1024-16            | polaris-32x32 | mpich               | 16             | tra:radix={2,32} tra2 | smpfree,sh,one | -i 1 -x 1
replaycheck | p256-check                  | theta-4x64    | mpich               | 16:1024        | tra:radix={2,16} tra2 | sh,one | -i 1 -x 1
replaycheck | p256-v-check                | theta-4x64    | mpich               | 16:1024        | tuna-hier:variant=coalesced | sh,v | -i 1 -x 1
replaycheck | r256-{s}-{r}                | theta-4x64    | alltoall            | 16 128 1024    | native tra:radix={2,16} tra2 | - |
replaycheck | r1024-{s}-{r}               | theta-16x64   | alltoall            | 32 1024        | native tra:radix={2,32} tra2 | - |
replaycheck | r256-v-{s}-{r}              | theta-4x64    | alltoallv           | 16 1024        | tuna-hier:variant=coalesced | - |
replaycheck | r1024-v-{s}-{r}             | theta-16x64   | alltoallv           | 16 1024        | tuna-hier:variant=coalesced | - |
replaycheck | r256-v-{s}-{r}              | theta-4x64    | alltoallv           | 16             | native | - |
replaycheck | r1024-v-{s}-{r}             | theta-16x64   | alltoallv           | 16             | native | - |
p4096r      | r4096-{s}-{r}               | theta-64x64   | alltoall            | 16 1024        | tra:radix={2,64} tra2 | - |
p4096r      | r4096-{s}-{r}               | theta-64x64   | alltoall            | 16             | native | - |
p4096r      | r4096-v-{s}-{r}             | theta-64x64   | alltoallv           | 16             | tuna-hier:variant=coalesced | - |
p4096r      | r4096-{s}-{r}-xt0           | theta-64x64   | alltoall            | 16             | tra:radix=2 tra2 tra:radix=64 | xt0 |
p4096r      | r1024-v-16-tuna-hier-xt0    | theta-16x64   | alltoallv           | 16             | tuna-hier:variant=coalesced | xt0 |
p4096r      | r4096-v-16-tuna-hier-xt0    | theta-64x64   | alltoallv           | 16             | tuna-hier:variant=coalesced | xt0 |
p4096r      | r1024-v-16-tuna-hier-block-4 | theta-16x64  | alltoallv           | 16             | tuna-hier:variant=coalesced,block=4 | - |
p4096r      | r4096-v-16-tuna-hier-block-4 | theta-64x64  | alltoallv           | 16             | tuna-hier:variant=coalesced,block=4 | - |
p4096x1     | p4096-x1-{s}-{r}            | theta-64x64   | mpich               | ~16 1024       | tra2 tra:radix={64,2} | smpfree,sh | -i 1 -x 1 --without-native
p4096sweep  | r4096-{s}-{r}               | theta-64x64   | alltoall            | 1024           | tra:radix={4,8,16,32,128} | - |
p16384      | r16384-{s}-{r}              | theta-256x64  | alltoall            | 16 512         | tra:radix={2,4} | xt0,byrow |
p16384      | r16384-{s}-{r}              | theta-256x64  | alltoall            | 16             | native | xt0 |
p16384      | r16384-{s}-{r}              | theta-256x64  | alltoall            | 512            | tra:radix={8,16,32,128,64,256} | xt0 |
p16384      | r16384-{s}-{r}              | theta-256x64  | alltoall            | 16             | tra2 | xt0 |
p16384      | r16384-v-{s}-{r}            | theta-256x64  | alltoallv           | 16             | tuna-hier:variant=coalesced | xt0 |
p16384      | r16384-{s}-{r}              | theta-256x64  | alltoall            | 16             | tra:radix={8,16,128,32,64} | xt0 |
p4096sizes  | r4096-{s}-{r}               | theta-64x64   | alltoall            | 8192 2048 128  | tra:radix={2,4,8,16,32,64,128} | - |
p4096tra2   | r4096-{s}-{r}               | theta-64x64   | alltoall            | 16 1024        | tra2:radix-intra=2,radix-inter={2,4,8,16,64} tra2:radix-intra=8,radix-inter={2,4,8,16} tra2:radix-intra=64,radix-inter={2,4,8,16,64} | - |
polaris4096 | polaris-r4096-{s}-{r}       | polaris-128x32 | alltoall           | 16 1024        | tra:radix={2,64} tra2 | - |
polaris4096 | polaris-r4096-{s}-{r}       | polaris-128x32 | alltoall           | 16             | native | - |
autopick    | p256-auto-model             | theta-4x64    | mpich               | 16             | auto | verbose,sh | -i 1 -x 2 --without-native
autopick    | @autopick_replays
p4096hier   | r4096-v-16-tuna-hier-block-4-xt0 | theta-64x64 | alltoallv        | 16             | tuna-hier:variant=coalesced,block=4 | xt0 |
powerlaw    | pl256-check                 | theta-4x64    | mpich               | 16:1024        | tuna:radix=16 two-phase-bruck padded-bruck tuna-hier:variant=coalesced | sh,one | --collective alltoallv --workload power-law:exponent=0.95 -i 1 -x 1
powerlaw    | pl256-v-{s}-{r}             | theta-4x64    | alltoallv           | 16 1024        | native tuna:radix=16 two-phase-bruck padded-bruck tuna-hier:variant=coalesced | - | power-law:exponent=0.95
powerlaw    | pl1024-v-{s}-{r}            | theta-16x64   | alltoallv           | 16 1024        | tuna:radix={2,4,8,16,32,64,128} two-phase-bruck padded-bruck tuna-hier:variant=coalesced | - | power-law:exponent=0.95
powerlaw    | pl1024-v-{s}-{r}            | theta-16x64   | alltoallv           | 16 1024        | native | - | power-law:exponent=0.95
powerlaw    | pl1024-v-{s}-{r}            | theta-16x64   | alltoallv           | 16 1024        | tuna-hier:variant=staggered | - | power-law:exponent=0.95
p16384sizes | r16384-{s}-{r}              | theta-256x64  | alltoall            | 2048 8192      | tra:radix={2,128,64,16,4,8,32} | xt0,byrow |
polaris16384 | polaris-r16384-{s}-{r}     | polaris-512x32 | alltoall           | 16             | tra:radix=2 | xt0 |
polaris16384 | polaris-r16384-{s}-{r}     | polaris-512x32 | alltoall           | 512            | tra:radix={2,128} | xt0 |
polaris16384 | polaris-r16384-{s}-{r}     | polaris-512x32 | alltoall           | 16             | native | xt0 |
polaris16384 | polaris-r16384-{s}-{r}     | polaris-512x32 | alltoall           | 512            | tra:radix={4,16,64} | xt0 |
autopickv   | @autopickv_replays
p16384s128  | r16384-{s}-{r}              | theta-256x64  | alltoall            | 128            | tra:radix={2,4,8,16,32} | xt0 |
ports       | ports-p64                   | polaris-8x32  | mpich               | 16:65536       | tra:radix=2 tra:radix={8,64}{@ports=1,} | np=64,val,one | -i 1 -x 1 -c
ports       | ports-p64-b64               | polaris-8x32  | mpich               | 16:1024        | tra:radix=64,ports=1 | np=64,val | -i 1 -x 1 -b 64 --without-native
ports       | ports-p256-theta-4x64       | theta-4x64    | mpich               | 16:16384       | tra:radix={2,4,8,16,32}{@ports=1,} tra2:ports-intra=1,ports-inter=1 tra2 | val,ports,one | -i 1 -x 1 -c
ports       | ports-p256-polaris-8x32     | polaris-8x32  | mpich               | 16:16384       | tra:radix={2,4,8,16,32}{@ports=1,} tra2:ports-intra=1,ports-inter=1 tra2 | val,ports,one | -i 1 -x 1 -c
ports1024   | ports-r1024-{s}-{r}         | theta-16x64   | alltoall            | 16 32 1024     | native tra:radix={8,16,32,64}{,@ports=1} tra2{,:ports-intra=1@ports-inter=1} tra2:radix-intra=2{,@ports-intra=1@ports-inter=1} tra2:radix-intra=8,radix-inter=8{,@ports-intra=1@ports-inter=1} | ports |
portsv      | portsv-p256-uniform         | theta-4x64    | mpich               | 16:4096        | tuna:radix={4,16}{@ports=1,} tuna-hier{:ports=1,} | val,ports,one | --collective alltoallv --workload uniform -i 1 -x 1 -c
portsv      | portsv-p256-power-law       | theta-4x64    | mpich               | 16:4096        | tuna:radix={4,16}{@ports=1,} tuna-hier{:ports=1,} | val,ports,one | --collective alltoallv --workload power-law:exponent=0.95 -i 1 -x 1 -c
portsv      | portsv-r1024-{s}-{r}        | theta-16x64   | alltoallv           | 16 1024        | native tuna:radix=32{,@ports=1} tuna-hier{,:ports=1} | ports |
portsreplay | portsr-p256-{s}-{r}         | theta-4x64    | alltoall            | 16 1024        | tra:radix=16{@ports=1,@ports=2,} | ports |
portsreplay | portsr-p256-v-{s}-{r}       | theta-4x64    | alltoallv           | 16 1024        | tuna:radix=16{@ports=1,@ports=2,} | ports |
portsreplay | portsr-p256-online          | theta-4x64    | mpich               | 16:1024        | tra:radix=16{@ports=1,@ports=2,} | val,ports,one | -i 1 -x 1 -c --without-native
portsreplay | portsr-p256-v-online        | theta-4x64    | mpich               | 16:1024        | tuna:radix=16{@ports=1,@ports=2,} | val,ports,v,one | -i 1 -x 1 -c --without-native
modelcheck  | ports-p256-xt0              | theta-4x64    | mpich               | 1024:16384     | tra:radix={16,2} tra2 | val,ports,xt0,one | -i 1 -x 1 -c
modelcheck  | @model_vs_sim
EOF_TABLE

trim() { local -n v=$1; v="${v#"${v%%[! ]*}"}"; v="${v%"${v##*[! ]}"}"; }
all_phases=$(awk -F'|' '!/^#/ && NF {gsub(/ /, "", $1); if (!seen[$1]++) printf "%s ", $1}' <<<"$TABLE")
if [ "${1:-}" = host-setup ]; then host_setup; exit; fi
phases=("$@")
((${#phases[@]})) || read -ra phases <<<"$all_phases"
for phase in "${phases[@]}"; do
  [[ " $all_phases" == *" $phase "* ]] || { echo "unknown phase $phase (host-setup list $all_phases)" >&2; exit 2; }
done
if [ -z "$DRY" ]; then
  bash scripts/install-deps.sh
  cmake --preset smpi >/dev/null && cmake --build build-smpi -j "$(nproc)" >/dev/null || exit 1
  # The host build's `a2a trace` writes the replay phases' traces.
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build build -j "$(nproc)" --target a2a_cli >/dev/null || exit 1
  mkdir -p "$OUT"
fi
for phase in "${phases[@]}"; do
  while IFS="|" read -r -u 9 ph name plat sel sizes rows opts args; do
    for f in ph name plat sel sizes rows opts args; do trim $f; done
    [ "$ph" = "$phase" ] || continue
    if [[ $name == @* ]]; then "${name#@}"; else line "$name" "$plat" "$sel" "$sizes" "$rows" "$opts" "$args"; fi
  done 9< <(grep -v "^#" <<<"$TABLE")
done
