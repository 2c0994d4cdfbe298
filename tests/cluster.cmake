# Tests across real node boundaries (issue 60): label `cluster`, each on an
# emulated cluster of scripts/cluster.sh (network namespaces; root only:
# without root every test here exits 77, skipped).  No A2A_NODE_* is set:
# a2a finds the nodes with MPI_Comm_split_type, and the tests take the
# layout they expect from the same split (or skip a case that needs one
# node, saying why).  Each shape is a fixture of its own cluster (its own
# names and subnet), brought up before its tests and down after them.
# shape id | cluster.sh up arguments | node sizes | subnet | tests (test_*
# binaries; counts: tests/cluster_counts.sh; link: tests/cluster_link.sh;
# apps: hpcc and FFTW's MPI transforms under the shim, tests/apps/run_app.sh;
# install: scripts/check-install.sh's consumers launched on the cluster;
# shape: tests/cluster_shape.sh)
set(a2a_cluster_all topology,uniform,alltoallv,auto,plans,nonblocking)
set(a2a_cluster_shapes "2x2|2 2|2,2|10.77.1|${a2a_cluster_all},link,apps,install" "3x2|3 2|2,2,2|10.77.2|${a2a_cluster_all},counts"
    "4x1|4 1|1,1,1,1|10.77.3|${a2a_cluster_all}" "3-2-1|3,2,1|3,2,1|10.77.4|${a2a_cluster_all},counts"
    # The TRA paper's figure 5 (test_topology: TRA 7, TRA2 4 inter-node messages a direction).
    "2x4|2 4|4,4|10.77.5|topology" "4x2|4 2|2,2,2,2|10.77.6|counts,shape")
set(cluster_sh ${PROJECT_SOURCE_DIR}/scripts/cluster.sh)
foreach(shape IN LISTS a2a_cluster_shapes)
  string(REPLACE "|" ";" s "${shape}")
  list(GET s 0 id)
  list(GET s 1 up)
  list(GET s 2 sizes)
  list(GET s 3 subnet)
  list(GET s 4 tests)
  string(REPLACE "," ";" tests "${tests}")
  string(REPLACE "," "+" sum "${sizes}")
  math(EXPR np "${sum}")
  separate_arguments(up)
  string(REGEX MATCHALL "[0-9]+" node_counts "${sizes}")
  list(LENGTH node_counts nodes)
  set(env "CLUSTER_DIR=/tmp/a2a-cluster-${id};CLUSTER_PREFIX=a2a${id};CLUSTER_SUBNET=${subnet};A2A_TEST_NODES=${nodes}")
  add_test(NAME cluster.${id}.up COMMAND bash ${cluster_sh} up ${up})
  add_test(NAME cluster.${id}.down COMMAND bash ${cluster_sh} down)
  set_tests_properties(cluster.${id}.up PROPERTIES FIXTURES_SETUP cluster_${id} LABELS cluster SKIP_RETURN_CODE 77
    ENVIRONMENT "${env}")
  set_tests_properties(cluster.${id}.down PROPERTIES FIXTURES_CLEANUP cluster_${id} LABELS cluster SKIP_RETURN_CODE 77
    ENVIRONMENT "${env}")
  foreach(t IN LISTS tests)
    if(t STREQUAL "counts")
      add_test(NAME cluster.${id}.counts
        COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster_counts.sh $<TARGET_FILE:a2a_cli> ${sizes})
    elseif(t STREQUAL "apps")  # the shim's summary must name the algorithms asked for
      foreach(app IN LISTS app_apps)
        set(expect "tra tuna")
        if(app STREQUAL hpcc)
          set(expect tra)  # hpcc calls no alltoallv
        endif()
        add_test(NAME cluster.${id}.${app} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/apps/run_app.sh ${app}
          ${CMAKE_CURRENT_BINARY_DIR}/cluster.${id}.${app} "${expect}" --
          bash ${cluster_sh} mpirun -np ${np} -x LD_PRELOAD=$<TARGET_FILE:a2a_pmpi> ${app_cmd_${app}})
        set_tests_properties(cluster.${id}.${app} PROPERTIES FIXTURES_REQUIRED cluster_${id} LABELS cluster
          SKIP_RETURN_CODE 77 TIMEOUT 600 PROCESSORS 2
          ENVIRONMENT "${env};A2A_ALLTOALL=tra;A2A_ALLTOALLV=tuna;A2A_VERBOSE=1")
      endforeach()
      continue()
    elseif(t STREQUAL "shape")  # after the counts: a rate would slow them (RUN_SERIAL keeps it apart)
      add_test(NAME cluster.${id}.shape COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster_shape.sh ${nodes})
      set_tests_properties(cluster.${id}.shape PROPERTIES RUN_SERIAL TRUE)
    elseif(t STREQUAL "install")
      add_test(NAME cluster.${id}.install COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-install.sh ${PROJECT_BINARY_DIR})
      set_tests_properties(cluster.${id}.install PROPERTIES FIXTURES_REQUIRED cluster_${id} LABELS cluster
        SKIP_RETURN_CODE 77 TIMEOUT 600 PROCESSORS 2 PASS_REGULAR_EXPRESSION "install check ok \\(bash"
        ENVIRONMENT "${env};CHECK_INSTALL_LAUNCHER=bash ${cluster_sh} mpirun")
      continue()
    elseif(t STREQUAL "link")  # alone: it compares timings
      add_test(NAME cluster.${id}.link COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster_link.sh $<TARGET_FILE:a2a_cli> ${np})
      set_tests_properties(cluster.${id}.link PROPERTIES RUN_SERIAL TRUE)
    else()
      add_test(NAME cluster.${id}.${t} COMMAND bash ${cluster_sh} mpirun -np ${np} $<TARGET_FILE:test_${t}>)
    endif()
    set_tests_properties(cluster.${id}.${t} PROPERTIES FIXTURES_REQUIRED cluster_${id} LABELS cluster
      SKIP_RETURN_CODE 77 TIMEOUT 600 PROCESSORS 2 ENVIRONMENT "${env};ASAN_OPTIONS=detect_leaks=0")
  endforeach()
endforeach()
