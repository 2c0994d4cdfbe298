// Traff's clustered, hierarchical 1-factor algorithm (J. L. Traff, "Efficient
// all-to-all communication on clusters of SMP nodes", section 3; schedule in
// src/schedule/clustered.hpp): phases retire the smallest nodes, rounds are
// the 1-factors of the remaining nodes, and a node talks to one other node at
// a time, for any node sizes and placement.  Each rank sends P-1 messages
// (K = D = P-1), P - size(own node) of them off-node; the global schedule
// takes the maximal number of messages the ranks of one node must send (15
// steps for nodes of 1, 2 and 3 ranks, the paper's figure 3).  With one rank
// per node it is the flat `factor` algorithm.  Exchanges are blocking and
// follow one global order, so they cannot deadlock.  No scratch (the plan of
// this rank is cached per communicator).  Knob intra=shm: the node-mates'
// blocks go through the node's shared memory (src/both/shm.cpp) in one
// exchange, before the steps, and the steps between node-mates are left
// out: K = 1 + P - size(own node); p2p where the node shares no memory.
#include <vector>

#include "schedule/clustered.hpp"
#include "core/algorithm.hpp"
#include "both/shm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

// Its knobs, which its row's ParamInfo set (core/row.hpp: set_knob).
struct ClusteredKnobs {
  bool intra_shm = false;  // its intra knob
  ShmKnobs shm;            // that phase's, resolved by the front end
};

namespace {

// The blocks between this rank and its node-mates through the node's shared
// memory: an alltoallv on the node communicator over the user's blocks.
// `ran` false where the node shares no memory (the same on every node-mate);
// the stats name then says so, without intra=shm.
template <class Call>
Task<int> node_mates_through_shm(const Call& c, ShmKnobs shm, bool& ran) {
  CommContext *node = nullptr, *port = nullptr;
  if (const int rc = c.ctx.node_parts(node, port)) co_return rc;
  const auto& mates = c.ctx.topology.ranks[c.ctx.topology.node_of[c.rank()]];
  const size_t Q = mates.size();
  std::vector<MPI_Aint> soff(Q), roff(Q);
  std::vector<long long> sbytes(Q), rbytes(Q);
  const char* send = c.send_block(0);
  char* recv = c.recv_block(0);
  for (size_t q = 0; q < Q; ++q) {
    soff[q] = c.send_block(mates[q]) - send;
    roff[q] = c.recv_block(mates[q]) - recv;
    sbytes[q] = static_cast<long long>(c.send_bytes(mates[q]));
    rbytes[q] = static_cast<long long>(c.recv_bytes(mates[q]));
  }
  const SubLayout layout(c.stats, *node);
  const VarCall mates_call{send, soff.data(), sbytes.data(), recv, roff.data(), rbytes.data(), *node, c.stats, -1,
                           c.scratch};
  const Result r = co_await shm_phase(mates_call, shm);
  ran = !r.fell_back();
  co_return r.code();
}

template <class Call>
Task<Result> run(const Call& c, const Params& prm) {
  const Topology& topo = c.ctx.topology;
  bool skip_mates = false;
  int err = MPI_SUCCESS;
  const ClusteredKnobs& k = prm.as<ClusteredKnobs>();
  if (k.intra_shm)
    if (const int rc = co_await node_mates_through_shm(c, k.shm, skip_mates)) {
      if (rc != MPI_ERR_TRUNCATE) co_return rc;
      err = rc;  // reported after the steps, which the other nodes wait on
    }
  for (const auto& step : c.ctx.clustered_plan()) {
    const int v = step.peer;
    if (skip_mates && topo.node_of[v] == topo.node_of[c.rank()]) continue;
    if (v == c.rank()) {
      c.copy_self();
      continue;
    }
    Requests reqs(2);
    if (step.recv) reqs.recv(c.recv_block(v), c.recv_bytes(v), v, c.comm());
    if (step.send) reqs.send(c.send_block(v), c.send_bytes(v), v, c.comm(), c.stats);
    if (const int rc = co_await wait(reqs, c.stats)) co_return rc;
    if (step.send) c.count_round(1);
  }
  co_return err;
}

}  // namespace

Task<Result> clustered(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> clustered(const VarCall& c, const Params& prm) { return run(c, prm); }

namespace {

// Traff's steps on one rank's clock; with `skip_node` the steps between
// node-mates are left out (intra=shm moved those blocks before).
void clock_steps(RankClock& c, const std::vector<schedule::PeerStep>& plan, int p, long long bs,
                 const std::vector<int>* skip_node) {
  for (const auto& s : plan) {
    if (skip_node && (*skip_node)[s.peer] == (*skip_node)[p]) continue;
    if (s.peer == p) c.copy(bs);
    else if (s.send) c.message(s.peer, bs);
    c.end_round();
  }
}

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  const ClusteredKnobs& k = prm.as<ClusteredKnobs>();
  return worst_rank(c, [&](RankClock& clock, int p) {
    if (k.intra_shm) {
      const auto [n, q] = place(l, p);
      shm_round(clock, c.m, l.ranks[n], c.bytes, k.shm);
    }
    clock_steps(clock, schedule::clustered_plan(l.ranks, p), p, c.bytes, k.intra_shm ? &l.node_of : nullptr);
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo clustered_row(Collective coll) {
  return row_of(coll,
                {.name = "clustered",
                 .summary = "Traff's hierarchical 1-factor algorithm, for nodes of any sizes",
                 .params = {intra_knob(set_knob<&ClusteredKnobs::intra_shm>)},
                 .knobs = Params(ClusteredKnobs{}),
                 .shm_knobs = intra_shm_knobs<ClusteredKnobs>,
                 .needs = kNeedsNodes,
                 .cost = cost},
                clustered, clustered);
}

}  // namespace a2a::detail
