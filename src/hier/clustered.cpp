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
// this rank is cached per communicator).  No knobs.
#include "schedule/clustered.hpp"
#include "uniform/uniform.hpp"

namespace a2a::detail {

namespace {

template <class Call>
int run(const Call& c, const Params&) {
  for (const auto& step : c.ctx.clustered_plan()) {
    const int v = step.peer;
    if (v == c.rank()) {
      c.copy_self();
      continue;
    }
    Requests reqs(2);
    if (step.recv) reqs.recv(c.recv_block(v), c.recv_bytes(v), v, c.comm());
    if (step.send) reqs.send(c.send_block(v), c.send_bytes(v), v, c.comm(), c.stats);
    if (const int rc = reqs.wait_all()) return rc;
    if (step.send) c.count_round(1);
  }
  return MPI_SUCCESS;
}

}  // namespace

Result clustered(const UniformCall& c, const Params& prm) { return run(c, prm); }
Result clustered(const VarCall& c, const Params& prm) { return run(c, prm); }

}  // namespace a2a::detail
