// Two-phase Bruck (Fan et al., "Optimizing the Bruck algorithm for
// non-uniform all-to-all communication", section 3.2): radix-2 Bruck where
// each of the ceil(log2 P) rounds sends the sizes of its blocks before the
// blocks, with no rotation phases and a monolithic working buffer of P places
// of the global largest block M for forwarded blocks (slot i at place i).
// K = ceil(log2 P), D = TRA's D at r = 2, metadata 8*D bytes; cost
// 2K*alpha + (8*D + data)*beta.  Scratch at most P*M + 2*W*M + 16*W bytes
// (W = ceil(P/2), the widest round), one allreduce for M.  No knobs.
#include "alltoallv/two_phase.hpp"
#include "core/row.hpp"

namespace a2a::detail {

Task<Result> two_phase_bruck(const VarCall& c, const Params&) {
  co_return co_await run_two_phase(c, c.ctx.tra_steps(2), c.P(), [](int i) { return static_cast<long long>(i); });
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo two_phase_bruck_row() {
  return {.name = "two-phase-bruck",
          .collective = Collective::alltoallv,
          .summary = "radix-2 Bruck, block sizes then blocks each round, P-block store",
          .varying = two_phase_bruck,
          .plan_meta = true};
}

}  // namespace a2a::detail
