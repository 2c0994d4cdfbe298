// What every algorithm receives and returns (the algorithms: src/alltoall,
// src/alltoallv, src/both).  Blocks arrive as bytes: the API
// layer packs non-contiguous datatypes and copies MPI_IN_PLACE input first.
//  UniformCall (alltoall): block i of the send side starts at
//    send + i*sstride and holds bs contiguous bytes; likewise the receive side.
//  VarCall (alltoallv): block i starts at send + soff[i] and holds sbytes[i]
//    bytes; likewise recv, roff, rbytes.  sbytes[rank] == rbytes[rank].
// Both offer send_block/send_bytes/recv_block/recv_bytes, so algorithms that
// need nothing else (the linear family) are written once for both.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/context.hpp"
#include "core/transport.hpp"
#include "schedule/gpu_plan.hpp"

namespace a2a::detail {

// What an algorithm returns: an MPI error code (MPI_SUCCESS included), or
// Result::fallback() when it cannot run this call (decided from values every
// rank shares): the API then runs the registry's fallback, and the stats say
// so.  A fallback is no error code, and an error code never reads as one.
class [[nodiscard]] Result {
 public:
  Result(int mpi_code) : code_(mpi_code) {}  // NOLINT: algorithms return MPI codes as they are
  static Result fallback() {
    Result r(MPI_SUCCESS);
    r.fallback_ = true;
    return r;
  }
  bool fell_back() const { return fallback_; }
  bool ok() const { return !fallback_ && code_ == MPI_SUCCESS; }
  int code() const { return code_; }  // MPI_SUCCESS for a fallback
  // For an algorithm run inside another, which never falls back there.
  int nested_code() const { return fallback_ ? MPI_ERR_INTERN : code_; }

 private:
  int code_;
  bool fallback_ = false;
};

// memcpy, but a zero-byte copy may name buffers that were never allocated.
inline void copy_bytes(void* to, const void* from, size_t bytes) {
  if (bytes > 0) std::memcpy(to, from, bytes);
}

struct Params {
  int radix = 2;   // tra, resolved against P ("auto" -> ceil(sqrt(P)), clamped to P)
  int block = 32;  // scattered batch size (the registry's default: one source)
  bool dt = false; // pack with MPI derived datatypes instead of memcpy
  int radix_intra = 0, radix_inter = 0;  // tra2, tuna-hier; 0 = auto, resolved against the layout
  // Exchanges of one digit in flight together (the k-port form, schedule::
  // batch_end): tra and tuna (ports), tra2's two phases, tuna-hier's node
  // phase (ports_intra); kAllPorts = all r-1 of a digit.
  static constexpr int kAllPorts = 0;
  int ports = kAllPorts, ports_intra = kAllPorts, ports_inter = kAllPorts;
  bool staggered = false;                // tuna-hier variant
  bool intra_shm = false;                // tra2, tuna-hier, clustered: the intra-node phase through shared memory (shm)
  // cuda-ipc: copy path and the hybrid's thresholds (block bytes), staged chunk bytes
  schedule::GpuPathMode gpu_path = schedule::GpuPathMode::hybrid;
  long long ipc_threshold = 4096, memcpy_threshold = 512 * 1024, chunk = 1 << 20;
  // shm (and the intra=shm phases): blocks of at least shm_direct bytes skip
  // the segment and go straight from the sender's buffer to the receiver's,
  // by shm_via; kShmDirectAuto and ShmVia::automatic are the machine's
  // measured crossover and cheaper path, resolved by the front end before
  // the call (front/execute.cpp), read as "off" where they were not.
  static constexpr long long kShmDirectAuto = -1, kShmDirectOff = LLONG_MAX;
  long long shm_direct = kShmDirectAuto;
  enum class ShmVia { automatic, cma, p2p } shm_via = ShmVia::automatic;
  bool machine_knobs() const { return shm_direct == kShmDirectAuto || shm_via == ShmVia::automatic; }
};

struct UniformCall {
  const char* send;
  MPI_Aint sstride;
  char* recv;
  MPI_Aint rstride;
  size_t bs;
  CommContext& ctx;
  Stats& stats;
  OpScratch* scratch = nullptr;  // a nonblocking operation's own; null: ctx's (blocking calls)

  int P() const { return ctx.size; }
  int rank() const { return ctx.rank; }
  MPI_Comm comm() const { return ctx.comm; }
  Scratch& work() const { return scratch ? scratch->of(ctx) : ctx.scratch; }
  const char* send_block(int i) const { return send + i * sstride; }
  char* recv_block(int i) const { return recv + i * rstride; }
  size_t send_bytes(int) const { return bs; }
  size_t recv_bytes(int) const { return bs; }
  void copy_self() const { std::memcpy(recv_block(rank()), send_block(rank()), bs); }
  // One communication round of this rank carrying `blocks` blocks.
  void count_round(size_t blocks) const {
    ++stats.rounds;
    stats.blocks_sent += static_cast<long long>(blocks);
  }
};

// A plan's metadata (issue 28): its init runs the algorithm once with
// meta_only (no data moves) and records every value it exchanges, in
// order (the largest block, each round's block sizes, a node's sizes);
// its starts, whose counts are the plan's, take them back in the same
// order instead of exchanging them.
struct PlanLog {
  enum class Mode { off, recording, replaying } mode = Mode::off;
  std::vector<long long> values;
  size_t cursor = 0;
  // The next n values where replaying (false: exchange them, then record()).
  bool take(long long* out, size_t n) {
    if (mode != Mode::replaying || cursor + n > values.size()) return false;
    std::copy(values.begin() + static_cast<std::ptrdiff_t>(cursor),
              values.begin() + static_cast<std::ptrdiff_t>(cursor + n), out);
    cursor += n;
    return true;
  }
  void record(const long long* v, size_t n) {
    if (mode == Mode::recording) values.insert(values.end(), v, v + n);
  }
};

struct VarCall {
  const char* send;
  const MPI_Aint* soff;
  const long long* sbytes;
  char* recv;
  const MPI_Aint* roff;
  const long long* rbytes;
  CommContext& ctx;
  Stats& stats;
  long long global_max;  // largest block in bytes over all ranks, -1 until known
  OpScratch* scratch = nullptr;  // a nonblocking operation's own; null: ctx's (blocking calls)
  PlanLog* plan = nullptr;       // a plan's recorded metadata (PlanLog)
  bool meta_only = false;        // the plan init's run: metadata exchanged and recorded, no data

  int P() const { return ctx.size; }
  int rank() const { return ctx.rank; }
  MPI_Comm comm() const { return ctx.comm; }
  Scratch& work() const { return scratch ? scratch->of(ctx) : ctx.scratch; }
  const char* send_block(int i) const { return send + soff[i]; }
  char* recv_block(int i) const { return recv + roff[i]; }
  size_t send_bytes(int i) const { return static_cast<size_t>(sbytes[i]); }
  size_t recv_bytes(int i) const { return static_cast<size_t>(rbytes[i]); }
  void copy_self() const { copy_bytes(recv_block(rank()), send_block(rank()), send_bytes(rank())); }
  void count_round(size_t blocks) const {
    ++stats.rounds;
    stats.blocks_sent += static_cast<long long>(blocks);
  }
  // The global largest block (bytes): from the API's agreement allreduce when
  // it ran, else one allreduce here.
  Task<int> max_block(long long& M) const;
};

// Every algorithm's entry: a coroutine on the engine (core/engine.hpp).
using UniformFn = Task<Result> (*)(const UniformCall&, const Params&);
using VarFn = Task<Result> (*)(const VarCall&, const Params&);

}  // namespace a2a::detail
