# Tests of the SMPI build (label sim): small simulated runs on a generated
# platform, every byte validated, so the simulated build keeps working.
# The large sweeps are scripts (scripts/sim-bench.sh), not tests.
find_program(A2A_SMPIRUN smpirun REQUIRED)
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(sim_dir ${CMAKE_CURRENT_BINARY_DIR}/sim)
file(MAKE_DIRECTORY ${sim_dir})
# 4 nodes of 16 ranks, the development machine's figures, flat network.
execute_process(COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/sim/platform.py --preset local --nodes 4
  --per-node 16 -o ${sim_dir}/local-4x16 OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
set(smpirun ${A2A_SMPIRUN} -platform ${sim_dir}/local-4x16.xml -hostfile ${sim_dir}/local-4x16.hosts
  --cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:mpich --log=root.thres:critical)
set(sim_alltoall -a tra:radix=2 -a tra:radix=8 -a tra:radix=8,ports=1 -a tra:radix=8,ports=3 -a tra:radix=64
  -a bruck-zero-rotation -a bruck-basic:dt=1 -a spread-out -a tra2 -a tra2:ports-intra=1,ports-inter=2 -a clustered
  -a auto)
set(sim_alltoallv -a tuna:radix=2 -a tuna:radix=8 -a tuna:radix=8,ports=1 -a tuna:radix=8,ports=3 -a two-phase-bruck
  -a padded-bruck -a spread-out -a tuna-hier -a tuna-hier:ports=1 -a clustered -a auto)
add_test(NAME sim.bench.alltoall.np64 COMMAND ${smpirun} -np 64 $<TARGET_FILE:a2a_cli> bench -m 16:256 -i 2 -x 0 -c
  ${sim_alltoall} --csv ${sim_dir}/alltoall.csv)
add_test(NAME sim.bench.alltoallv.np64 COMMAND ${smpirun} -np 64 $<TARGET_FILE:a2a_cli> bench --collective alltoallv
  --workload power-law -m 16:256 -i 2 -x 0 -c ${sim_alltoallv} --csv ${sim_dir}/alltoallv.csv)
# The k-port form at P = 27 (a prime power, so TRA's last digit is full at
# radix 3 and short at radix 5): every B of a few radices.
add_test(NAME sim.bench.ports.np27 COMMAND ${smpirun} -np 27 $<TARGET_FILE:a2a_cli> bench -m 16:256 -i 1 -x 0 -c
  -a tra:radix=3,ports=1 -a tra:radix=3 -a tra:radix=5,ports=1 -a tra:radix=5,ports=2 -a tra:radix=5,ports=3
  -a tra:radix=5 -a tra:radix=27,ports=7 -a tra:radix=27 --csv ${sim_dir}/ports27.csv)
add_test(NAME sim.bench.ports_v.np27 COMMAND ${smpirun} -np 27 $<TARGET_FILE:a2a_cli> bench --collective alltoallv
  --workload power-law -m 16:256 -i 1 -x 0 -c -a tuna:radix=3,ports=1 -a tuna:radix=5,ports=2 -a tuna:radix=5
  -a tuna:radix=27,ports=7 --csv ${sim_dir}/ports27v.csv)
set_tests_properties(sim.bench.alltoall.np64 sim.bench.alltoallv.np64 sim.bench.ports.np27 sim.bench.ports_v.np27
  PROPERTIES LABELS sim TIMEOUT 600 PASS_REGULAR_EXPRESSION "# wrong: 0 OK" FAIL_REGULAR_EXPRESSION "failed|FAILED")

# A2A_SIM_SHARED=1 (every rank's buffers the same pages, for the scale
# runs) must not change simulated time: the same rows with private and
# with shared buffers give identical times (`rows` of them), and the runs
# end cleanly.  `what`: the test's words for its pass message.
function(add_shared_buffers_test name rows what)
  add_test(NAME ${name} COMMAND bash -c [=[
set -euo pipefail
dir=$1 rows=$2 what=$3; shift 3
for shared in 0 1; do
  A2A_SIM_SHARED=$shared "$@" --csv "$dir/shared-$shared.csv" > "$dir/shared-$shared.txt" 2>&1 ||
    { cat "$dir/shared-$shared.txt"; exit 1; }
done
times() { python3 -c 'import csv, sys; [print(r["bytes"], r["resolved"], r["median_us"]) for r in csv.DictReader(open(sys.argv[1]))]' "$1"; }
[ "$(times "$dir/shared-0.csv" | wc -l)" -eq "$rows" ]
diff <(times "$dir/shared-0.csv") <(times "$dir/shared-1.csv")
echo "$what, shared buffers: same simulated times"]=] sim-shared-test ${sim_dir}/${name} ${rows} ${what} ${ARGN})
  file(MAKE_DIRECTORY ${sim_dir}/${name})
  set_tests_properties(${name} PROPERTIES LABELS sim TIMEOUT 600
    PASS_REGULAR_EXPRESSION "${what}, shared buffers: same simulated times")
endfunction()
# Algorithms whose buffers carry block sizes (TuNA's metadata, hierarchical
# TuNA's in-band sizes) keep those private.
add_shared_buffers_test(sim.shared_buffers.alltoallv.np64 25 alltoallv ${smpirun} -np 64 $<TARGET_FILE:a2a_cli> bench
  --collective alltoallv -m 64:1024 -i 1 -x 1 --without-native -a tuna:radix=4 -a two-phase-bruck -a tuna-hier:variant=coalesced
  -a tuna-hier:variant=staggered -a padded-bruck)
# Nonblocking rows: a thread's spare operations once freed SMPI's shared
# scratch at exit, after SMPI was gone (free(): invalid pointer).  A wait
# polls; SMPI charges each MPI_Test smpi/test (10 ns here).
add_shared_buffers_test(sim.shared_buffers.nonblocking.np64 20 nonblocking ${smpirun} --cfg=smpi/test:1e-8 -np 64
  $<TARGET_FILE:a2a_cli> bench -m 64:1024 -i 1 -x 1 --without-native -a tra -a i/tra -a tra2 -a i/tra2)

# SMPI makes no shared windows: shm falls back to spread-out and the bench's
# algorithm column says so ("shm (spread-out)"); intra=shm phases run
# point-to-point, every byte still validated, and their names say so too
# ("tra2:intra=shm (tra2:radix-intra=3,radix-inter=2)").  `want`: the
# patterns (grep) the bench's output must show, separated by '|'.
function(add_shm_fallback_test name want)
  add_test(NAME ${name} COMMAND bash -c [=[
set -euo pipefail
IFS='|' read -ra want <<<"$1"
shift
out=$("$@" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
for w in 'shm (spread-out)' "${want[@]}" '# wrong: 0 OK'; do grep -q -- "$w" <<<"$out"; done
echo "shm fell back and said so"]=] sim-shm-test "${want}" ${smpirun} -np 8 $<TARGET_FILE:a2a_cli> bench
    -m 16:256 -i 2 -x 0 -c -a shm ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS sim TIMEOUT 600 PASS_REGULAR_EXPRESSION "shm fell back and said so")
endfunction()
add_shm_fallback_test(sim.shm_fallback.np8
  "tra2:intra=shm (tra2:radix-intra=[0-9]*,radix-inter=[0-9]*) |clustered:intra=shm (clustered) "
  -a tra2:intra=shm -a clustered:intra=shm)
add_shm_fallback_test(sim.shm_fallback.alltoallv.np8
  "tuna-hier:intra=shm (tuna-hier:variant=coalesced,radix=[0-9]*,block=[0-9]*) "
  --collective alltoallv -a tuna-hier:intra=shm)

# `a2a bench --nonblocking` under SMPI: the compute phase is simulated time
# (it once took 0.01 us for 10 us: smpi_execute scales by smpi/host-speed,
# not the platform's), so the compute phase timed alone lasts at least the
# ranks' mean pure time, and overlap stays within 0..100 %; --without-native
# leaves the library's row out.
add_test(NAME sim.bench.overlap.np32 COMMAND bash -c [=[
set -euo pipefail
csv=$1; shift
"$@" --csv "$csv" | grep -q "# wrong: 0 OK"
[ "$(cut -d, -f5 "$csv" | sort -u | tr '\n' ' ')" = '"tra" algorithm ' ]
awk -F, 'NR > 1 && !($7 >= 0.99 * $6 && $7 > 1 && $9 >= 0 && $9 <= 100) { bad = 1 } END { exit bad }' "$csv"
echo "overlap: compute simulated"]=] sim-overlap-test ${sim_dir}/overlap.csv ${smpirun} --cfg=smpi/test:1e-8 -np 32
  $<TARGET_FILE:a2a_cli> bench --nonblocking -m 256:1024 -i 1 -x 1 -c --without-native -a tra)
set_tests_properties(sim.bench.overlap.np32 PROPERTIES LABELS sim TIMEOUT 600
  PASS_REGULAR_EXPRESSION "overlap: compute simulated")
