// Traff's clustered, hierarchical 1-factor schedule ("Efficient all-to-all
// communication on clusters of SMP nodes", section 3, figure 2), pure.
// Nodes are ordered U < V by (size, id).  While nodes remain active: current
// = the smallest active size; for each 1-factor i of the complete graph (with
// self-loops) on the active nodes, every pair U <= V lets each u of U with
// done <= l(u) < current meet every v of V in turn: U = V sends m_uv one way
// (u = v is the local copy), U != V exchanges m_uv and m_vu.  Then done =
// current and the nodes of that size retire.  Every ordered pair of ranks is
// served exactly once.
#pragma once
#include <vector>

namespace a2a::detail::schedule {

struct ClusteredStep {
  int u, v;
  bool one_way;  // within a node: u sends to v only (u == v: local copy)
};

struct ClusteredPhase {
  int done, current;
  // rounds[i] = the node pairs of 1-factor i, each as its steps in order
  std::vector<std::vector<std::vector<ClusteredStep>>> rounds;
};

std::vector<ClusteredPhase> clustered_schedule(const std::vector<std::vector<int>>& ranks_of_node);

// The paper's step count: per round the longest pair, local copies left out.
long long clustered_steps(const std::vector<ClusteredPhase>& phases);

// What one rank does, in order: peer and direction (send, receive or both).
// The steps of `rank` in clustered_schedule(ranks_of_node), derived without
// building the schedule (O(P^2) steps): O(P + nodes^2) per rank.
struct PeerStep {
  int peer;
  bool send, recv;
  bool operator==(const PeerStep&) const = default;
};
std::vector<PeerStep> clustered_plan(const std::vector<std::vector<int>>& ranks_of_node, int rank);

}  // namespace a2a::detail::schedule
