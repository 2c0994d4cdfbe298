// What the cost model (select/cost_model.hpp) prices a schedule with:
// alpha-beta costs with separate intra- and inter-node alpha and beta,
// evaluated on the exact per-round messages of each algorithm's schedule
// (peers, hence links, and bytes), not only on its round count K and block
// count D.  Each algorithm's file walks its rounds on a RankClock (its
// row's `cost`).  Pure: no MPI, unit-tested (tests/unit/test_cost_model.cpp).
//
// A round whose messages are in flight together costs
//   max alpha(link) + (n - 1) * overhead + sum beta(link) * bytes + copy * bytes copied
// (latencies overlap, each extra message costs its injection overhead, the
// bytes share the rank's bandwidth, and inter-node bytes also share the node's
// link with the node's other ranks crossing in the same round: beta_inter *
// Q, or, where every rank sends at the same distance (TRA's and pairwise's
// steps), times the node's ranks whose partner is off the node); rounds add
// up.  A rank's cost is the sum of its rounds; the algorithm's, the maximum
// over the evaluated ranks.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "schedule/schedule.hpp"

namespace a2a::detail {

class Params;  // an algorithm's knobs (core/algorithm.hpp)
struct ShmKnobs;

// The message sizes a link is measured at besides alpha's (select/measure.hpp).
constexpr int kLinkSizes = 4;
constexpr long long kLinkBytes[kLinkSizes] = {1 << 10, 1 << 13, 1 << 16, 1 << 18};

struct LinkCost {
  double alpha = 0, beta = 0;  // seconds per message, seconds per byte
  // Half round trips of kLinkBytes[i]-byte messages; 0 where unknown (then
  // a message costs alpha + beta * bytes).  The library's protocols (eager,
  // rendezvous, single copy) change its cost per byte with the size, which
  // one alpha and beta cannot follow.
  double at[kLinkSizes] = {};
};
// Seconds of one message of `bytes` on the link: straight lines between
// (8, alpha) and the measured sizes, beta per byte past the last.
double link_seconds(const LinkCost& link, long long bytes);

// The MPI library whose own choices native is costed by.
enum class Library { other, open_mpi, mpich };

// The block sizes shm's copies are measured at (select/measure.hpp).
constexpr int kShmCopySizes = 5;
constexpr long long kShmCopyBytes[kShmCopySizes] = {1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20};

// What is measured of a machine (or given in A2A_COST_MODEL).
struct MachineCosts {
  LinkCost intra, inter;
  double overhead = 0;  // seconds per extra message posted in the same round
  double copy = 0;      // seconds per byte of local copy (packing, rotations)
  // Extra seconds per message of a persistent request made, started and
  // freed per call, as Open MPI's basic linear algorithms do.
  double persistent = 0;
  // Seconds for one flag to pass between two ranks of a node through memory
  // they share (shm's synchronisation: a cache line, no message); 0 where
  // unknown, and shm's flags cost as intra-node messages.
  double flag = 0;
  // One round with every rank taking part: 8-byte messages to the next
  // rank (`round`), a flag through the node's memory (`flag_round`).  Where
  // ranks are time-sliced these cost the scheduling no ping-pong sees, and
  // a round costs at least this; 0 where unknown.
  double round = 0, flag_round = 0;
  // shm's copies of one block of kShmCopyBytes[i] bytes: through the
  // segment (copied in by one rank, out by another) and read straight
  // from the sender's memory (CMA); 0 where unknown (segment: 2 * copy per
  // byte; CMA: not allowed).
  double seg[kShmCopySizes] = {}, cma[kShmCopySizes] = {};
};

// Seconds for one block of `bytes` through shm's segment, or read with CMA
// (interpolated between the measured sizes, per byte beyond them; CMA
// below the smallest at that size's per-byte cost plus its fixed part);
// CMA: a huge value where it is unknown.
double shm_segment_seconds(const MachineCosts& m, long long bytes);
double shm_cma_seconds(const MachineCosts& m, long long bytes);
// shm's direct knobs for P ranks: the smallest block that one CMA read (or,
// where CMA is not allowed, a message on the node link) moves faster than
// two copies through the segment (or comes within kDirectBias of them),
// judged on the P-1 blocks a rank moves together (their copies share its
// caches, so the crossover per block falls as P grows); from =
// ShmKnobs::kDirectOff where that never happens.
struct ShmDirect {
  long long from;
  bool cma;
};
constexpr double kDirectBias = 1.25;
ShmDirect shm_direct_choice(const MachineCosts& m, int P);

struct MachineModel : MachineCosts {
  Library library = Library::other;
  // A machine runs more ranks than it has cores: they are time-sliced, and
  // every round that waits for another rank's message waits for it to be
  // scheduled, which no ping-pong measures.
  bool oversubscribed = false;
};

// The layout: node of every rank and ranks of every node (core/topology.hpp).
struct ModelLayout {
  std::vector<int> node_of;
  std::vector<std::vector<int>> ranks;  // node -> its ranks, ascending (as core/topology.hpp keeps them)
};

// One spec's input to its cost entry (its row's `cost`): the layout,
// the machine, the block bytes (alltoallv: the global mean; `max_bytes` its
// largest block).  The entry returns the worst evaluated rank's time.
struct ModelCall {
  const ModelLayout& layout;
  const MachineModel& m;
  long long bytes, max_bytes;
  bool varying;  // alltoallv
};
struct ModelCost {
  double seconds = 0;
  int rounds = 0;  // rounds of the busiest evaluated rank
};

// Ranks of `node` whose partner `distance` ranks on (mod P) is on another
// node.
int crossing(const ModelLayout& l, int node, long long distance);

// One rank's modelled time, built round by round.
class RankClock {
 public:
  RankClock(const ModelLayout& l, const MachineModel& m, int rank)
      : l_(l), m_(m), rank_(rank), node_(l.node_of[rank]) {}
  // An off-node message shares the node's one link with `sharers` messages
  // of the same round (default: every rank of the node sends off it at once),
  // so a rank gets 1/sharers of the measured (one-pair) inter-node bandwidth.
  void message(int dst, long long bytes, int sharers = -1) {
    const bool local = l_.node_of[dst] == node_;
    const LinkCost& link = local ? m_.intra : m_.inter;
    alpha_ = std::max({alpha_, link.alpha, m_.round});
    const int on_link = sharers < 0 ? static_cast<int>(l_.ranks[node_].size()) : sharers;
    beta_ += (link_seconds(link, bytes) - link.alpha) * (local ? 1.0 : on_link);
    ++n_;
  }
  // A round in which every rank sends to its partner at the same distance
  // (TRA's and pairwise's steps over all ranks): only the node's ranks whose
  // partner is off the node too share its link; in the lower digits of a
  // large node, few.
  void shifted(int dst, long long bytes) { message(dst, bytes, crossing(l_, node_, dst - rank_)); }
  void copy(long long bytes) { t_ += m_.copy * static_cast<double>(bytes); }
  void add(double seconds) { t_ += seconds; }
  // A round that waits for `peers` flags in shared memory: what a flag
  // round with every rank of the node taking part measured (on a
  // time-sliced machine one scheduling pass, not a pass per peer), else
  // the flags read one after another, else (nothing known) as intra-node
  // messages of no bytes.
  void flags(int peers) {
    if (peers <= 0) return;
    if (m_.flag <= 0 && m_.flag_round <= 0) {
      for (int i = 0; i < peers; ++i) message(l_.ranks[node_].front(), 0);
      end_round();
      return;
    }
    end_round();
    t_ += m_.flag_round > 0 ? m_.flag_round : peers * m_.flag;
    ++rounds_;
  }
  void end_round() {
    if (n_) {
      t_ += alpha_ + (n_ - 1) * m_.overhead + beta_;
      ++rounds_;
    }
    alpha_ = beta_ = 0;
    n_ = 0;
  }
  double seconds() {
    end_round();
    return t_;
  }
  int rounds() const { return rounds_; }

 private:
  const ModelLayout& l_;
  const MachineModel& m_;
  int rank_, node_;
  double t_ = 0, alpha_ = 0, beta_ = 0;
  long long n_ = 0;
  int rounds_ = 0;
};

// The ranks whose costs are evaluated: all of them up to 64, then a fixed
// sample (ends, middle, the edges of the first and last node), the same on
// every rank.
std::vector<int> evaluated_ranks(const ModelLayout& l);

// The worst modelled time (and most rounds) over the evaluated ranks of
// `one_rank(clock, p)`: an algorithm's cost.
template <class F>
ModelCost worst_rank(const ModelCall& c, F&& one_rank) {
  ModelCost w;
  for (int p : evaluated_ranks(c.layout)) {
    RankClock clock(c.layout, c.m, p);
    one_rank(clock, p);
    w.seconds = std::max(w.seconds, clock.seconds());
    w.rounds = std::max(w.rounds, clock.rounds());
  }
  return w;
}

// Rounds several algorithms share.

// TRA (and Bruck, radix 2) over `group` (rank p is group[idx]) with blocks
// of `bs` bytes: rotation in and out, each round packs and unpacks its
// slots (a lone block goes straight from buffer to buffer).  The rounds of
// a batch (`ports`, schedule::batch_end) are in flight together: one
// modelled round, its slowest message plus each other's injection
// overhead.  `meta` > 0 adds TuNA's metadata messages (meta bytes per
// slot), a batch's before its data.  `world`: the group is every rank in
// order, so a step is a shift (RankClock::shifted).
void tra_rounds(RankClock& c, const std::vector<schedule::StepShape>& steps, const std::vector<int>& group, int idx,
                long long bs, long long meta = 0, int ports = 1, bool world = false);
// The shared-memory exchange among `group` (shm's, and the node layer of
// the two-layer algorithms with intra=shm): one round in which every
// peer's flag is awaited (RankClock::flags) and every block is copied
// twice, into this rank's part and out of the peer's (the measured copies
// of the Q-1 blocks together), or, from the direct threshold on, read once
// with CMA (a second flag round: the readers' `done`) or sent as messages.
void shm_round(RankClock& clock, const MachineModel& m, const std::vector<int>& group, long long bytes,
               const ShmKnobs& knobs);
constexpr long long kMetaPerBlock = sizeof(long long);  // two-phase algorithms' size per block

std::vector<int> all_ranks(int P);                            // 0..P-1
std::pair<int, int> place(const ModelLayout& l, int p);       // rank p's node and index in it
std::vector<int> port_of(const ModelLayout& l, int q);        // the q-th rank of every node

}  // namespace a2a::detail
