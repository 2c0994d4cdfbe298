// GoogleTest under MPI: every rank runs every test, rank 0 prints, and the
// exit code is the worst over ranks so a failure on any rank fails the run.
#include "gtest_mpi.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = a2a::test::run_all_tests_on_every_rank();
  MPI_Finalize();
  return rc;
}
