// TRA2, the two-layer tunable-radix all-to-all (Fan et al., "Configurable
// algorithms for all-to-all collectives", ISC High Performance 2024,
// section IV).  With N nodes of Q ranks,
// rank (n, q) first runs TRA of radix r1 inside its node, sending to each
// node-mate q' the N blocks bound for local index q' on every node; then
// the ranks with the same local index q form one "port" per node (the
// paper's Q-port model) and run TRA of radix r2 among the N nodes with
// super-blocks of Q blocks.  Only the second phase leaves the node:
// K = K_TRA(Q, r1) + K_TRA(N, r2) rounds, D = N*D_TRA(Q, r1) + Q*D_TRA(N, r2)
// blocks, of which Q*D_TRA(N, r2) go to other nodes.  For P = 8, Q = 4,
// r = 2 a node sends 4 inter-node messages to the other where TRA sends 7.
// Knobs: radix-intra (default ceil(sqrt(Q))), radix-inter (default N, the
// paper's best: one round per peer node), ports-intra and ports-inter (each
// phase's k-port form, default all: TRA's, uniform/tra.cpp; docs/simulation.md
// "The k-port form", tables (p)-(r)), intra=shm (the intra-node phase
// through the node's shared memory, src/both/shm.cpp: one flag wait
// instead of K_TRA(Q, r1) rounds; p2p where the node shares none).  Needs nodes of equal size (any
// placement); otherwise it falls back and flat TRA runs.  Scratch 2*P*n
// bytes (pack/transpose and landing) plus the two TRA phases'.
#include <cstdio>

#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "both/shm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

// Its knobs, which its row's ParamInfo set (core/row.hpp: set_knob).
struct Tra2Knobs {
  int radix_intra = 0, radix_inter = 0;  // 0: auto, resolved against the layout
  bool intra_shm = false;
  int ports_intra = kAllPorts, ports_inter = kAllPorts;
  ShmKnobs shm;  // the intra=shm phase's, resolved by the front end
};

Task<Result> tra(const UniformCall&, const Params&);  // src/alltoall/tra.cpp

namespace {

// One TRA phase on a sub-communicator, its stats folded into the call's:
// rounds as they are, blocks scaled by the super-block size.
Task<int> phase(const UniformCall& c, ShmKnobs shm, CommContext& sub, const char* send, char* recv,
                size_t block, int radix, int ports, long long scale, bool through_shm = false) {
  Stats& st = c.stats;
  const long long blocks_before = st.blocks_sent;
  const SubLayout layout(st, sub);
  const UniformCall u{send, static_cast<MPI_Aint>(block), recv, static_cast<MPI_Aint>(block), block, sub, st, c.scratch};
  const Params digits(DigitKnobs{schedule::phase_radix(radix, sub.size), ports});
  Result r = through_shm ? co_await shm_phase(u, shm) : Result::fallback();
  if (r.fell_back()) r = co_await tra(u, digits);  // p2p, or the node's ranks share no memory
  const int rc = r.nested_code();
  st.blocks_sent = blocks_before + (st.blocks_sent - blocks_before) * scale;
  co_return rc;
}

}  // namespace

Task<Result> tra2(const UniformCall& c, const Params& prm) {
  const Topology& topo = c.ctx.topology;
  const int N = topo.nodes();
  const int Q = static_cast<int>(topo.ranks[0].size());
  if (!schedule::equal_nodes(topo.ranks)) co_return Result::fallback();  // the same on every rank
  CommContext *node_ctx = nullptr, *port_ctx = nullptr;
  if (const int rc = c.ctx.node_parts(node_ctx, port_ctx)) co_return rc;
  const Tra2Knobs& k = prm.as<Tra2Knobs>();
  const int r1 = k.radix_intra ? std::min(k.radix_intra, Q) : static_cast<int>(schedule::ceil_sqrt(Q));
  const int r2 = k.radix_inter ? std::min(k.radix_inter, N) : N;
  c.stats.named_from = 0;
  std::snprintf(c.stats.algorithm, sizeof c.stats.algorithm, "tra2:radix-intra=%d,radix-inter=%d%s%s%s",
                std::max(2, r1), std::max(2, r2), k.intra_shm ? ",intra=shm" : "",
                schedule::ports_name("ports-intra", k.ports_intra, std::max(2, r1)).c_str(),
                schedule::ports_name("ports-inter", k.ports_inter, std::max(2, r2)).c_str());

  const size_t bs = c.bs, P = static_cast<size_t>(c.P());
  Scratch::Frame frame(c.work());
  Scratch::Region packed, landing;
  if (!frame.take({&packed, &landing})) co_return MPI_ERR_INTERN;
  char* a = c.work().get(packed, P * bs, c.stats);   // pack, later the transpose
  char* b = c.work().get(landing, P * bs, c.stats);  // landing of each phase
  using schedule::tra2_node_slot;
  using schedule::tra2_port_slot;
  for (int qd = 0; qd < Q; ++qd)
    for (int m = 0; m < N; ++m) std::memcpy(a + tra2_node_slot(qd, m, N) * bs, c.send_block(topo.ranks[m][qd]), bs);
  if (const int rc = co_await phase(c, k.shm, *node_ctx, a, b, N * bs, r1, k.ports_intra, N, k.intra_shm)) co_return rc;
  // Super-block qs of b came from node-mate qs: regroup by destination node.
  for (int m = 0; m < N; ++m)
    for (int qs = 0; qs < Q; ++qs) std::memcpy(a + tra2_port_slot(m, qs, Q) * bs, b + tra2_node_slot(qs, m, N) * bs, bs);
  if (const int rc = co_await phase(c, k.shm, *port_ctx, a, b, Q * bs, r2, k.ports_inter, Q)) co_return rc;
  // Port slot (m, qs) of b now holds the block from (m, qs) to this rank.
  for (int m = 0; m < N; ++m)
    for (int qs = 0; qs < Q; ++qs) std::memcpy(c.recv_block(topo.ranks[m][qs]), b + tra2_port_slot(m, qs, Q) * bs, bs);
  co_return MPI_SUCCESS;
}

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  const int P = static_cast<int>(l.node_of.size());
  const int N = static_cast<int>(l.ranks.size()), Q = static_cast<int>(l.ranks[0].size());
  const Tra2Knobs& k = prm.as<Tra2Knobs>();
  const auto node_steps = schedule::tra_shape(Q, k.radix_intra), port_steps = schedule::tra_shape(N, k.radix_inter);
  return worst_rank(c, [&](RankClock& clock, int p) {
    const auto [n, q] = place(l, p);
    if (k.intra_shm) shm_round(clock, c.m, l.ranks[n], N * c.bytes, k.shm);
    else tra_rounds(clock, node_steps, l.ranks[n], q, N * c.bytes, 0, k.ports_intra);
    clock.copy(static_cast<long long>(P) * c.bytes);  // regroup by destination node
    tra_rounds(clock, port_steps, port_of(l, q), n, Q * c.bytes, 0, k.ports_inter);
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo tra2_row() {
  return {.name = "tra2",
          .collective = Collective::alltoall,
          .summary = "two-layer TRA: intra-node rounds, then inter-node rounds between nodes",
          .params = {{"radix-intra",
                      KnobKind::intra_radix,
                      "auto",
                      "2..Q; auto = ceil(sqrt(Q))",
                      set_knob<&Tra2Knobs::radix_intra>,
                      0,
                      0,
                      {}},
                     {"radix-inter",
                      KnobKind::inter_radix,
                      "auto",
                      "2..N; auto = N",
                      set_knob<&Tra2Knobs::radix_inter>,
                      0,
                      0,
                      {}},
                     intra_knob(set_knob<&Tra2Knobs::intra_shm>),
                     ports_knob("ports-intra", "radix-intra",
                                "node phase: exchanges of one digit in flight, 1..r1-1 or all",
                                set_knob<&Tra2Knobs::ports_intra>),
                     ports_knob("ports-inter", "radix-inter",
                                "node-to-node phase: exchanges of one digit in flight, 1..r2-1 or all",
                                set_knob<&Tra2Knobs::ports_inter>)},
          .knobs = Params(Tra2Knobs{}),
          .shm_knobs = intra_shm_knobs<Tra2Knobs>,
          .uniform = tra2,
          .fallback = "tra",
          .needs = kNeedsEqualNodes,
          .cost = cost};
}

}  // namespace a2a::detail
