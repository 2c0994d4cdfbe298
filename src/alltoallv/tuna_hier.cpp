// Hierarchical TuNA (Fan et al., "Configurable non-uniform all-to-all
// algorithms", IEEE Cluster 2024, section IV) for N nodes of Q ranks.
// Intra-node phase, implicit: the blocks of a rank form Q groups, group q'
// holding its N blocks for local index q' on every node.  One node-level
// alltoall of the block sizes (N per node-mate) tells each rank what
// arrives and how it splits; then TuNA of radix r (with its own per-round
// metadata) runs inside the node on the groups, so afterwards rank (n, q)
// holds every block of its node bound for local index q anywhere.  The
// sizes travel out of band, so no data buffer carries sizes (SMPI's shared
// buffers stay usable at scale).
// Inter-node phase, the Q-port model: rank (n, q) exchanges with (m, q) for
// every other node m, scattered with `block` requests in flight; coalesced
// sends the Q blocks for a node in one message (N-1 rounds), staggered one
// block per message ((N-1)*Q rounds).  Blocks for the own node are final
// after the first phase.  K = K_TRA(Q, r) + N-1 (coalesced) or + (N-1)*Q
// (staggered); metadata 8*N*(Q-1) (sizes) + TuNA's 8*D_TRA(Q,r) + 8.
// Scratch: the group buffers (2 * this rank's bytes), TuNA's store inside
// the node, the coalesced send buffer.  Knobs: variant (coalesced),
// radix (auto = ceil(sqrt(Q))), block (32), ports (the node
// phase's k-port form, default all, as TuNA's), intra=shm (the
// groups exchanged through the node's shared memory, src/both/shm.cpp,
// instead of TuNA; p2p where the node shares none).  Needs nodes of equal size (any
// placement); otherwise it falls back and flat TuNA runs.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "alltoallv/two_phase.hpp"
#include "schedule/hier.hpp"
#include "core/algorithm.hpp"
#include "both/shm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

// Its knobs, which its row's ParamInfo set (core/row.hpp: set_knob).
struct TunaHierKnobs {
  bool staggered = false;  // the variant (else coalesced)
  int radix_intra = 0;     // 0: auto, ceil(sqrt(Q))
  int block = 32;          // inter-node requests in flight per batch
  bool intra_shm = false;
  int ports_intra = kAllPorts;
  ShmKnobs shm;  // the intra=shm phase's, resolved by the front end
};

Task<Result> tuna(const VarCall&, const Params&);  // src/alltoallv/tuna.cpp


Task<Result> tuna_hier(const VarCall& c, const Params& prm) {
  const Topology& topo = c.ctx.topology;
  const int N = topo.nodes(), Q = static_cast<int>(topo.ranks[0].size());
  if (!schedule::equal_nodes(topo.ranks)) co_return Result::fallback();  // the same on every rank
  CommContext *node_ctx = nullptr, *port_ctx = nullptr;
  if (const int rc = c.ctx.node_parts(node_ctx, port_ctx)) co_return rc;
  const TunaHierKnobs& knobs = prm.as<TunaHierKnobs>();
  ShmTurn turn;  // taken now: the size exchange below may wait
  if (knobs.intra_shm)
    if (const int rc = shm_reserve(*node_ctx, knobs.shm, turn)) co_return rc;
  const int n = topo.node_of[c.rank()];
  const int r = schedule::phase_radix(knobs.radix_intra ? knobs.radix_intra : schedule::ceil_sqrt(Q), Q);
  const bool coalesced = !knobs.staggered;
  c.stats.named_from = 0;
  std::snprintf(c.stats.algorithm, sizeof c.stats.algorithm, "tuna-hier:variant=%s,radix=%d,block=%d%s%s",
                coalesced ? "coalesced" : "staggered", r, knobs.block, knobs.intra_shm ? ",intra=shm" : "",
                schedule::ports_name("ports", knobs.ports_intra, r).c_str());

  // Group q' = this rank's N blocks for local index q', node by node.  Each
  // node-mate learns the N sizes of the group it gets: sizes_in[qs][m] is
  // the size of the block from (n, qs) to (m, q).
  const size_t NQ = static_cast<size_t>(N) * Q;
  std::vector<long long> sizes_out(NQ), sizes_in(NQ);
  std::vector<MPI_Aint> goff(Q), roff(Q);
  std::vector<long long> gbytes(Q, 0), rbytes(Q, 0);
  for (int qd = 0; qd < Q; ++qd)
    for (int m = 0; m < N; ++m) {
      sizes_out[static_cast<size_t>(qd) * N + m] = c.sbytes[topo.ranks[m][qd]];
      gbytes[qd] += c.sbytes[topo.ranks[m][qd]];
    }
  int rc = MPI_SUCCESS;
  if (!c.plan || !c.plan->take(sizes_in.data(), NQ)) {  // a plan's start replays what its init recorded
    rc = co_await alltoall_ll(sizes_out.data(), sizes_in.data(), N, node_ctx->comm, node_ctx->tra_steps(2));
    if (rc != MPI_SUCCESS) co_return rc;
    c.stats.meta_bytes_sent += static_cast<long long>(sizeof(long long)) * N * (Q - 1);
    if (c.plan) c.plan->record(sizes_in.data(), NQ);
  }
  for (int qs = 0; qs < Q; ++qs)
    for (int m = 0; m < N; ++m) rbytes[qs] += sizes_in[static_cast<size_t>(qs) * N + m];
  std::exclusive_scan(gbytes.begin(), gbytes.end(), goff.begin(), MPI_Aint{0});
  std::exclusive_scan(rbytes.begin(), rbytes.end(), roff.begin(), MPI_Aint{0});
  Scratch::Frame frame(c.work());
  Scratch::Region groups_region, arrived_region, in_region, out_region;
  if (!frame.take({&groups_region, &arrived_region, &in_region, &out_region})) co_return MPI_ERR_INTERN;
  char* groups = c.meta_only ? nullptr : c.work().get(groups_region, static_cast<size_t>(goff[Q - 1] + gbytes[Q - 1]), c.stats);
  for (int qd = 0; qd < Q && !c.meta_only; ++qd) {
    char* data = groups + goff[qd];
    for (int m = 0; m < N; ++m) {
      const int dst = topo.ranks[m][qd];
      copy_bytes(data, c.send_block(dst), c.send_bytes(dst));
      data += c.sbytes[dst];
    }
  }
  char* arrived = c.meta_only ? nullptr : c.work().get(arrived_region, static_cast<size_t>(roff[Q - 1] + rbytes[Q - 1]), c.stats);

  const long long blocks_before = c.stats.blocks_sent;
  {
    const SubLayout layout(c.stats, *node_ctx);
    const VarCall groups_call{groups, goff.data(), gbytes.data(), arrived, roff.data(), rbytes.data(),
                              *node_ctx, c.stats, -1, c.scratch, c.plan, c.meta_only};
    const Params digits(DigitKnobs{r, knobs.ports_intra});
    Result ran = knobs.intra_shm ? co_await shm_phase(groups_call, knobs.shm, &turn) : Result::fallback();
    if (ran.fell_back()) ran = co_await tuna(groups_call, digits);  // p2p, or the node's ranks share no memory
    rc = ran.nested_code();
  }
  if (rc != MPI_SUCCESS || c.meta_only) co_return rc;  // the inter-node phase exchanges no sizes
  c.stats.blocks_sent = blocks_before + (c.stats.blocks_sent - blocks_before) * N;  // groups hold N blocks
  int err = MPI_SUCCESS;

  // arrived[qs] = the blocks from (n, qs) to (m, q), m = 0..N-1.
  std::vector<const char*> part(NQ);  // [m][qs] -> bytes for (m, q) from (n, qs)
  std::vector<long long> part_bytes(NQ);
  for (int qs = 0; qs < Q; ++qs) {
    const char* data = arrived + roff[qs];
    for (int m = 0; m < N; ++m) {
      const long long bytes = sizes_in[static_cast<size_t>(qs) * N + m];
      part[static_cast<size_t>(m) * Q + qs] = data;
      part_bytes[static_cast<size_t>(m) * Q + qs] = bytes;
      data += bytes;
    }
  }
  for (int qs = 0; qs < Q; ++qs) {  // the own node's blocks are final now
    const int src = topo.ranks[n][qs];
    const size_t got = static_cast<size_t>(part_bytes[static_cast<size_t>(n) * Q + qs]);
    // Report a size mismatch at the end: returning now would leave the other
    // ranks waiting in the inter-node phase (the two-phase engine does the same).
    if (got != c.recv_bytes(src) && err == MPI_SUCCESS) err = MPI_ERR_TRUNCATE;
    copy_bytes(c.recv_block(src), part[static_cast<size_t>(n) * Q + qs], std::min(got, c.recv_bytes(src)));
  }

  // Inter-node: with node n + i (i = 1..N-1), messages in batches of `block`.
  const auto plan = schedule::tuna_hier_inter_plan(N, Q, !coalesced);
  std::vector<size_t> in_off(N, 0), in_size(N, 0), out_size(N, 0);
  size_t in_bytes = 0;
  if (coalesced)
    for (int i = 1; i < N; ++i) {
      in_off[i] = in_bytes;
      for (int qs = 0; qs < Q; ++qs) {
        in_size[i] += c.recv_bytes(topo.ranks[(n - i + N) % N][qs]);
        out_size[i] += static_cast<size_t>(part_bytes[static_cast<size_t>((n + i) % N) * Q + qs]);
      }
      in_bytes += in_size[i];
    }
  char* in = c.work().get(in_region, in_bytes, c.stats);
  std::vector<size_t> out_off(N, 0);  // coalesced messages are packed, one region per peer node
  std::exclusive_scan(out_size.begin(), out_size.end(), out_off.begin(), size_t{0});
  char* out = c.work().get(out_region, out_off[N - 1] + out_size[N - 1], c.stats);
  for (int i = 1; coalesced && i < N; ++i) {
    size_t off = out_off[i];
    for (int qs = 0; qs < Q; ++qs) {
      const size_t k = static_cast<size_t>((n + i) % N) * Q + qs;
      copy_bytes(out + off, part[k], static_cast<size_t>(part_bytes[k]));
      off += static_cast<size_t>(part_bytes[k]);
    }
  }
  {
    const SubLayout layout(c.stats, *port_ctx);
    const size_t batch = static_cast<size_t>(knobs.block);
    for (size_t first = 0; first < plan.size(); first += batch) {
      Requests reqs(2 * batch);
      const size_t last = std::min(plan.size(), first + batch);
      for (size_t k = first; k < last; ++k) {
        const int from = (n - plan[k].offset + N) % N;
        if (coalesced) {
          reqs.recv(in + in_off[plan[k].offset], in_size[plan[k].offset], from, port_ctx->comm);
        } else {
          const int src = topo.ranks[from][plan[k].q_src];  // straight into place
          reqs.recv(c.recv_block(src), c.recv_bytes(src), from, port_ctx->comm);
        }
      }
      for (size_t k = first; k < last; ++k) {
        const int to = (n + plan[k].offset) % N;
        if (coalesced) {
          reqs.send(out + out_off[plan[k].offset], out_size[plan[k].offset], to, port_ctx->comm, c.stats);
        } else {
          const size_t idx = static_cast<size_t>(to) * Q + plan[k].q_src;
          reqs.send(part[idx], static_cast<size_t>(part_bytes[idx]), to, port_ctx->comm, c.stats);
        }
        c.count_round(coalesced ? Q : 1);
      }
      if ((rc = co_await wait(reqs, c.stats))) break;
    }
  }
  if (rc != MPI_SUCCESS) co_return rc;
  for (int i = 1; coalesced && i < N; ++i) {  // unpack what each node sent
    const int from = (n - i + N) % N;
    size_t off = in_off[i];
    for (int qs = 0; qs < Q; ++qs) {
      const int src = topo.ranks[from][qs];
      copy_bytes(c.recv_block(src), in + off, c.recv_bytes(src));
      off += c.recv_bytes(src);
    }
  }
  co_return err;
}

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  const int N = static_cast<int>(l.ranks.size()), Q = static_cast<int>(l.ranks[0].size());
  const TunaHierKnobs& k = prm.as<TunaHierKnobs>();
  const auto steps = schedule::tra_shape(Q, k.radix_intra);
  const auto plan = schedule::tuna_hier_inter_plan(N, Q, k.staggered);
  return worst_rank(c, [&](RankClock& clock, int p) {
    const auto [n, q] = place(l, p);
    if (k.intra_shm) shm_round(clock, c.m, l.ranks[n], N * c.bytes, k.shm);
    else tra_rounds(clock, steps, l.ranks[n], q, N * c.bytes, N * kMetaPerBlock, k.ports_intra);
    int posted = 0;
    for (const auto& msg : plan) {
      clock.message(l.ranks[(n + msg.offset) % N][q], (msg.q_src < 0 ? Q : 1) * c.bytes);
      if (++posted % k.block == 0) clock.end_round();
    }
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo tuna_hier_row() {
  return {.name = "tuna-hier",
          .collective = Collective::alltoallv,
          .summary = "TuNA inside each node, then the nodes exchange scattered",
          .params = {{"variant",
                      KnobKind::choice,
                      TunaHierKnobs{}.staggered ? "staggered" : "coalesced",
                      "coalesced (one message per node) or staggered (one per block)",
                      set_knob<&TunaHierKnobs::staggered>,
                      0,
                      0,
                      {"coalesced", "staggered"}},
                     {"radix",
                      KnobKind::intra_radix,
                      "auto",
                      "intra-node radix 2..Q; auto = ceil(sqrt(Q))",
                      set_knob<&TunaHierKnobs::radix_intra>,
                      0,
                      0,
                      {}},
                     block_knob("inter-node requests in flight per batch", TunaHierKnobs{}.block, set_knob<&TunaHierKnobs::block>),
                     intra_knob(set_knob<&TunaHierKnobs::intra_shm>),
                     ports_knob("ports", "radix", "node phase: TuNA exchanges of one digit in flight, 1..r-1 or all",
                                set_knob<&TunaHierKnobs::ports_intra>)},
          .knobs = Params(TunaHierKnobs{}),
          .shm_knobs = intra_shm_knobs<TunaHierKnobs>,
          .varying = tuna_hier,
          .fallback = "tuna",
          .needs = kNeedsEqualNodes,
          .cost = cost,
          .plan_meta = true};
}

}  // namespace a2a::detail
