// The 1-factor algorithm for any P (J. L. Traff, "Efficient all-to-all
// communication on clusters of SMP nodes", section 2): round i pairs rank u
// with (i - u) mod P, the self-loop round is the local copy, and in each pair
// the lower rank sends first, so every rank talks to one peer at a time (the
// single-ported model).  K = D = P-1, cost (P-1)*(2*alpha + n*beta) with the
// two directions serialised.  For alltoall and alltoallv (empty blocks are
// not sent).  No scratch, no knobs.  It is what `clustered` reduces to with
// one rank per node.
#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

namespace {

template <class Call>
Task<Result> run(const Call& c, const Params&) {
  const int P = c.P(), u = c.rank();
  for (int i = 0; i < P; ++i) {
    const int v = schedule::factor_partner(u, i, P);
    if (v == u) {
      c.copy_self();
      continue;
    }
    Requests first(2), second(2);
    if (u < v) {
      first.send(c.send_block(v), c.send_bytes(v), v, c.comm(), c.stats);
      second.recv(c.recv_block(v), c.recv_bytes(v), v, c.comm());
    } else {
      first.recv(c.recv_block(v), c.recv_bytes(v), v, c.comm());
      second.send(c.send_block(v), c.send_bytes(v), v, c.comm(), c.stats);
    }
    if (const int rc = co_await wait(first, c.stats)) co_return rc;
    if (const int rc = co_await wait(second, c.stats)) co_return rc;
    c.count_round(1);
  }
  co_return MPI_SUCCESS;
}

}  // namespace

Task<Result> factor(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> factor(const VarCall& c, const Params& prm) { return run(c, prm); }

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& call, const Params&) {
  const int P = static_cast<int>(call.layout.node_of.size());
  const long long bs = call.bytes;
  return worst_rank(call, [&](RankClock& c, int p) {
    for (int i = 0; i < P; ++i) {
      const int peer = schedule::factor_partner(p, i, P);
      if (peer == p) c.copy(bs);
      else c.message(peer, bs);
      c.end_round();
    }
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo factor_row(Collective coll) {
  return row_of(coll,
                {.name = "factor",
                 .summary = "1-factor: round i pairs u with (i-u) mod P, lower rank sends first",
                 .cost = cost},
                factor, factor);
}

}  // namespace a2a::detail
