// Spread-out: Isend/Irecv with peer (rank+i)%P, i = 1..P-1, in round-robin
// order so that no rank is everyone's first target, then one wait.
// K = D = P-1, cost (P-1)*alpha + (P-1)*n*beta.  No scratch, no knobs.
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
  Requests reqs(2 * c.ctx.linear_steps().size());
  for (const auto& s : c.ctx.linear_steps()) {
    const int src = mod(p - s.distance, P), dst = mod(p + s.distance, P);
    reqs.recv(c.recv_block(src), c.recv_bytes(src), src, c.comm());
    reqs.send(c.send_block(dst), c.send_bytes(dst), dst, c.comm(), c.stats);
    c.count_round(1);
  }
  co_return co_await wait(reqs, c.stats);
}

}  // namespace

Task<Result> spread_out(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> spread_out(const VarCall& c, const Params& prm) { return run(c, prm); }

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& call, const Params&) {
  const int P = static_cast<int>(call.layout.node_of.size());
  const long long bs = call.bytes;
  return worst_rank(call, [&](RankClock& c, int p) {
    c.copy(bs);
    for (int i = 1; i < P; ++i) c.message((p + i) % P, bs);
    c.end_round();
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo spread_out_row(Collective coll) {
  return row_of(coll,
                {.name = "spread-out",
                 .summary = "Isend/Irecv with peer (rank+i)%P in round-robin order",
                 .cost = cost},
                spread_out, spread_out);
}

}  // namespace a2a::detail
