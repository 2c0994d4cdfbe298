#include "uniform/store_forward.hpp"

#include <algorithm>

namespace a2a::detail {

using schedule::mod;

Task<int> run_zero_rotation(const UniformCall& c, const std::vector<schedule::Step>& steps, int dir) {
  const int P = c.P(), p = c.rank();
  c.copy_self();
  size_t widest = 0;
  for (const auto& s : steps) widest = std::max(widest, s.slots.size());
  Scratch& work = c.work();
  Scratch::Frame frame(work);
  Scratch::Region out_region, in_region;
  if (!frame.take({&out_region, &in_region})) co_return MPI_ERR_INTERN;
  // Which slots already left the send buffer: blocking calls use the
  // context's flags; an operation its own, after its landing blocks.
  const bool blocking = blocking_now();
  char* out = work.get(out_region, widest * c.bs, c.stats);
  char* in = work.get(in_region, widest * c.bs + (blocking ? 0 : static_cast<size_t>(P)), c.stats);
  if (blocking) c.ctx.slot_flags.resize(P);
  char* moved = blocking ? c.ctx.slot_flags.data() : in + widest * c.bs;
  std::memset(moved, 0, static_cast<size_t>(P));
  auto home = [&](int i) { return c.recv_block(mod(p - static_cast<long long>(dir) * i, P)); };
  for (const auto& s : steps) {
    size_t off = 0;
    for (int i : s.slots) {
      const char* from = moved[i] ? home(i) : c.send_block(mod(p + static_cast<long long>(dir) * i, P));
      std::memcpy(out + off, from, c.bs);
      off += c.bs;
    }
    const int dst = mod(p + static_cast<long long>(dir) * s.distance, P);
    const int src = mod(p - static_cast<long long>(dir) * s.distance, P);
    if (const int rc = co_await exchanged(out, off, dst, in, off, src, c.comm(), c.stats)) co_return rc;
    off = 0;
    for (int i : s.slots) {
      std::memcpy(home(i), in + off, c.bs);
      moved[i] = 1;
      off += c.bs;
    }
    c.count_round(s.slots.size());
  }
  co_return MPI_SUCCESS;
}

}  // namespace a2a::detail
