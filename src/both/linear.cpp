// Linear all-to-all as Open MPI's basic linear algorithm: every receive
// posted (from rank+1 upward), then every send (to rank-1 downward), one
// wait.  Each block travels once, straight to its destination: K = D = P-1,
// cost (P-1)*alpha + (P-1)*n*beta with all messages in flight at once.
// No scratch, no knobs.
#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "core/row.hpp"

namespace a2a::detail {

using schedule::mod;

namespace {

template <class Call>
Task<Result> run(const Call& c, const Params&) {
  const int P = c.P(), p = c.rank();
  c.copy_self();
  const auto& steps = c.ctx.linear_steps();
  Requests reqs(2 * steps.size());
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {  // from rank+1 upward
    const int src = mod(p - s->distance, P);
    reqs.recv(c.recv_block(src), c.recv_bytes(src), src, c.comm());
  }
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {  // to rank-1 downward
    const int dst = mod(p + s->distance, P);
    reqs.send(c.send_block(dst), c.send_bytes(dst), dst, c.comm(), c.stats);
    c.count_round(1);
  }
  co_return co_await wait(reqs, c.stats);
}

}  // namespace

Task<Result> linear(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> linear(const VarCall& c, const Params& prm) { return run(c, prm); }

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo linear_row(Collective coll) {
  return row_of(coll,
                {.name = "linear",
                 .summary = "Open MPI basic linear: all Irecv, then all Isend, one wait"},
                linear, linear);
}

}  // namespace a2a::detail
