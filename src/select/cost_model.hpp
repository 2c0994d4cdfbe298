// The cost model `auto` falls back on when no tuning-file entry matches:
// alpha-beta costs with separate intra- and inter-node alpha and beta,
// evaluated on the exact per-round messages of each candidate's schedule
// (peers, hence links, and bytes), not only on its round count K and block
// count D.  Pure: no MPI, unit-tested (tests/unit/test_cost_model.cpp).
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
#include <string>
#include <vector>

namespace a2a::detail {

// The message sizes a link is measured at besides alpha's (measure.hpp).
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
Library library_from_version(const std::string& mpi_get_library_version);

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
// Params::kShmDirectOff where that never happens.
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

struct CostedSpec {
  std::string spec;  // e.g. "tra:radix=4"
  double seconds;
  int rounds = 0;    // rounds of the busiest evaluated rank
};

// The layout: node of every rank and ranks of every node (core/topology.hpp).
struct ModelLayout {
  std::vector<int> node_of;
  std::vector<std::vector<int>> ranks;  // node -> its ranks, ascending (as core/topology.hpp keeps them)
};

struct Params;  // an algorithm's knobs (core/algorithm.hpp)

// One spec's input to its cost entry (the registry's `cost`): the layout,
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
ModelCost cost_spread_out(const ModelCall&, const Params&);
ModelCost cost_pairwise(const ModelCall&, const Params&);
ModelCost cost_factor(const ModelCall&, const Params&);
ModelCost cost_clustered(const ModelCall&, const Params&);
ModelCost cost_tra(const ModelCall&, const Params&);        // radix in Params
ModelCost cost_tuna(const ModelCall&, const Params&);       // TRA's rounds, each after its metadata
ModelCost cost_padded_bruck(const ModelCall&, const Params&);
ModelCost cost_tra2(const ModelCall&, const Params&);       // radix_intra, radix_inter given (not auto)
ModelCost cost_tuna_hier(const ModelCall&, const Params&);  // radix_intra given, staggered, block
ModelCost cost_shm(const ModelCall&, const Params&);        // a flag per peer, every block copied in and out

// Every candidate with its modelled time, cheapest first (ties: listed order).
// The candidates are the registry's rows with a cost entry that fit the
// layout, at candidate_radices(P) and, for the two-layer algorithms, at a
// few radices of the node size Q and the node count N.
// Alltoall: `mean_bytes` is the block size (max_bytes is ignored).
// Alltoallv: blocks are modelled at the global mean, padded ones at the max.
// "native", the MPI library's own, is costed as the algorithm the library
// runs for the call (library_alltoall(v)), or, for another library, as the
// best of the algorithms MPI libraries implement (linear, pairwise and
// radix-2 Bruck; alltoallv: linear and pairwise).
std::vector<CostedSpec> model_alltoall(const ModelLayout& layout, long long block_bytes, const MachineModel& m);
std::vector<CostedSpec> model_alltoallv(const ModelLayout& layout, long long mean_bytes, long long max_bytes,
                                        const MachineModel& m);

// The entry of `spec` in a ranking, or null.
const CostedSpec* find_costed(const std::vector<CostedSpec>& ranked, const std::string& spec);

// The algorithm the MPI library runs by default, as the a2a spec that sends
// the same messages ("spread-out" for its linear ones, "pairwise",
// "tra:radix=2" for Bruck), and whether it makes persistent requests per
// call; spec "" for another library.  Open MPI 4.1's coll/tuned fixed
// decision rules (its basic linear algorithms use persistent requests);
// MPICH's defaults (Bruck up to 256-byte blocks from 8 ranks, its scattered
// linear algorithm up to 32 KiB, then pairwise; scattered for alltoallv).
struct LibraryChoice {
  std::string spec;
  bool persistent = false;
};
LibraryChoice library_alltoall(Library library, int P, long long block_bytes);
LibraryChoice library_alltoallv(Library library, int P);

// One allreduce of a few integers (recursive doubling: ceil(log2 P) rounds).
double model_allreduce(const ModelLayout& layout, const MachineModel& m);

// The knob values the model (and a2a tune) sweep: candidate_radices(P), and
// for the two-layer algorithms 2, ceil(sqrt n) and n of the node size Q and
// the node count N.
struct SweepValues;
SweepValues model_values(int P, int Q, int N);

// Radices worth modelling for P ranks: all of 2..P up to P = 64, beyond that
// the neighbourhood of sqrt(P), the powers of two and P itself.
std::vector<int> candidate_radices(int P);

}  // namespace a2a::detail
