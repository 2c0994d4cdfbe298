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
set(sim_alltoall -a tra:radix=2 -a tra:radix=8 -a tra:radix=64 -a bruck-zero-rotation -a bruck-basic:dt=1
  -a spread-out -a tra2 -a clustered -a auto)
set(sim_alltoallv -a tuna:radix=2 -a tuna:radix=8 -a two-phase-bruck -a padded-bruck -a spread-out
  -a tuna-hier -a clustered -a auto)
add_test(NAME sim.bench.alltoall.np64 COMMAND ${smpirun} -np 64 $<TARGET_FILE:a2a_cli> bench -m 16:256 -i 2 -x 0 -c
  ${sim_alltoall} --csv ${sim_dir}/alltoall.csv)
add_test(NAME sim.bench.alltoallv.np64 COMMAND ${smpirun} -np 64 $<TARGET_FILE:a2a_cli> bench --collective alltoallv
  --workload power-law -m 16:256 -i 2 -x 0 -c ${sim_alltoallv} --csv ${sim_dir}/alltoallv.csv)
set_tests_properties(sim.bench.alltoall.np64 sim.bench.alltoallv.np64 PROPERTIES LABELS sim TIMEOUT 600
  PASS_REGULAR_EXPRESSION "# wrong: 0 OK" FAIL_REGULAR_EXPRESSION "failed|FAILED")
