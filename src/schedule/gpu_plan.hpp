// Pure planning for the CUDA IPC all-to-all(v) of Chen et al. ("Highly
// Efficient Alltoall and Alltoallv Communication Algorithms for GPU
// Systems"): which copy path a block size takes, the order node-mates are
// pulled in, the chunks of the staged inter-node path, and the displacement
// exchange of alltoallv.  No MPI, no CUDA: unit-tested on any machine.
#pragma once
#include <string>
#include <vector>

namespace a2a::detail::schedule {

// host: a host algorithm on staged copies (small blocks, where IPC's fixed
// cost of some 30-50 us dominates); kernel: one copy kernel over all
// node-mates' blocks; memcpy: cudaMemcpyAsync per node-mate.
enum class GpuPath { host, kernel, memcpy };
enum class GpuPathMode { kernel, memcpy, hybrid };

// hybrid follows the paper's IPC_threshold and memcpy_threshold: blocks below
// ipc_threshold go to a host algorithm, below memcpy_threshold to the kernel,
// larger ones to cudaMemcpyAsync.  kernel and memcpy always use that path.
GpuPath gpu_path(GpuPathMode mode, long long block_bytes, long long ipc_threshold, long long memcpy_threshold);
const char* gpu_path_name(GpuPath path);

// "4096", "4K", "512k", "1M", "2G" (powers of 1024) -> bytes; false on
// anything else, a negative value or overflow past 2^62.
bool parse_bytes(const std::string& text, long long& bytes);

// Node-mate q pulls from at step i (0 <= i < Q; step 0 is itself): the
// paper's order (rank + i) turned into pulls, so at every step each GPU is
// read by exactly one peer and written by exactly one.
inline int ipc_source(int q, int Q, int step) { return ((q - step) % Q + Q) % Q; }

// One message of the staged inter-node path: `bytes` bytes at `offset`
// within the block for (or from) `peer`.
struct StagedChunk {
  int peer;
  long long offset;
  long long bytes;
};

// This rank's messages to off-node peers (sends) or from them (receives):
// peers in spread-out order, (rank + i) % P for sends and (rank - i) % P for
// receives, i = 1..P-1, skipping node-mates, each block cut into chunks of at
// most `chunk` bytes; a zero-byte block has no message.  So sender and
// receiver list a pair's chunks alike, and the i-th peer of every sender is
// served at the receiver's i-th step (no cycle of waits with bounded slots).
std::vector<StagedChunk> staged_chunks(int rank, int P, const std::vector<int>& node_of, const long long* block_bytes,
                                       long long chunk, bool sends);

// Alltoallv's displacement exchange, turned around for pulling: the paper
// gathers each receiver's rdispls so that senders can write into receive
// buffers; a2a's receivers read from the senders' buffers, so each sender
// offers every node-mate j the offset (from the send pointer it exports) and
// the size of its block for j: out[2j], out[2j+1].  An MPI_Alltoall of these
// pairs over the node gives every receiver where its blocks lie.
void pull_offers(const std::vector<int>& node_ranks, const long long* send_offset, const long long* send_bytes,
                 std::vector<long long>& out);

// Alltoallv runs the alltoall path when every block on every rank has one
// size (global min == max) and each rank's send blocks are evenly spaced, so
// a peer's block for rank r lies at its first block + r * stride.  This is
// the local half: true with the stride when this rank's blocks qualify.
bool evenly_spaced(const long long* offset, int P, long long& stride);

}  // namespace a2a::detail::schedule
