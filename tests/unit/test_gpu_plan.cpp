// The CUDA IPC algorithm's planning without MPI or a GPU: the hybrid's
// thresholds, byte-size knobs, the pull order, the staged path's chunks
// (sender and receiver must list every pair's chunks alike) and the
// displacement exchange, simulated over all ranks of a node.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "schedule/gpu_plan.hpp"

namespace s = a2a::detail::schedule;
using s::GpuPath;
using s::GpuPathMode;

TEST(GpuPlan, HybridFollowsBothThresholds) {
  const long long ipc = 4096, mc = 512 * 1024;
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 0, ipc, mc), GpuPath::host);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 4095, ipc, mc), GpuPath::host);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 4096, ipc, mc), GpuPath::kernel);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, mc - 1, ipc, mc), GpuPath::kernel);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, mc, ipc, mc), GpuPath::memcpy);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 1LL << 40, ipc, mc), GpuPath::memcpy);
  // A memcpy threshold below the IPC one: no kernel range at all.
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 100, 1000, 10), GpuPath::host);
  EXPECT_EQ(s::gpu_path(GpuPathMode::hybrid, 1000, 1000, 10), GpuPath::memcpy);
  // Fixed paths ignore the size, even below the IPC threshold.
  for (long long b : {0LL, 1LL, 4096LL, 1LL << 30}) {
    EXPECT_EQ(s::gpu_path(GpuPathMode::kernel, b, ipc, mc), GpuPath::kernel);
    EXPECT_EQ(s::gpu_path(GpuPathMode::memcpy, b, ipc, mc), GpuPath::memcpy);
  }
  EXPECT_STREQ(s::gpu_path_name(GpuPath::kernel), "kernel");
}

TEST(GpuPlan, ParsesByteCounts) {
  long long v = -1;
  const std::vector<std::pair<std::string, long long>> good = {
      {"0", 0}, {"4096", 4096}, {"4K", 4096}, {"4k", 4096}, {"512K", 512 * 1024}, {"1M", 1 << 20},
      {"2G", 2LL << 30}, {"3m", 3LL << 20}};
  for (const auto& [text, want] : good) {
    ASSERT_TRUE(s::parse_bytes(text, v)) << text;
    EXPECT_EQ(v, want) << text;
  }
  for (const char* bad : {"", "K", "-4", "4KB", "4 K", "1.5M", "4T", "0x10", "99999999999999999999",
                          "5000000000G"})
    EXPECT_FALSE(s::parse_bytes(bad, v)) << bad;
}

// Every step is a permutation (each GPU read by one peer, written by one)
// and over Q steps every ordered pair occurs once, the self copy at step 0.
TEST(GpuPlan, PullOrderReadsEachPeerOncePerStep) {
  for (int Q = 1; Q <= 17; ++Q) {
    std::vector<std::vector<int>> seen(Q, std::vector<int>(Q, 0));
    for (int step = 0; step < Q; ++step) {
      std::vector<int> read_by(Q, 0);
      for (int q = 0; q < Q; ++q) {
        const int src = s::ipc_source(q, Q, step);
        ASSERT_GE(src, 0);
        ASSERT_LT(src, Q);
        if (step == 0) {
          EXPECT_EQ(src, q);
        }
        ++read_by[src];
        ++seen[q][src];
      }
      for (int c : read_by) EXPECT_EQ(c, 1) << "Q=" << Q << " step=" << step;
    }
    for (int q = 0; q < Q; ++q)
      for (int src = 0; src < Q; ++src) EXPECT_EQ(seen[q][src], 1);
  }
}

// For layouts, block sizes (zeros included) and chunk sizes: a sender's
// chunks for p equal p's receive chunks from it, in the same order; the
// chunks tile each off-node block exactly; node-mates get none.
TEST(GpuPlan, StagedChunksMatchBetweenSenderAndReceiver) {
  std::mt19937 rng(7);
  for (int P = 1; P <= 12; ++P)
    for (int Q = 1; Q <= P; ++Q)
      for (long long chunk : {1LL, 3LL, 64LL, 1000LL}) {
        std::vector<int> node_of(P);
        for (int r = 0; r < P; ++r) node_of[r] = r / Q;
        // bytes[src][dst], a third of them zero
        std::vector<std::vector<long long>> bytes(P, std::vector<long long>(P));
        for (auto& row : bytes)
          for (auto& b : row) b = rng() % 3 == 0 ? 0 : static_cast<long long>(rng() % 200);
        std::vector<std::vector<s::StagedChunk>> sends(P), recvs(P);
        for (int r = 0; r < P; ++r) {
          std::vector<long long> rb(P);
          for (int src = 0; src < P; ++src) rb[src] = bytes[src][r];
          sends[r] = s::staged_chunks(r, P, node_of, bytes[r].data(), chunk, true);
          recvs[r] = s::staged_chunks(r, P, node_of, rb.data(), chunk, false);
        }
        for (int a = 0; a < P; ++a)
          for (int b = 0; b < P; ++b) {
            std::vector<std::pair<long long, long long>> out, in;
            for (const auto& c : sends[a])
              if (c.peer == b) out.emplace_back(c.offset, c.bytes);
            for (const auto& c : recvs[b])
              if (c.peer == a) in.emplace_back(c.offset, c.bytes);
            ASSERT_EQ(out, in) << "P=" << P << " Q=" << Q << " " << a << "->" << b;
            if (node_of[a] == node_of[b]) {
              EXPECT_TRUE(out.empty());
              continue;
            }
            long long covered = 0;
            for (const auto& [off, len] : out) {
              EXPECT_EQ(off, covered);
              EXPECT_GT(len, 0);
              EXPECT_LE(len, chunk);
              covered += len;
            }
            EXPECT_EQ(covered, bytes[a][b]);
          }
        // Spread-out order: sends to rank+1 first, receives from rank-1 first.
        for (int r = 0; r < P; ++r)
          for (size_t k = 1; k < sends[r].size(); ++k)
            EXPECT_LE((sends[r][k - 1].peer - r + P) % P, (sends[r][k].peer - r + P) % P);
      }
}

// The displacement exchange over one node: every receiver learns where each
// node-mate's block for it lies and how long it is, gaps and reversed
// order included.
TEST(GpuPlan, DisplacementExchangeTellsEachReceiverItsBlocks) {
  const int P = 7;
  const std::vector<int> node = {1, 3, 4, 6};  // the node's ranks
  const int Q = static_cast<int>(node.size());
  // Rank r's block for d: offset 1000 - 37*d + 5*r (reversed, gapped), size (r + 2*d) % 5.
  const auto off = [](int r, int d) { return 1000LL - 37 * d + 5 * r; };
  const auto len = [](int r, int d) { return static_cast<long long>((r + 2 * d) % 5); };
  std::vector<std::vector<long long>> offers(Q);
  for (int j = 0; j < Q; ++j) {
    std::vector<long long> o(P), b(P);
    for (int d = 0; d < P; ++d) {
      o[d] = off(node[j], d);
      b[d] = len(node[j], d);
    }
    s::pull_offers(node, o.data(), b.data(), offers[j]);
    ASSERT_EQ(offers[j].size(), 2u * Q);
  }
  // MPI_Alltoall of pairs: receiver k gets pair k of every sender j.
  for (int k = 0; k < Q; ++k)
    for (int j = 0; j < Q; ++j) {
      EXPECT_EQ(offers[j][2 * k], off(node[j], node[k]));
      EXPECT_EQ(offers[j][2 * k + 1], len(node[j], node[k]));
    }
}

TEST(GpuPlan, EvenlySpacedFindsTheStride) {
  long long stride = 0;
  const long long regular[] = {8, 24, 40, 56};
  EXPECT_TRUE(s::evenly_spaced(regular, 4, stride));
  EXPECT_EQ(stride, 16);
  const long long reversed[] = {30, 20, 10, 0};
  EXPECT_TRUE(s::evenly_spaced(reversed, 4, stride));
  EXPECT_EQ(stride, -10);
  const long long gap[] = {0, 16, 40};
  EXPECT_FALSE(s::evenly_spaced(gap, 3, stride));
  const long long one[] = {5};
  EXPECT_TRUE(s::evenly_spaced(one, 1, stride));
  const long long two[] = {5, 3};
  EXPECT_TRUE(s::evenly_spaced(two, 2, stride));
  EXPECT_EQ(stride, -2);
}
