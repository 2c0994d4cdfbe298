// The replay traces of src/schedule/trace.hpp, run without MPI: a small
// executor matches every rank's sends and receives in order per pair and
// advances blocking actions only once their partners are there, so a trace
// that deadlocks, or whose sizes disagree between sender and receiver,
// fails; the totals must equal the closed forms.  tests/mpi/test_trace_stats.cpp
// compares the totals with the stats of the real calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "schedule/schedule.hpp"
#include "schedule/trace.hpp"

namespace s = a2a::detail::schedule;
using s::Trace;
using s::TraceOp;

namespace {

// Runs the traces to the end; false on a deadlock or a size mismatch.
bool runs_to_completion(const std::vector<Trace>& traces, std::string& why) {
  const int P = static_cast<int>(traces.size());
  std::map<std::pair<int, int>, std::vector<long long>> sent, wanted;  // (src, dst): sizes in order
  std::vector<size_t> pc(P, 0), posted_at(P, 0);
  std::vector<std::vector<std::pair<bool, std::pair<int, size_t>>>> pending(P);  // (is send, (peer, index))
  auto post_send = [&](int me, int dst, long long b) {
    auto& q = sent[{me, dst}];
    q.push_back(b);
    return std::make_pair(true, std::make_pair(dst, q.size() - 1));
  };
  auto post_recv = [&](int me, int src, long long b) {
    auto& q = wanted[{src, me}];
    q.push_back(b);
    return std::make_pair(false, std::make_pair(src, q.size() - 1));
  };
  // A send is done when its receive is posted (and the reverse), sizes equal.
  auto done = [&](int me, const std::pair<bool, std::pair<int, size_t>>& r) {
    const auto key = r.first ? std::make_pair(me, r.second.first) : std::make_pair(r.second.first, me);
    const auto& other = r.first ? wanted[key] : sent[key];
    if (other.size() <= r.second.second) return false;
    const auto& mine = r.first ? sent[key] : wanted[key];
    if (other[r.second.second] != mine[r.second.second]) {
      why = "size mismatch between " + std::to_string(key.first) + " and " + std::to_string(key.second);
      return false;
    }
    return true;
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (int p = 0; p < P; ++p) {
      while (pc[p] < traces[p].size()) {
        const TraceOp& op = traces[p][pc[p]];
        if (posted_at[p] <= pc[p]) {  // post this action's messages once
          posted_at[p] = pc[p] + 1;
          if (op.kind == TraceOp::sendrecv || op.kind == TraceOp::send || op.kind == TraceOp::isend)
            pending[p].push_back(post_send(p, op.dst, op.bytes));
          if (op.kind == TraceOp::sendrecv)
            pending[p].push_back(post_recv(p, op.src, op.recv_bytes));
          if (op.kind == TraceOp::recv || op.kind == TraceOp::irecv)
            pending[p].push_back(post_recv(p, op.src, op.bytes));
        }
        if (op.kind != TraceOp::isend && op.kind != TraceOp::irecv) {  // blocks until its partners are there
          if (!std::all_of(pending[p].begin(), pending[p].end(), [&](const auto& r) { return done(p, r); })) break;
          pending[p].clear();
        }
        ++pc[p];
        moved = true;
      }
      if (!why.empty()) return false;
    }
  }
  for (int p = 0; p < P; ++p)
    if (pc[p] < traces[p].size() || !pending[p].empty()) {
      why = "rank " + std::to_string(p) + " stuck at action " + std::to_string(pc[p]);
      return false;
    }
  return true;
}

long long sizes(int src, int dst) { return (src * 7 + dst * 13) % 11 == 0 ? 0 : (src * 5 + dst * 3) % 29 + 1; }

}  // namespace

TEST(Trace, TraEveryRadixMatchesTheClosedForms) {
  for (int P = 1; P <= 19; ++P)
    for (int r = 2; r <= P + 1; ++r) {
      std::vector<Trace> t;
      for (int p = 0; p < P; ++p) t.push_back(s::trace_tra(P, r, 16, p));
      std::string why;
      ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << " r=" << r << ": " << why;
      for (int p = 0; p < P; ++p) {
        const auto tot = s::trace_totals(t[p], p, P);
        EXPECT_EQ(tot.messages, s::tra_rounds_closed(P, r)) << P << " " << r;
        EXPECT_EQ(tot.bytes, 16 * s::tra_blocks_closed(P, r)) << P << " " << r;
        EXPECT_EQ(tot.inter_messages, 0);
      }
    }
}

TEST(Trace, Tra2IsTwoTraPhasesWithSuperBlocks) {
  for (auto [N, Q] : {std::pair{1, 4}, {2, 3}, {3, 4}, {4, 2}, {2, 8}, {5, 1}})
    for (int r1 = 2; r1 <= std::max(2, Q); ++r1)
      for (int r2 = 2; r2 <= std::max(2, N); ++r2) {
        const int P = N * Q;
        std::vector<Trace> t;
        for (int p = 0; p < P; ++p) t.push_back(s::trace_tra2(P, Q, r1, r2, 8, p));
        std::string why;
        ASSERT_TRUE(runs_to_completion(t, why)) << N << "x" << Q << ": " << why;
        const auto tot = s::trace_totals(t[0], 0, Q);
        EXPECT_EQ(tot.messages, s::tra_rounds_closed(Q, r1) + s::tra_rounds_closed(N, r2));
        EXPECT_EQ(tot.bytes, 8 * (N * s::tra_blocks_closed(Q, r1) + Q * s::tra_blocks_closed(N, r2)));
        EXPECT_EQ(tot.inter_messages, s::tra_rounds_closed(N, r2));
      }
}

TEST(Trace, TunaHierDeliversEveryNodesBytesAcross) {
  for (auto [N, Q] : {std::pair{1, 5}, {2, 3}, {3, 4}, {4, 2}, {2, 8}, {3, 1}, {2, 9}})
    for (bool staggered : {false, true})
      for (int batch : {1, 2, 32})
        for (int r : {2, 3}) {
          const int P = N * Q;
          std::vector<Trace> t(P);
          for (int n = 0; n < N; ++n) {
            auto node = s::trace_tuna_hier(P, Q, r, batch, staggered, sizes, n);
            for (int q = 0; q < Q; ++q) t[n * Q + q] = node[q];
          }
          std::string why;
          ASSERT_TRUE(runs_to_completion(t, why)) << N << "x" << Q << " " << staggered << ": " << why;
          for (int p = 0; p < P; ++p) {
            long long across = 0, messages = 0;
            for (int m = 0; m < N; ++m) {
              long long to_m = 0;
              for (int qs = 0; qs < Q && m != p / Q; ++qs) {
                const long long b = sizes(p / Q * Q + qs, m * Q + p % Q);
                to_m += b;
                messages += staggered && b > 0;
              }
              across += to_m;
              messages += !staggered && to_m > 0;
            }
            const auto tot = s::trace_totals(t[p], p, Q);
            EXPECT_EQ(tot.inter_bytes, across) << N << "x" << Q << " rank " << p;
            EXPECT_EQ(tot.inter_messages, messages) << N << "x" << Q << " rank " << p;
          }
        }
}

// Non-zero base-r digits of d: the hops of the block at distance d.
int hops(int d, int r) {
  int h = 0;
  for (; d > 0; d /= r) h += d % r != 0;
  return h;
}

TEST(Trace, FlatTunaForwardsEveryBlockOncePerNonZeroDigit) {
  for (int P : {1, 2, 3, 5, 8, 9, 12})
    for (int r = 2; r <= P + 1; ++r) {
      const auto t = s::trace_tuna(P, r, sizes);
      std::string why;
      ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << " r=" << r << ": " << why;
      long long want = 0, got = 0, meta = 0, want_meta = 0;
      const int rr = std::min(r, std::max(P, 2));
      for (int src = 0; src < P; ++src)
        for (int d = 1; d < P; ++d) want += sizes(src, (src - d + P) % P) * hops(d, rr), want_meta += 8 * hops(d, rr);
      for (int p = 0; p < P; ++p) {
        ASSERT_FALSE(t[p].empty());
        EXPECT_EQ(t[p][0].kind, TraceOp::allreduce);
        const auto tot = s::trace_totals(t[p], p, P);
        got += tot.bytes, meta += tot.meta_bytes;
      }
      EXPECT_EQ(got, want) << "P=" << P << " r=" << r;
      EXPECT_EQ(meta, want_meta) << "P=" << P << " r=" << r;
    }
}

TEST(Trace, PaddedBruckIsBruckOfTheLargestBlock) {
  for (int P : {1, 2, 3, 5, 8}) {
    std::vector<Trace> t(P);
    for (int p = 0; p < P; ++p) t[p] = s::trace_padded_bruck(P, 29, p);
    std::string why;
    ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << ": " << why;
    for (int p = 0; p < P; ++p) {
      auto bruck = s::trace_tra(P, 2, 29, p);
      bruck.insert(bruck.begin(), {TraceOp::allreduce, true, -1, -1, 8, 8});
      ASSERT_EQ(t[p].size(), bruck.size());
      EXPECT_EQ(s::trace_totals(t[p], p, 1), s::trace_totals(bruck, p, 1));
    }
    EXPECT_EQ(s::trace_padded_bruck(P, 0, 0).size(), 1u);  // every block empty: the allreduce only
  }
  EXPECT_EQ(s::trace_line(4, s::trace_padded_bruck(8, 3, 4)[0], 8, sizes), "4 allreduce 8 0 6");
}

TEST(Trace, NativeRowsAndLineFormat) {
  EXPECT_EQ(s::trace_line(3, s::trace_native_alltoall(16)[0], 4, sizes), "3 alltoall 16 16");
  const auto v = s::trace_native_alltoallv(3, sizes, 1)[0];
  EXPECT_EQ(s::trace_line(1, v, 3, sizes), "1 alltoallv " + std::to_string(sizes(1, 0) + sizes(1, 1) + sizes(1, 2)) +
                                               " " + std::to_string(sizes(1, 0)) + " " + std::to_string(sizes(1, 1)) +
                                               " " + std::to_string(sizes(1, 2)) + " " +
                                               std::to_string(sizes(0, 1) + sizes(1, 1) + sizes(2, 1)) + " " +
                                               std::to_string(sizes(0, 1)) + " " + std::to_string(sizes(1, 1)) + " " +
                                               std::to_string(sizes(2, 1)));
  EXPECT_EQ(s::trace_line(0, s::trace_tra(4, 2, 16, 0)[0], 4, sizes), "0 sendRecv 32 1 32 3 6 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::isend, false, 5, -1, 40, 0}, 8, sizes), "2 isend 5 1 40 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::irecv, false, -1, 7, 40, 0}, 8, sizes), "2 irecv 7 1 40 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::recv, true, -1, 1, 8, 0}, 8, sizes), "2 recv 1 1 8 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::waitall}, 8, sizes), "2 waitall");
}
