// Time-independent traces (SimGrid SMPI's replay format) written from a2a's
// schedules without running the data path, for the scales online
// simulation cannot reach (issue 29, docs/simulation-howto.md "Method").
// A rank's trace is what its blocking call posts on the real run, in
// order: TRA's (and Bruck's) batches of exchanges (receives, sends, one
// waitall), TRA2's two TRA
// phases with super-blocks, hierarchical TuNA's size exchange, TuNA rounds
// (sizes, then blocks) and scattered inter-node batches, flat TuNA,
// two-phase and padded Bruck.  Ranks are world
// ranks, nodes are Q consecutive ranks (the platforms' host files).  The
// replay format names no sub-communicator, so the collectives a2a nests on
// its node communicator run here as the point-to-point pattern of what
// SMPI's MPICH selector runs for them there (Bruck for the size alltoall;
// for the largest-block allreduce its two-level algorithm: recursive
// doubling on each node and among the nodes' first ranks, then a binomial
// broadcast on each node).  No MPI here.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace a2a::detail::schedule {

struct TraceOp {
  enum Kind : unsigned char { sendrecv, send, recv, isend, irecv, waitall, alltoall, alltoallv };
  Kind kind = waitall;
  bool meta = false;         // sizes, not payload (A2A_Stats::meta_bytes_sent)
  int dst = -1, src = -1;    // world ranks; sendrecv has both
  long long bytes = 0;       // sent (sendrecv, send, isend; alltoall: per peer) or received (recv, irecv)
  long long recv_bytes = 0;  // sendrecv: received
};
using Trace = std::vector<TraceOp>;

// Bytes of the block from src to dst (alltoallv's workload; S for alltoall).
using BlockBytes = std::function<long long(int src, int dst)>;

// TRA of radix r (2: Bruck) over P ranks, blocks of `block` bytes, a
// digit's rounds in batches of `ports` (0: all): each batch's receives,
// then its sends, then one waitall, as the engine posts them.
Trace trace_tra(int P, int radix, long long block, int rank, int ports = 0);
// TRA2 on nodes of Q ranks: TRA(Q, r1) with super-blocks of N blocks, then
// TRA(N, r2) among the ranks of one local index with super-blocks of Q.
Trace trace_tra2(int P, int Q, int r1, int r2, long long block, int rank, int ports_intra = 0, int ports_inter = 0);
// Hierarchical TuNA on nodes of Q ranks: the node's size alltoall, TuNA of
// radix r on the groups, then the inter-node messages in batches of `batch`
// (coalesced: one per peer node; staggered: one per block).  The traces of
// node `node`'s Q ranks at once (TuNA's sizes are followed node-wide).
std::vector<Trace> trace_tuna_hier(int P, int Q, int radix, int batch, bool staggered, const BlockBytes& bytes,
                                   int node, int ports = 0);
// Flat TuNA of radix r (2: two-phase Bruck) over P ranks on nodes of Q,
// every rank's trace: the largest block's allreduce (the selector's
// two-level algorithm, point to point: SMPI's replay of an allreduce
// action aborts under its MPICH selector), then per round the sizes and
// the blocks, as for hierarchical TuNA's node phase.
std::vector<Trace> trace_tuna(int P, int Q, int radix, const BlockBytes& bytes, int ports = 0);
// Padded Bruck, every rank's trace: the largest block's allreduce, then
// Bruck (TRA radix 2, backward as a2a's zero-rotation Bruck) with every
// block padded to the largest (none where every block is empty).
std::vector<Trace> trace_padded_bruck(int P, int Q, const BlockBytes& bytes);
// The MPI library's own collectives (the replay runs its selector).
Trace trace_native_alltoall(long long block);
Trace trace_native_alltoallv(int P, const BlockBytes& bytes, int rank);

// What A2A_Stats counts for a trace: data messages and bytes (metadata and
// empty messages excluded), metadata bytes, and the data that leaves the node.
struct TraceTotals {
  long long messages = 0, bytes = 0, meta_bytes = 0, inter_messages = 0, inter_bytes = 0;
  bool operator==(const TraceTotals&) const = default;
};
TraceTotals trace_totals(const Trace& t, int rank, int Q);

// One action line of SMPI's replay format ("<rank> sendRecv ..."), byte-typed.
std::string trace_line(int rank, const TraceOp& op, int P, const BlockBytes& bytes);

}  // namespace a2a::detail::schedule
