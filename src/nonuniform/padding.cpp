#include "nonuniform/padding.hpp"

namespace a2a::detail {

Result pad(const VarCall& c, Padded& out) {
  long long M = 0;
  if (const int rc = c.max_block(M)) return rc;
  const size_t P = static_cast<size_t>(c.P());
  out.M = static_cast<size_t>(M);
  if (out.M == 0) return MPI_SUCCESS;  // every block everywhere is empty
  if (2 * P * out.M > scratch_limit()) return Result::fallback();
  Scratch::Region send, recv;
  if (!out.frame.take({&send, &recv})) return MPI_ERR_INTERN;
  out.send = c.ctx.scratch.get(send, P * out.M, c.stats);
  out.recv = c.ctx.scratch.get(recv, P * out.M, c.stats);
  for (int i = 0; i < c.P(); ++i) {
    char* place = out.send + i * out.M;
    copy_bytes(place, c.send_block(i), c.send_bytes(i));
    std::memset(place + c.send_bytes(i), 0, out.M - c.send_bytes(i));  // never ship stale memory
  }
  return MPI_SUCCESS;
}

void unpad(const VarCall& c, const Padded& padded) {
  for (int i = 0; i < c.P(); ++i) copy_bytes(c.recv_block(i), padded.recv + i * padded.M, c.recv_bytes(i));
}

}  // namespace a2a::detail
