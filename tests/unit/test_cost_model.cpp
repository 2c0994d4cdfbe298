// The cost model: exact per-round costs on small cases worked by hand, the
// regimes the papers describe, the candidate lists, A2A_COST_MODEL parsing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "select/cost_model.hpp"
#include "core/cost_keys.hpp"
#include "select/machine.hpp"
#include "select/policy.hpp"
#include "core/algorithm.hpp"

using namespace a2a::detail;

namespace {
ModelLayout nodes_of(const std::vector<int>& sizes) {
  ModelLayout l;
  int rank = 0;
  for (size_t n = 0; n < sizes.size(); ++n) {
    l.ranks.emplace_back();
    for (int q = 0; q < sizes[n]; ++q, ++rank) {
      l.ranks.back().push_back(rank);
      l.node_of.push_back(static_cast<int>(n));
    }
  }
  return l;
}
double cost_of(const std::vector<CostedSpec>& v, const std::string& spec) {
  for (const auto& c : v)
    if (c.spec == spec) return c.seconds;
  ADD_FAILURE() << spec << " not modelled";
  return -1;
}
MachineModel flat(double alpha, double beta, double overhead, double copy = 0) {
  return {{{alpha, beta}, {alpha, beta}, overhead, copy}};
}
// The cheapest candidate that is not native.
std::string best_other(const std::vector<CostedSpec>& v) {
  for (const auto& c : v)
    if (c.spec != "native") return c.spec;
  return "";
}
const CostedSpec& entry(const std::vector<CostedSpec>& v, const std::string& spec) {
  for (const auto& c : v)
    if (c.spec == spec) return c;
  static const CostedSpec none{"none", -1, -1};
  ADD_FAILURE() << spec << " not modelled";
  return none;
}
}  // namespace

TEST(CostModel, HandWorkedRounds) {
  // P = 4, 100-byte blocks.  Spread-out: one round of 3 messages,
  // alpha + 2 overhead + 300 beta.  TRA radix 2: 2 rounds of 2 blocks each,
  // 2 (alpha + 200 beta), plus copies of 2*400 (rotations) + 2*2*200 (packing).
  const auto v = model_alltoall(nodes_of({4}), 100, flat(1, 0.001, 0.5, 0.0001));
  EXPECT_DOUBLE_EQ(cost_of(v, "spread-out"), 1 + 2 * 0.5 + 0.3 + 0.0001 * 100);
  EXPECT_DOUBLE_EQ(cost_of(v, "tra:radix=2"), 2 * (1 + 0.2) + 0.0001 * (800 + 800));
  // radix 4 = P, one port: 3 rounds of one block, each straight from
  // buffer to buffer (no packing).  All ports (the default): the three in
  // flight at once, one round: the slowest message (alpha), the others'
  // injection overheads, the bytes' beta added up.
  EXPECT_DOUBLE_EQ(cost_of(v, "tra:radix=4,ports=1"), 3 * (1 + 0.1) + 0.0001 * 800);
  EXPECT_DOUBLE_EQ(cost_of(v, "tra:radix=4"), 1 + 2 * 0.5 + 0.3 + 0.0001 * 800);
  EXPECT_EQ(entry(v, "tra:radix=4").rounds, 1);
  EXPECT_EQ(entry(v, "tra:radix=4,ports=1").rounds, 3);
  // TuNA at radix 4: a batch's three size messages (8 bytes each) in one
  // round, then its three blocks in another; every block packed.
  const auto tv = model_alltoallv(nodes_of({4}), 100, 100, flat(1, 0.001, 0.5, 0.0001));
  EXPECT_DOUBLE_EQ(cost_of(tv, "tuna:radix=4"), (1 + 2 * 0.5 + 0.024) + (1 + 2 * 0.5 + 0.3) + 0.0001 * (800 + 600));
  EXPECT_DOUBLE_EQ(cost_of(tv, "tuna:radix=4,ports=1"), 3 * (1 + 0.008) + 3 * (1 + 0.1) + 0.0001 * (800 + 600));
  // factor: 4 rounds, one of them the local copy.
  EXPECT_DOUBLE_EQ(cost_of(v, "factor"), 3 * (1 + 0.1) + 0.0001 * 100);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; }));
}

TEST(CostModel, InterNodeLinksCostMore) {
  // 2 nodes of 2: rank 0's spread-out round reaches the other node, so it
  // pays the inter-node alpha; beta per link, the inter-node one times the 2
  // ranks that share the node's link.
  const MachineModel m{{{1, 0.001}, {10, 0.01}, 0, 0}};
  const auto v = model_alltoall(nodes_of({2, 2}), 100, m);
  EXPECT_DOUBLE_EQ(cost_of(v, "spread-out"), 10 + 0.1 + 2 * 2 * 1.0);
  // One rank per node: nobody shares the link.
  EXPECT_DOUBLE_EQ(cost_of(model_alltoall(nodes_of({1, 1, 1, 1}), 100, m), "spread-out"), 10 + 3 * 1.0);
  // Pairwise's step i is a shift: only the node's ranks whose partner i on is
  // off the node share its link.  Rank 1: 1 -> 2 (shared by 1 of node 0's
  // ranks), 1 -> 3 (by 2), 1 -> 0 (on the node); rank 0 the same, mirrored.
  EXPECT_DOUBLE_EQ(cost_of(v, "pairwise"), (10 + 1.0) + (10 + 2 * 1.0) + (1 + 0.1));
  // Nodes of interleaved ranks ({0, 2} and {1, 3}): steps 1 and 3 cross
  // from both ranks of a node, step 2 stays on it.
  const ModelLayout interleaved{{0, 1, 0, 1}, {{0, 2}, {1, 3}}};
  EXPECT_DOUBLE_EQ(cost_of(model_alltoall(interleaved, 100, m), "pairwise"), 2 * (10 + 2 * 1.0) + (1 + 0.1));
  EXPECT_GT(cost_of(v, "tra2:radix-intra=2,radix-inter=2"), 0);
  EXPECT_GT(cost_of(v, "clustered"), 0);
  // Unequal nodes: no tra2 or tuna-hier candidates.
  for (const auto& c : model_alltoall(nodes_of({1, 3}), 100, m)) EXPECT_EQ(c.spec.find("tra2"), std::string::npos);
  for (const auto& c : model_alltoallv(nodes_of({1, 3}), 100, 100, m))
    EXPECT_EQ(c.spec.find("tuna-hier"), std::string::npos);
}

TEST(CostModel, PapersRegimes) {
  // Latency bound (tiny blocks, each extra message costs its overhead): few
  // rounds win, a small radix; bandwidth bound: each block sent once.
  const auto small = model_alltoall(nodes_of({64}), 8, flat(2e-6, 1e-10, 1e-6));
  EXPECT_EQ(best_other(small).rfind("tra:radix=", 0), 0u) << best_other(small);
  // (memcpy as fast as the link: shm's two copies lose when bandwidth bound)
  const auto large = model_alltoall(nodes_of({64}), 1 << 20, flat(2e-6, 1e-10, 1e-6, 1e-10));
  EXPECT_EQ(best_other(large), "spread-out");
  // Copies much cheaper than the link: the shared-memory exchange.
  EXPECT_EQ(best_other(model_alltoall(nodes_of({64}), 1 << 20, flat(2e-6, 1e-9, 1e-6, 1e-10))), "shm");
  // Several nodes: no shm candidate.
  for (const auto& c : model_alltoall(nodes_of({32, 32}), 1 << 20, flat(2e-6, 1e-9, 1e-6, 1e-10)))
    EXPECT_NE(c.spec, "shm");
  // shm's flags: as intra-node messages where the flag is unknown (one
  // latency, an overhead per further peer), else a measured flag per peer.
  MachineModel m = flat(1, 0, 0.25);
  EXPECT_DOUBLE_EQ(cost_of(model_alltoall(nodes_of({5}), 0, m), "shm"), 1 + 3 * 0.25);
  m.flag = 0.1;
  EXPECT_DOUBLE_EQ(cost_of(model_alltoall(nodes_of({5}), 0, m), "shm"), 4 * 0.1);
  EXPECT_EQ(best_other(model_alltoall(nodes_of({2}), 16, m)), "shm");  // P = 2: a flag beats a message
  // Non-uniform, tiny blocks: a log-round algorithm (padded Bruck, whose one
  // message per round beats TuNA's two there, or TuNA); huge mean: spread-out.
  const auto tiny = best_other(model_alltoallv(nodes_of({64}), 8, 64, flat(2e-6, 1e-10, 1e-6)));
  EXPECT_TRUE(tiny == "padded-bruck" || tiny.rfind("tuna:radix=", 0) == 0) << tiny;
  EXPECT_EQ(best_other(model_alltoallv(nodes_of({64}), 64, 64, flat(2e-6, 1e-10, 1e-6))), "padded-bruck");
  EXPECT_EQ(best_other(model_alltoallv(nodes_of({64}), 64, 16384, flat(2e-6, 1e-10, 1e-6))).rfind("tuna:radix=", 0), 0u);
  EXPECT_EQ(best_other(model_alltoallv(nodes_of({64}), 1 << 20, 1 << 21, flat(2e-6, 1e-10, 1e-6, 1e-10))),
            "spread-out");
  // Padding costs the maximum: with a very skewed workload padded-bruck loses to tuna radix 2.
  const auto skewed = model_alltoallv(nodes_of({16}), 64, 64 << 10, flat(2e-6, 1e-9, 1e-6));
  EXPECT_GT(cost_of(skewed, "padded-bruck"), cost_of(skewed, "tuna:radix=2"));
}

TEST(CostModel, CandidateRadices) {
  const auto r64 = candidate_radices(64);
  EXPECT_EQ(r64.size(), 63u);
  EXPECT_EQ(r64.front(), 2);
  EXPECT_EQ(r64.back(), 64);
  const auto r1000 = candidate_radices(1000);
  for (int x : {2, 32, 66, 128, 512, 1000}) EXPECT_NE(std::find(r1000.begin(), r1000.end(), x), r1000.end()) << x;
  EXPECT_EQ(std::find(r1000.begin(), r1000.end(), 100), r1000.end());
  EXPECT_TRUE(std::is_sorted(r1000.begin(), r1000.end()));
  EXPECT_TRUE(candidate_radices(1).empty());
  EXPECT_EQ(model_alltoall(nodes_of({1}), 8, flat(1, 1, 1)).front().spec, "native");  // ties go to native
}

// native costs what the library's own choice costs: Open MPI 4.1's fixed
// rules, MPICH's defaults, otherwise the best of linear, pairwise and Bruck.
TEST(CostModel, NativeIsTheLibrarysOwnChoice) {
  // Open MPI's rules, spot checks against coll_tuned_decision_fixed.c.
  EXPECT_EQ(library_alltoall(Library::open_mpi, 2, 16).spec, "pairwise");     // two_proc
  EXPECT_EQ(library_alltoall(Library::open_mpi, 2, 8).spec, "pairwise");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 4, 16).spec, "spread-out");   // linear_sync
  EXPECT_EQ(library_alltoall(Library::open_mpi, 7, 600000).spec, "pairwise");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 8, 16).spec, "spread-out");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 16, 16).spec, "tra:radix=2");  // modified Bruck
  EXPECT_EQ(library_alltoall(Library::open_mpi, 16, 2).spec, "spread-out");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 16, 512).spec, "spread-out");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 100, 1 << 20).spec, "pairwise");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 1024, 256).spec, "tra:radix=2");
  EXPECT_EQ(library_alltoall(Library::open_mpi, 5000, 1 << 20).spec, "spread-out");
  EXPECT_EQ(library_alltoall(Library::mpich, 8, 256).spec, "tra:radix=2");
  EXPECT_EQ(library_alltoall(Library::mpich, 4, 256).spec, "spread-out");
  EXPECT_EQ(library_alltoall(Library::mpich, 64, 65536).spec, "pairwise");
  EXPECT_EQ(library_alltoall(Library::other, 64, 16).spec, "");
  EXPECT_EQ(library_alltoallv(Library::open_mpi, 3).spec, "pairwise");
  EXPECT_EQ(library_alltoallv(Library::open_mpi, 16).spec, "spread-out");
  EXPECT_EQ(library_alltoallv(Library::mpich, 3).spec, "spread-out");
  // Open MPI's basic linear (alltoall 8-16 KiB at P < 8; alltoallv at 4..63 ranks) makes persistent requests.
  EXPECT_TRUE(library_alltoall(Library::open_mpi, 4, 10000).persistent);
  EXPECT_FALSE(library_alltoall(Library::open_mpi, 4, 1000).persistent);
  EXPECT_TRUE(library_alltoallv(Library::open_mpi, 16).persistent);
  EXPECT_EQ(library_from_version("Open MPI v4.1.4, package: Debian OpenMPI"), Library::open_mpi);
  EXPECT_EQ(library_from_version("MPICH Version:\t4.0.2"), Library::mpich);

  MachineModel m = flat(2e-6, 1e-10, 1e-6);
  m.library = Library::open_mpi;
  const auto v = model_alltoall(nodes_of({16}), 16, m);
  EXPECT_DOUBLE_EQ(entry(v, "native").seconds, entry(v, "tra:radix=2").seconds);
  EXPECT_EQ(entry(v, "native").rounds, 4);
  EXPECT_EQ(entry(model_alltoall(nodes_of({16}), 1024, m), "native").rounds, 1);
  m.library = Library::other;
  const auto w = model_alltoall(nodes_of({16}), 1024, m);
  EXPECT_DOUBLE_EQ(entry(w, "native").seconds,
                   std::min({entry(w, "spread-out").seconds, entry(w, "pairwise").seconds, entry(w, "tra:radix=2").seconds}));
}

// Untried, auto runs native unless another candidate is modelled at most
// kClear of native's time (with the size allreduce for alltoallv).
// The trial times the pick, native and a close runner-up.
TEST(CostModel, PickRuleAndTrialCandidates) {
  const std::vector<CostedSpec> close = {{"native", 10, 4}, {"tra:radix=3", 8.5, 3}, {"spread-out", 12, 1}};
  EXPECT_EQ(model_pick(close), "native");
  // Native is the pick, tra within kFar of it: both tried.
  EXPECT_EQ(trial_candidates(close), (std::vector<std::string>{"native", "tra:radix=3"}));
  const std::vector<CostedSpec> clear = {{"tra:radix=3", 7.9, 3}, {"native", 10, 4}, {"spread-out", 12, 1}};
  EXPECT_EQ(model_pick(clear), "tra:radix=3");
  EXPECT_EQ(model_pick(clear, 0.2), "native");  // the allreduce eats the gain
  EXPECT_EQ(trial_candidates(clear), (std::vector<std::string>{"tra:radix=3", "native"}));  // spread-out 1.52x: out
  const std::vector<CostedSpec> three = {{"shm", 4, 1}, {"tra:radix=3", 4.5, 3}, {"native", 10, 1}};
  EXPECT_EQ(trial_candidates(three), (std::vector<std::string>{"shm", "native", "tra:radix=3"}));
  const std::vector<CostedSpec> alone = {{"native", 10, 1}, {"spread-out", 16, 1}};
  EXPECT_EQ(trial_candidates(alone), (std::vector<std::string>{"native"}));  // nothing worth a call
  // Open MPI's basic linear pays its persistent requests.
  MachineModel m = flat(2e-6, 1e-10, 1e-6);
  m.library = Library::open_mpi;
  m.persistent = 1e-6;
  const auto v = model_alltoallv(nodes_of({16}), 64, 64, m);
  EXPECT_DOUBLE_EQ(entry(v, "native").seconds, entry(v, "spread-out").seconds + 30e-6);
  EXPECT_GT(model_allreduce(nodes_of({16}), flat(1, 0, 0)), 3.9);  // 4 rounds of recursive doubling
}

// A later trial of an every-size class tries, of its candidates, native,
// those the ranking lacks and those modelled within kFar of native.
TEST(CostModel, WorthTryingAtASize) {
  const std::vector<CostedSpec> large = {{"native", 10, 1}, {"spread-out", 10, 1}, {"shm", 15.1, 1}};
  using Kept = std::vector<size_t>;
  EXPECT_EQ(worth_trying({"shm", "native", "spread-out"}, large), (Kept{1, 2}));  // shm 1.51x: out
  const std::vector<CostedSpec> close = {{"shm", 14.9, 1}, {"native", 10, 1}};
  EXPECT_EQ(worth_trying({"shm", "native"}, close), (Kept{0, 1}));
  EXPECT_EQ(worth_trying({"native", "tra:radix=3"}, close), (Kept{0, 1}));  // not ranked: kept
  EXPECT_EQ(worth_trying({"native"}, close), (Kept{0}));
  EXPECT_EQ(worth_trying({"shm", "native"}, {{"shm", 30, 1}}), (Kept{0, 1}));  // no native to compare with
}

// Time-sliced ranks: a round measured with every rank taking part costs
// what a scheduling pass costs, far above a ping-pong's alpha, so one-round
// algorithms win without a rule saying so; shm's flag round likewise.
TEST(CostModel, MeasuredRoundsPriceTimeSlicing) {
  MachineModel m = flat(1e-6, 1e-10, 1e-7, 1e-10);
  m.library = Library::open_mpi;
  m.flag = 1e-7;
  const auto fast = model_alltoall(nodes_of({8}), 64, m);
  m.round = 50e-6;  // a rank waits for the next to be scheduled
  m.flag_round = 40e-6;
  const auto sliced = model_alltoall(nodes_of({8}), 64, m);
  EXPECT_GT(cost_of(sliced, "tra:radix=2"), 3 * 50e-6);  // 3 rounds, each at least a scheduling pass
  EXPECT_LT(cost_of(sliced, "spread-out"), 2 * 50e-6);   // one round
  EXPECT_NEAR(cost_of(sliced, "shm"), 40e-6 + 64 * 1e-10, 1e-6);
  EXPECT_LT(cost_of(fast, "tra:radix=2"), 10e-6);
  EXPECT_EQ(best_other(sliced), "shm");
}

// shm's copies priced from the measured curves, and the direct threshold
// where one CMA read beats two copies of the rank's P-1 blocks.
TEST(CostModel, ShmCopiesAndDirectThreshold) {
  MachineModel m = flat(1e-6, 1e-10, 1e-7, 1e-10);
  m.flag = 1e-7;
  // Unknown curves: two copies at `copy`, no CMA.
  EXPECT_DOUBLE_EQ(shm_segment_seconds(m, 1000), 2e-7);
  EXPECT_GT(shm_cma_seconds(m, 1000), 1);
  // Through the segment 0.2 ns/B in cache, 1 ns/B from 256 KiB on; CMA
  // 2 us + 0.4 ns/B.
  const double seg[] = {0.2e-9 * 4096, 0.2e-9 * 16384, 0.2e-9 * 65536, 1e-9 * 262144, 1e-9 * 1048576};
  for (int i = 0; i < kShmCopySizes; ++i) {
    m.seg[i] = seg[i];
    m.cma[i] = 2e-6 + 0.4e-9 * static_cast<double>(kShmCopyBytes[i]);
  }
  EXPECT_DOUBLE_EQ(shm_segment_seconds(m, 2048), 0.2e-9 * 2048);      // proportional below the first size
  EXPECT_DOUBLE_EQ(shm_segment_seconds(m, 2 << 20), 1e-9 * (2 << 20));  // per byte past the last
  EXPECT_NEAR(shm_cma_seconds(m, 1024), 2e-6 + 0.4e-9 * 1024, 1e-12);  // the line extended
  const ShmDirect two = shm_direct_choice(m, 2), eight = shm_direct_choice(m, 8);
  EXPECT_TRUE(two.cma);
  // P = 2: a 256 KiB block loses 1 ns/B - 0.4 ns/B in copies, more than the read's 2 us; 64 KiB does not.
  EXPECT_LE(two.from, 262144);
  EXPECT_GT(two.from, 65536);
  EXPECT_LT(eight.from, two.from);  // seven blocks share the caches: smaller blocks already spill
  // The model's shm cost follows the threshold: a 1 MiB block read once.
  const double shm_1m = cost_of(model_alltoall(nodes_of({2}), 1 << 20, m), "shm");
  EXPECT_LT(shm_1m, 1e-9 * (1 << 20));
  // No CMA: messages on the node link from where they beat the copies.
  MachineModel no_cma = m;
  for (double& c : no_cma.cma) c = 0;
  const ShmDirect p2p = shm_direct_choice(no_cma, 2);
  EXPECT_FALSE(p2p.cma);
  EXPECT_LE(p2p.from, 262144);
  // Copies that always win: never direct.
  for (int i = 0; i < kShmCopySizes; ++i) m.seg[i] = 0.1e-9 * static_cast<double>(kShmCopyBytes[i]);
  EXPECT_EQ(shm_direct_choice(m, 4).from, ShmKnobs::kDirectOff);
}

TEST(CostModel, EnvironmentText) {
  MachineModel m;
  unsigned given = 0;
  std::string err;
  ASSERT_TRUE(parse_cost_model("alpha_intra=1e-6,beta_inter=2e-10", m, given, err)) << err;
  EXPECT_DOUBLE_EQ(m.intra.alpha, 1e-6);
  EXPECT_DOUBLE_EQ(m.inter.beta, 2e-10);
  EXPECT_EQ(given, 1u | 8u);
  ASSERT_TRUE(parse_cost_model("alpha_intra=1,beta_intra=0,alpha_inter=1,beta_inter=0,overhead=0,copy=0", m, given, err));
  EXPECT_EQ(given, kAllCostKeys);
  given = 0;
  ASSERT_TRUE(parse_cost_model("flag=2e-7", m, given, err)) << err;
  EXPECT_DOUBLE_EQ(m.flag, 2e-7);
  EXPECT_EQ(given, 1u << 7);
  given = 0;
  ASSERT_TRUE(parse_cost_model("round=3e-5,flag_round=1e-5,shm_copy=1e-9,cma=5e-10", m, given, err)) << err;
  EXPECT_DOUBLE_EQ(m.round, 3e-5);
  EXPECT_DOUBLE_EQ(m.flag_round, 1e-5);
  EXPECT_DOUBLE_EQ(m.seg[2], 1e-9 * 65536);
  EXPECT_DOUBLE_EQ(m.cma[4], 5e-10 * (1 << 20));
  MachineModel applied;
  apply_cost_keys(applied, m, given);
  EXPECT_DOUBLE_EQ(applied.round, 3e-5);
  EXPECT_DOUBLE_EQ(applied.seg[2], m.seg[2]);
  EXPECT_DOUBLE_EQ(applied.intra.alpha, 0);  // not given: left alone
  EXPECT_NE(describe_costs(m).find("round=3e-05"), std::string::npos) << describe_costs(m);
  // A whole model with optional keys besides is still whole: nothing measured.
  EXPECT_TRUE(whole_model(kAllCostKeys | 1u << 7 | 1u << 8));
  EXPECT_FALSE(whole_model((kAllCostKeys & ~1u) | 1u << 7));
  // A link's alpha or beta given replaces its measured curve; the other link keeps its own.
  MachineModel measured;
  for (int i = 0; i < kLinkSizes; ++i) measured.intra.at[i] = measured.inter.at[i] = 1e-3;
  given = 0;
  ASSERT_TRUE(parse_cost_model("beta_intra=1e-10", m, given, err)) << err;
  apply_cost_keys(measured, m, given);
  EXPECT_DOUBLE_EQ(link_seconds(measured.intra, 1 << 16), measured.intra.alpha + 1e-10 * 65536);
  EXPECT_DOUBLE_EQ(measured.inter.at[1], 1e-3);
  for (const char* bad : {"alpha=1", "alpha_intra", "alpha_intra=", "alpha_intra=x", "alpha_intra=-1", "copy=2",
                          "alpha_intra=1e-6;beta_intra=1", "alpha_intra=nan"}) {
    err.clear();
    EXPECT_FALSE(parse_cost_model(bad, m, given, err)) << bad;
    EXPECT_NE(err.find("A2A_COST_MODEL"), std::string::npos) << bad;
  }
}
