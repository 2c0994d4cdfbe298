// `a2a bench --nonblocking` (bench_overlap.cpp), called by `a2a bench` after MPI_Init.
#pragma once
#include <string>
#include <vector>

#include "workload/workload.hpp"

struct OverlapBenchOptions {
  bool v = false;  // alltoallv
  std::string workload_text;
  a2a::workload::Workload workload;
  std::vector<long long> sizes;
  int iters = 50, warmup = 5;
  double test_interval_us = 10;  // A2A_Test (MPI_Test for native) every this much compute; 0: none
  bool validate = false;
  std::vector<std::string> algs;  // the rows: a2a's specs ("i/" optional) and native (the library's own)
  // --shim: the PMPI shim (this path, dlopen'ed) adds two rows, its
  // MPI_Ialltoall(v) and its blocking MPI_Alltoall(v), running
  // A2A_ALLTOALL(V)'s algorithm; empty: none.
  std::string shim;
  std::string csv, json;
};

// The exit status (0, 1 on wrong data or a failed call); collective over
// MPI_COMM_WORLD.
int run_bench_overlap(const OverlapBenchOptions& options);
