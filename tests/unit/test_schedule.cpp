// Every uniform schedule simulated on a block matrix without MPI: each
// (src, dst) block must land exactly once in the right slot, and the round
// and block counts must equal the TRA paper's closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "schedule/schedule.hpp"
#include "schedule/shm.hpp"

namespace s = a2a::detail::schedule;

namespace {

using Block = std::pair<int, int>;  // (source, destination)

struct Plan {
  std::vector<s::Step> steps;
  int dir;  // +1 forward, -1 mirrored (modified / zero-copy / zero-rotation)
};

// The schedules the MPI implementations run, by algorithm.
std::map<std::string, Plan> plans(int P) {
  std::map<std::string, Plan> out;
  for (const char* name : {"linear", "spread-out", "scattered", "pairwise"}) out[name] = {s::linear_steps(P), +1};
  out["bruck-basic"] = {s::tra_steps(P, 2), +1};
  for (const char* name : {"bruck-modified", "bruck-zero-copy", "bruck-zero-rotation"})
    out[name] = {s::tra_steps(P, 2), -1};
  for (int r = 2; r <= P + 1; ++r) out["tra:radix=" + std::to_string(r)] = {s::tra_steps(P, r), +1};
  return out;
}

// Runs a plan on all P ranks at once; returns the final slots of every rank.
std::vector<std::vector<Block>> simulate(int P, const Plan& plan) {
  std::vector<std::vector<Block>> slot(P, std::vector<Block>(P));
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < P; ++i) slot[p][i] = {p, s::mod(p + static_cast<long long>(plan.dir) * i, P)};
  for (const auto& step : plan.steps) {
    auto next = slot;
    for (int p = 0; p < P; ++p) {
      const int to = s::mod(p + static_cast<long long>(plan.dir) * step.distance, P);
      for (int i : step.slots) next[to][i] = slot[p][i];
    }
    slot = std::move(next);
  }
  return slot;
}

}  // namespace

TEST(Digits, IntegerLogarithm) {
  EXPECT_EQ(s::digit_count(1, 2), 0);
  EXPECT_EQ(s::digit_count(2, 2), 1);
  EXPECT_EQ(s::digit_count(8, 2), 3);
  EXPECT_EQ(s::digit_count(9, 2), 4);
  EXPECT_EQ(s::digit_count(9, 3), 2);
  EXPECT_EQ(s::digit_count(10, 3), 3);
  EXPECT_EQ(s::digit_count(16384, 128), 2);
  EXPECT_EQ(s::digit(11, 3, 0), 2);
  EXPECT_EQ(s::digit(11, 3, 1), 0);
  EXPECT_EQ(s::digit(11, 3, 2), 1);
}

TEST(Schedules, EveryBlockLandsOnceInItsSlot) {
  for (int P = 1; P <= 64; ++P) {
    for (const auto& [name, plan] : plans(P)) {
      const auto slot = simulate(P, plan);
      std::map<Block, int> seen;
      for (int p = 0; p < P; ++p)
        for (int i = 0; i < P; ++i) {
          const Block want{s::mod(p - static_cast<long long>(plan.dir) * i, P), p};
          ASSERT_EQ(slot[p][i], want) << name << " P=" << P << " rank " << p << " slot " << i;
          ++seen[slot[p][i]];
        }
      ASSERT_EQ(seen.size(), static_cast<size_t>(P) * P) << name << " P=" << P;
    }
  }
}

TEST(Schedules, SlotListsAreSortedAndNeverIncludeSelf) {
  for (int P = 1; P <= 64; ++P)
    for (const auto& [name, plan] : plans(P))
      for (const auto& step : plan.steps) {
        ASSERT_FALSE(step.slots.empty()) << name;
        ASSERT_TRUE(std::is_sorted(step.slots.begin(), step.slots.end())) << name;
        ASSERT_GT(step.slots.front(), 0) << name;
        ASSERT_LT(step.slots.back(), P) << name;
      }
}

TEST(Tra, RoundsAndBlocksEqualClosedForms) {
  for (int P = 1; P <= 64; ++P)
    for (int r = 2; r <= P + 3; ++r) {
      const auto steps = s::tra_steps(P, r);
      EXPECT_EQ(s::count_rounds(steps), s::tra_rounds_closed(P, r)) << "P=" << P << " r=" << r;
      EXPECT_EQ(s::count_blocks(steps), s::tra_blocks_closed(P, r)) << "P=" << P << " r=" << r;
    }
}

TEST(Tra, ShapeIsTheStepsCounted) {
  for (int P = 1; P <= 130; ++P)
    for (int r = 2; r <= P + 3; ++r) {
      std::vector<s::StepShape> counted;
      for (const auto& step : s::tra_steps(P, r))
        counted.push_back({step.distance, static_cast<int>(step.slots.size()), step.digit});
      ASSERT_EQ(s::tra_shape(P, r), counted) << "P=" << P << " r=" << r;
    }
}

// The k-port form: every batch is a run of one digit's steps, at most
// `ports` long, whose slots are disjoint, so its exchanges may all read
// the state before the batch and land after it; the batches deliver every
// block, and there are as many as the closed form says.
TEST(Tra, BatchesOfOneDigitMoveDisjointSlotsAndDeliver) {
  for (int P = 1; P <= 40; ++P)
    for (int r = 2; r <= P + 1; ++r)
      for (int ports = 0; ports <= std::min(r, P) ; ++ports) {
        const auto steps = s::tra_steps(P, r);
        std::vector<std::vector<Block>> slot(P, std::vector<Block>(P));
        for (int p = 0; p < P; ++p)
          for (int i = 0; i < P; ++i) slot[p][i] = {p, s::mod(p + i, P)};
        long long batches = 0;
        for (size_t first = 0, last; first < steps.size(); first = last) {
          last = s::batch_end(steps, first, ports);
          ++batches;
          ASSERT_TRUE(ports <= 0 || last - first <= static_cast<size_t>(ports));
          std::vector<int> seen(P, 0);
          auto next = slot;
          for (size_t k = first; k < last; ++k) {
            ASSERT_EQ(steps[k].digit, steps[first].digit);
            for (int i : steps[k].slots) {
              ASSERT_EQ(seen[i]++, 0) << "P=" << P << " r=" << r << ": slot " << i << " twice in a batch";
              for (int p = 0; p < P; ++p) next[s::mod(p + static_cast<long long>(steps[k].distance), P)][i] = slot[p][i];
            }
          }
          slot = std::move(next);
          if (last < steps.size() && steps[last].digit == steps[first].digit) {
            ASSERT_EQ(last - first, static_cast<size_t>(ports)) << "a batch cut short";
          }
        }
        for (int p = 0; p < P; ++p)
          for (int i = 0; i < P; ++i) ASSERT_EQ(slot[p][i], Block(s::mod(p - i, P), p)) << "P=" << P << " r=" << r;
        ASSERT_EQ(batches, s::tra_waits_closed(P, r, ports)) << "P=" << P << " r=" << r << " ports=" << ports;
      }
  // 1-port: a wait per round; all ports: a wait per digit.
  EXPECT_EQ(s::tra_waits_closed(64, 8, 1), s::tra_rounds_closed(64, 8));
  EXPECT_EQ(s::tra_waits_closed(64, 8, 0), 2);
  EXPECT_EQ(s::tra_waits_closed(64, 64, 0), 1);
  EXPECT_EQ(s::tra_waits_closed(1024, 32, 0), 2);
  EXPECT_EQ(s::tra_waits_closed(1000, 10, 3), 9);
  EXPECT_EQ(s::tra_waits_closed(1, 2, 0), 0);
}

// A step's span r^x tells which of its slots arrived in an earlier step
// (the zero-rotation engine forwards those from their final place): slot i
// has, exactly when i % span != 0.
TEST(Tra, SpanTellsWhichSlotsArrivedBefore) {
  for (int P = 1; P <= 70; ++P)
    for (int r = 2; r <= P + 1; ++r) {
      std::vector<int> seen(P, 0);
      for (const auto& step : s::tra_steps(P, r)) {
        ASSERT_EQ(step.span, s::ipow(std::min(r, std::max(P, 2)), step.digit));
        for (int i : step.slots) ASSERT_EQ(seen[i]++ > 0, i % step.span != 0) << "P=" << P << " r=" << r << " slot " << i;
      }
    }
}

TEST(Tra, PowerOfRadixMatchesPropositionsOneAndTwo) {
  for (int r = 2; r <= 8; ++r)
    for (int w = 1; s::ipow(r, w) <= 4096; ++w) {
      const long long P = s::ipow(r, w);
      if (r == P) continue;  // propositions 1-2 are stated for r < P
      EXPECT_EQ(s::tra_rounds_closed(P, r), w * (r - 1));
      EXPECT_EQ(s::tra_blocks_closed(P, r), w * (r - 1) * s::ipow(r, w - 1));
    }
}

TEST(Tra, PaperFigures) {
  EXPECT_EQ(s::tra_rounds_closed(16384, 128), 254);
  EXPECT_EQ(s::tra_blocks_closed(16384, 128), 32512);
  EXPECT_EQ(s::tra_rounds_closed(16384, 2), 14);
  EXPECT_EQ(s::tra_blocks_closed(16384, 2), 114688);
  EXPECT_EQ(s::tra_rounds_closed(11, 3), 5);
  EXPECT_EQ(s::tra_blocks_closed(11, 3), 15);
  for (auto [P, r] : {std::pair{16384, 128}, std::pair{16384, 2}, std::pair{11, 3}}) {
    const auto steps = s::tra_steps(P, r);
    EXPECT_EQ(s::count_rounds(steps), s::tra_rounds_closed(P, r));
    EXPECT_EQ(s::count_blocks(steps), s::tra_blocks_closed(P, r));
  }
}

TEST(Tra, ExtremesAreBruckAndLinear) {
  for (int P = 2; P <= 64; ++P) {
    EXPECT_EQ(s::tra_rounds_closed(P, P), P - 1);
    EXPECT_EQ(s::tra_blocks_closed(P, P), P - 1);
    EXPECT_EQ(s::tra_rounds_closed(P, P + 7), P - 1);  // radix above P runs as P
    EXPECT_EQ(s::tra_rounds_closed(P, 2), s::digit_count(P, 2));
  }
  EXPECT_EQ(s::tra_rounds_closed(1, 2), 0);
  EXPECT_EQ(s::tra_blocks_closed(1, 5), 0);
}

TEST(Linear, OneBlockPerPeer) {
  for (int P = 1; P <= 64; ++P) {
    const auto steps = s::linear_steps(P);
    EXPECT_EQ(s::count_rounds(steps), P - 1);
    EXPECT_EQ(s::count_blocks(steps), P - 1);
  }
}

// Zero-copy Bruck: a slot with b hops left lives in R (b even) or T (b odd).
// Simulated with two arrays per rank: every step reads from one array and
// writes the other, and the final hop always lands in R.
TEST(ZeroCopy, ParityAlternationEndsInReceiveBuffer) {
  for (int P = 1; P <= 64; ++P) {
    const auto steps = s::tra_steps(P, 2);
    const auto hops = s::remaining_hops(P, steps);
    std::vector<int> total(P, 0);
    for (const auto& st : steps)
      for (int i : st.slots) ++total[i];
    // where[i]: 0 = R, 1 = T; data valid flag per array position.
    std::vector<int> where(P);
    for (int i = 0; i < P; ++i) where[i] = total[i] % 2;
    for (size_t k = 0; k < steps.size(); ++k)
      for (size_t j = 0; j < steps[k].slots.size(); ++j) {
        const int i = steps[k].slots[j];
        ASSERT_EQ(where[i], hops[k][j] % 2) << "P=" << P << " slot " << i;
        where[i] = (hops[k][j] - 1) % 2;  // received into the other array
      }
    for (int i = 0; i < P; ++i) ASSERT_EQ(where[i], 0) << "P=" << P << " slot " << i << " ends outside R";
  }
}

// Two-phase Bruck and TuNA simulated with random block sizes (zeros
// included): the sizes travel with the blocks, every block arrives once with
// its size, forwarded blocks wait only in the store at their mapped place,
// no place ever holds two live blocks, and TuNA's store never needs more than
// P-(K+1) places.
namespace {

struct Store {
  long long capacity;
  std::function<long long(int)> index;
};

void simulate_two_phase(int P, int r, bool tight) {
  const auto steps = s::tra_steps(P, r);
  const long long K = s::count_rounds(steps);
  const Store store = tight ? Store{std::max(0LL, P - (K + 1)), [r](int i) { return s::tuna_temp_index(i, r); }}
                            : Store{P, [](int i) { return static_cast<long long>(i); }};
  const auto hops = s::remaining_hops(P, steps);
  std::mt19937 rng(static_cast<unsigned>(P * 131 + r));
  std::vector<long long> sizes(static_cast<size_t>(P) * P);
  for (auto& z : sizes) z = std::uniform_int_distribution<int>(0, 4)(rng);  // zeros included
  auto size_of = [&](int src, int dst) { return sizes[static_cast<size_t>(src) * P + dst]; };
  struct Held { int src = -1, dst = -1; long long size = -1; };
  // Per rank: slot contents (mirrored orientation), store places, receive side.
  std::vector<std::vector<Held>> slot(P, std::vector<Held>(P));
  std::vector<std::vector<int>> place(P, std::vector<int>(store.capacity, -1));  // slot held at a place
  std::vector<std::vector<Held>> got(P, std::vector<Held>(P));
  for (int p = 0; p < P; ++p) {
    for (int i = 0; i < P; ++i) slot[p][i] = {p, s::mod(p - i, P), size_of(p, s::mod(p - i, P))};
    got[p][p] = slot[p][0];
  }
  long long most = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    auto next = slot;
    auto next_place = place;
    for (int p = 0; p < P; ++p) {
      const int to = s::mod(p - steps[k].distance, P);
      for (size_t j = 0; j < steps[k].slots.size(); ++j) {
        const int i = steps[k].slots[j];
        const Held h = slot[p][i];
        if (hops[k][j] == 1) {
          ASSERT_EQ(h.dst, to);
          ASSERT_EQ(got[to][h.src].src, -1) << "delivered twice";
          got[to][h.src] = h;
        } else {
          ASSERT_TRUE(s::is_forwarded(i, std::min(r, P)));
          const long long t = store.index(i);
          ASSERT_GE(t, 0);
          ASSERT_LT(t, store.capacity) << "P=" << P << " r=" << r << " slot " << i;
          ASSERT_TRUE(next_place[to][t] == -1 || next_place[to][t] == i) << "place shared";
          next_place[to][t] = i;
          next[to][i] = h;
        }
        if (hops[k][j] == 1) {  // the slot's place (if any) is free again at the sender
          if (s::is_forwarded(i, std::min(r, P)) && store.capacity > 0) next_place[p][store.index(i)] = -1;
        }
      }
    }
    slot = std::move(next);
    place = std::move(next_place);
    for (int p = 0; p < P; ++p)
      most = std::max<long long>(most, std::count_if(place[p].begin(), place[p].end(), [](int v) { return v >= 0; }));
  }
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < P; ++q) {
      ASSERT_EQ(got[p][q].src, q) << "P=" << P << " r=" << r;
      ASSERT_EQ(got[p][q].dst, p);
      ASSERT_EQ(got[p][q].size, size_of(q, p));
    }
  EXPECT_EQ(K, s::tra_rounds_closed(P, r));
  EXPECT_EQ(s::count_blocks(steps), s::tra_blocks_closed(P, r));
  if (tight) {
    EXPECT_LE(most, std::max(0LL, P - (K + 1))) << "P=" << P << " r=" << r;
  }
}

}  // namespace

TEST(TwoPhase, BruckDeliversWithSizes) {
  for (int P = 1; P <= 64; ++P) simulate_two_phase(P, 2, false);
}

TEST(TwoPhase, TunaEveryRadixWithinTheTightStore) {
  for (int P = 1; P <= 64; ++P)
    for (int r = 2; r <= P + 1; ++r) simulate_two_phase(P, r, true);
}

TEST(TwoPhase, TunaStoreMapIsDenseAndOneToOne) {
  for (int P = 2; P <= 64; ++P)
    for (int r = 2; r <= P; ++r) {
      const long long K = s::tra_rounds_closed(P, r);
      std::vector<long long> seen;
      for (int o = 1; o < P; ++o)
        if (s::is_forwarded(o, r)) seen.push_back(s::tuna_temp_index(o, r));
      ASSERT_EQ(static_cast<long long>(seen.size()), P - (K + 1)) << "P=" << P << " r=" << r;
      for (size_t k = 0; k < seen.size(); ++k) ASSERT_EQ(seen[k], static_cast<long long>(k));
    }
  // The paper's figure 3: P = 8, r = 2 maps o = 3 to t = 0 and o = 5 to t = 1.
  EXPECT_EQ(s::tuna_temp_index(3, 2), 0);
  EXPECT_EQ(s::tuna_temp_index(5, 2), 1);
}

TEST(Factor, EveryRoundIsAMatchingAndEveryPairMeetsOnce) {
  for (int P = 1; P <= 64; ++P) {
    std::vector<int> met(static_cast<size_t>(P) * P, 0);
    for (int i = 0; i < P; ++i)
      for (int u = 0; u < P; ++u) {
        const int v = s::factor_partner(u, i, P);
        ASSERT_EQ(s::factor_partner(v, i, P), u) << "P=" << P << " round " << i;
        ++met[static_cast<size_t>(u) * P + v];
      }
    for (int n : met) ASSERT_EQ(n, 1) << "P=" << P;  // self once, every other rank once
  }
}

#include "schedule/clustered.hpp"

namespace {
// Node layouts to try: equal, unequal, one node, one rank per node, and
// ranks of a node not consecutive.
std::vector<std::vector<std::vector<int>>> layouts() {
  std::vector<std::vector<std::vector<int>>> out = {
      {{0}}, {{0, 1, 2, 3}}, {{0}, {1}, {2}, {3}, {4}}, {{0}, {1, 2}, {3, 4, 5}}, {{0, 1, 2, 3}, {4, 5, 6, 7}},
      {{0, 2, 4}, {1, 3, 5}}, {{0, 3}, {1, 4, 6}, {2}, {5, 7, 8, 9}}};
  std::mt19937 rng(7);
  for (int t = 0; t < 40; ++t) {  // random sizes and placements
    const int N = 1 + static_cast<int>(rng() % 6);
    std::vector<int> node_of;
    for (int n = 0; n < N; ++n)
      for (int k = 1 + static_cast<int>(rng() % 5); k > 0; --k) node_of.push_back(n);
    std::shuffle(node_of.begin(), node_of.end(), rng);
    std::vector<std::vector<int>> ranks(N);
    for (int r = 0; r < static_cast<int>(node_of.size()); ++r) ranks[node_of[r]].push_back(r);
    out.push_back(ranks);
  }
  return out;
}
}  // namespace

namespace {
// A rank's steps read off the whole schedule, in its order: what
// clustered_plan derives without building it.
std::vector<s::PeerStep> plan_from_schedule(const std::vector<s::ClusteredPhase>& phases, int rank) {
  std::vector<s::PeerStep> plan;
  for (const auto& phase : phases)
    for (const auto& round : phase.rounds)
      for (const auto& pair : round)
        for (const auto& st : pair) {
          if (st.u == rank && st.v == rank) plan.push_back({rank, true, true});  // local copy
          else if (st.u == rank) plan.push_back({st.v, true, !st.one_way});
          else if (st.v == rank) plan.push_back({st.u, !st.one_way, true});
        }
  return plan;
}
}  // namespace

TEST(Clustered, EveryOrderedPairServedOnceInAnyLayout) {
  for (const auto& ranks : layouts()) {
    int P = 0;
    for (const auto& n : ranks) P += static_cast<int>(n.size());
    std::vector<int> served(static_cast<size_t>(P) * P, 0);
    for (const auto& phase : s::clustered_schedule(ranks))
      for (const auto& round : phase.rounds)
        for (const auto& pair : round)
          for (const auto& st : pair) {
            ++served[static_cast<size_t>(st.u) * P + st.v];
            if (!st.one_way) ++served[static_cast<size_t>(st.v) * P + st.u];
          }
    for (int n : served) ASSERT_EQ(n, 1) << "P=" << P;
    // Each rank's own plan: P-1 messages out, P-1 in, one local copy.
    for (int r = 0; r < P; ++r) {
      int sends = 0, recvs = 0, copies = 0;
      const auto plan = s::clustered_plan(ranks, r);
      ASSERT_EQ(plan, plan_from_schedule(s::clustered_schedule(ranks), r)) << "P=" << P << " rank " << r;
      for (const auto& st : plan) {
        copies += st.peer == r;
        sends += st.peer != r && st.send;
        recvs += st.peer != r && st.recv;
      }
      ASSERT_EQ(sends, P - 1);
      ASSERT_EQ(recvs, P - 1);
      ASSERT_EQ(copies, 1);
    }
  }
}

// The paper's figure 3: nodes of 1, 2 and 3 ranks take 15 steps, the
// messages the ranks of the largest node send (3 * 5).
TEST(Clustered, PaperFigureThreeTakesFifteenSteps) {
  EXPECT_EQ(s::clustered_steps(s::clustered_schedule({{0}, {1, 2}, {3, 4, 5}})), 15);
  EXPECT_EQ(s::clustered_steps(s::clustered_schedule({{0, 1}, {2, 3}})), 2 * 3);
}

// With one rank per node the clustered schedule is the flat factor algorithm.
TEST(Clustered, OneRankPerNodeIsTheFactorAlgorithm) {
  for (int P = 1; P <= 16; ++P) {
    std::vector<std::vector<int>> ranks(P);
    for (int r = 0; r < P; ++r) ranks[r] = {r};
    for (int u = 0; u < P; ++u) {
      const auto plan = s::clustered_plan(ranks, u);
      ASSERT_EQ(static_cast<int>(plan.size()), P);
      for (int i = 0; i < P; ++i) ASSERT_EQ(plan[i].peer, s::factor_partner(u, i, P)) << "P=" << P;
    }
  }
}

#include "schedule/hier.hpp"

// TRA2 simulated on block labels for every equal layout of layouts() and
// more: the node phase and the port phase are all-to-alls among node-mates
// and among ports (TRA's own schedule is simulated above); the slot maps
// must deliver every block once, and only the port phase leaves the node.
TEST(Tra2, SlotMapsDeliverEveryBlockInEqualLayouts) {
  auto equal_layouts = layouts();
  equal_layouts.push_back({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}});
  equal_layouts.push_back({{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  int tested = 0;
  for (const auto& ranks : equal_layouts) {
    if (!s::equal_nodes(ranks)) continue;
    ++tested;
    const int N = static_cast<int>(ranks.size()), Q = static_cast<int>(ranks[0].size()), P = N * Q;
    using Slots = std::vector<Block>;
    std::vector<std::vector<Slots>> a(N, std::vector<Slots>(Q, Slots(P)));  // [n][q] -> node-phase send slots
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < Q; ++q)
        for (int qd = 0; qd < Q; ++qd)
          for (int m = 0; m < N; ++m) a[n][q][s::tra2_node_slot(qd, m, N)] = {ranks[n][q], ranks[m][qd]};
    auto b = a;  // node phase: super-block q of node-mate qs lands at qs
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < Q; ++q)
        for (int qs = 0; qs < Q; ++qs)
          for (int m = 0; m < N; ++m) b[n][q][s::tra2_node_slot(qs, m, N)] = a[n][qs][s::tra2_node_slot(q, m, N)];
    auto c = b;  // regroup by destination node
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < Q; ++q)
        for (int m = 0; m < N; ++m)
          for (int qs = 0; qs < Q; ++qs) c[n][q][s::tra2_port_slot(m, qs, Q)] = b[n][q][s::tra2_node_slot(qs, m, N)];
    auto d = c;  // port phase: super-block n of port (m, q) lands at m
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < Q; ++q)
        for (int m = 0; m < N; ++m)
          for (int qs = 0; qs < Q; ++qs) d[n][q][s::tra2_port_slot(m, qs, Q)] = c[m][q][s::tra2_port_slot(n, qs, Q)];
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < Q; ++q)
        for (int m = 0; m < N; ++m)
          for (int qs = 0; qs < Q; ++qs) {
            const Block want{ranks[m][qs], ranks[n][q]};
            ASSERT_EQ(d[n][q][s::tra2_port_slot(m, qs, Q)], want) << "N=" << N << " Q=" << Q;
          }
  }
  EXPECT_GE(tested, 6);
  // P = 8, two nodes of 4, radix 2: TRA crosses 7 times per direction, TRA2 4.
  int tra_cross = 0;
  for (const auto& step : s::tra_steps(8, 2))
    for (int p = 0; p < 4; ++p) tra_cross += (p + step.distance) % 8 >= 4;
  EXPECT_EQ(tra_cross, 7);
  EXPECT_EQ(4 * s::count_rounds(s::tra_steps(2, 2)), 4);  // only TRA2's port phase crosses: once per port
}

// Hierarchical TuNA: groups inside the node (TuNA's schedule is simulated
// above), then the inter-node plan; every block arrives once, sends and
// receives pair up, and the rounds are N-1 (coalesced) or (N-1)*Q.
TEST(TunaHier, InterPlanDeliversEveryBlockInEqualLayouts) {
  for (const auto& ranks : layouts()) {
    if (!s::equal_nodes(ranks)) continue;
    const int N = static_cast<int>(ranks.size()), Q = static_cast<int>(ranks[0].size()), P = N * Q;
    for (bool staggered : {false, true}) {
      const auto plan = s::tuna_hier_inter_plan(N, Q, staggered);
      ASSERT_EQ(static_cast<int>(plan.size()), staggered ? (N - 1) * Q : N - 1);
      std::map<Block, int> got;
      for (int n = 0; n < N; ++n)
        for (int q = 0; q < Q; ++q) {
          // After the node phase (n, q) holds part m of group q of each node-mate qs.
          for (int qs = 0; qs < Q; ++qs) ++got[{ranks[n][qs], ranks[n][q]}];  // own node: final already
          for (const auto& msg : plan) {
            const int to = (n + msg.offset) % N;
            for (int qs = 0; qs < Q; ++qs)
              if (msg.q_src < 0 || msg.q_src == qs) ++got[{ranks[n][qs], ranks[to][q]}];
            // The receiver posts the matching receive: from node to - offset = n.
            ASSERT_EQ(((to - msg.offset) % N + N) % N, n);
          }
        }
      ASSERT_EQ(static_cast<int>(got.size()), P * P);
      for (const auto& [block, times] : got) ASSERT_EQ(times, 1);
    }
  }
}

// shm's part layout: the polled words on the first line, `done` on a line
// of its own, both halves' direct words and tables before the data, data
// on cache lines, halves apart; pieces that fit a half, on lines, covering
// every byte; which blocks go direct.
TEST(Schedule, ShmLayoutCapacityAndOffsets) {
  namespace s = a2a::detail::schedule;
  for (int P = 1; P <= 64; ++P)
    for (size_t cap : {size_t{0}, size_t{1}, size_t{4096}, size_t{5000}}) {
      const auto l = s::shm_layout(P, cap);
      for (size_t w : {l.ready, l.largest_at(0), l.largest_at(1), l.pid, l.self}) EXPECT_LT(w, s::kShmLine);  // one poll
      EXPECT_NE(l.largest_at(0), l.ready);
      EXPECT_LE(l.largest_at(1) + 8, l.pid);
      EXPECT_LT(l.pid, l.self);
      EXPECT_EQ(l.done, s::kShmLine) << "done's stores never touch the polled line";
      EXPECT_GE(l.direct_at(0), l.done + s::kShmLine);
      EXPECT_LE(l.direct_at(1) + 24, l.table);
      EXPECT_NE(l.largest_at(0), l.largest_at(1));
      EXPECT_EQ(l.direct_at(1), l.direct_at(0) + 24);
      EXPECT_EQ(l.table_at(1), l.table_at(0) + l.table_half);
      EXPECT_EQ(l.table_half, 16u * P);
      EXPECT_LE(l.table_at(1) + l.table_half, l.data);
      EXPECT_EQ(l.data % s::kShmLine, 0u);
      EXPECT_EQ(l.data_half % s::kShmLine, 0u);
      EXPECT_GE(l.data_half, cap);
      EXPECT_EQ(l.data_at(1), l.data_at(0) + l.data_half);
      EXPECT_EQ(l.total, l.data + 2 * l.data_half);
    }
  // The whole pages inside a range, for madvise.
  EXPECT_EQ(s::whole_pages(4096, 8192, 4096).first, 4096u);
  EXPECT_EQ(s::whole_pages(4096, 8192, 4096).bytes, 8192u);
  EXPECT_EQ(s::whole_pages(4097, 8192, 4096).first, 8192u);
  EXPECT_EQ(s::whole_pages(4097, 8192, 4096).bytes, 4096u);  // [8192, 12288) whole, 12288..12289 not
  EXPECT_EQ(s::whole_pages(4097, 4000, 4096).bytes, 0u);
  EXPECT_EQ(s::whole_pages(100, 3 * 4096, 4096).bytes, 2 * 4096u);
  EXPECT_EQ(s::whole_pages(0, 0, 4096).bytes, 0u);
  EXPECT_EQ(s::shm_half_limit(size_t{1} << 30), s::kShmHalf);
  EXPECT_EQ(s::shm_half_limit(100000), 100000u);
  for (int P = 1; P <= 40; P += 3)
    for (size_t half : {size_t{4096}, size_t{100000}, s::kShmHalf})
      for (size_t block : {size_t{1}, size_t{63}, size_t{4096}, size_t{30000}, size_t{3} << 20}) {
        const size_t len = s::shm_piece_len(block, P, half);
        if (len == 0) {  // not a line per rank
          EXPECT_LT(half / P, s::kShmLine) << P << " " << half << " " << block;
          continue;
        }
        EXPECT_LE(len * P, half);
        EXPECT_TRUE(len == block || len % s::kShmLine == 0);
        EXPECT_EQ(len == block, block * P <= half);
        // The pieces cover the block once: exchanges * len >= block > (exchanges - 1) * len.
        const size_t n = s::shm_exchanges(block, len, len);
        EXPECT_GE(n * len, block);
        EXPECT_LT((n - 1) * len, block);
      }
  EXPECT_EQ(s::shm_exchanges(0, 256, 1024), 1u);
  EXPECT_EQ(s::shm_exchanges(256, 256, 1024), 1u);
  EXPECT_EQ(s::shm_exchanges(257, 256, 1024), 2u);
  EXPECT_EQ(s::shm_exchanges(256 + 2048, 256, 1024), 3u);
  EXPECT_EQ(s::shm_exchanges(256 + 2049, 256, 1024), 4u);
  const s::ShmPiece second{4, 4};
  EXPECT_EQ(second.of(3), 0u);
  EXPECT_EQ(second.of(6), 2u);
  EXPECT_EQ(second.of(100), 4u);
  // Alltoallv's first-exchange slots: the largest block to a power of two,
  // a line at least, the share at most; every block fits its slot.
  EXPECT_EQ(s::shm_slot(0, 4096), s::kShmLine);
  EXPECT_EQ(s::shm_slot(16, 4096), s::kShmLine);
  EXPECT_EQ(s::shm_slot(65, 4096), 128u);
  EXPECT_EQ(s::shm_slot(4096, 4096), 4096u);
  EXPECT_EQ(s::shm_slot(5000, 4096), 4096u);
  for (size_t largest = 0; largest < 10000; largest += 37) {
    const size_t slot = s::shm_slot(largest, 8192);
    EXPECT_TRUE(slot >= largest || slot == 8192) << largest;
    EXPECT_EQ(slot & (slot - 1), 0u) << largest;
  }
  EXPECT_TRUE(s::shm_direct(5, 5));
  EXPECT_FALSE(s::shm_direct(4, 5));
  EXPECT_FALSE(s::shm_direct(0, 0));   // empty blocks never
  EXPECT_FALSE(s::shm_direct(7, -1));  // unresolved auto: off
  EXPECT_FALSE(s::shm_direct(size_t{1} << 40, LLONG_MAX));  // off
}

// An intra=shm phase run point to point: the stats name without the knob,
// wherever it stands, and nothing else changed.
TEST(Schedule, NameWithoutIntraShm) {
  namespace s = a2a::detail::schedule;
  EXPECT_EQ(s::name_without_intra_shm("tra2:radix-intra=2,radix-inter=3,intra=shm"), "tra2:radix-intra=2,radix-inter=3");
  EXPECT_EQ(s::name_without_intra_shm("tuna-hier:variant=coalesced,radix=2,block=32,intra=shm"),
            "tuna-hier:variant=coalesced,radix=2,block=32");
  EXPECT_EQ(s::name_without_intra_shm("clustered:intra=shm"), "clustered");
  EXPECT_EQ(s::name_without_intra_shm("x:intra=shm,block=4"), "x:block=4");
  EXPECT_EQ(s::name_without_intra_shm("tra2:radix-intra=2,radix-inter=3"), "tra2:radix-intra=2,radix-inter=3");
  EXPECT_EQ(s::name_without_intra_shm("shm"), "shm");
  EXPECT_EQ(s::name_without_intra_shm(""), "");
}
