// Padded Bruck (Fan et al., "Optimizing the Bruck algorithm for non-uniform
// all-to-all communication", section 3.1; idea from Traff et al. 2014,
// section 3.5): one allreduce finds the global largest block M, every block
// is padded to M, zero-rotation Bruck moves them as a uniform all-to-all,
// and the real bytes are extracted.  K = ceil(log2 P), D = TRA's D at r = 2,
// all of M bytes; cost (K+log2 P)*alpha + D*M*beta.  Scratch 2*P*M (padded
// buffers) + 2*ceil(P/2)*M (Bruck's rounds).  Falls back to spread-out when
// 2*P*M exceeds A2A_SCRATCH_LIMIT.  No knobs.
#include "alltoallv/padding.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

Task<Result> bruck_zero_rotation(const UniformCall&, const Params&);  // src/alltoall/bruck_zero_rotation.cpp

Task<Result> padded_bruck(const VarCall& c, const Params& prm) {
  Padded padded(c.work());
  if (const Result r = co_await pad(c, padded); !r.ok()) co_return r;
  if (padded.M == 0) co_return MPI_SUCCESS;
  const MPI_Aint M = static_cast<MPI_Aint>(padded.M);
  const UniformCall u{padded.send, M, padded.recv, M, padded.M, c.ctx, c.stats, c.scratch};
  if (const int rc = (co_await bruck_zero_rotation(u, prm)).nested_code()) co_return rc;
  unpad(c, padded);
  co_return MPI_SUCCESS;
}

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params&) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const auto steps = schedule::tra_shape(P, 2);
  const auto everyone = all_ranks(P);
  return worst_rank(c, [&](RankClock& clock, int p) {
    clock.copy(2LL * P * c.max_bytes);  // pad in, unpad out
    tra_rounds(clock, steps, everyone, p, c.max_bytes, 0, 1, true);
  });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo padded_bruck_row() {
  return {.name = "padded-bruck",
          .collective = Collective::alltoallv,
          .summary = "pad every block to the global largest, then zero-rotation Bruck",
          .varying = padded_bruck,
          .fallback = "spread-out",
          .cost = cost};
}

}  // namespace a2a::detail
