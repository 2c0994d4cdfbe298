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

long long waitalls(const Trace& t) {
  return std::count_if(t.begin(), t.end(), [](const TraceOp& op) { return op.kind == TraceOp::waitall; });
}

long long sizes(int src, int dst) { return (src * 7 + dst * 13) % 11 == 0 ? 0 : (src * 5 + dst * 3) % 29 + 1; }

}  // namespace

TEST(Trace, TraEveryRadixAndPortsMatchesTheClosedForms) {
  for (int P = 1; P <= 19; ++P)
    for (int r = 2; r <= P + 1; ++r)
      for (int ports : {0, 1, 2}) {
        std::vector<Trace> t;
        for (int p = 0; p < P; ++p) t.push_back(s::trace_tra(P, r, 16, p, ports));
        std::string why;
        ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << " r=" << r << " ports=" << ports << ": " << why;
        for (int p = 0; p < P; ++p) {
          const auto tot = s::trace_totals(t[p], p, P);
          EXPECT_EQ(tot.messages, s::tra_rounds_closed(P, r)) << P << " " << r;
          EXPECT_EQ(tot.bytes, 16 * s::tra_blocks_closed(P, r)) << P << " " << r;
          EXPECT_EQ(tot.inter_messages, 0);
          EXPECT_EQ(waitalls(t[p]), s::tra_waits_closed(P, r, ports)) << P << " " << r << " " << ports;
        }
      }
}

TEST(Trace, Tra2IsTwoTraPhasesWithSuperBlocks) {
  for (auto [N, Q] : {std::pair{1, 4}, {2, 3}, {3, 4}, {4, 2}, {2, 8}, {5, 1}})
    for (int r1 = 2; r1 <= std::max(2, Q); ++r1)
      for (int r2 = 2; r2 <= std::max(2, N); ++r2)
        for (auto [b1, b2] : {std::pair{0, 0}, {1, 1}, {2, 0}}) {
        const int P = N * Q;
        std::vector<Trace> t;
        for (int p = 0; p < P; ++p) t.push_back(s::trace_tra2(P, Q, r1, r2, 8, p, b1, b2));
        std::string why;
        ASSERT_TRUE(runs_to_completion(t, why)) << N << "x" << Q << ": " << why;
        const auto tot = s::trace_totals(t[0], 0, Q);
        EXPECT_EQ(tot.messages, s::tra_rounds_closed(Q, r1) + s::tra_rounds_closed(N, r2));
        EXPECT_EQ(tot.bytes, 8 * (N * s::tra_blocks_closed(Q, r1) + Q * s::tra_blocks_closed(N, r2)));
        EXPECT_EQ(tot.inter_messages, s::tra_rounds_closed(N, r2));
        EXPECT_EQ(waitalls(t[0]), s::tra_waits_closed(Q, r1, b1) + s::tra_waits_closed(N, r2, b2));
      }
}

TEST(Trace, TunaHierDeliversEveryNodesBytesAcross) {
  for (auto [N, Q] : {std::pair{1, 5}, {2, 3}, {3, 4}, {4, 2}, {2, 8}, {3, 1}, {2, 9}})
    for (bool staggered : {false, true})
      for (int batch : {1, 2, 32})
        for (int r : {2, 3})
          for (int ports : {0, 1}) {
          const int P = N * Q;
          std::vector<Trace> t(P);
          for (int n = 0; n < N; ++n) {
            auto node = s::trace_tuna_hier(P, Q, r, batch, staggered, sizes, n, ports);
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

long long no_bytes(int, int) { return 0; }

TEST(Trace, FlatTunaForwardsEveryBlockOncePerNonZeroDigit) {
  for (auto [P, Q] : {std::pair{1, 1}, {2, 2}, {3, 3}, {5, 5}, {8, 8}, {8, 2}, {9, 3}, {12, 4}, {12, 12}}) {
    // the largest block's allreduce alone (every block empty): its 8-byte messages, counted apart
    const auto alone = s::trace_padded_bruck(P, Q, no_bytes);
    long long allreduce = 0;
    for (int p = 0; p < P; ++p) allreduce += s::trace_totals(alone[p], p, Q).meta_bytes;
    for (int r = 2; r <= P + 1; ++r)
      for (int ports : {0, 1, 2}) {
      const auto t = s::trace_tuna(P, Q, r, sizes, ports);
      std::string why;
      ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << " Q=" << Q << " r=" << r << ": " << why;
      long long want = 0, got = 0, sizes_sent = 0, want_sizes = 0;
      const int rr = std::min(r, std::max(P, 2));
      for (int src = 0; src < P; ++src)
        for (int d = 1; d < P; ++d) want += sizes(src, (src - d + P) % P) * hops(d, rr), want_sizes += 8 * hops(d, rr);
      for (int p = 0; p < P; ++p) {
        const auto tot = s::trace_totals(t[p], p, Q);
        got += tot.bytes, sizes_sent += tot.meta_bytes;
      }
      EXPECT_EQ(got, want) << "P=" << P << " r=" << r;
      EXPECT_EQ(sizes_sent - allreduce, want_sizes) << "P=" << P << " r=" << r;
    }
  }
}

TEST(Trace, TheLargestBlockAllreduceIsTwoLevel) {
  // Every rank's value reaches every rank: follow a set of ranks' values through the messages.
  for (auto [P, Q] : {std::pair{1, 1}, {2, 1}, {6, 3}, {7, 7}, {12, 4}, {20, 4}, {24, 8}, {40, 8}}) {
    const auto t = s::trace_padded_bruck(P, Q, no_bytes);
    std::string why;
    ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << " Q=" << Q << ": " << why;
    // Replay in the executor's matched order: values are unions of rank sets, sends carry the sender's.
    std::vector<std::vector<bool>> has(P, std::vector<bool>(P, false));
    for (int p = 0; p < P; ++p) has[p][p] = true;
    std::vector<size_t> pc(P, 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (int p = 0; p < P; ++p)
        while (pc[p] < t[p].size()) {
          const TraceOp& op = t[p][pc[p]];
          const int peer = op.kind == TraceOp::send ? op.dst : op.src;
          if (op.kind == TraceOp::send) break;  // a send waits for its receive below
          // the matching action of the peer: its next action must be the send (or sendrecv) to p
          const TraceOp& other = t[peer][pc[peer]];
          const bool match = (op.kind == TraceOp::recv && other.kind == TraceOp::send && other.dst == p) ||
                             (op.kind == TraceOp::sendrecv && other.kind == TraceOp::sendrecv && other.dst == p);
          if (!match) break;
          std::vector<bool> mine = has[p], theirs = has[peer];
          for (int x = 0; x < P; ++x) has[p][x] = mine[x] || theirs[x];
          if (op.kind == TraceOp::sendrecv)
            for (int x = 0; x < P; ++x) has[peer][x] = mine[x] || theirs[x];
          ++pc[p], ++pc[peer], moved = true;
        }
    }
    for (int p = 0; p < P; ++p) {
      EXPECT_EQ(pc[p], t[p].size()) << "P=" << P << " Q=" << Q << " rank " << p;
      EXPECT_EQ(std::count(has[p].begin(), has[p].end(), true), P) << "P=" << P << " Q=" << Q << " rank " << p;
    }
  }
}

TEST(Trace, PaddedBruckIsBruckOfTheLargestBlock) {
  for (auto [P, Q] : {std::pair{1, 1}, {2, 2}, {3, 3}, {5, 5}, {8, 8}, {8, 4}}) {
    long long M = 0;
    for (int x = 0; x < P; ++x)
      for (int y = 0; y < P; ++y) M = std::max(M, sizes(x, y));
    const auto t = s::trace_padded_bruck(P, Q, sizes);
    std::string why;
    ASSERT_TRUE(runs_to_completion(t, why)) << "P=" << P << ": " << why;
    for (int p = 0; p < P; ++p) {
      auto bruck = s::trace_totals(s::trace_tra(P, 2, M, p), p, P);
      auto padded = s::trace_totals(t[p], p, P);
      padded.meta_bytes = 0;
      EXPECT_EQ(padded, bruck) << "P=" << P;
    }
  }
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
  EXPECT_EQ(s::trace_line(0, s::trace_tra(4, 2, 16, 0)[0], 4, sizes), "0 irecv 3 1 32 6");
  EXPECT_EQ(s::trace_line(0, s::trace_tra(4, 2, 16, 0)[1], 4, sizes), "0 isend 1 1 32 6");
  EXPECT_EQ(s::trace_line(0, {TraceOp::sendrecv, false, 1, 3, 32, 32}, 4, sizes), "0 sendRecv 32 1 32 3 6 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::isend, false, 5, -1, 40, 0}, 8, sizes), "2 isend 5 1 40 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::irecv, false, -1, 7, 40, 0}, 8, sizes), "2 irecv 7 1 40 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::recv, true, -1, 1, 8, 0}, 8, sizes), "2 recv 1 1 8 6");
  EXPECT_EQ(s::trace_line(2, {TraceOp::waitall}, 8, sizes), "2 waitall");
}
