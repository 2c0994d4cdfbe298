// Padded alltoall: the padding of padded Bruck around the MPI library's own
// MPI_Alltoall, so the library's uniform algorithms (often better tuned than
// its alltoallv) serve non-uniform data.  Cost: one allreduce, then the
// library's alltoall of M-byte blocks.  Scratch 2*P*M; falls back to
// spread-out when that exceeds A2A_SCRATCH_LIMIT.  Rounds and messages are
// the library's, unknown (-1).  No knobs.
#include "core/transport.hpp"
#include "alltoallv/padding.hpp"
#include "core/row.hpp"

namespace a2a::detail {

Task<Result> padded_alltoall(const VarCall& c, const Params&) {
  Padded padded(c.work());
  if (const Result r = co_await pad(c, padded); !r.ok()) co_return r;
  c.stats.rounds = c.stats.messages = c.stats.inter_node_messages = c.stats.inter_node_bytes = c.stats.waits = -1;
  if (padded.M == 0) co_return MPI_SUCCESS;
  const int rc = co_await alltoall_blocks(padded.send, padded.recv, padded.M, c.comm());
  if (rc != MPI_SUCCESS) co_return rc;
  c.stats.blocks_sent = c.P() - 1;
  c.stats.bytes_sent = static_cast<long long>(c.P() - 1) * static_cast<long long>(padded.M);
  unpad(c, padded);
  co_return MPI_SUCCESS;
}

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo padded_alltoall_row() {
  return {.name = "padded-alltoall",
          .collective = Collective::alltoallv,
          .summary = "pad every block to the global largest, then MPI_Alltoall",
          .varying = padded_alltoall,
          .fallback = "spread-out"};
}

}  // namespace a2a::detail
