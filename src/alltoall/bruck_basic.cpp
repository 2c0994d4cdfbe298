// Basic Bruck (Bruck et al. 1997; as surveyed in Fan et al., "Optimizing the
// Bruck algorithm for non-uniform all-to-all communication", section 2.1):
// initial rotation R[i] = S[(p+i)%P] into a working array, ceil(log2 P)
// steps sending every block whose k-th bit is set to p + 2^k, then the final
// inverse rotation into the receive buffer.  K = ceil(log2 P), D = TRA's D at
// r = 2; cost K*alpha + D*n*beta + 2*P*n copies.  Scratch P*n bytes for the
// working array plus, without dt, two buffers of ceil(P/2) blocks.
// Knob dt (default 0): dt=1 moves each step's blocks with a cached hindexed
// datatype (MPI_Sendrecv_replace) instead of memcpy packing.
#include "alltoall/working_array.hpp"
#include "core/row.hpp"

namespace a2a::detail {

using schedule::mod;

Task<Result> bruck_basic(const UniformCall& c, const Params& prm) {
  const int P = c.P(), p = c.rank();
  const MPI_Aint n = static_cast<MPI_Aint>(c.bs);
  Scratch::Frame frame(c.work());  // the working array, held while the engine runs
  Scratch::Region working;
  if (!frame.take({&working})) co_return MPI_ERR_INTERN;
  char* W = c.work().get(working, P * c.bs, c.stats);
  for (int i = 0; i < P; ++i) std::memcpy(W + i * n, c.send_block(mod(p + i, P)), c.bs);
  const int rc = co_await run_working_array(c, W, n, 0, c.ctx.tra_steps(2), +1, prm.as<DtKnobs>().dt, "bruck-basic");
  if (rc != MPI_SUCCESS) co_return rc;
  for (int i = 0; i < P; ++i) std::memcpy(c.recv_block(mod(p - i, P)), W + i * n, c.bs);
  co_return MPI_SUCCESS;
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo bruck_basic_row() {
  return {.name = "bruck-basic",
          .collective = Collective::alltoall,
          .summary = "Bruck: rotation, log2 P steps, inverse rotation",
          .params = {dt_knob()},
          .knobs = Params(DtKnobs{}),
          .uniform = bruck_basic};
}

}  // namespace a2a::detail
