// "auto": every rank takes the same decision (checked by gathering what ran),
// the data arrive, a matching tuning-file entry is followed, a bad file is
// refused with a message and ignored, ranks with different files fall back to
// the model together, the model proposes the trial's candidates, and the
// trial keeps the fastest even where the model is wrong.
// The scenario comes from A2A_TEST_TUNING (none, good, corrupt, foreign,
// mismatch, family, native), since a process reads A2A_TUNING_FILE once.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "a2a/a2a.hpp"
#include "core/context.hpp"
#include "core/cost_keys.hpp"
#include "front/pipeline.hpp"
#include "harness.hpp"
#include "select/auto.hpp"
#include "select/cost_model.hpp"
#include "select/trial.hpp"
#include "select/tuning.hpp"

using namespace a2a::test;
using a2a::detail::Collective;

namespace {

std::string scenario() {
  const char* v = std::getenv("A2A_TEST_TUNING");
  return v ? v : "none";
}

// Alltoall blocks of <= 64 bytes run tra:radix=2, larger ones factor;
// alltoallv runs tuna:radix=2 (`alt` swaps in other algorithms).
std::string tuning_text(int P, const std::vector<int>& nodes, bool alt) {
  a2a::detail::TuningTable t;
  t.mpi_library = a2a::detail::mpi_library_version();
  t.entries = {{Collective::alltoall, P, nodes, 0, 64, 1, "", alt ? "pairwise" : "tra:radix=2", 1},
               {Collective::alltoall, P, nodes, 65, 1LL << 50, 1, "", alt ? "linear" : "factor", 1},
               {Collective::alltoallv, P, nodes, 0, 1LL << 50, 1, "uniform", alt ? "linear" : "tuna:radix=2", 1}};
  return a2a::detail::tuning_json(t);
}

// World's node sizes as a2a will see them, found without a2a (whose first
// use reads A2A_TUNING_FILE, which install_tuning has yet to set).
std::vector<int> world_node_sizes() {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<long long> ids;
  std::string source, error;
  if (!a2a::detail::node_ids_from(std::getenv("A2A_NODE_MAP"), std::getenv("A2A_NODE_SIZES"),
                                  std::getenv("A2A_NODE_SIZE"), P, ids, source, error) ||
      !error.empty()) {
    MPI_Comm shm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    long long leader = rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_LONG_LONG, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    ids.resize(P);
    MPI_Allgather(&leader, 1, MPI_LONG_LONG, ids.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
  }
  std::vector<int> sizes;
  for (const auto& n : a2a::detail::group_by_key(ids, "").ranks) sizes.push_back(static_cast<int>(n.size()));
  return sizes;
}

// Points A2A_TUNING_FILE at a file written for the scenario, before a2a's
// first use in this process (which reads it).
void install_tuning() {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const std::string s = scenario();
  if (s == "none") return;
  int stamp = static_cast<int>(getpid());
  MPI_Bcast(&stamp, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string path = "a2a-test-tuning-" + std::to_string(stamp) + "-" + std::to_string(rank) + ".json";
  std::string text = tuning_text(P, world_node_sizes(), s == "mismatch" && rank == 0);
  if (s == "family") {  // alltoallv entries only from the linear family
    a2a::detail::TuningTable t;
    t.mpi_library = a2a::detail::mpi_library_version();
    const auto nodes = world_node_sizes();
    t.entries = {{Collective::alltoall, P, nodes, 0, 1LL << 50, 1, "", "tra:radix=2", 1},
                 {Collective::alltoallv, P, nodes, 0, 100, 1, "uniform", "linear", 1},
                 {Collective::alltoallv, P, nodes, 101, 1000, 1, "uniform", "linear", 1},
                 {Collective::alltoallv, P, nodes, 1001, 1LL << 60, 1, "uniform", "spread-out", 1}};
    text = a2a::detail::tuning_json(t);
  }
  if (s == "native") {  // the library's own at every size
    a2a::detail::TuningTable t;
    t.mpi_library = a2a::detail::mpi_library_version();
    const auto nodes = world_node_sizes();
    t.entries = {{Collective::alltoall, P, nodes, 0, 1LL << 50, 1, "", "native", 1},
                 {Collective::alltoallv, P, nodes, 0, 1LL << 60, 1, "uniform", "native", 1}};
    text = a2a::detail::tuning_json(t);
  }
  if (s == "corrupt") text = text.substr(0, text.size() / 2);
  if (s == "foreign") text = R"({"format": "osu-results", "rows": []})";
  std::ofstream(path) << text;
  setenv("A2A_TUNING_FILE", path.c_str(), 1);
  const std::string status = a2a::tuning_status();  // reads it now
  std::remove(path.c_str());
  const char* expected = s == "corrupt"   ? "ignored: not valid JSON"
                         : s == "foreign" ? "ignored: not an a2a tuning file"
                         : s == "family"  ? ": 4 entries"
                         : s == "native"  ? ": 2 entries"
                                          : ": 3 entries";
  EXPECT_NE(status.find(expected), std::string::npos) << status;
}

// What the last call ran and who decided, the same on every rank of comm.
std::pair<std::string, std::string> agreed_choice(MPI_Comm comm) {
  A2A_Stats st;
  A2A_Last_stats(&st);
  char mine[160] = {};
  std::snprintf(mine, sizeof mine, "%s|%s", st.algorithm, A2A_Last_decided_by());
  char first[160];
  std::memcpy(first, mine, sizeof first);
  MPI_Bcast(first, sizeof first, MPI_CHAR, 0, comm);
  int differ = std::strcmp(first, mine) != 0;
  MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT, MPI_MAX, comm);
  EXPECT_EQ(differ, 0) << "ranks decided differently; this rank ran " << mine;
  return {st.algorithm, A2A_Last_decided_by()};
}

struct Ran {
  std::string algorithm, by;
};

Ran alltoall_auto(MPI_Comm comm, int n) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  Buffer s(int_layout(), static_cast<long long>(n) * P), r(int_layout(), static_cast<long long>(n) * P);
  fill_send(s, n, rank, P);
  EXPECT_EQ(A2A_Alltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, comm, "auto"), MPI_SUCCESS);
  const auto [alg, by] = agreed_choice(comm);
  EXPECT_EQ(check_recv(r, n, rank, P, "auto " + alg), 0);
  return {alg, by};
}

// auto's alltoallv of ints on comm, rank s sending count(s, d) to d, each
// int encoding (source, destination, index) ^ (tag << 24); the data checked.
template <class Count>
void alltoallv_auto_checked(MPI_Comm comm, Count count, int tag) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int stot = 0, rtot = 0;
  for (int d = 0; d < P; ++d) {
    sc[d] = count(rank, d);
    rc[d] = count(d, rank);
    sd[d] = stot, rd[d] = rtot;
    stot += sc[d], rtot += rc[d];
  }
  std::vector<int> sbuf(stot + 1), rbuf(rtot + 1, -1);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) sbuf[sd[d] + j] = encode(rank, d, j) ^ (tag << 24);
  EXPECT_EQ(A2A_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_INT, rbuf.data(), rc.data(), rd.data(), MPI_INT, comm,
                          "auto"),
            MPI_SUCCESS);
  A2A_Stats st;
  A2A_Last_stats(&st);
  long long wrong = 0;
  for (int s = 0; s < P; ++s)
    for (int j = 0; j < rc[s]; ++j) wrong += rbuf[rd[s] + j] != (encode(s, rank, j) ^ (tag << 24));
  EXPECT_EQ(wrong, 0) << "tag " << tag << ": " << st.algorithm;
}

// Skewed counts: rank s sends (s + d) % 4 * n ints to d.
Ran alltoallv_auto(MPI_Comm comm, int n) {
  alltoallv_auto_checked(comm, [n](int s, int d) { return (s + d) % 4 * n; }, 0);
  const auto [alg, by] = agreed_choice(comm);
  return {alg, by};
}

// auto's alltoall of n ints per block, called until its class is decided
// (not a trial call), at most `most` calls; `calls` says how many it took
// and `tried` collects what the trial ran.
Ran decided_alltoall(MPI_Comm comm, int n, int most, int& calls, std::vector<std::string>* tried = nullptr) {
  Ran r;
  for (calls = 1; calls <= most; ++calls) {
    r = alltoall_auto(comm, n);
    if (r.by != "trial" && r.by != "first-call") return r;
    if (tried && r.by == "trial" && std::find(tried->begin(), tried->end(), r.algorithm) == tried->end())
      tried->push_back(r.algorithm);
  }
  ADD_FAILURE() << "still undecided after " << most << " calls: " << r.algorithm << " by " << r.by;
  return r;
}

// Calls `call` (one collective call, what it ran) until one is not a
// trial, at most twice a trial's calls of three candidates: that call.
template <class Call>
Ran past_trial(Call&& call) {
  Ran r;
  for (int k = 0; k < 2 * a2a::detail::most_trial_calls(3); ++k)
    if ((r = call()).by != "trial") break;
  return r;
}

// Which of `calls` calls of `call` first ran a trial (from 0), or -1.
template <class Call>
int first_trial(Call&& call, int calls) {
  for (int k = 0; k < calls; ++k)
    if (call().by == "trial") return k;
  return -1;
}

bool is_model(const std::string& by) { return by == "model" || by == "trial" || by == "measured"; }

class Auto : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { install_tuning(); }
};

}  // namespace

TEST_F(Auto, EveryRankDecidesAlike) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half;  // a sub-communicator decides on its own layout
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  for (MPI_Comm comm : {MPI_COMM_WORLD, half}) {
    for (int n : {1, 2, 16, 17, 300, 5000}) {
      for (auto mode : {a2a::ErrorCheck::agree, a2a::ErrorCheck::local}) {
        a2a::set_error_check(mode);
        alltoall_auto(comm, n);
        alltoallv_auto(comm, n);
      }
    }
  }
  a2a::set_error_check(a2a::ErrorCheck::local);  // the default
  MPI_Comm_free(&half);
}

TEST_F(Auto, FollowsTheTuningFileOrTheModel) {
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const bool tuned = scenario() == "good" || scenario() == "family";
  const Ran small = alltoall_auto(MPI_COMM_WORLD, 4);   // 16-byte blocks
  const Ran large = alltoall_auto(MPI_COMM_WORLD, 64);  // 256-byte blocks
  const Ran v = alltoallv_auto(MPI_COMM_WORLD, 8);
  for (const Ran& r : {small, large, v}) {
    if (tuned) EXPECT_EQ(r.by, "tuning") << r.algorithm;
    else EXPECT_TRUE(is_model(r.by)) << r.algorithm << " by " << r.by;
  }
  if (scenario() == "family") {
    EXPECT_EQ(v.algorithm, "linear");
  }
  if (scenario() == "good") {
    EXPECT_EQ(small.algorithm, "tra:radix=2");
    EXPECT_EQ(large.algorithm, "factor");
    EXPECT_EQ(v.algorithm, "tuna:radix=2");
  }
  // A plan follows the class of its calls, decided the same way.
  int calls = 0;
  const Ran decided = decided_alltoall(MPI_COMM_WORLD, 4, 3 * a2a::detail::most_trial_calls(3), calls);
  std::vector<int> s(4 * P), r(4 * P);
  A2A_Plan plan = nullptr;
  ASSERT_EQ(A2A_Alltoall_init(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "auto", &plan), MPI_SUCCESS);
  ASSERT_EQ(A2A_Start(plan), MPI_SUCCESS);
  A2A_Stats st;
  A2A_Last_stats(&st);
  EXPECT_EQ(st.algorithm, decided.algorithm);
  EXPECT_EQ(A2A_Last_decided_by(), decided.by);
  A2A_Plan_free(&plan);
}

// A table whose alltoallv entries are all linear-family runs its most
// frequent one for every size, with no size allreduce (select/auto.hpp).
TEST_F(Auto, LinearFamilyTableNeedsNoSizes) {
  if (scenario() != "family") GTEST_SKIP() << "A2A_TEST_TUNING=family only";
  for (int n : {1, 30, 3000}) {
    const Ran r = alltoallv_auto(MPI_COMM_WORLD, n);
    EXPECT_EQ(r.algorithm, "linear") << n;
    EXPECT_EQ(r.by, "tuning");
  }
}

// The whole model A2A_COST_MODEL gives, as auto holds it for world (the
// MPI library and whether ranks are time-sliced filled in), and world's context.
void given_model(const char* text, a2a::detail::MachineModel& m, a2a::detail::CommContext*& ctx) {
  unsigned given = 0;
  std::string err;
  ASSERT_TRUE(a2a::detail::parse_cost_model(text, m, given, err)) << err;
  ASSERT_TRUE(a2a::detail::whole_model(given));
  ASSERT_EQ(a2a::detail::get_context(MPI_COMM_WORLD, ctx), MPI_SUCCESS);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  m.library = a2a::detail::library_from_version(version);
  m.oversubscribed = ctx->oversubscribed;
}

// With every model parameter given (A2A_COST_MODEL) nothing is measured, so
// what the trial runs must be exactly the model's candidates for this
// layout (trial_candidates: its pick, native, a close runner-up), and the
// class ends on one of them, by measurement where there were several, on
// every rank alike, within the trial's calls.
TEST_F(Auto, ModelProposesTheTrialsCandidates) {
  const char* text = std::getenv("A2A_COST_MODEL");
  if (!text || scenario() == "good") GTEST_SKIP() << "needs A2A_COST_MODEL and no matching tuning file";
  a2a::detail::MachineModel m;
  a2a::detail::CommContext* ctx = nullptr;
  given_model(text, m, ctx);
  if (HasFatalFailure()) return;
  std::string err;
  const a2a::detail::ModelLayout layout{ctx->topology.node_of, ctx->topology.ranks};
  alltoall_auto(MPI_COMM_WORLD, 1);  // world's first call, unless an earlier test made it
  // Sizes whose class no earlier test made at another size (a class is
  // priced at its first call's size: EveryRankDecidesAlike's 5000 ints
  // would price 4096's).
  for (int n : {1, 64, 16384}) {
    std::vector<std::string> want;
    for (const auto& spec : a2a::detail::trial_candidates(a2a::detail::model_alltoall(layout, 4LL * n, m))) {
      a2a::detail::Resolved r;
      ASSERT_EQ(a2a::detail::resolve(Collective::alltoall, spec, ctx->size, 4LL * n, r, err), MPI_SUCCESS);
      want.push_back(r.canonical);
    }
    std::vector<std::string> tried;
    int calls = 0;
    const Ran ran = decided_alltoall(MPI_COMM_WORLD, n, 2 * a2a::detail::most_trial_calls(3), calls, &tried);
    EXPECT_NE(std::find(want.begin(), want.end(), ran.algorithm), want.end()) << ran.algorithm;
    if (want.size() == 1) {
      EXPECT_EQ(ran.by, "model");
      continue;
    }
    EXPECT_EQ(ran.by, "measured");
    std::sort(want.begin(), want.end());
    std::sort(tried.begin(), tried.end());
    EXPECT_EQ(tried, want) << n;
    EXPECT_LE(calls, a2a::detail::most_trial_calls(static_cast<int>(want.size())) + 1) << n;
  }
}

// The same for alltoallv's class of every size (auto_without_sizes), where
// the model makes one on this layout: its trial runs exactly the model's
// pick, native and a close runner-up (sizes_pay, every_size_candidates).
TEST_F(Auto, ModelProposesTheEverySizeTrialsCandidates) {
  const char* text = std::getenv("A2A_COST_MODEL");
  if (!text || scenario() == "good") GTEST_SKIP() << "needs A2A_COST_MODEL and no matching tuning file";
  a2a::detail::MachineModel m;
  a2a::detail::CommContext* ctx = nullptr;
  given_model(text, m, ctx);
  if (HasFatalFailure()) return;
  std::string err;
  std::string pick, runner_up;
  if (a2a::detail::sizes_pay({ctx->topology.node_of, ctx->topology.ranks}, m, {}, pick, runner_up))
    GTEST_SKIP() << "the model chooses per call on this layout";
  std::vector<std::string> want;
  for (const auto& spec : a2a::detail::every_size_candidates(pick, runner_up)) {
    a2a::detail::Resolved r;
    ASSERT_EQ(a2a::detail::resolve(Collective::alltoallv, spec, ctx->size, 8, r, err), MPI_SUCCESS);
    want.push_back(r.canonical);
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);  // a fresh context: its first call, then its class
  alltoallv_auto(comm, 1);
  std::vector<std::string> tried;
  Ran ran;
  for (int k = 0; k < 2 * a2a::detail::most_trial_calls(3); ++k) {
    if ((ran = alltoallv_auto(comm, 2)).by != "trial") break;
    if (std::find(tried.begin(), tried.end(), ran.algorithm) == tried.end()) tried.push_back(ran.algorithm);
  }
  EXPECT_NE(std::find(want.begin(), want.end(), ran.algorithm), want.end()) << ran.algorithm;
  if (want.size() > 1) {
    EXPECT_EQ(ran.by, "measured");
    std::sort(want.begin(), want.end());
    std::sort(tried.begin(), tried.end());
    EXPECT_EQ(tried, want);
  }
  MPI_Comm_free(&comm);
}

// A block of 16 KiB or more at which the library runs its own all-to-all
// in several rounds (pairwise, Bruck; P > 2) or with persistent requests,
// which the wrong model below prices dear; 0 where there is none.
int block_native_is_dear_at(int P) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  const a2a::detail::Library library = a2a::detail::library_from_version(version);
  for (long long bytes : {65536LL, 16384LL, 32768LL, 131072LL, 262144LL}) {
    const auto choice = a2a::detail::library_alltoall(library, P, bytes);
    if (choice.persistent || (P > 2 && !choice.spec.empty() && choice.spec != "spread-out")) return static_cast<int>(bytes / 4);
  }
  return 0;
}

// A model made wrong on purpose: A2A_COST_MODEL makes a2a's message
// algorithms look cheapest and native (the library's rounds or persistent
// requests) and shm (its flags) dear, while A2A_MAX_MESSAGE_BYTES=64 makes
// every message algorithm of a2a's send its blocks (16-256 KiB, where the
// library's choice is dear in this model: Open MPI's depends on P) as
// hundreds of messages, so native (the library's own, not split) or shm
// (no messages) is by far the fastest candidate: the trial must end on one
// of them, not on the model's pick, by measurement, on every rank alike,
// within its calls, and stay there.  (Native, with Open MPI; MPICH
// busy-polls, so with its ranks time-sliced shm, which yields, may win.)
TEST_F(Auto, TrialOverturnsAWrongModel) {
  if (!std::getenv("A2A_TEST_WRONG_MODEL")) GTEST_SKIP() << "A2A_TEST_WRONG_MODEL runs only";
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  const int n = block_native_is_dear_at(P);
  if (n == 0) GTEST_SKIP() << "no block at which this library's choice is dear in the test's model";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  alltoall_auto(comm, 1);  // the communicator's first call (native, undecided), unless world's decisions serve it
  std::vector<std::string> tried;
  int calls = 0;
  const Ran ran = decided_alltoall(comm, n, 2 * a2a::detail::most_trial_calls(3), calls, &tried);
  EXPECT_TRUE(ran.algorithm == "native" || ran.algorithm == "shm")
      << ran.algorithm << ", tried " << ::testing::PrintToString(tried);
  EXPECT_EQ(ran.by, "measured");
  EXPECT_GE(tried.size(), 2u);
  EXPECT_NE(tried.front(), "native") << "the model's pick, first";
  EXPECT_NE(tried.front(), "shm") << "the model's pick, first";
  EXPECT_LE(calls, a2a::detail::most_trial_calls(static_cast<int>(tried.size())) + 1);
  for (int again = 0; again < 20; ++again) {
    const Ran r = alltoall_auto(comm, n);
    EXPECT_EQ(r.algorithm, ran.algorithm);
    EXPECT_EQ(r.by, "measured");
  }
  MPI_Comm_free(&comm);
}

// A pick that turns slow is dropped: under A2A_TEST_SLOWDOWN every drift
// sample counts many times its time (as if the machine had changed under
// the pick), so after its first agreement (kFirstCheck calls of the class)
// the class runs its trial again, on every rank alike, the data right
// throughout, and decides again by measurement.  (The test's
// A2A_COST_MODEL makes shm the pick, so there is a trial to run again.)
TEST_F(Auto, DriftRunsTheTrialAgain) {
  if (!std::getenv("A2A_TEST_SLOWDOWN")) GTEST_SKIP() << "A2A_TEST_SLOWDOWN runs only";
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  alltoall_auto(comm, 1);  // the communicator's first call
  int calls = 0;
  const Ran first = decided_alltoall(comm, 5, 2 * a2a::detail::most_trial_calls(3), calls);
  if (first.by != "measured") GTEST_SKIP() << "the model left one candidate here: nothing to try again";
  const int again_at =
      first_trial([&] { return alltoall_auto(comm, 5); }, 3 * static_cast<int>(a2a::detail::kFirstCheck));
  EXPECT_GE(again_at, static_cast<int>(a2a::detail::kFirstCheck) - 1) << "not before the first agreement";
  EXPECT_LE(again_at, static_cast<int>(a2a::detail::kFirstCheck + a2a::detail::kSampleEvery));
  const Ran after = decided_alltoall(comm, 5, 2 * a2a::detail::most_trial_calls(3), calls);
  EXPECT_EQ(after.by, "measured");
  MPI_Comm_free(&comm);
}

// Trial calls among `calls` alltoallv_auto(comm, n) calls, but for a trial
// already under way at the first (a drift check at the last call before may
// have started one, on a loaded machine).
int trials_begun(MPI_Comm comm, int n, int calls) {
  int trials = 0;
  bool leading = true;
  for (int k = 0; k < calls; ++k) {
    const bool trial = alltoallv_auto(comm, n).by == "trial";
    leading = leading && trial;
    trials += trial && !leading;
  }
  return trials;
}

// A communicator reordered from world (its own classes, not world's, which
// earlier tests moved on) whose class of every alltoallv size has run its
// first calls at n until one is not a trial: that call.
Ran every_size_class_tried(MPI_Comm& comm, int n = 2) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comm);
  alltoallv_auto(comm, 1);  // the communicator's first call
  // A measured model (a loaded machine's, say) may find that per-call
  // choices pay: classes by size then, none of every size (agreed, local now).
  a2a::detail::CommContext* ctx = nullptr;
  std::shared_ptr<a2a::detail::ClassState> every_size;
  std::string err;
  EXPECT_EQ(a2a::detail::get_context(comm, ctx), MPI_SUCCESS);
  EXPECT_EQ(a2a::detail::auto_without_sizes(*ctx, every_size, err), MPI_SUCCESS) << err;
  if (!every_size) return {"", "classes by size"};
  return past_trial([&] { return alltoallv_auto(comm, n); });
}

// The class of every alltoallv size was tried at its first calls' sizes;
// calls that then move a hundred times the bytes run the trial again at the
// first agreement after (kFirstCheck calls of the class), on every rank
// alike, the data right throughout; calls that move back take the first
// sizes' winner without a trial.  (The test's A2A_COST_MODEL makes shm the
// pick for every size, so there is a trial to run again.)
TEST_F(Auto, EverySizeClassTriesAgainWhereSizesMove) {
  // The tuning scenarios test the file; this, the same with or without one.
  if (scenario() != "none") GTEST_SKIP() << "runs without A2A_TEST_TUNING";
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  const Ran first = every_size_class_tried(comm);
  if (first.by != "measured") GTEST_SKIP() << "no class of every size tried here (" << first.by << ")";
  const auto moved = [&] { return alltoallv_auto(comm, 200); };
  const int again_at = first_trial(moved, 3 * static_cast<int>(a2a::detail::kFirstCheck));
  EXPECT_GE(again_at, 0) << "sizes moved 100x, no trial again";
  EXPECT_LE(again_at, static_cast<int>(a2a::detail::kFirstCheck + a2a::detail::kSampleEvery));
  EXPECT_EQ(past_trial(moved).by, "measured");
  // Back to the first sizes: their winner is kept, so no trial (a drift
  // check, the only other way to one, comes no sooner than kFirstCheck
  // calls after the switch, and smaller calls never look slow).
  EXPECT_EQ(trials_begun(comm, 2, static_cast<int>(a2a::detail::kFirstCheck)), 0)
      << "sizes moved back to a class tried before";
  const Ran back = alltoallv_auto(comm, 2);
  EXPECT_EQ(back.by, "measured");
  EXPECT_EQ(back.algorithm, first.algorithm);
  MPI_Comm_free(&comm);
}

// A sweep of sizes (as a benchmark makes): every step of 4x the bytes is a
// size class the class has not tried, so each is tried within an agreement
// (at most kFirstCheck calls) and a trial; then the sweep goes back down
// through the classes it tried, with no trial (a drift check coinciding
// with the move counts as the move).
TEST_F(Auto, EverySizeClassFollowsASweep) {
  // 10^4 calls: run where ranks have cores (mpi.auto.sizes_moved.np2), not
  // time-sliced under a busy-polling MPICH.
  if (!std::getenv("A2A_TEST_SWEEP")) GTEST_SKIP() << "A2A_TEST_SWEEP runs only";
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  const Ran first = every_size_class_tried(comm);
  if (first.by != "measured") GTEST_SKIP() << "no class of every size tried here (" << first.by << ")";
  // An agreement comes at most kFirstCheck calls after the move (its pace
  // is set by what agreements cost, long on a loaded machine), then the trial.
  const int step = 2 * static_cast<int>(a2a::detail::kFirstCheck) + 2 * a2a::detail::most_trial_calls(3);
  for (int n : {8, 32, 128}) {
    int trials = 0;
    Ran last;
    for (int k = 0; k < step; ++k) trials += (last = alltoallv_auto(comm, n)).by == "trial";
    EXPECT_GT(trials, 0) << "no trial at " << n << " (4x the last step's bytes)";
    // A drift check may have started another trial here at the end (a loaded machine): finished at n.
    if (last.by == "trial") last = past_trial([&] { return alltoallv_auto(comm, n); });
    EXPECT_EQ(last.by, "measured") << n;
  }
  for (int n : {32, 8, 2})  // kFirstCheck calls: no drift check after the switch
    EXPECT_EQ(trials_begun(comm, n, static_cast<int>(a2a::detail::kFirstCheck)), 0)
        << "a trial again at " << n << ", tried on the way up";
  MPI_Comm_free(&comm);
}

// Calls that move out of their trial's sizes (kFar) but stay in the
// same size class are tried there, once: not handed that class's winner
// again at every agreement, its sizes never theirs.  n = 8 and 15 (P = 2:
// the ranks' mean bytes 128 and 240, one class, 1.9x).
TEST_F(Auto, EverySizeClassTriesMovesWithinASizeClass) {
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P != 2) GTEST_SKIP() << "sizes chosen for 2 ranks";
  MPI_Comm comm;
  const Ran first = every_size_class_tried(comm, 8);
  if (first.by != "measured") GTEST_SKIP() << "no class of every size tried here (" << first.by << ")";
  const auto moved = [&] { return alltoallv_auto(comm, 15); };
  const int again_at = first_trial(moved, 3 * static_cast<int>(a2a::detail::kFirstCheck));
  EXPECT_GE(again_at, 0) << "sizes moved 1.9x within their class, no trial";
  EXPECT_EQ(past_trial(moved).by, "measured");
  // Tried at these sizes: no trial again (a drift check comes no sooner than kFirstCheck calls).
  EXPECT_EQ(trials_begun(comm, 15, static_cast<int>(a2a::detail::kFirstCheck) / 2), 0);
  MPI_Comm_free(&comm);
}

// Where sizes move to a new class, the trial there runs only the class's
// candidates that the model finds worth calls at the new sizes
// (worth_trying at every_size_block), on every rank alike.  The test's
// model (A2A_TEST_NARROW) makes shm's copies dear: a pick or runner-up at
// small blocks, left out at large ones.
TEST_F(Auto, EverySizeClassTriesWhatIsWorthCallsAtItsSizes) {
  const char* text = std::getenv("A2A_COST_MODEL");
  if (!text || !std::getenv("A2A_TEST_NARROW")) GTEST_SKIP() << "A2A_TEST_NARROW runs only";
  a2a::detail::MachineModel m;
  a2a::detail::CommContext* ctx = nullptr;
  given_model(text, m, ctx);
  if (HasFatalFailure()) return;
  const int P = ctx->size;
  const a2a::detail::ModelLayout layout{ctx->topology.node_of, ctx->topology.ranks};
  std::string pick, runner_up;
  ASSERT_FALSE(a2a::detail::sizes_pay(layout, m, {}, pick, runner_up)) << "the test's model chooses per call";
  const std::vector<std::string> specs = a2a::detail::every_size_candidates(pick, runner_up);
  constexpr int n = 20000;  // alltoallv_auto's counts, (s + d) % 4 * n ints
  double total = 0;
  for (int s = 0; s < P; ++s)
    for (int d = 0; d < P; ++d) total += (s + d) % 4 * static_cast<double>(n) * sizeof(int);
  const long long block = a2a::detail::every_size_block(2 * total / P, P);
  const auto kept = a2a::detail::worth_trying(specs, a2a::detail::model_alltoallv(layout, block, block, m));
  ASSERT_LT(kept.size(), specs.size()) << "the test's model leaves nothing out at blocks of " << block << " B";
  std::vector<std::string> want;
  std::string err;
  for (size_t i : kept) {
    a2a::detail::Resolved r;
    ASSERT_EQ(a2a::detail::resolve(Collective::alltoallv, specs[i], P, block, r, err), MPI_SUCCESS);
    want.push_back(r.canonical);
  }
  MPI_Comm comm;
  const Ran first = every_size_class_tried(comm);
  ASSERT_EQ(first.by, "measured");
  std::vector<std::string> tried;
  Ran ran;
  for (int k = 0; k < 3 * static_cast<int>(a2a::detail::kFirstCheck); ++k) {
    ran = alltoallv_auto(comm, n);
    if (ran.by != "trial" && !tried.empty()) break;
    if (ran.by == "trial" && std::find(tried.begin(), tried.end(), ran.algorithm) == tried.end())
      tried.push_back(ran.algorithm);
  }
  EXPECT_EQ(ran.by, "measured");
  std::sort(want.begin(), want.end());
  std::sort(tried.begin(), tried.end());
  EXPECT_EQ(tried, want);
  MPI_Comm_free(&comm);
}

// auto's alltoallv with counts new every call (`call` picks them: some
// zero, a graph shuffle's), the data checked.
Ran alltoallv_new_counts(MPI_Comm comm, int call) {
  alltoallv_auto_checked(comm, [call](int s, int d) { return (s + 2 * d + call) % 5; }, call);
  A2A_Stats st;
  A2A_Last_stats(&st);
  return {st.algorithm, A2A_Last_decided_by()};
}

// An alltoallv decided native whose counts change every call (a graph
// shuffle) leaves the hot call armed after every call, so the next, its
// counts changed again, reaches the library without being prepared: also
// after a call that prepared its counts anew and bound the class there.
TEST_F(Auto, DecidedNativeWithNewCountsStaysHot) {
  if (scenario() != "native") GTEST_SKIP() << "A2A_TEST_TUNING=native only";
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "one rank runs no hot alltoallv";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int decided = 0, cold = 0;
  for (int call = 0; call < 100; ++call) {
    if (alltoallv_new_counts(comm, call).by != "tuning") continue;
    ++decided;
    cold += a2a::detail::thread_state().hot_v.prepared == nullptr;
  }
  EXPECT_GE(decided, 98) << "the tuning file's native decides from the second call";
  EXPECT_EQ(cold, 0) << "decided native calls after which the next must be prepared";
  MPI_Comm_free(&comm);
}

// A trial times a candidate of a2a's with what its calls pay beyond its
// run, as the library's own is timed by its run (its calls go the hot way):
// where counts change every call and preparing one takes long
// (A2A_TEST_PREPARE_SECONDS: 10 ms, beyond the noise of loaded sanitizer runs), the model's pick (shm, A2A_COST_MODEL) loses
// to native, on every rank alike.
TEST_F(Auto, TrialCountsWhatA2aCallsPayBeyondTheirRun) {
  if (!std::getenv("A2A_TEST_PREPARE_SECONDS")) GTEST_SKIP() << "A2A_TEST_PREPARE_SECONDS runs only";
  static const double prepare_seconds = std::atof(std::getenv("A2A_TEST_PREPARE_SECONDS"));
  a2a::detail::after_prepare_for_tests = [] {
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < prepare_seconds) {
    }
  };
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comm);
  std::vector<std::string> tried;
  int call = 0;
  Ran r = alltoallv_new_counts(comm, call++);  // the communicator's first call
  for (; call < 2 * a2a::detail::most_trial_calls(3); ++call) {
    if ((r = alltoallv_new_counts(comm, call)).by != "trial") break;
    if (std::find(tried.begin(), tried.end(), r.algorithm) == tried.end()) tried.push_back(r.algorithm);
  }
  EXPECT_NE(std::find(tried.begin(), tried.end(), "shm"), tried.end()) << "the model's pick was tried";
  EXPECT_EQ(r.by, "measured");
  EXPECT_EQ(r.algorithm, "native");
  EXPECT_EQ(agreed_choice(comm).first, r.algorithm);
  MPI_Comm_free(&comm);
  a2a::detail::after_prepare_for_tests = nullptr;
}

// A2A_AUTO_TRIAL=all: a tuning file's entry is tried against native too,
// and the class ends measured, on one of the two.
TEST_F(Auto, TuningEntriesVerifiedOnRequest) {
  const char* mode = std::getenv("A2A_AUTO_TRIAL");
  if (scenario() != "good" || !mode || std::string(mode) != "all") GTEST_SKIP() << "A2A_AUTO_TRIAL=all with a file";
  std::vector<std::string> tried;
  int calls = 0;
  alltoall_auto(MPI_COMM_WORLD, 1);  // world's first call, unless an earlier test made it
  const Ran ran = decided_alltoall(MPI_COMM_WORLD, 8, 2 * a2a::detail::most_trial_calls(2), calls, &tried);  // 32 B: tra:radix=2
  EXPECT_EQ(ran.by, "measured");
  EXPECT_TRUE(ran.algorithm == "tra:radix=2" || ran.algorithm == "native") << ran.algorithm;
  std::sort(tried.begin(), tried.end());
  EXPECT_EQ(tried, (std::vector<std::string>{"native", "tra:radix=2"}));
}

// auto's first call on a communicator runs native and decides nothing (a
// program calling once per communicator never pays a decision's
// collectives); communicators of world's ranks in world's order share
// world's decisions, others decide on their own.
TEST_F(Auto, FirstCallRunsNativeThenWorldsDecisionsAreShared) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  alltoall_auto(MPI_COMM_WORLD, 3);  // world's first call, unless an earlier test made it
  const Ran on_world = alltoall_auto(MPI_COMM_WORLD, 3);  // world decided
  MPI_Comm copy, reordered;
  MPI_Comm_dup(MPI_COMM_WORLD, &copy);
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reordered);
  for (MPI_Comm comm : {copy, reordered}) {
    const Ran first = alltoall_auto(comm, 3);
    EXPECT_EQ(first.algorithm, "native");
    EXPECT_EQ(first.by, "first-call");
    const Ran second = alltoall_auto(comm, 3);
    EXPECT_NE(second.by, "first-call");
    if (comm == copy && on_world.by != "trial") {
      EXPECT_EQ(second.algorithm, on_world.algorithm);
    }
  }
  a2a::detail::CommContext *w = nullptr, *c = nullptr, *r = nullptr;
  ASSERT_EQ(a2a::detail::get_context(MPI_COMM_WORLD, w), MPI_SUCCESS);
  ASSERT_EQ(a2a::detail::get_context(copy, c), MPI_SUCCESS);
  ASSERT_EQ(a2a::detail::get_context(reordered, r), MPI_SUCCESS);
  EXPECT_EQ(c->auto_state, w->auto_state) << "a duplicate of world decides as world";
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) {
    EXPECT_NE(r->auto_state, w->auto_state) << "other rank order, own decisions";
  }
  MPI_Comm_free(&copy);
  MPI_Comm_free(&reordered);
}

// A2A_Comm_prepare (what the shim runs in MPI_Init) learns the layout and
// nothing else: no private duplicate, no call counted, nothing decided, so
// the first call is still auto's first call and its data arrive whole.
TEST_F(Auto, PrepareLearnsTheLayoutAndLeavesTheFirstCallAlone) {
  ASSERT_EQ(A2A_Comm_prepare(MPI_COMM_WORLD), MPI_SUCCESS);  // the once-per-process part (MPI_COMM_SELF)
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int alive = a2a::detail::live_contexts();
  ASSERT_EQ(A2A_Comm_prepare(comm), MPI_SUCCESS);
  EXPECT_EQ(a2a::detail::live_contexts(), alive + 1);
  a2a::detail::CommContext* ctx = nullptr;
  ASSERT_EQ(a2a::detail::get_context(comm, ctx), MPI_SUCCESS);
  EXPECT_EQ(ctx->comm, MPI_COMM_NULL);
  EXPECT_EQ(ctx->calls, 0);
  ASSERT_EQ(A2A_Comm_prepare(comm), MPI_SUCCESS);  // again: nothing more
  EXPECT_EQ(a2a::detail::live_contexts(), alive + 1);
  const Ran first = alltoall_auto(comm, 3);
  EXPECT_EQ(first.algorithm, "native");
  EXPECT_EQ(first.by, "first-call");
  A2A_Stats before{}, after{};
  A2A_Last_stats(&before);
  ASSERT_EQ(A2A_Comm_prepare(comm), MPI_SUCCESS);  // the last call's stats stay
  A2A_Last_stats(&after);
  EXPECT_STREQ(after.algorithm, before.algorithm);
  EXPECT_EQ(after.bytes_sent, before.bytes_sent);
  EXPECT_EQ(A2A_Comm_prepare(MPI_COMM_NULL), MPI_ERR_COMM);
  MPI_Comm_free(&comm);
}
