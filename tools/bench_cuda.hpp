// `a2a bench --device cuda` (bench_cuda.cpp), called by `a2a bench` after MPI_Init.
#pragma once
#include <string>
#include <vector>

#include "workload/workload.hpp"

struct CudaBenchOptions {
  bool v = false;  // alltoallv
  std::string workload_text;
  a2a::workload::Workload workload;
  long long min_bytes = 16, max_bytes = 64LL << 20;
  int iters = 20, warmup = 3;
  bool validate = false;
  bool fake = false;  // host memory in place of device memory (--device fake-cuda)
  std::vector<std::string> algs;  // extra rows
  std::string csv, json;
};

// The exit status (0, 1 on wrong data or a failed call, 2 without a device);
// collective over MPI_COMM_WORLD.
int run_bench_cuda(const CudaBenchOptions& options);
