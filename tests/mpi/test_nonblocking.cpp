// Nonblocking calls: every registry algorithm through A2A_Ialltoall(v) with
// encoded data (gaps, zero counts, a non-contiguous type, in place, a
// sub-communicator), completed by A2A_Test loops; operations in flight
// together on one communicator completed in reverse order; user receives
// with wildcards on the same communicator never matching; a plan started
// again and again with A2A_Istart.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "harness.hpp"

using namespace a2a::test;
using a2a::detail::Collective;

namespace {

int size_of(MPI_Comm comm) {
  int P;
  MPI_Comm_size(comm, &P);
  return P;
}
int rank_of(MPI_Comm comm) {
  int r;
  MPI_Comm_rank(comm, &r);
  return r;
}

// Completes *req by A2A_Test, doing nothing else in between: progress is
// the library's own inside each test.
int test_until_done(A2A_Request* req) {
  int flag = 0, rc = MPI_SUCCESS;
  for (long spins = 0; !flag && rc == MPI_SUCCESS; ++spins) rc = A2A_Test(req, &flag, MPI_STATUS_IGNORE);
  EXPECT_EQ(*req, A2A_REQUEST_NULL);
  return rc;
}

// Alltoall of `count` elements of `layout` on comm by `spec`, nonblocking,
// the data and the untouched send buffer checked.
void ialltoall_case(MPI_Comm comm, const std::string& spec, const Layout& layout, int count, bool in_place) {
  const int P = size_of(comm), rank = rank_of(comm);
  Buffer s(layout, static_cast<long long>(count) * P), r(layout, static_cast<long long>(count) * P);
  fill_send(in_place ? r : s, count, rank, P);
  const std::vector<unsigned char> before = s.bytes;
  A2A_Request req = A2A_REQUEST_NULL;
  const std::string what = spec + " count " + std::to_string(count) + (in_place ? " in place" : "");
  ASSERT_EQ(A2A_Ialltoall(in_place ? MPI_IN_PLACE : s.data(), count, layout.type, r.data(), count, layout.type, comm,
                          spec.c_str(), &req),
            MPI_SUCCESS)
      << what;
  ASSERT_EQ(test_until_done(&req), MPI_SUCCESS) << what;
  EXPECT_EQ(check_recv(r, count, rank, P, what), 0);
  if (spec.rfind("tra:", 0) == 0 && count > 0) {  // the k-port form's batches, as blocking (closed forms)
    A2A_Stats st;
    A2A_Last_stats(&st);
    const Expected want = expected_stats(spec, P);
    EXPECT_EQ(st.rounds, want.rounds) << what;
    EXPECT_EQ(st.waits, want.waits) << what;
  }
  if (!in_place) {
    EXPECT_TRUE(s.bytes == before) << what << ": the send buffer changed";
  }
}

// Alltoallv of ints: rank s sends (s + 2d + shift) % 4 ints to d (zeros
// among them), blocks in reverse order with a gap of 3 ints between them.
struct VCase {
  std::vector<int> sc, sd, rc, rd, sbuf, rbuf;
  VCase(int P, int rank, int shift) : sc(P), sd(P), rc(P), rd(P) {
    const auto count = [&](int s, int d) { return (s + 2 * d + shift) % 4; };
    int so = 0, ro = 0;
    for (int i = P - 1; i >= 0; --i) {
      sc[i] = count(rank, i), rc[i] = count(i, rank);
      sd[i] = so, rd[i] = ro;
      so += sc[i] + 3, ro += rc[i] + 3;
    }
    sbuf.assign(static_cast<size_t>(so) + 1, -7);
    rbuf.assign(static_cast<size_t>(ro) + 1, -1);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < sc[d]; ++j) sbuf[static_cast<size_t>(sd[d] + j)] = encode(rank, d, j);
  }
  long long wrong(int P, int rank) const {
    long long w = 0;
    std::vector<char> data(rbuf.size(), 0);
    for (int s = 0; s < P; ++s)
      for (int j = 0; j < rc[s]; ++j) {
        w += rbuf[static_cast<size_t>(rd[s] + j)] != encode(s, rank, j);
        data[static_cast<size_t>(rd[s] + j)] = 1;
      }
    for (size_t i = 0; i < rbuf.size(); ++i) w += !data[i] && rbuf[i] != -1;  // gaps untouched
    return w;
  }
};

std::vector<std::string> specs(Collective coll, int P) { return registry_specs(coll, P, {"native", "auto"}); }

}  // namespace

TEST(Nonblocking, EveryAlltoallAlgorithm) {
  const int P = size_of(MPI_COMM_WORLD);
  for (const auto& spec : specs(Collective::alltoall, P))
    for (int count : {0, 1, 3}) {
      ialltoall_case(MPI_COMM_WORLD, spec, int_layout(), count, false);
      ialltoall_case(MPI_COMM_WORLD, spec, strided_layout(), count, false);
    }
}

TEST(Nonblocking, InPlaceAndSubCommunicator) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank < (P + 1) / 2, P - rank, &half);
  for (const auto& spec : specs(Collective::alltoall, P)) ialltoall_case(MPI_COMM_WORLD, spec, int_layout(), 3, true);
  for (const auto& spec : specs(Collective::alltoall, size_of(half))) ialltoall_case(half, spec, int_layout(), 2, false);
  MPI_Comm_free(&half);
}

TEST(Nonblocking, EveryAlltoallvAlgorithm) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (const auto& spec : specs(Collective::alltoallv, P)) {
    VCase v(P, rank, 1);
    const std::vector<int> before = v.sbuf;
    A2A_Request req = A2A_REQUEST_NULL;
    ASSERT_EQ(A2A_Ialltoallv(v.sbuf.data(), v.sc.data(), v.sd.data(), MPI_INT, v.rbuf.data(), v.rc.data(),
                             v.rd.data(), MPI_INT, MPI_COMM_WORLD, spec.c_str(), &req),
              MPI_SUCCESS)
        << spec;
    ASSERT_EQ(test_until_done(&req), MPI_SUCCESS) << spec;
    EXPECT_EQ(v.wrong(P, rank), 0) << spec;
    EXPECT_EQ(v.sbuf, before) << spec << ": the send buffer changed";
  }
}

// Three operations in flight on one communicator (different algorithms,
// alltoall and alltoallv), completed in reverse order; then by Waitall and
// by a Testall loop.
TEST(Nonblocking, ThreeInFlightCompletedInAnyOrder) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  const std::vector<std::string> uni = specs(Collective::alltoall, P), var = specs(Collective::alltoallv, P);
  for (size_t k = 0; k < std::max(uni.size(), var.size()); ++k)
    for (int how = 0; how < 3; ++how) {
      const std::string a = uni[k % uni.size()], b = uni[(k + 1) % uni.size()], v = var[k % var.size()];
      Buffer s1(int_layout(), 2LL * P), r1(int_layout(), 2LL * P), s2(int_layout(), 3LL * P), r2(int_layout(), 3LL * P);
      fill_send(s1, 2, rank, P);
      fill_send(s2, 3, rank, P);
      VCase vc(P, rank, static_cast<int>(k));
      A2A_Request req[3];
      ASSERT_EQ(A2A_Ialltoall(s1.data(), 2, MPI_INT, r1.data(), 2, MPI_INT, MPI_COMM_WORLD, a.c_str(), &req[0]), 0);
      ASSERT_EQ(A2A_Ialltoallv(vc.sbuf.data(), vc.sc.data(), vc.sd.data(), MPI_INT, vc.rbuf.data(), vc.rc.data(),
                               vc.rd.data(), MPI_INT, MPI_COMM_WORLD, v.c_str(), &req[1]),
                0);
      ASSERT_EQ(A2A_Ialltoall(s2.data(), 3, MPI_INT, r2.data(), 3, MPI_INT, MPI_COMM_WORLD, b.c_str(), &req[2]), 0);
      const std::string what = a + ", " + v + ", " + b + " completed by " + std::to_string(how);
      if (how == 0) {
        for (int i = 2; i >= 0; --i) ASSERT_EQ(A2A_Wait(&req[i], MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
      } else if (how == 1) {
        MPI_Status st[3];
        ASSERT_EQ(A2A_Waitall(3, req, st), MPI_SUCCESS) << what;
        for (const auto& x : st) EXPECT_EQ(x.MPI_ERROR, MPI_SUCCESS) << what;
      } else {
        int flag = 0;
        while (!flag) ASSERT_EQ(A2A_Testall(3, req, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS) << what;
      }
      for (const auto& r : req) EXPECT_EQ(r, A2A_REQUEST_NULL) << what;
      EXPECT_EQ(check_recv(r1, 2, rank, P, what), 0);
      EXPECT_EQ(check_recv(r2, 3, rank, P, what), 0);
      EXPECT_EQ(vc.wrong(P, rank), 0) << what;
    }
}

// Strong progress (front/progress.hpp): where a hook is active, rank 0
// sits in MPI_Recv, MPI_Probe or MPI_Barrier on another communicator while
// its operation is pending, and the others reach that call only after their
// A2A_Wait returned: it completes only where rank 0's part advances inside
// the library's call.  Every registry row of both collectives.
TEST(Nonblocking, BlockedRankAdvancesInsideTheLibrarysCalls) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  if (a2a::progress_mode().rfind("none", 0) == 0) GTEST_SKIP() << a2a::progress_mode();
  MPI_Comm other;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  const std::vector<std::string> uni = specs(Collective::alltoall, P), var = specs(Collective::alltoallv, P);
  for (size_t k = 0; k < std::max(uni.size(), var.size()); ++k)
    for (int how = 0; how < 3; ++how)
      for (int v = 0; v < 2; ++v) {
        const std::string spec = v ? var[k % var.size()] : uni[k % uni.size()];
        const std::string what = spec + " with rank 0 in " + (how == 0 ? "MPI_Recv" : how == 1 ? "MPI_Probe" : "MPI_Barrier");
        Buffer s(int_layout(), 2LL * P), r(int_layout(), 2LL * P);
        fill_send(s, 2, rank, P);
        VCase vc(P, rank, static_cast<int>(k));
        A2A_Request req;
        ASSERT_EQ(v ? A2A_Ialltoallv(vc.sbuf.data(), vc.sc.data(), vc.sd.data(), MPI_INT, vc.rbuf.data(), vc.rc.data(),
                                     vc.rd.data(), MPI_INT, MPI_COMM_WORLD, spec.c_str(), &req)
                    : A2A_Ialltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, spec.c_str(), &req),
                  MPI_SUCCESS)
            << what;
        int token = 0;
        if (rank == 0) {
          if (how == 0 && P > 1) MPI_Recv(&token, 1, MPI_INT, 1, 5, other, MPI_STATUS_IGNORE);
          if (how == 1 && P > 1) {
            MPI_Probe(1, 5, other, MPI_STATUS_IGNORE);
            MPI_Recv(&token, 1, MPI_INT, 1, 5, other, MPI_STATUS_IGNORE);
          }
          if (how == 2) MPI_Barrier(other);
          ASSERT_EQ(A2A_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
        } else {
          ASSERT_EQ(A2A_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
          if (rank == 1 && how < 2) MPI_Send(&token, 1, MPI_INT, 0, 5, other);
          if (how == 2) MPI_Barrier(other);
        }
        if (v)
          EXPECT_EQ(vc.wrong(P, rank), 0) << what;
        else
          EXPECT_EQ(check_recv(r, 2, rank, P, what), 0);
      }
  MPI_Comm_free(&other);
}

// Operations that share a node's segment take it in start order on every
// rank, also where one reaches its shm phase only after a wait (tuna-hier's
// size exchange) and a later one at its start (clustered, tra2): a turn
// drawn at the phase itself gave ranks different orders, and exchanges of
// different operations met.  On one node (no node phases) they fall back
// and the test still checks the data.
TEST(Nonblocking, ShmPhasesAfterAWaitKeepStartOrder) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (const char* later : {"clustered:intra=shm", "tra2:intra=shm", "tuna-hier:intra=shm"})
    for (int k = 0; k < 8; ++k) {
      VCase v1(P, rank, k), v2(P, rank, k + 1);
      Buffer s(int_layout(), 3LL * P), r(int_layout(), 3LL * P);
      fill_send(s, 3, rank, P);
      A2A_Request req[2];
      ASSERT_EQ(A2A_Ialltoallv(v1.sbuf.data(), v1.sc.data(), v1.sd.data(), MPI_INT, v1.rbuf.data(), v1.rc.data(),
                               v1.rd.data(), MPI_INT, MPI_COMM_WORLD, "tuna-hier:intra=shm", &req[0]),
                0);
      const bool uniform = std::string(later) != "tuna-hier:intra=shm";
      ASSERT_EQ(uniform ? A2A_Ialltoall(s.data(), 3, MPI_INT, r.data(), 3, MPI_INT, MPI_COMM_WORLD, later, &req[1])
                        : A2A_Ialltoallv(v2.sbuf.data(), v2.sc.data(), v2.sd.data(), MPI_INT, v2.rbuf.data(),
                                         v2.rc.data(), v2.rd.data(), MPI_INT, MPI_COMM_WORLD, later, &req[1]),
                0);
      for (int i = 1; i >= 0; --i) ASSERT_EQ(A2A_Wait(&req[i], MPI_STATUS_IGNORE), MPI_SUCCESS) << later;
      const std::string what = std::string("tuna-hier:intra=shm, then ") + later;
      EXPECT_EQ(v1.wrong(P, rank), 0) << what;
      if (uniform) EXPECT_EQ(check_recv(r, 3, rank, P, what), 0);
      else EXPECT_EQ(v2.wrong(P, rank), 0) << what;
    }
}

// A2A_PROGRESS_PATIENCE (its runs only): a test that finds a round done
// keeps stepping while the next rounds complete, so with every rank in its
// first test after its first round was posted everywhere, that test runs
// the whole operation (TRA at radix 2 on P >= 5: 3 or more rounds, each
// waiting on a round the peers post inside their own tests).
TEST(Nonblocking, PatientTestRunsQuickRoundsInOneCall) {
  if (!std::getenv("A2A_PROGRESS_PATIENCE")) GTEST_SKIP() << "A2A_PROGRESS_PATIENCE runs only";
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  if (P < 5) GTEST_SKIP() << "fewer than 3 rounds";
  for (int k = 0; k < 5; ++k) {
    Buffer s(int_layout(), 2LL * P), r(int_layout(), 2LL * P);
    fill_send(s, 2, rank, P);
    A2A_Request req = A2A_REQUEST_NULL;
    ASSERT_EQ(A2A_Ialltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, "tra:radix=2", &req), 0);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's first round posted (a2a's traffic is on its own duplicate)
    int flag = 0, tests = 0;
    for (; !flag; ++tests) ASSERT_EQ(A2A_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_LE(tests, 2) << "start " << k;
    EXPECT_EQ(check_recv(r, 2, rank, P, "patient tra"), 0);
  }
}

// A user receive with wildcards, posted on the same communicator before an
// operation starts, never matches its traffic; a user message sent while it
// is in flight arrives to it.
TEST(Nonblocking, UserWildcardReceivesNeverMatch) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (const auto& spec : specs(Collective::alltoall, P)) {
    int token = -1;
    MPI_Request user;
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &user);
    Buffer s(int_layout(), 3LL * P), r(int_layout(), 3LL * P);
    fill_send(s, 3, rank, P);
    A2A_Request req;
    ASSERT_EQ(A2A_Ialltoall(s.data(), 3, MPI_INT, r.data(), 3, MPI_INT, MPI_COMM_WORLD, spec.c_str(), &req), 0);
    const int mine = 9000 + rank;
    MPI_Send(&mine, 1, MPI_INT, (rank + 1) % P, 43, MPI_COMM_WORLD);  // while the operation is in flight
    ASSERT_EQ(A2A_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS) << spec;
    MPI_Status status;
    MPI_Wait(&user, &status);
    EXPECT_EQ(token, 9000 + (rank + P - 1) % P) << spec;
    EXPECT_EQ(status.MPI_TAG, 43) << spec;
    EXPECT_EQ(check_recv(r, 3, rank, P, spec), 0);
  }
}

// A plan started 100 times with A2A_Istart, its send buffer's contents new
// each time; a second start while one is in flight is refused; the stats
// after a completion are that operation's.
TEST(Nonblocking, PlanStartedAgainAndAgain) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (const char* spec : {"spread-out", "tra", "shm", "auto", "native"}) {
    std::vector<int> s(2 * static_cast<size_t>(P)), r(2 * static_cast<size_t>(P));
    A2A_Stats st;
    ASSERT_EQ(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, spec), MPI_SUCCESS);
    A2A_Last_stats(&st);
    const std::string blocking = st.algorithm;  // what the blocking call ran (a fallback, where it fell back)
    A2A_Plan plan = nullptr;
    ASSERT_EQ(A2A_Alltoall_init(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, spec, &plan), 0) << spec;
    long long wrong = 0;
    for (int it = 0; it < 100; ++it) {
      for (int d = 0; d < P; ++d)
        for (int j = 0; j < 2; ++j) s[static_cast<size_t>(2 * d + j)] = encode(rank, d, j) ^ (it << 24);
      A2A_Request req;
      ASSERT_EQ(A2A_Istart(plan, &req), MPI_SUCCESS) << spec;
      A2A_Request again;
      if (it == 0 && req != A2A_REQUEST_NULL && P > 1) {
        EXPECT_EQ(A2A_Istart(plan, &again), MPI_ERR_REQUEST) << spec;
      }
      ASSERT_EQ(test_until_done(&req), MPI_SUCCESS) << spec;
      for (int src = 0; src < P; ++src)
        for (int j = 0; j < 2; ++j) wrong += r[static_cast<size_t>(2 * src + j)] != (encode(src, rank, j) ^ (it << 24));
    }
    EXPECT_EQ(wrong, 0) << spec;
    A2A_Last_stats(&st);
    if (std::string(spec) != "auto") {
      EXPECT_EQ(st.algorithm, blocking) << spec;
    }
    EXPECT_EQ(A2A_Plan_free(&plan), MPI_SUCCESS);
  }
}

// A repeated start of a2a's own alltoall takes the prepared call its last
// completion kept (nonblocking.cpp's spare operations): two signatures in
// flight together and completed in either order, the receive buffers
// cleared before each start.  A communicator freed and made again (often
// with the same handle) with its ranks reordered, and a derived type freed
// and made again with another layout: no start may take the call kept for
// the freed one.
TEST(Nonblocking, RepeatedStartsTakeOnlyTheirOwnCall) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (const char* spec : {"spread-out", "pairwise", "tra", "shm"}) {
    Buffer s1(int_layout(), 2LL * P), r1(int_layout(), 2LL * P), s2(int_layout(), 3LL * P), r2(int_layout(), 3LL * P);
    fill_send(s1, 2, rank, P);
    fill_send(s2, 3, rank, P);
    for (int k = 0; k < 6; ++k) {
      const std::string what = std::string(spec) + " start " + std::to_string(k);
      std::fill(r1.bytes.begin(), r1.bytes.end(), Buffer::kUntouched);
      std::fill(r2.bytes.begin(), r2.bytes.end(), Buffer::kUntouched);
      A2A_Request req[2];
      ASSERT_EQ(A2A_Ialltoall(s1.data(), 2, MPI_INT, r1.data(), 2, MPI_INT, MPI_COMM_WORLD, spec, &req[0]), 0) << what;
      ASSERT_EQ(A2A_Ialltoall(s2.data(), 3, MPI_INT, r2.data(), 3, MPI_INT, MPI_COMM_WORLD, spec, &req[1]), 0) << what;
      ASSERT_EQ(A2A_Wait(&req[k % 2], MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
      ASSERT_EQ(A2A_Wait(&req[1 - k % 2], MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
      EXPECT_EQ(check_recv(r1, 2, rank, P, what), 0);
      EXPECT_EQ(check_recv(r2, 3, rank, P, what), 0);
    }
    for (int k = 0; k < 4; ++k) {
      const std::string what = std::string(spec) + " communicator and type made again, " + std::to_string(k);
      MPI_Comm comm;
      MPI_Comm_split(MPI_COMM_WORLD, 0, k % 2 ? P - 1 - rank : rank, &comm);
      Layout layout{k % 2 ? "padded" : "pair", MPI_DATATYPE_NULL, {0}, 8};
      if (k % 2) {
        MPI_Type_create_resized(MPI_INT, 0, 8, &layout.type);
      } else {
        layout.offsets = {0, 4};
        MPI_Type_contiguous(2, MPI_INT, &layout.type);
      }
      MPI_Type_commit(&layout.type);
      for (int again = 0; again < 2; ++again) ialltoall_case(comm, spec, layout, 1, false);
      MPI_Type_free(&layout.type);
      MPI_Comm_free(&comm);
    }
  }
}

// Null requests complete at once; arguments are checked at the start.
TEST(Nonblocking, NullRequestsAndArgumentErrors) {
  A2A_Request none = A2A_REQUEST_NULL;
  int flag = 0;
  EXPECT_EQ(A2A_Wait(&none, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(A2A_Test(&none, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  std::vector<int> s(static_cast<size_t>(size_of(MPI_COMM_WORLD))), r(s.size());
  A2A_Request req = A2A_REQUEST_NULL;
  EXPECT_EQ(A2A_Ialltoall(s.data(), -1, MPI_INT, r.data(), -1, MPI_INT, MPI_COMM_WORLD, "spread-out", &req),
            MPI_ERR_COUNT);
  EXPECT_EQ(req, A2A_REQUEST_NULL);
  EXPECT_EQ(A2A_Ialltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, "no-such-algorithm", &req),
            MPI_ERR_ARG);
  EXPECT_EQ(A2A_Ialltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, "spread-out", nullptr),
            MPI_ERR_ARG);
}

// The C++ conveniences: a span call into an owned request, waited for by
// wait(), by test() loops, or when it goes out of scope.
TEST(Nonblocking, CppRequestAndSpans) {
  const int P = size_of(MPI_COMM_WORLD), rank = rank_of(MPI_COMM_WORLD);
  for (int how = 0; how < 3; ++how) {
    std::vector<int> s(3 * static_cast<size_t>(P)), r(s.size(), -1);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < 3; ++j) s[static_cast<size_t>(3 * d + j)] = encode(rank, d, j);
    {
      a2a::Request req;
      ASSERT_EQ(a2a::ialltoall(std::span<const int>(s), std::span<int>(r), MPI_INT, MPI_COMM_WORLD, req, "spread-out"),
                MPI_SUCCESS);
      if (how == 0) {
        EXPECT_EQ(req.wait(), MPI_SUCCESS);
      } else if (how == 1) {
        while (!req.test()) {
        }
      }
      if (how < 2) {
        EXPECT_TRUE(req.done());
      }
    }  // how == 2: waited for here
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < 3; ++j) wrong += r[static_cast<size_t>(3 * src + j)] != encode(src, rank, j);
    EXPECT_EQ(wrong, 0) << how;
  }
}
