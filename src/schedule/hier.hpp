// Index math of the two-layer algorithms (TRA2, hierarchical TuNA), pure so
// that tests/unit simulates them for many layouts.  N nodes of Q ranks each;
// ranks_of_node[m][q] is the rank with local index q on node m.
#pragma once
#include <cstddef>
#include <vector>

namespace a2a::detail::schedule {

// Both algorithms need nodes of one size (any placement).
inline bool equal_nodes(const std::vector<std::vector<int>>& ranks_of_node) {
  for (const auto& node : ranks_of_node)
    if (node.size() != ranks_of_node[0].size()) return false;
  return true;
}

// TRA2.  Node phase: rank (n, q) orders its blocks by node-mate q' and then
// node m, so super-block q' (N blocks) goes to node-mate q' and lands at
// position q there.  Port phase: the blocks are regrouped by destination
// node m, super-block m (Q blocks, by source local index) going to (m, q);
// what arrives from node m' sits at port slot (m', qs).
inline size_t tra2_node_slot(int q_dst, int m, int N) { return static_cast<size_t>(q_dst) * N + m; }
inline size_t tra2_port_slot(int m, int q_src, int Q) { return static_cast<size_t>(m) * Q + q_src; }

// Hierarchical TuNA.  Group q' of a rank holds its blocks for
// (0, q'), (1, q'), ... (N-1, q') in node order; after the node phase rank
// (n, q) holds group q of every node-mate qs, whose part m is bound for
// (m, q).  The inter-node message from (n, q) to (m, q) carries part m of
// the groups of qs = 0..Q-1 in that order.
struct InterMessage {
  int offset;  // send to node n + offset, receive from node n - offset (mod N)
  int q_src;   // staggered: the one block of node-mate q_src; coalesced: -1, all Q
};
inline std::vector<InterMessage> tuna_hier_inter_plan(int N, int Q, bool staggered) {
  std::vector<InterMessage> plan;
  for (int i = 1; i < N; ++i) {
    if (!staggered) plan.push_back({i, -1});
    for (int qs = 0; staggered && qs < Q; ++qs) plan.push_back({i, qs});
  }
  return plan;
}

}  // namespace a2a::detail::schedule
