// The layout a2a sees (A2A_NODE_* overrides, else the library's node split:
// one node, or real nodes on a cluster), and the inter-node message counts
// of the stats.
#include <algorithm>
#include <cstdlib>
#include <functional>
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
  } else {  // the library's split: nodes numbered by their first rank
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int first = me;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    std::vector<int> firsts(P);
    MPI_Allgather(&first, 1, MPI_INT, firsts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> id(P, -1);
    int nodes = 0;
    for (int r = 0; r < P; ++r) {
      if (id[firsts[r]] < 0) id[firsts[r]] = nodes++;
      node_of[r] = id[firsts[r]];
    }
  }
  sizes.assign(*std::max_element(node_of.begin(), node_of.end()) + 1, 0);
  for (int n : node_of) ++sizes[n];
  return sizes;
}
// The environment's layout as the tests see it: N nodes, the first of Q ranks.
struct EnvLayout {
  std::vector<int> node_of, sizes;
  int N, Q;
  bool equal;
  explicit EnvLayout(int P) : sizes(node_sizes_from_env(P, node_of)) {
    N = static_cast<int>(sizes.size());
    Q = sizes[0];
    equal = std::all_of(sizes.begin(), sizes.end(), [this](int q) { return q == Q; });
  }
};

}  // namespace

TEST(Topology, LayoutMatchesTheEnvironment) {
  int rank;
  const int P = world(&rank);
  std::vector<int> node_of;
  const auto sizes = node_sizes_from_env(P, node_of);
  std::string want = std::to_string(sizes.size()) + (sizes.size() == 1 ? " node" : " nodes");
  EXPECT_EQ(a2a::layout(MPI_COMM_WORLD).rfind(want, 0), 0u) << a2a::layout(MPI_COMM_WORLD);
  // On an emulated cluster (tests/cluster.cmake) the launcher says how many
  // nodes there are: the split must have found them.
  if (const char* nodes = std::getenv("A2A_TEST_NODES")) {
    EXPECT_EQ(sizes.size(), std::stoul(nodes));
  }
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
    ASSERT_EQ(A2A_Alltoall(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "tra2:radix-intra=2,radix-inter=2"),
              MPI_SUCCESS);
    A2A_Last_stats(&st);
    from_node0 = node_of[rank] == 0 ? st.inter_node_messages : 0;
    MPI_Allreduce(MPI_IN_PLACE, &from_node0, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(from_node0, 4);  // TRA2 in the same figure
  }
  // Traff's clustered algorithm: every message once, P - size(own node) off-node.
  for (const char* spec : {"clustered", "factor"}) {
    std::vector<int> sd(4 * P), rd(4 * P, -1);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < 4; ++j) sd[4 * d + j] = a2a::test::encode(rank, d, j);
    ASSERT_EQ(A2A_Alltoall(sd.data(), 4, MPI_INT, rd.data(), 4, MPI_INT, MPI_COMM_WORLD, spec), MPI_SUCCESS);
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(rd[4 * src + j], a2a::test::encode(src, rank, j)) << spec;
    A2A_Last_stats(&st);
    EXPECT_EQ(st.rounds, P - 1) << spec;
    EXPECT_EQ(st.inter_node_messages, P - sizes[node_of[rank]]) << spec;
  }
  ASSERT_EQ(A2A_Alltoall(s.data(), 4, MPI_INT, r.data(), 4, MPI_INT, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
  A2A_Last_stats(&st);
  EXPECT_EQ(st.inter_node_messages, -1);
}

namespace {

// One alltoallv of `spec` on world: count(src, dst) ints per block, blocks
// in reversed order with one-int gaps on both sides.  Returns the ints that
// arrived wrong (gaps written included), or -1 when the call failed.
long long varying_on_world(const std::string& spec, int rank, int P, const std::function<int(int, int)>& count) {
  using a2a::test::encode;
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int so = 0, ro = 0;
  for (int i = P - 1; i >= 0; --i) {
    sc[i] = count(rank, i);
    sd[i] = ++so;
    so += sc[i];
    rc[i] = count(i, rank);
    rd[i] = ++ro;
    ro += rc[i];
  }
  std::vector<int> sbuf(so + 1, -1), rbuf(ro + 1, -7);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) sbuf[sd[d] + j] = encode(rank, d, j);
  if (A2A_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_INT, rbuf.data(), rc.data(), rd.data(), MPI_INT,
                    MPI_COMM_WORLD, spec.c_str()) != MPI_SUCCESS) {
    ADD_FAILURE() << spec << ": " << a2a::last_error_message();
    return -1;
  }
  std::vector<char> is_data(rbuf.size(), 0);
  long long wrong = 0;
  for (int src = 0; src < P; ++src)
    for (int j = 0; j < rc[src]; ++j) {
      wrong += rbuf[rd[src] + j] != encode(src, rank, j);
      is_data[rd[src] + j] = 1;
    }
  for (size_t k = 0; k < rbuf.size(); ++k) wrong += !is_data[k] && rbuf[k] != -7;
  return wrong;
}

}  // namespace

// TRA2 under the layout of the environment: every radix pair, two datatype
// pairs and in-place; data, gaps, K, D and inter-node messages exact.  With
// unequal nodes it falls back to flat TRA and says so.
TEST(Topology, Tra2EveryRadixPair) {
  namespace s = a2a::detail::schedule;
  using namespace a2a::test;
  int rank;
  const int P = world(&rank);
  const EnvLayout env(P);
  const int N = env.N, Q = env.Q;
  const bool equal = env.equal;
  std::vector<std::pair<int, int>> radices = {{0, 0}};  // 0: auto
  for (int r1 = 2; r1 <= Q + 1; ++r1)
    for (int r2 = 2; r2 <= N + 1; ++r2) radices.emplace_back(r1, r2);
  // Ports of the two phases (0: all of a digit's exchanges, the default).
  const std::vector<std::pair<int, int>> ports = {{0, 0}, {1, 1}, {2, 0}};
  for (const auto& [r1, r2] : radices)
    for (const auto& [b1, b2] : ports) {
    std::string spec = r1 ? "tra2:radix-intra=" + std::to_string(r1) + ",radix-inter=" + std::to_string(r2) : "tra2";
    if (b1 || b2) spec += std::string(r1 ? "," : ":") + "ports-intra=" + (b1 ? std::to_string(b1) : "all") +
                          ",ports-inter=" + (b2 ? std::to_string(b2) : "all");
    for (bool in_place : {false, true})
      for (const Layout* recv_layout : {&int_layout(), &strided_layout()}) {
        const std::string what = spec + (in_place ? " in-place " : " ") + recv_layout->name;
        const int ints = 6, count = ints / recv_layout->ints();  // 6 ints per block either way
        Buffer send(int_layout(), 1LL * ints * P), recv(*recv_layout, 1LL * count * P);
        fill_send(send, ints, rank, P);
        if (in_place) fill_send(recv, count, rank, P);
        const auto before = send.bytes;
        ASSERT_EQ(A2A_Alltoall(in_place ? MPI_IN_PLACE : send.data(), ints, MPI_INT, recv.data(), count,
                               recv_layout->type, MPI_COMM_WORLD, spec.c_str()),
                  MPI_SUCCESS)
            << what;
        check_recv(recv, count, rank, P, what);
        EXPECT_TRUE(send.bytes == before) << what;
        A2A_Stats st;
        A2A_Last_stats(&st);
        if (!equal) {
          EXPECT_STREQ(st.algorithm, ("tra:radix=" + std::to_string(a2a::detail::schedule::ceil_sqrt(P))).c_str()) << what;
          continue;
        }
        const long long q1 = std::max(2, std::min(r1 ? r1 : static_cast<int>(a2a::detail::schedule::ceil_sqrt(Q)), Q));
        const long long q2 = std::max(2, std::min(r2 ? r2 : N, N));
        EXPECT_EQ(std::string(st.algorithm), "tra2:radix-intra=" + std::to_string(q1) + ",radix-inter=" +
                                                  std::to_string(q2) + s::ports_name("ports-intra", b1, q1) +
                                                  s::ports_name("ports-inter", b2, q2))
            << what;
        EXPECT_EQ(st.rounds, s::tra_rounds_closed(Q, q1) + s::tra_rounds_closed(N, q2)) << what;
        EXPECT_EQ(st.waits, s::tra_waits_closed(Q, q1, b1) + s::tra_waits_closed(N, q2, b2)) << what;
        EXPECT_EQ(st.blocks_sent, N * s::tra_blocks_closed(Q, q1) + Q * s::tra_blocks_closed(N, q2)) << what;
        EXPECT_EQ(st.inter_node_messages, s::tra_rounds_closed(N, q2)) << what;
        EXPECT_EQ(st.inter_node_bytes, s::tra_blocks_closed(N, q2) * Q * ints * 4) << what;
      }
    }
}

// Hierarchical TuNA under the layout of the environment: both variants,
// every intra-node radix, two batch sizes, zero and non-zero block sizes;
// data and gaps, K and inter-node messages exact; unequal nodes fall back to
// flat TuNA.
TEST(Topology, TunaHierEveryVariantAndRadix) {
  namespace s = a2a::detail::schedule;
  int rank;
  const int P = world(&rank);
  const EnvLayout env(P);
  const int N = env.N, Q = env.Q;
  const bool equal = env.equal;
  for (bool zeros : {false, true}) {
    auto count = [zeros](int src, int dst) { return (src * 7 + dst * 3) % 5 + (zeros ? 0 : 1); };
    for (const char* variant : {"coalesced", "staggered"})
      for (int r = 2; r <= Q + 1; ++r)
        for (int block : {1, 32})
          for (int b : {0, 1}) {  // ports of the node phase: all, one
          const std::string spec = std::string("tuna-hier:variant=") + variant + ",radix=" + std::to_string(r) +
                                   ",block=" + std::to_string(block) + (b ? ",ports=1" : "");
          EXPECT_EQ(varying_on_world(spec, rank, P, count), 0) << spec;
          A2A_Stats st;
          A2A_Last_stats(&st);
          if (!equal) {
            EXPECT_STREQ(st.algorithm, ("tuna:radix=" + std::to_string(a2a::detail::schedule::ceil_sqrt(P))).c_str()) << spec;
            continue;
          }
          const int used = std::max(2, std::min(r, std::max(Q, 2)));
          EXPECT_EQ(std::string(st.algorithm), std::string("tuna-hier:variant=") + variant + ",radix=" +
                                                   std::to_string(used) + ",block=" + std::to_string(block) +
                                                   s::ports_name("ports", b, used));
          const long long inter_rounds = std::string(variant) == "coalesced" ? N - 1 : (N - 1) * Q;
          EXPECT_EQ(st.rounds, s::tra_rounds_closed(Q, used) + inter_rounds) << spec;
          if (!zeros) {
            EXPECT_EQ(st.inter_node_messages, inter_rounds) << spec;
          }
        }
  }
}

// The node-aware algorithms with their intra-node phase through shared
// memory (intra=shm): data and gaps, one round for the node phase, the same
// inter-node messages; unequal nodes fall back as without it.
TEST(Topology, IntraShmPhases) {
  namespace s = a2a::detail::schedule;
  using a2a::test::encode;
  int rank;
  const int P = world(&rank);
  const EnvLayout env(P);
  const int N = env.N, Q = env.Q;
  const long long node_round = Q > 1 ? 1 : 0;
  for (int call = 0; call < 3; ++call) {  // again: the node's segment reused
    std::vector<int> s(3 * P), r(3 * P, -7);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < 3; ++j) s[3 * d + j] = encode(rank, d, j + call);
    ASSERT_EQ(A2A_Alltoall(s.data(), 3, MPI_INT, r.data(), 3, MPI_INT, MPI_COMM_WORLD, "tra2:intra=shm"), MPI_SUCCESS)
        << a2a::last_error_message();
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < 3; ++j) wrong += r[3 * src + j] != encode(src, rank, j + call);
    EXPECT_EQ(wrong, 0) << "tra2:intra=shm call " << call;
    A2A_Stats st;
    A2A_Last_stats(&st);
    if (env.equal) {
      EXPECT_EQ(std::string(st.algorithm), "tra2:radix-intra=" + std::to_string(std::max<long long>(2, std::min<long long>(s::ceil_sqrt(Q), Q))) +
                                               ",radix-inter=" + std::to_string(std::max(2, N)) + ",intra=shm");
      EXPECT_EQ(st.rounds, node_round + s::tra_rounds_closed(N, std::max(2, N)));
      EXPECT_EQ(st.inter_node_messages, s::tra_rounds_closed(N, std::max(2, N)));
    }
  }
  // Traff's clustered: node-mates in one exchange, the steps to other nodes
  // as before, for nodes of any sizes.
  {  // shm itself on the whole communicator: several nodes refuse it, the stats naming the fallback
    std::vector<int> s(2 * P), r(2 * P, -7);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < 2; ++j) s[2 * d + j] = encode(rank, d, j);
    ASSERT_EQ(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, "shm"), MPI_SUCCESS);
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < 2; ++j) wrong += r[2 * src + j] != encode(src, rank, j);
    EXPECT_EQ(wrong, 0) << "shm";
    A2A_Stats st;
    A2A_Last_stats(&st);
    EXPECT_STREQ(st.algorithm, N > 1 ? "spread-out" : "shm");
  }
  const int mates = env.sizes[static_cast<size_t>(env.node_of[rank])];
  {
    const char* spec = "clustered:intra=shm";
    std::vector<int> s(2 * P), r(2 * P, -7);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < 2; ++j) s[2 * d + j] = encode(rank, d, j);
    ASSERT_EQ(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, spec), MPI_SUCCESS)
        << a2a::last_error_message();
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < 2; ++j) wrong += r[2 * src + j] != encode(src, rank, j);
    EXPECT_EQ(wrong, 0) << spec;
    A2A_Stats st;
    A2A_Last_stats(&st);
    EXPECT_STREQ(st.algorithm, spec);
    EXPECT_EQ(st.rounds, (mates > 1 ? 1 : 0) + P - mates) << spec;
    EXPECT_EQ(st.inter_node_messages, P - mates) << spec;
    EXPECT_EQ(varying_on_world(spec, rank, P, [](int src, int dst) { return (src * 3 + dst) % 4; }), 0) << spec;
  }
  for (const char* variant : {"coalesced", "staggered"}) {
    const std::string spec = std::string("tuna-hier:variant=") + variant + ",intra=shm";
    EXPECT_EQ(varying_on_world(spec, rank, P, [](int src, int dst) { return (src + 2 * dst) % 3; }), 0) << spec;
    A2A_Stats st;
    A2A_Last_stats(&st);
    if (env.equal) {
      const long long inter_rounds = std::string(variant) == "coalesced" ? N - 1 : (N - 1) * Q;
      EXPECT_NE(std::string(st.algorithm).find(",intra=shm"), std::string::npos) << spec;
      EXPECT_EQ(st.rounds, node_round + inter_rounds) << spec;
    }
  }
}
