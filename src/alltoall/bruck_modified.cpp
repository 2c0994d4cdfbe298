// Modified Bruck (Traff et al. 2014, "Implementing a classic: zero-copy
// all-to-all communication with MPI datatypes"; section 2.1 of Fan et al.):
// sending to p - 2^k and receiving from p + 2^k lets the receive buffer itself
// be the working array with slot i at R[(i+p)%P], so after the initial
// rotation R[j] = S[(2p-j)%P] the last step leaves every block in place: no
// final rotation.  K = ceil(log2 P), D = TRA's D at r = 2; cost
// K*alpha + D*n*beta + P*n copies.  Scratch, without dt, two buffers of
// ceil(P/2) blocks; none with dt.
// Knob dt (default 0): dt=1 moves each step's blocks with a cached hindexed
// datatype (MPI_Sendrecv_replace) instead of memcpy packing.
#include "alltoall/working_array.hpp"
#include "core/row.hpp"

namespace a2a::detail {

using schedule::mod;

Task<Result> bruck_modified(const UniformCall& c, const Params& prm) {
  const int P = c.P(), p = c.rank();
  for (int j = 0; j < P; ++j) std::memcpy(c.recv_block(j), c.send_block(mod(2LL * p - j, P)), c.bs);
  co_return co_await run_working_array(c, c.recv, c.rstride, p, c.ctx.tra_steps(2), -1, prm.as<DtKnobs>().dt, "bruck-modified");
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo bruck_modified_row() {
  return {.name = "bruck-modified",
          .collective = Collective::alltoall,
          .summary = "Bruck without the final rotation",
          .params = {dt_knob()},
          .knobs = Params(DtKnobs{}),
          .uniform = bruck_modified};
}

}  // namespace a2a::detail
