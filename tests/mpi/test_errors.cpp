// Bad input: a clear MPI error class and no hang; the communicator stays
// usable afterwards.  The default (local) mode checks each rank's arguments
// without communicating, as MPI libraries do: a rank with a bad argument
// returns at once, and ranks that all pass the same bad argument all fail
// alike.  The agree mode makes a bad argument on any rank every rank's error.
#include <cstdlib>

#include "harness.hpp"

using namespace a2a::test;

namespace {

struct Call {
  int rank, P;
  std::vector<int> s, r;
  Call() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    s.assign(4 * P, rank);
    r.assign(4 * P, -1);
  }
  int run(const char* spec, int scount = 4, int rcount = 4, MPI_Datatype stype = MPI_INT,
          MPI_Datatype rtype = MPI_INT) {
    return A2A_Alltoall(s.data(), scount, stype, r.data(), rcount, rtype, MPI_COMM_WORLD, spec);
  }
};

// Every rank got `rc`, and it equals `want`.
void expect_everywhere(int rc, int want, const std::string& what) {
  int lo = rc, hi = rc;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi) << what << ": ranks disagree";
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  EXPECT_EQ(cls, want) << what << ": " << a2a::last_error_message();
  if (rc != MPI_SUCCESS) {
    EXPECT_NE(a2a::last_error_message(), "") << what << ": an error without a message";
  }
}

// The agree mode for one test.
struct Agreeing {
  a2a::ErrorCheck before = a2a::error_check();
  Agreeing() { a2a::set_error_check(a2a::ErrorCheck::agree); }
  ~Agreeing() { a2a::set_error_check(before); }
};

void expect_still_works() {
  Call c;
  EXPECT_EQ(c.run("tra:radix=3"), MPI_SUCCESS);
  for (int s = 0; s < c.P; ++s) EXPECT_EQ(c.r[4 * s], s);
}

}  // namespace

TEST(Errors, UnknownAlgorithm) {
  Call c;
  expect_everywhere(c.run("nosuch"), MPI_ERR_ARG, "unknown algorithm");
  EXPECT_NE(a2a::last_error_message().find("unknown algorithm 'nosuch'"), std::string::npos);
  expect_still_works();
}

TEST(Errors, UnknownParameter) {
  Call c;
  expect_everywhere(c.run("tra:radx=3"), MPI_ERR_ARG, "unknown parameter");
  EXPECT_EQ(a2a::last_error_message(), "a2a: unknown parameter 'radx' for tra; expected radix, ports");
  expect_still_works();
}

TEST(Errors, RadixBelowTwo) {
  Call c;
  expect_everywhere(c.run("tra:radix=1"), MPI_ERR_ARG, "radix 1");
  expect_everywhere(c.run("tra:radix=0"), MPI_ERR_ARG, "radix 0");
  expect_still_works();
}

TEST(Errors, NegativeCount) {
  Call c;
  expect_everywhere(c.run("bruck-basic", -1, -1), MPI_ERR_COUNT, "negative count");
  expect_everywhere(c.run("spread-out", 4, -4), MPI_ERR_COUNT, "negative receive count");
  expect_still_works();
}

TEST(Errors, MismatchedSignatures) {
  Call c;
  expect_everywhere(c.run("tra", 4, 3), MPI_ERR_TYPE, "4 ints sent, 3 received");
  expect_everywhere(c.run("tra", 4, 4, MPI_INT, MPI_DOUBLE), MPI_ERR_TYPE, "16 bytes sent, 32 received");
  expect_still_works();
}

TEST(Errors, NullDatatype) {
  Call c;
  expect_everywhere(c.run("linear", 4, 4, MPI_DATATYPE_NULL, MPI_INT), MPI_ERR_TYPE, "null send type");
  expect_still_works();
}

// Agree mode: errors on one rank only still reach every rank.
TEST(Errors, OneRankWrongIsEveryRanksError) {
  Agreeing agreeing;
  Call c;
  const bool odd = c.rank == 0;
  expect_everywhere(c.run(odd ? "nosuch" : "tra:radix=2"), MPI_ERR_ARG, "bad spec on rank 0");
  expect_everywhere(c.run("pairwise", odd ? -1 : 4, 4), MPI_ERR_COUNT, "negative count on rank 0");
  if (c.P > 1) {
    expect_everywhere(c.run("bruck-modified", odd ? 2 : 4, odd ? 2 : 4), MPI_ERR_TYPE, "block size differs on rank 0");
  }
  expect_still_works();
}

TEST(Errors, NullBufferWithData) {
  Call c;
  expect_everywhere(A2A_Alltoall(nullptr, 4, MPI_INT, c.r.data(), 4, MPI_INT, MPI_COMM_WORLD, "linear"),
                    MPI_ERR_BUFFER, "null send buffer");
  expect_still_works();
}

TEST(Errors, AlltoallvRejectsAlltoallOnlyAlgorithms) {
  Call c;
  std::vector<int> counts(c.P, 1), displs(c.P);
  for (int i = 0; i < c.P; ++i) displs[i] = i;
  expect_everywhere(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  displs.data(), MPI_INT, MPI_COMM_WORLD, "tra:radix=2"),
                    MPI_ERR_ARG, "alltoallv with tra");
  counts[0] = -1;
  expect_everywhere(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  displs.data(), MPI_INT, MPI_COMM_WORLD, "native"),
                    MPI_ERR_COUNT, "alltoallv negative count");
  expect_still_works();
}

// The environment is read once: mpi.errors.env_* set A2A_ALLTOALL (a good
// and a bad spec) for the whole run.
TEST(Errors, EnvironmentSpecIsUsedWhenNull) {
  const char* env = std::getenv("A2A_ALLTOALL");
  if (!env) GTEST_SKIP() << "A2A_ALLTOALL is not set (see mpi.errors.env_*)";
  Call c;
  const int rc = c.run(nullptr);
  if (std::string(env) == "pairwise") {
    EXPECT_EQ(rc, MPI_SUCCESS);
    A2A_Stats st;
    A2A_Last_stats(&st);
    EXPECT_STREQ(st.algorithm, "pairwise");
  } else {
    expect_everywhere(rc, MPI_ERR_ARG, std::string("bad spec from the environment: ") + env);
  }
  expect_still_works();
}

// The default mode is local (A2A_ERROR_CHECK unset): errors that every rank
// makes alike come back the same everywhere with no agreement traffic.
TEST(Errors, LocalModeIsTheDefault) {
  if (std::getenv("A2A_ERROR_CHECK")) GTEST_SKIP() << "A2A_ERROR_CHECK is set";
  EXPECT_EQ(a2a::error_check(), a2a::ErrorCheck::local);
  Call c;
  expect_everywhere(c.run("tra:radix=1"), MPI_ERR_ARG, "radix 1, local mode");
  expect_everywhere(c.run("linear", -2, -2), MPI_ERR_COUNT, "negative count, local mode");
  expect_everywhere(c.run("tra", 4, 3), MPI_ERR_TYPE, "mismatched signature, local mode");
  expect_still_works();
}

// Local mode: a bad argument is found before any communication, so a rank
// that calls alone (the others are not in the call at all) gets its error
// back at once instead of waiting for them; every rank in turn.
TEST(Errors, LocalErrorsReturnWithoutTheOtherRanks) {
  Call c;
  std::vector<int> counts(c.P, 1), displs(c.P), bad_self(c.P, 1);
  for (int i = 0; i < c.P; ++i) displs[i] = i;
  bad_self[c.rank] = 2;
  std::vector<int> overlap(8 * c.P, 0);
  for (int alone = 0; alone < c.P; ++alone) {
    if (c.rank == alone) {
      EXPECT_EQ(c.run("nosuch"), MPI_ERR_ARG);
      EXPECT_EQ(c.run("tra:radix=1"), MPI_ERR_ARG);
      EXPECT_EQ(c.run("pairwise", -1, 4), MPI_ERR_COUNT);
      EXPECT_EQ(c.run("tra", 4, 3), MPI_ERR_TYPE);
      EXPECT_EQ(c.run("linear", 4, 4, MPI_DATATYPE_NULL, MPI_INT), MPI_ERR_TYPE);
      EXPECT_EQ(A2A_Alltoall(nullptr, 4, MPI_INT, c.r.data(), 4, MPI_INT, MPI_COMM_WORLD, "linear"), MPI_ERR_BUFFER);
      EXPECT_EQ(A2A_Alltoall(overlap.data(), 4, MPI_INT, overlap.data() + 2, 4, MPI_INT, MPI_COMM_WORLD, "auto"),
                MPI_ERR_BUFFER);
      EXPECT_EQ(A2A_Alltoallv(c.s.data(), bad_self.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                              displs.data(), MPI_INT, MPI_COMM_WORLD, "auto"),
                MPI_ERR_TRUNCATE);
      EXPECT_EQ(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(), nullptr,
                              MPI_INT, MPI_COMM_WORLD, "native"),
                MPI_ERR_ARG);
      EXPECT_NE(a2a::last_error_message(), "");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  expect_still_works();
}

TEST(Errors, AlltoallvArguments) {
  Agreeing agreeing;  // one rank's negative count below
  Call c;
  std::vector<int> counts(c.P, 1), displs(c.P), bad(c.P, 1);
  for (int i = 0; i < c.P; ++i) displs[i] = i;
  bad[c.rank] = 2;  // the block to itself: 2 ints sent, 1 received
  expect_everywhere(A2A_Alltoallv(c.s.data(), bad.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  displs.data(), MPI_INT, MPI_COMM_WORLD, "tuna"),
                    MPI_ERR_TRUNCATE, "self block sizes differ");
  std::vector<int> negative = counts;
  if (c.rank == 0) negative[0] = -1;  // on one rank only
  expect_everywhere(A2A_Alltoallv(c.s.data(), negative.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  displs.data(), MPI_INT, MPI_COMM_WORLD, "padded-bruck"),
                    MPI_ERR_COUNT, "negative count on rank 0");
  expect_everywhere(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  displs.data(), MPI_INT, MPI_COMM_WORLD, "tuna:radix=1"),
                    MPI_ERR_ARG, "tuna radix 1");
  expect_everywhere(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                  nullptr, MPI_INT, MPI_COMM_WORLD, "linear"),
                    MPI_ERR_ARG, "null displacements");
  expect_still_works();
}

// Aliased buffers (MPI forbids them; MPI_IN_PLACE is the way to reuse one),
// on one rank only, are every rank's MPI_ERR_BUFFER in the agree mode.
TEST(Errors, AliasedBuffers) {
  Agreeing agreeing;
  Call c;
  std::vector<int> one(8 * c.P, 0);
  const bool bad = c.rank == 0;
  int rc = A2A_Alltoall(bad ? one.data() : c.s.data(), 4, MPI_INT, bad ? one.data() + 2 : c.r.data(), 4, MPI_INT,
                        MPI_COMM_WORLD, "spread-out");
  expect_everywhere(rc, MPI_ERR_BUFFER, "alltoall send and receive overlap on rank 0");
  if (bad) {
    EXPECT_NE(a2a::last_error_message().find("overlap"), std::string::npos) << a2a::last_error_message();
  }
  // Alltoallv: two receive blocks share a byte on rank 0; then send and
  // receive blocks interleaved in one array without touching (legal).
  std::vector<int> counts(c.P, 2), sd(c.P), rd(c.P);
  for (int i = 0; i < c.P; ++i) {
    sd[i] = 4 * i;
    rd[i] = 4 * i + 2;
  }
  std::vector<int> overlapping = rd;
  if (bad && c.P > 1) overlapping[1] = rd[0] + 1;
  rc = A2A_Alltoallv(c.s.data(), counts.data(), sd.data(), MPI_INT, one.data(), counts.data(), overlapping.data(),
                     MPI_INT, MPI_COMM_WORLD, "tuna");
  if (c.P > 1) expect_everywhere(rc, MPI_ERR_BUFFER, "alltoallv receive blocks overlap on rank 0");
  std::fill(one.begin(), one.end(), -1);
  for (int d = 0; d < c.P; ++d) one[sd[d]] = one[sd[d] + 1] = c.rank * 100 + d;
  rc = A2A_Alltoallv(one.data(), counts.data(), sd.data(), MPI_INT, one.data(), counts.data(), rd.data(), MPI_INT,
                     MPI_COMM_WORLD, "spread-out");
  expect_everywhere(rc, MPI_SUCCESS, "interleaved send and receive blocks");
  for (int s = 0; s < c.P; ++s) EXPECT_EQ(one[rd[s]], s * 100 + c.rank);
  expect_still_works();
}

// Intercommunicators and freed (null) communicators: MPI_ERR_COMM on every
// rank without any communication.
TEST(Errors, IntercommAndFreedComm) {
  Call c;
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_free(&dup);  // now MPI_COMM_NULL
  expect_everywhere(A2A_Alltoall(c.s.data(), 4, MPI_INT, c.r.data(), 4, MPI_INT, dup, "spread-out"), MPI_ERR_COMM,
                    "freed communicator");
  if (c.P >= 2) {
    MPI_Comm half, inter;
    const int color = c.rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, c.rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 7, &inter);
    expect_everywhere(A2A_Alltoall(c.s.data(), 4, MPI_INT, c.r.data(), 4, MPI_INT, inter, "tra"), MPI_ERR_COMM,
                      "intercommunicator");
    std::vector<int> counts(c.P, 1), displs(c.P);
    expect_everywhere(A2A_Alltoallv(c.s.data(), counts.data(), displs.data(), MPI_INT, c.r.data(), counts.data(),
                                    displs.data(), MPI_INT, inter, "tuna"),
                      MPI_ERR_COMM, "alltoallv on an intercommunicator");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  expect_still_works();
}

// A2A_ERROR_CHECK=agree (mpi.errors.env_agree) makes the agree mode the
// process default: one rank's bad spec is every rank's error.
TEST(Errors, AgreeModeFromTheEnvironment) {
  const char* env = std::getenv("A2A_ERROR_CHECK");
  if (!env || std::string(env) != "agree") GTEST_SKIP() << "A2A_ERROR_CHECK=agree is not set";
  EXPECT_EQ(a2a::error_check(), a2a::ErrorCheck::agree);
  Call c;
  expect_everywhere(c.run(c.rank == 0 ? "nosuch" : "tra:radix=2"), MPI_ERR_ARG, "bad spec on rank 0");
  expect_still_works();
}
