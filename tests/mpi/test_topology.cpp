// The layout a2a sees under A2A_NODE_* overrides, and the inter-node message
// counts of the stats (the test is launched with the layout in its name).
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "harness.hpp"

namespace {
int world(int* rank = nullptr) {
  int P, r;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (rank) *rank = r;
  return P;
}

std::vector<int> node_sizes_from_env(int P, std::vector<int>& node_of) {
  node_of.assign(P, 0);
  std::vector<int> sizes;
  if (const char* q = std::getenv("A2A_NODE_SIZE")) {
    for (int r = 0; r < P; ++r) node_of[r] = r / std::atoi(q);
  } else if (const char* list = std::getenv("A2A_NODE_SIZES")) {
    int r = 0, n = 0;
    for (const char* p = list; *p; ++n) {
      const int q = std::atoi(p);
      for (int k = 0; k < q; ++k) node_of[r++] = n;
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
  } else if (const char* map = std::getenv("A2A_NODE_MAP")) {
    int r = 0;
    for (const char* p = map; *p && r < P;) {
      node_of[r++] = std::atoi(p);
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
  }
  sizes.assign(*std::max_element(node_of.begin(), node_of.end()) + 1, 0);
  for (int n : node_of) ++sizes[n];
  return sizes;
}
}  // namespace

TEST(Topology, LayoutMatchesTheEnvironment) {
  int rank;
  const int P = world(&rank);
  std::vector<int> node_of;
  const auto sizes = node_sizes_from_env(P, node_of);
  std::string want = std::to_string(sizes.size()) + (sizes.size() == 1 ? " node" : " nodes");
  EXPECT_EQ(a2a::layout(MPI_COMM_WORLD).rfind(want, 0), 0u) << a2a::layout(MPI_COMM_WORLD);
}

// Spread-out sends one message to every other rank: those off the node are
// inter-node.  Radix-2 TRA at P = 8 in two nodes of 4 makes 7 inter-node
// exchanges per node-pair direction (the TRA paper's figure 5).
TEST(Topology, InterNodeCounts) {
  int rank;
  const int P = world(&rank);
  std::vector<int> node_of;
  const auto sizes = node_sizes_from_env(P, node_of);
  std::vector<int> s(4 * P, rank), r(4 * P);
  ASSERT_EQ(A2A_Alltoall(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "spread-out"), MPI_SUCCESS);
  A2A_Stats st;
  A2A_Last_stats(&st);
  EXPECT_EQ(st.inter_node_messages, P - sizes[node_of[rank]]);
  EXPECT_EQ(st.inter_node_bytes, 16LL * (P - sizes[node_of[rank]]));
  if (P == 8 && sizes.size() == 2 && sizes[0] == 4) {
    ASSERT_EQ(A2A_Alltoall(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "tra:radix=2"), MPI_SUCCESS);
    A2A_Last_stats(&st);
    long long from_node0 = node_of[rank] == 0 ? st.inter_node_messages : 0;
    MPI_Allreduce(MPI_IN_PLACE, &from_node0, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(from_node0, 7);
  }
  ASSERT_EQ(A2A_Alltoall(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
  A2A_Last_stats(&st);
  EXPECT_EQ(st.inter_node_messages, -1);
}
