#include "uniform/working_array.hpp"

#include <algorithm>
#include <vector>

namespace a2a::detail {

using schedule::mod;

namespace {

int step_types(const UniformCall& c, TypeCache& cache, MPI_Aint stride, const std::function<int(int)>& pos,
               const std::vector<schedule::Step>& steps, const char* name, const std::vector<MPI_Datatype>*& out) {
  const TypeKey key{name, c.bs, stride};
  if ((out = cache.find(key))) return MPI_SUCCESS;
  std::vector<MPI_Datatype> types;
  for (const auto& s : steps) {
    std::vector<MPI_Aint> displs;
    for (int i : s.slots) displs.push_back(pos(i) * stride);
    types.emplace_back();
    if (const int rc = make_blocks_type(c.bs, displs, &types.back())) return rc;
  }
  out = &cache.store(key, std::move(types));
  return MPI_SUCCESS;
}

// The step's blocks of `buf` (type t, `bytes` of data) go to dst and are
// replaced by src's.  SMPI 3.32's MPI_Sendrecv_replace overruns its own
// buffer with sparse derived types, so the simulated build receives into a
// packed copy and unpacks it into place, as a nonblocking operation does
// (the send must leave before the blocks are overwritten).
Task<int> replaced(void* buf, MPI_Datatype t, size_t bytes, int dst, int src, MPI_Comm comm) {
#ifndef A2A_SMPI
  if (blocking_now()) co_return MPI_Sendrecv_replace(buf, 1, t, dst, op_tag(), src, op_tag(), comm, MPI_STATUS_IGNORE);
#endif
  std::vector<char> packed(bytes);
  Requests r(2);
  r.note(MPI_Irecv(packed.data(), static_cast<int>(bytes), MPI_BYTE, src, op_tag(), comm, r.add()));
  r.note(MPI_Isend(buf, 1, t, dst, op_tag(), comm, r.add()));
  int rc = co_await wait(r);
  int position = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Unpack(packed.data(), static_cast<int>(bytes), &position, buf, 1, t, comm);
  co_return rc;
}

}  // namespace

Task<int> run_working_array(const UniformCall& c, char* W, MPI_Aint stride, const std::function<int(int)>& pos,
                      const std::vector<schedule::Step>& steps, int dir, bool dt, const char* name) {
  const int P = c.P(), p = c.rank();
  const std::vector<MPI_Datatype>* types = nullptr;
  char *out = nullptr, *in = nullptr;
  Scratch::Frame frame(c.work());
  TypeCache own;  // an operation's own types; blocking calls reuse the context's
  if (dt) {
    if (const int rc = step_types(c, blocking_now() ? c.ctx.types : own, stride, pos, steps, name, types)) co_return rc;
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
      const int rc = co_await replaced(W, (*types)[k], bytes, dst, src, c.comm());
      if (rc != MPI_SUCCESS) co_return rc;
      c.stats.count_message(dst, bytes);
      c.stats.bytes_sent += static_cast<long long>(bytes);
      ++c.stats.waits;
    } else {
      size_t off = 0;
      for (int i : s.slots) {
        std::memcpy(out + off, W + pos(i) * stride, c.bs);
        off += c.bs;
      }
      if (const int rc = co_await exchanged(out, bytes, dst, in, bytes, src, c.comm(), c.stats)) co_return rc;
      off = 0;
      for (int i : s.slots) {
        std::memcpy(W + pos(i) * stride, in + off, c.bs);
        off += c.bs;
      }
    }
    c.count_round(s.slots.size());
  }
  co_return MPI_SUCCESS;
}

}  // namespace a2a::detail
