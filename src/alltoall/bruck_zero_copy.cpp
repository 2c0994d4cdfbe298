// Zero-copy Bruck (Traff et al. 2014, "Implementing a classic"; section 2.1 of
// Fan et al.): modified Bruck's layout (slot i at position (i+p)%P) kept in
// two arrays, the receive buffer R and a scratch array T.  A slot with b hops
// left lives in R when b is even and in T when b is odd, so every step reads
// its blocks from one array and receives them straight into the other at the
// same positions, and the last hop lands in R: received data is never copied.
// K = ceil(log2 P), D = TRA's D at r = 2; cost K*alpha + D*n*beta.
// Scratch P*n bytes for T plus, without dt, one send buffer of ceil(P/2)
// blocks.  The receive side is always an hindexed datatype over the
// destination blocks; knob dt (default 0): dt=1 also sends through a datatype
// instead of combining blocks from R and T with memcpy.  Datatypes hold
// absolute addresses, so they are built per call (one per step).
#include <algorithm>

#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"
#include "core/row.hpp"

namespace a2a::detail {

using schedule::mod;

Task<Result> bruck_zero_copy(const UniformCall& c, const Params& prm) {
  const bool dt = prm.as<DtKnobs>().dt;
  const int P = c.P(), p = c.rank();
  const auto& steps = c.ctx.tra_steps(2);
  const auto hops = schedule::remaining_hops(P, steps);
  std::vector<int> total(P, 0);
  for (const auto& s : steps)
    for (int i : s.slots) ++total[i];

  Scratch::Frame frame(c.work());
  Scratch::Region store, staging;
  if (!frame.take({&store, &staging})) co_return MPI_ERR_INTERN;
  char* T = c.work().get(store, P * c.bs, c.stats);
  auto block = [&](int hops_left, int i) -> char* {
    const int j = mod(static_cast<long long>(i) + p, P);
    return hops_left % 2 == 0 ? c.recv_block(j) : T + static_cast<size_t>(j) * c.bs;
  };
  for (int i = 0; i < P; ++i) std::memcpy(block(total[i], i), c.send_block(mod(static_cast<long long>(p) - i, P)), c.bs);

  size_t widest = 0;
  for (const auto& s : steps) widest = std::max(widest, s.slots.size());
  char* out = dt ? nullptr : c.work().get(staging, widest * c.bs, c.stats);

  for (size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    std::vector<MPI_Aint> from, to;
    for (size_t j = 0; j < s.slots.size(); ++j) {
      from.push_back(address(block(hops[k][j], s.slots[j])));
      to.push_back(address(block(hops[k][j] - 1, s.slots[j])));
    }
    OwnedType rtype, stype;
    if (const int rc = make_blocks_type(c.bs, to, rtype.out())) co_return rc;
    const int dst = mod(static_cast<long long>(p) - s.distance, P), src = mod(static_cast<long long>(p) + s.distance, P);
    Requests reqs;
    reqs.recv_typed(MPI_BOTTOM, rtype.get(), src, c.comm());
    const size_t bytes = s.slots.size() * c.bs;
    int rc = MPI_SUCCESS;
    if (dt) {
      rc = make_blocks_type(c.bs, from, stype.out());
    } else {  // one contiguous block, so both sides stay single messages of any size
      for (size_t j = 0; j < s.slots.size(); ++j)
        std::memcpy(out + j * c.bs, block(hops[k][j], s.slots[j]), c.bs);
      rc = make_blocks_type(bytes, {address(out)}, stype.out());
    }
    if (rc != MPI_SUCCESS) co_return rc;
    reqs.send_typed(MPI_BOTTOM, stype.get(), bytes, dst, c.comm(), c.stats);
    if (const int rc = co_await wait(reqs, c.stats)) co_return rc;
    c.count_round(s.slots.size());
  }
  co_return MPI_SUCCESS;
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo bruck_zero_copy_row() {
  return {.name = "bruck-zero-copy",
          .collective = Collective::alltoall,
          .summary = "Bruck alternating two buffers, received data never copied",
          .params = {dt_knob()},
          .knobs = Params(DtKnobs{}),
          .uniform = bruck_zero_copy};
}

}  // namespace a2a::detail
