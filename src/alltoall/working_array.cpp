#include "alltoall/working_array.hpp"

#include <algorithm>
#include <vector>

namespace a2a::detail {

using schedule::mod;

namespace {

int step_types(const UniformCall& c, TypeCache& cache, MPI_Aint stride, int shift,
               const std::vector<schedule::Step>& steps, const char* name, const std::vector<MPI_Datatype>*& out) {
  const TypeKey key{name, c.bs, stride};
  if ((out = cache.find(key))) return MPI_SUCCESS;
  std::vector<MPI_Datatype> types;
  for (const auto& s : steps) {
    std::vector<MPI_Aint> displs;
    for (int i : s.slots) displs.push_back(mod(static_cast<long long>(i) + shift, c.P()) * stride);
    types.emplace_back();
    if (const int rc = make_blocks_type(c.bs, displs, &types.back())) return rc;
  }
  out = &cache.store(key, std::move(types));
  return MPI_SUCCESS;
}

}  // namespace

Task<int> run_working_array(const UniformCall& c, char* W, MPI_Aint stride, int shift,
                            const std::vector<schedule::Step>& steps, int dir, bool dt, const char* name) {
  const int P = c.P(), p = c.rank();
  auto at = [&](int i) { return W + mod(static_cast<long long>(i) + shift, P) * stride; };
  const std::vector<MPI_Datatype>* types = nullptr;
  char *out = nullptr, *in = nullptr;
  Scratch::Frame frame(c.work());
  TypeCache own;  // an operation's own types; blocking calls reuse the context's
  if (dt) {
    if (const int rc = step_types(c, blocking_now() ? c.ctx.types : own, stride, shift, steps, name, types))
      co_return rc;
  } else {
    size_t widest = 0;
    for (const auto& s : steps) widest = std::max(widest, s.slots.size());
    Scratch::Region staging;
    if (!frame.take({&staging})) co_return MPI_ERR_INTERN;
    out = c.work().get(staging, 2 * widest * c.bs, c.stats);  // send half, receive half
    in = out + widest * c.bs;
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    const int dst = mod(p + static_cast<long long>(dir) * s.distance, P);
    const int src = mod(p - static_cast<long long>(dir) * s.distance, P);
    const size_t bytes = s.slots.size() * c.bs;
    if (dt) {
      if (const int rc = co_await exchange_replace(W, (*types)[k], bytes, dst, src, c.comm(), c.stats)) co_return rc;
    } else {
      size_t off = 0;
      for (int i : s.slots) {
        std::memcpy(out + off, at(i), c.bs);
        off += c.bs;
      }
      if (const int rc = co_await exchanged(out, bytes, dst, in, bytes, src, c.comm(), c.stats)) co_return rc;
      off = 0;
      for (int i : s.slots) {
        std::memcpy(at(i), in + off, c.bs);
        off += c.bs;
      }
    }
    c.count_round(s.slots.size());
  }
  co_return MPI_SUCCESS;
}

}  // namespace a2a::detail
