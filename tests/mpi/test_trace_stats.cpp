// The replay traces (src/schedule/trace.hpp) against the real calls: per
// rank, the data messages, payload bytes and what leaves the node that a
// trace holds equal A2A_Last_stats of the same call (run with A2A_NODE_SIZE
// for virtual nodes; the traces assume nodes of consecutive ranks).
#include <algorithm>
#include <cstdlib>

#include "harness.hpp"
#include "schedule/trace.hpp"
#include "workload/workload.hpp"

namespace s = a2a::detail::schedule;

namespace {

struct World {
  int P = 1, rank = 0, Q = 1;
  World() {
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char* q = std::getenv("A2A_NODE_SIZE");
    Q = q ? std::atoi(q) : P;
  }
};

s::TraceTotals stats_totals() {
  A2A_Stats st;
  A2A_Last_stats(&st);
  return {st.messages, st.bytes_sent, 0, st.inter_node_messages, st.inter_node_bytes};
}

long long stats_waits() {
  A2A_Stats st;
  A2A_Last_stats(&st);
  return st.waits;
}

// The trace's waits: a2a's batches (a waitall each).
long long waitalls(const s::Trace& t) {
  return std::count_if(t.begin(), t.end(), [](const s::TraceOp& op) { return op.kind == s::TraceOp::waitall; });
}

s::TraceTotals without_meta(s::TraceTotals t) {
  t.meta_bytes = 0;
  return t;
}

// A2A_Alltoallv on MPI_COMM_WORLD with a seeded workload's blocks (bytes as counts).
struct SeededAlltoallv {
  const World& w;
  a2a::workload::Workload wl;
  std::string err;
  bool parsed;
  s::BlockBytes bytes = [this](int src, int dst) { return a2a::workload::count(wl, src, dst, w.P); };
  std::vector<int> sc, sd, rc, rd;
  std::vector<char> sb, rb;

  SeededAlltoallv(const World& world, const char* workload)
      : w(world), parsed(a2a::workload::parse(workload, wl, err)), sc(w.P), sd(w.P), rc(w.P), rd(w.P) {
    // `bytes` reads this object's workload: no copies
    if (!parsed) return;
    for (int i = 0; i < w.P; ++i) sc[i] = static_cast<int>(bytes(w.rank, i)), rc[i] = static_cast<int>(bytes(i, w.rank));
    for (int i = 1; i < w.P; ++i) sd[i] = sd[i - 1] + sc[i - 1], rd[i] = rd[i - 1] + rc[i - 1];
    sb.resize(sd[w.P - 1] + sc[w.P - 1] + 1), rb.resize(rd[w.P - 1] + rc[w.P - 1] + 1);
  }
  SeededAlltoallv(const SeededAlltoallv&) = delete;
  int operator()(const std::string& spec) {
    return A2A_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_BYTE, rb.data(), rc.data(), rd.data(), MPI_BYTE,
                         MPI_COMM_WORLD, spec.c_str());
  }
};

}  // namespace

TEST(Trace, UniformTracesCountWhatTheCallsSend) {
  const World w;
  const long long S = 24;
  std::vector<char> sb(S * w.P), rb(S * w.P);
  for (int r = 2; r <= w.P + 1; ++r)
    for (int ports : {0, 1, 2}) {
      const std::string spec = "tra:radix=" + std::to_string(r) + (ports ? ",ports=" + std::to_string(ports) : "");
      ASSERT_EQ(A2A_Alltoall(sb.data(), S, MPI_BYTE, rb.data(), S, MPI_BYTE, MPI_COMM_WORLD, spec.c_str()),
                MPI_SUCCESS);
      const auto t = s::trace_tra(w.P, r, S, w.rank, ports);
      EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(t, w.rank, w.Q))) << spec;
      EXPECT_EQ(stats_waits(), waitalls(t)) << spec;
    }
  const int N = w.P / w.Q;
  for (int r1 = 2; r1 <= std::max(2, w.Q); ++r1)
    for (int r2 = 2; r2 <= std::max(2, N); ++r2)
      for (int ports : {0, 1}) {
        const std::string spec = "tra2:radix-intra=" + std::to_string(r1) + ",radix-inter=" + std::to_string(r2) +
                                 (ports ? ",ports-intra=1,ports-inter=1" : "");
        ASSERT_EQ(A2A_Alltoall(sb.data(), S, MPI_BYTE, rb.data(), S, MPI_BYTE, MPI_COMM_WORLD, spec.c_str()),
                  MPI_SUCCESS);
        const auto t = s::trace_tra2(w.P, w.Q, r1, r2, S, w.rank, ports, ports);
        EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(t, w.rank, w.Q))) << spec;
        EXPECT_EQ(stats_waits(), waitalls(t)) << spec;
      }
}

TEST(Trace, TunaHierTraceCountsWhatTheCallSends) {
  const World w;
  SeededAlltoallv call(w, "uniform:max=40,seed=3");
  ASSERT_TRUE(call.parsed) << call.err;
  for (const char* variant : {"coalesced", "staggered"})
    for (int r : {2, 3})
      for (int batch : {1, 32})
        for (int ports : {0, 1}) {
        const std::string spec = std::string("tuna-hier:variant=") + variant + ",radix=" + std::to_string(r) +
                                 ",block=" + std::to_string(batch) + (ports ? ",ports=1" : "");
        ASSERT_EQ(call(spec), MPI_SUCCESS);
        const auto node = s::trace_tuna_hier(w.P, w.Q, r, batch, variant[0] == 's', call.bytes, w.rank / w.Q, ports);
        EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(node[w.rank % w.Q], w.rank, w.Q))) << spec;
      }
}

TEST(Trace, FlatNonUniformTracesCountWhatTheCallsSend) {
  const World w;
  SeededAlltoallv call(w, "power-law:max=40,exponent=1.5,seed=5");
  ASSERT_TRUE(call.parsed) << call.err;
  const auto& bytes = call.bytes;
  for (int r = 2; r <= w.P + 1; ++r)
    for (int ports : {0, 1, 2}) {
      const std::string spec = "tuna:radix=" + std::to_string(r) + (ports ? ",ports=" + std::to_string(ports) : "");
      ASSERT_EQ(call(spec), MPI_SUCCESS);
      const auto t = s::trace_tuna(w.P, w.Q, r, bytes, ports);
      EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(t[w.rank], w.rank, w.Q))) << spec;
      EXPECT_EQ(stats_waits(), waitalls(t[w.rank])) << spec;
    }
  ASSERT_EQ(call("two-phase-bruck"), MPI_SUCCESS);
  EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(s::trace_tuna(w.P, w.Q, 2, bytes)[w.rank], w.rank, w.Q)));
  ASSERT_EQ(call("padded-bruck"), MPI_SUCCESS);
  EXPECT_EQ(stats_totals(), without_meta(s::trace_totals(s::trace_padded_bruck(w.P, w.Q, bytes)[w.rank], w.rank, w.Q)));
}
