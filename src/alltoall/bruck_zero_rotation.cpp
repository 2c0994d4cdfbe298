// Zero-rotation Bruck (Fan et al., "Optimizing the Bruck algorithm for
// non-uniform all-to-all communication", section 2.1): modified Bruck's
// mirrored direction (send to p - 2^k, receive from p + 2^k) removes the final
// rotation, and a rotation index (slot i reads send block (p - i)%P) removes
// the initial one.  K = ceil(log2 P) rounds, D = TRA's D at r = 2; cost
// K*alpha + D*n*beta.  Scratch 2 * ceil(P/2) * n bytes.  No knobs.
#include "alltoall/store_forward.hpp"
#include "core/row.hpp"

namespace a2a::detail {

Task<Result> bruck_zero_rotation(const UniformCall& c, const Params&) {
  return run_zero_rotation(c, c.ctx.tra_steps(2), -1);  // a plain function: tra.cpp says why
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo bruck_zero_rotation_row() {
  return {.name = "bruck-zero-rotation",
          .collective = Collective::alltoall,
          .summary = "Bruck with a rotation index, no rotation phase at all",
          .uniform = bruck_zero_rotation};
}

}  // namespace a2a::detail
