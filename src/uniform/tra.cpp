// TRA, tunable-radix Bruck (Fan et al., "Configurable algorithms for
// all-to-all collectives", ISC High Performance 2024).
// Block indices are written in base r with w = ceil(log_r P) digits; round
// (x, z), 0 <= x < w, 1 <= z < r, sends every block whose x-th digit is z to
// rank p + z*r^x.  Rounds K = w(r-1) - floor((r^w - P)/r^(w-1)) (prop. 3),
// blocks D from proposition 4; cost K*alpha + D*n*beta.  r = 2 is binary
// Bruck, r = P the linear extreme (K = D = P-1).
// Knob: radix (default auto = ceil(sqrt(P)), the paper's optimum); a radix
// above P runs as P.  Runs on the zero-rotation engine: no initial or final
// rotation; scratch 2 * max_round_blocks * n bytes.
#include "uniform/store_forward.hpp"

namespace a2a::detail {

// A plain function returning the engine's task: a coroutine here would
// only forward it (a frame, a resumption and a destruction per call).
Task<Result> tra(const UniformCall& c, const Params& prm) {
  return run_zero_rotation(c, c.ctx.tra_steps(prm.radix), +1, prm.ports);
}

}  // namespace a2a::detail
