// TuNA, tunable-radix non-uniform all-to-all (Fan et al., "Configurable
// non-uniform all-to-all algorithms", IEEE Cluster 2024, sections II-III): the
// TRA schedule of radix r (rounds (x, z) sending blocks whose x-th base-r
// digit is z to p - z*r^x) with a two-phase exchange per round (block sizes,
// then blocks).  K and D equal TRA's closed forms; metadata 8*D bytes; cost
// 2K*alpha + (8*D + data)*beta.  Forwarded blocks wait in the paper's tight
// store of P-(K+1) places of the global largest block M (direct blocks and
// the own block never do), mapped by t = o - 1 - dx*(r-1) - dz.
// Scratch at most (P-K-1)*M + 2*W*M + 16*W bytes (W = the widest round;
// the middle term is really the largest round's bytes in and out), one
// allreduce for M.  Knobs: radix (2..P, auto = ceil(sqrt(P)), above P runs
// as P, where no store is needed at all) and ports, the k-port form as
// TRA's (uniform/tra.cpp): a batch's sizes in flight together, then its
// blocks, two waits a batch; default all, TRA's reasons (docs/simulation.md
// "The k-port form", tables (s)-(u)).
#include <algorithm>

#include "alltoallv/two_phase.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

Task<Result> tuna(const VarCall& c, const Params& prm) {
  const DigitKnobs& k = prm.as<DigitKnobs>();
  const auto& steps = c.ctx.tra_steps(k.radix);
  const long long K = static_cast<long long>(steps.size());
  const long long r = k.radix;
  co_return co_await run_two_phase(c, steps, std::max(0LL, c.P() - (K + 1)),
                                   [r](int i) { return schedule::tuna_temp_index(i, r); }, k.ports);
}

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const DigitKnobs& k = prm.as<DigitKnobs>();
  const auto steps = schedule::tra_shape(P, k.radix);
  const auto everyone = all_ranks(P);
  return worst_rank(c, [&](RankClock& clock, int p) {
    tra_rounds(clock, steps, everyone, p, c.bytes, kMetaPerBlock, k.ports, true);
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo tuna_row() {
  return {.name = "tuna",
          .collective = Collective::alltoallv,
          .summary = "tunable-radix two-phase Bruck with the tight P-(K+1) block store",
          .params = {digit_radix_knob(), digit_ports_knob()},
          .knobs = Params(DigitKnobs{}),
          .varying = tuna,
          .cost = cost,
          .plan_meta = true};
}

}  // namespace a2a::detail
