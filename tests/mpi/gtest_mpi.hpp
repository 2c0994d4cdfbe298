// GoogleTest under MPI, for every MPI test's main: every rank runs every
// test, rank 0 prints, the other ranks print only their failures (tagged
// with the rank), and the result is the worst over ranks.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace a2a::test {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
  }

 private:
  int rank_;
};

// Runs the registered tests on every rank (MPI and GoogleTest initialised)
// and returns the worst result over MPI_COMM_WORLD; the caller finalises.
inline int run_all_tests_on_every_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int rc = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return rc;
}

}  // namespace a2a::test
