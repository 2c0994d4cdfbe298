// Padded alltoall: the padding of padded Bruck around the MPI library's own
// MPI_Alltoall, so the library's uniform algorithms (often better tuned than
// its alltoallv) serve non-uniform data.  Cost: one allreduce, then the
// library's alltoall of M-byte blocks.  Scratch 2*P*M; falls back to
// spread-out when that exceeds A2A_SCRATCH_LIMIT.  Rounds and messages are
// the library's, unknown (-1).  No knobs.
#include "core/transport.hpp"
#include "nonuniform/padding.hpp"

namespace a2a::detail {

Result padded_alltoall(const VarCall& c, const Params&) {
  Padded padded(c.ctx.scratch);
  if (const Result r = pad(c, padded); !r.ok()) return r;
  c.stats.rounds = c.stats.messages = c.stats.inter_node_messages = c.stats.inter_node_bytes = -1;
  if (padded.M == 0) return MPI_SUCCESS;
  MPI_Datatype block;
  int rc = make_bytes_type(padded.M, &block);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&block);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Alltoall(padded.send, 1, block, padded.recv, 1, block, c.comm());
  MPI_Type_free(&block);
  if (rc != MPI_SUCCESS) return rc;
  c.stats.blocks_sent = c.P() - 1;
  c.stats.bytes_sent = static_cast<long long>(c.P() - 1) * static_cast<long long>(padded.M);
  unpad(c, padded);
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
