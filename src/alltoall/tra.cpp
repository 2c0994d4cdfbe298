// TRA, tunable-radix Bruck (Fan et al., "Configurable algorithms for
// all-to-all collectives", ISC High Performance 2024).
// Block indices are written in base r with w = ceil(log_r P) digits; round
// (x, z), 0 <= x < w, 1 <= z < r, sends every block whose x-th digit is z to
// rank p + z*r^x.  Rounds K = w(r-1) - floor((r^w - P)/r^(w-1)) (prop. 3),
// blocks D from proposition 4; cost K*alpha + D*n*beta.  r = 2 is binary
// Bruck, r = P the linear extreme (K = D = P-1).
// Knobs: radix (default auto = ceil(sqrt(P)), the paper's optimum; a
// radix above P runs as P) and ports, the k-port form (Jocksch et al.;
// the authors' own general code, MPICH's k_brucks): a digit's rounds move
// disjoint blocks, so B of them fly together and are waited for once,
// sum over digits of ceil(rounds/B) waits W; K and D do not change, the
// cost becomes W*alpha + (K-W)*o + D*n*beta (o: a message's injection
// overhead, what the cost model charges).  B = 1 is
// the paper's one round at a time.  Default all (B = r-1): the faster of
// the two wherever latency counts and within 1.01 of B = 1 where
// bandwidth does (SimGrid, docs/simulation.md "The k-port form", tables
// (p)-(r)).  Runs on the zero-rotation engine: no initial or final rotation;
// scratch twice the largest batch's blocks, and its requests.
#include "alltoall/store_forward.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

// A plain function returning the engine's task: a coroutine here would
// only forward it (a frame, a resumption and a destruction per call).
Task<Result> tra(const UniformCall& c, const Params& prm) {
  const DigitKnobs& k = prm.as<DigitKnobs>();
  return run_zero_rotation(c, c.ctx.tra_steps(k.radix), +1, k.ports);
}

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const DigitKnobs& k = prm.as<DigitKnobs>();
  const auto steps = schedule::tra_shape(P, k.radix);
  const auto everyone = all_ranks(P);
  return worst_rank(c, [&](RankClock& clock, int p) {
    tra_rounds(clock, steps, everyone, p, c.bytes, 0, k.ports, true);
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo tra_row() {
  return {.name = "tra",
          .collective = Collective::alltoall,
          .summary = "tunable-radix Bruck, K = w(r-1) - floor((r^w-P)/r^(w-1)) rounds",
          .params = {digit_radix_knob(), digit_ports_knob()},
          .knobs = Params(DigitKnobs{}),
          .uniform = tra,
          .cost = cost};
}

}  // namespace a2a::detail
