#include "alltoallv/padding.hpp"

namespace a2a::detail {

Task<Result> pad(const VarCall& c, Padded& out) {
  long long M = 0;
  if (const int rc = co_await c.max_block(M)) co_return rc;
  const size_t P = static_cast<size_t>(c.P());
  out.M = static_cast<size_t>(M);
  if (out.M == 0) co_return MPI_SUCCESS;  // every block everywhere is empty
  if (2 * P * out.M > scratch_limit()) co_return Result::fallback();
  Scratch::Region send, recv;
  if (!out.frame.take({&send, &recv})) co_return MPI_ERR_INTERN;
  out.send = c.work().get(send, P * out.M, c.stats);
  out.recv = c.work().get(recv, P * out.M, c.stats);
  for (int i = 0; i < c.P(); ++i) {
    char* place = out.send + i * out.M;
    copy_bytes(place, c.send_block(i), c.send_bytes(i));
    std::memset(place + c.send_bytes(i), 0, out.M - c.send_bytes(i));  // never ship stale memory
  }
  co_return MPI_SUCCESS;
}

void unpad(const VarCall& c, const Padded& padded) {
  for (int i = 0; i < c.P(); ++i) copy_bytes(c.recv_block(i), padded.recv + i * padded.M, c.recv_bytes(i));
}

}  // namespace a2a::detail
