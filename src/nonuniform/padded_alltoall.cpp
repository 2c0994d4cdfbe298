// Padded alltoall: the padding of padded Bruck around the MPI library's own
// MPI_Alltoall, so the library's uniform algorithms (often better tuned than
// its alltoallv) serve non-uniform data.  Cost: one allreduce, then the
// library's alltoall of M-byte blocks.  Scratch 2*P*M; falls back to
// spread-out when that exceeds A2A_SCRATCH_LIMIT.  Rounds and messages are
// the library's, unknown (-1).  No knobs.
#include "core/transport.hpp"
#include "nonuniform/padding.hpp"

namespace a2a::detail {

Task<Result> padded_alltoall(const VarCall& c, const Params&) {
  Padded padded(c.work());
  if (const Result r = co_await pad(c, padded); !r.ok()) co_return r;
  c.stats.rounds = c.stats.messages = c.stats.inter_node_messages = c.stats.inter_node_bytes = c.stats.waits = -1;
  if (padded.M == 0) co_return MPI_SUCCESS;
  MPI_Datatype block;
  int rc = make_bytes_type(padded.M, &block);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&block);
  if (rc != MPI_SUCCESS) co_return rc;
  if (blocking_now()) {
    rc = PMPI_Alltoall(padded.send, 1, block, padded.recv, 1, block, c.comm());
  } else {  // messages with the operation's tag (core/transport.hpp): spread-out over the padded blocks
    const int P = c.P(), me = c.rank();
    std::memcpy(padded.recv + me * padded.M, padded.send + me * padded.M, padded.M);
    Requests r(2 * static_cast<size_t>(P));
    for (int i = 1; i < P; ++i) {
      const int from = (me - i + P) % P, to = (me + i) % P;
      r.note(MPI_Irecv(padded.recv + from * padded.M, 1, block, from, op_tag(), c.comm(), r.add()));
      r.note(MPI_Isend(padded.send + to * padded.M, 1, block, to, op_tag(), c.comm(), r.add()));
    }
    rc = co_await wait(r);
  }
  MPI_Type_free(&block);
  if (rc != MPI_SUCCESS) co_return rc;
  c.stats.blocks_sent = c.P() - 1;
  c.stats.bytes_sent = static_cast<long long>(c.P() - 1) * static_cast<long long>(padded.M);
  unpad(c, padded);
  co_return MPI_SUCCESS;
}

}  // namespace a2a::detail
