// The CUDA IPC algorithm's staged inter-node pipeline on host memory (the
// same code the GPU runs, with memcpy for the device copies), on node
// layouts from A2A_NODE_SIZE; and cuda-ipc on host buffers, which falls back
// to its host algorithm.  Runs on any machine.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "a2a/a2a.h"
#include "core/context.hpp"
#include "gpu/staged.hpp"

namespace g = a2a::detail::gpu;
namespace s = a2a::detail::schedule;

namespace {

unsigned char pattern(int src, int dst, long long j) { return static_cast<unsigned char>(src * 37 + dst * 11 + j * 3 + 1); }

// Block sizes with zeros and blocks of many chunks.
long long block_bytes(int src, int dst) {
  if ((src * 7 + dst * 3) % 5 == 0) return 0;
  return (src + 1) * (dst + 2) * 13 % 97 + 1;
}

// Copies happen only when `ready` first says done, after a few "not yet"s:
// data read before the copier reports done would be stale, so a pipeline
// that sends or frees a slot too early fails the data checks.
class LazyCopier : public g::StageCopier {
 public:
  explicit LazyCopier(int slots) : pending_(slots) {}
  int to_host(char* host, const char* device, size_t bytes, int slot) override { return queue(host, device, bytes, slot); }
  int to_device(char* device, const char* host, size_t bytes, int slot) override {
    return queue(device, host, bytes, slot);
  }
  int ready(int slot, bool& done) override {
    Pending& p = pending_[slot];
    done = p.polls_left-- <= 0;
    if (done && p.bytes) {
      std::memcpy(p.to, p.from, p.bytes);
      p.bytes = 0;
    }
    return MPI_SUCCESS;
  }

 private:
  struct Pending {
    char* to = nullptr;
    const char* from = nullptr;
    size_t bytes = 0;
    int polls_left = 0;
  };
  int queue(char* to, const char* from, size_t bytes, int slot) {
    EXPECT_EQ(pending_[slot].bytes, 0u) << "slot " << slot << " reused before its copy was done";
    pending_[slot] = {to, from, bytes, 1 + (++count_ % 3)};
    return MPI_SUCCESS;
  }
  std::vector<Pending> pending_;
  int count_ = 0;
};

struct Buffers {
  std::vector<char> send, recv, send_copy;
  std::vector<MPI_Aint> soff, roff;
  std::vector<long long> sbytes, rbytes;
};

// Blocks in reverse order with 3-byte gaps on both sides.
Buffers make_buffers(int me, int P) {
  Buffers b;
  b.soff.resize(P);
  b.roff.resize(P);
  b.sbytes.resize(P);
  b.rbytes.resize(P);
  MPI_Aint so = 5, ro = 5;
  for (int d = P - 1; d >= 0; --d) {
    b.sbytes[d] = block_bytes(me, d);
    b.rbytes[d] = block_bytes(d, me);
    b.soff[d] = so;
    b.roff[d] = ro;
    so += b.sbytes[d] + 3;
    ro += b.rbytes[d] + 3;
  }
  b.send.assign(so, '\x5a');
  b.recv.assign(ro, '\xee');
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < b.sbytes[d]; ++j) b.send[b.soff[d] + j] = static_cast<char>(pattern(me, d, j));
  b.send_copy = b.send;
  return b;
}

void run_and_check(g::StageCopier& copier, long long chunk, int slots) {
  a2a::detail::CommContext* ctx = nullptr;
  ASSERT_EQ(a2a::detail::get_context(MPI_COMM_WORLD, ctx), MPI_SUCCESS);
  ASSERT_EQ(ctx->open_private(), MPI_SUCCESS);
  const int P = ctx->size, me = ctx->rank;
  const auto& node_of = ctx->topology.node_of;
  Buffers b = make_buffers(me, P);
  const auto sends = s::staged_chunks(me, P, node_of, b.sbytes.data(), chunk, true);
  const auto recvs = s::staged_chunks(me, P, node_of, b.rbytes.data(), chunk, false);
  std::vector<char> staging(2 * slots * chunk);
  a2a::detail::Stats st;
  st.node_of = node_of.data();
  st.my_node = node_of[me];
  const g::StagedSide out{&sends, b.send.data(), b.soff.data()}, in{&recvs, b.recv.data(), b.roff.data()};
  ASSERT_EQ(g::run_staged(ctx->comm, 2, out, in, staging.data(), chunk, slots, copier, st), MPI_SUCCESS);
  EXPECT_EQ(b.send, b.send_copy) << "the send buffer changed";
  EXPECT_EQ(st.messages, static_cast<long long>(sends.size()));
  EXPECT_EQ(st.inter_node_messages, st.messages);
  // Off-node blocks arrived; node-mates' blocks (the IPC part's) and every
  // gap are untouched.
  std::vector<char> want(b.recv.size(), '\xee');
  for (int src = 0; src < P; ++src)
    if (node_of[src] != node_of[me])
      for (long long j = 0; j < b.rbytes[src]; ++j) want[b.roff[src] + j] = static_cast<char>(pattern(src, me, j));
  long long wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) wrong += want[i] != b.recv[i];
  EXPECT_EQ(wrong, 0) << "chunk " << chunk << ", " << slots << " slots";
}

}  // namespace

TEST(GpuStaged, HostCopierEveryChunkAndSlotCount) {
  for (long long chunk : {1LL, 5LL, 64LL, 4096LL})
    for (int slots : {1, 2, g::kStageSlots}) {
      g::HostCopier copier;
      run_and_check(copier, chunk, slots);
    }
}

TEST(GpuStaged, SlowCopiesAreWaitedFor) {
  for (long long chunk : {3LL, 32LL})
    for (int slots : {1, 3}) {
      LazyCopier copier(2 * slots);
      run_and_check(copier, chunk, slots);
    }
}

// cuda-ipc given host buffers runs its fallback, spread-out, and says so.
TEST(GpuStaged, CudaIpcOnHostBuffersFallsBack) {
  int P, me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::vector<int> send(3 * P), recv(3 * P, -1);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < 3; ++j) send[3 * d + j] = me * 1000 + d * 10 + j;
  ASSERT_EQ(A2A_Alltoall(send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, MPI_COMM_WORLD,
                         "cuda-ipc:path=kernel"),
            MPI_SUCCESS);
  A2A_Stats st;
  A2A_Last_stats(&st);
  EXPECT_STREQ(st.algorithm, "spread-out");
  for (int src = 0; src < P; ++src)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(recv[3 * src + j], src * 1000 + me * 10 + j);

  // Alltoallv, gapped and reversed, zero counts.
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int so = 1, ro = 2;
  for (int d = P - 1; d >= 0; --d) {
    sc[d] = (me + d) % 3;
    rc[d] = (d + me) % 3;
    sd[d] = so;
    rd[d] = ro;
    so += sc[d] + 1;
    ro += rc[d] + 2;
  }
  std::vector<int> vs(so), vr(ro, -1);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) vs[sd[d] + j] = me * 1000 + d * 10 + j;
  ASSERT_EQ(A2A_Alltoallv(vs.data(), sc.data(), sd.data(), MPI_INT, vr.data(), rc.data(), rd.data(), MPI_INT,
                          MPI_COMM_WORLD, "cuda-ipc"),
            MPI_SUCCESS);
  A2A_Last_stats(&st);
  EXPECT_STREQ(st.algorithm, "spread-out");
  std::vector<int> want(ro, -1);
  for (int src = 0; src < P; ++src)
    for (int j = 0; j < rc[src]; ++j) want[rd[src] + j] = src * 1000 + me * 10 + j;
  EXPECT_EQ(vr, want);
}

TEST(GpuStaged, CudaIpcKnobsAreChecked) {
  int x = 0, y = 0;
  for (const char* bad : {"cuda-ipc:path=fast", "cuda-ipc:chunk=0", "cuda-ipc:chunk=2G", "cuda-ipc:ipc-threshold=4KB",
                          "cuda-ipc:memcpy-threshold=-1", "cuda-ipc:radix=2"})
    EXPECT_EQ(A2A_Alltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_SELF, bad), MPI_ERR_ARG) << bad;
  EXPECT_EQ(A2A_Alltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_SELF,
                         "cuda-ipc:path=memcpy,ipc-threshold=0,memcpy-threshold=1G,chunk=64K"),
            MPI_SUCCESS);
}
