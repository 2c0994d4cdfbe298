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
// link with the node's other Q-1 ranks, all sending at once: beta_inter * Q);
// rounds add up.  A rank's cost is the sum
// of its rounds; the algorithm's, the maximum over the evaluated ranks.
#pragma once
#include <string>
#include <vector>

namespace a2a::detail {

struct LinkCost {
  double alpha = 0, beta = 0;  // seconds per message, seconds per byte
};

struct MachineModel {
  LinkCost intra, inter;
  double overhead = 0;  // seconds per extra message posted in the same round
  double copy = 0;      // seconds per byte of local copy (packing, rotations)
};

struct CostedSpec {
  std::string spec;  // e.g. "tra:radix=4"
  double seconds;
};

// The layout: node of every rank and ranks of every node (hier/topology.hpp).
struct ModelLayout {
  std::vector<int> node_of;
  std::vector<std::vector<int>> ranks;
};

// Every candidate with its modelled time, cheapest first (ties: listed order).
// Alltoall: `mean_bytes` is the block size (max_bytes is ignored).
// Alltoallv: blocks are modelled at the global mean, padded ones at the max.
std::vector<CostedSpec> model_alltoall(const ModelLayout& layout, long long block_bytes, const MachineModel& m);
std::vector<CostedSpec> model_alltoallv(const ModelLayout& layout, long long mean_bytes, long long max_bytes,
                                        const MachineModel& m);

// Radices worth modelling for P ranks: all of 2..P up to P = 64, beyond that
// the neighbourhood of sqrt(P), the powers of two and P itself.
std::vector<int> candidate_radices(int P);

// "alpha_intra=1e-6,beta_intra=1e-10,alpha_inter=...,beta_inter=...,overhead=...,copy=..."
// (A2A_COST_MODEL): fills the keys given, sets `given` bits (1 << key index,
// in that order); false with a message on anything else.
bool parse_cost_model(const std::string& text, MachineModel& m, unsigned& given, std::string& error);
constexpr unsigned kAllCostKeys = 0x3f;

}  // namespace a2a::detail
