// Scattered (MPICH's batched spread-out): the spread-out peers in batches of
// `block` requests, waiting for each batch before the next, which bounds
// the messages in flight.  K = D = P-1, cost (P-1)*alpha + (P-1)*n*beta.
// Knob block (default 32, MPICH's ALLTOALL_THROTTLE).  No scratch.
#include <algorithm>

#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "core/row.hpp"

namespace a2a::detail {

// Its knobs, which its row's ParamInfo set (core/row.hpp: set_knob).
struct ScatteredKnobs {
  int block = 32;  // requests in flight per batch
};

using schedule::mod;

namespace {

template <class Call>
Task<Result> run(const Call& c, const Params& prm) {
  const int P = c.P(), p = c.rank();
  c.copy_self();
  const auto& steps = c.ctx.linear_steps();
  const size_t batch = static_cast<size_t>(prm.as<ScatteredKnobs>().block);
  for (size_t first = 0; first < steps.size(); first += batch) {
    Requests reqs(2 * batch);
    const size_t last = std::min(steps.size(), first + batch);
    for (size_t k = first; k < last; ++k) {
      const int src = mod(p - steps[k].distance, P);
      reqs.recv(c.recv_block(src), c.recv_bytes(src), src, c.comm());
    }
    for (size_t k = first; k < last; ++k) {
      const int dst = mod(p + steps[k].distance, P);
      reqs.send(c.send_block(dst), c.send_bytes(dst), dst, c.comm(), c.stats);
      c.count_round(1);
    }
    if (const int rc = co_await wait(reqs, c.stats)) co_return rc;
  }
  co_return MPI_SUCCESS;
}

}  // namespace

Task<Result> scattered(const UniformCall& c, const Params& prm) { return run(c, prm); }
Task<Result> scattered(const VarCall& c, const Params& prm) { return run(c, prm); }

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo scattered_row(Collective coll) {
  return row_of(coll,
                {.name = "scattered",
                 .summary = "MPICH batched spread-out",
                 .params = {block_knob("requests in flight per batch (>= 1)", ScatteredKnobs{}.block, set_knob<&ScatteredKnobs::block>)},
                 .knobs = Params(ScatteredKnobs{})},
                scattered, scattered);
}

}  // namespace a2a::detail
