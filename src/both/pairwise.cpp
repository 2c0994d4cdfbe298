// Pairwise: P-1 blocking exchanges, step i sending to rank+i while
// receiving from rank-i, so one message per rank is in flight.
// K = D = P-1, cost (P-1)*(alpha + n*beta).  No scratch, no knobs.
#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

using schedule::mod;

namespace {

template <class Call>
Task<Result> run(const Call& c, const Params&) {
  const int P = c.P(), p = c.rank();
  c.copy_self();
  for (const auto& s : c.ctx.linear_steps()) {
    const int src = mod(p - s.distance, P), dst = mod(p + s.distance, P);
    const int rc = co_await exchanged(c.send_block(dst), c.send_bytes(dst), dst, c.recv_block(src), c.recv_bytes(src),
                                      src, c.comm(), c.stats);
    if (rc != MPI_SUCCESS) co_return rc;
    c.count_round(1);
  }
  co_return MPI_SUCCESS;
}

}  // namespace

Task<Result> pairwise(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> pairwise(const VarCall& c, const Params& prm) { return run(c, prm); }

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& call, const Params&) {
  const int P = static_cast<int>(call.layout.node_of.size());
  const long long bs = call.bytes;
  return worst_rank(call, [&](RankClock& c, int p) {
    c.copy(bs);
    for (int i = 1; i < P; ++i) {
      c.shifted((p + i) % P, bs);
      c.end_round();
    }
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo pairwise_row(Collective coll) {
  return row_of(coll,
                {.name = "pairwise",
                 .summary = "P-1 blocking exchanges, to rank+i from rank-i",
                 .cost = cost},
                pairwise, pairwise);
}

}  // namespace a2a::detail
