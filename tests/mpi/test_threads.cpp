// MPI_THREAD_MULTIPLE: several threads, each on its own communicator, run
// collectives at once (alltoall and alltoallv, several algorithms, auto
// included, contexts created concurrently, every third call nonblocking)
// and get correct data and their own stats; every context is freed with its communicator.  Exits 77
// (skipped) when the MPI library does not provide MPI_THREAD_MULTIPLE.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "core/context.hpp"
#include "gtest_mpi.hpp"

namespace {

int encode(int src, int dst, int j) { return ((src * 64 + dst) << 16) + j; }

// Thread t's work on comm: `rounds` calls, alternating collectives and
// algorithms; returns wrong ints (or failed calls).
long long work(int t, MPI_Comm comm, int rounds) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  const char* uniform[] = {"tra:radix=2", "spread-out", "bruck-zero-copy", "auto", "clustered", "shm"};
  const char* varying[] = {"tuna:radix=3", "spread-out", "two-phase-bruck", "auto", "padded-bruck", "shm"};
  long long wrong = 0;
  for (int i = 0; i < rounds; ++i) {
    const int n = 1 + (i + t) % 7;  // ints per block
    std::vector<int> s(n * P), r(n * P, -1), counts(P, n), displs(P);
    for (int d = 0; d < P; ++d) {
      displs[d] = (P - 1 - d) * n;  // reversed blocks for alltoallv
      for (int j = 0; j < n; ++j) s[d * n + j] = encode(me, d, j + 100 * t);
    }
    const bool v = i % 2;
    const char* spec = v ? varying[(i / 2 + t) % 6] : uniform[(i / 2 + t) % 6];
    if (v) {
      for (int d = 0; d < P; ++d)
        for (int j = 0; j < n; ++j) s[displs[d] + j] = encode(me, d, j + 100 * t);
    }
    // Every third call nonblocking, completed by a test loop: the threads'
    // pending operations advance in each other's calls too.
    const bool nonblocking = i % 3 == 2;
    A2A_Request req = A2A_REQUEST_NULL;
    int rc = nonblocking ? (v ? A2A_Ialltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(),
                                               counts.data(), displs.data(), MPI_INT, comm, spec, &req)
                              : A2A_Ialltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, comm, spec, &req))
                         : v ? A2A_Alltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(),
                                             displs.data(), MPI_INT, comm, spec)
                             : A2A_Alltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, comm, spec);
    for (int done = 0; nonblocking && rc == MPI_SUCCESS && !done;) rc = A2A_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      ADD_FAILURE() << "thread " << t << " " << spec << ": " << a2a::last_error_message();
      ++wrong;
      continue;
    }
    A2A_Stats st;
    A2A_Last_stats(&st);  // this thread's own call
    const std::string ran = st.algorithm;
    if (std::string(spec) != "auto" && ran.rfind(std::string(spec).substr(0, std::string(spec).find(':')), 0) != 0) {
      ADD_FAILURE() << "thread " << t << " called " << spec << " but its stats say " << ran;
      ++wrong;
    }
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < n; ++j) wrong += r[(v ? displs[src] : src * n) + j] != encode(src, me, j + 100 * t);
  }
  return wrong;
}

}  // namespace

TEST(Threads, CollectivesOnTheirOwnCommunicatorsAtOnce) {
  const int threads = 4, rounds = 60;
  const int alive_before = a2a::detail::live_contexts();
  std::vector<MPI_Comm> comms(threads);
  for (auto& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);  // a2a meets them first inside the threads
  std::vector<long long> wrong(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { wrong[t] = work(t, comms[t], rounds); });
  for (auto& th : pool) th.join();
  long long total = 0;
  for (long long w : wrong) total += w;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, 0);
  EXPECT_EQ(a2a::detail::live_contexts(), alive_before + threads);
  for (auto& c : comms) MPI_Comm_free(&c);  // the attribute callbacks free the contexts
  EXPECT_EQ(a2a::detail::live_contexts(), alive_before);
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("MPI_THREAD_MULTIPLE not provided: skipped\n");
    MPI_Finalize();
    return 77;
  }
  const int rc = a2a::test::run_all_tests_on_every_rank();
  MPI_Finalize();
  return rc;
}
