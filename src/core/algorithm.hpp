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
#include <cassert>
#include <climits>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "core/context.hpp"
#include "core/transport.hpp"

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

// Exchanges of one digit in flight together (the k-port form, schedule::
// batch_end): a ports knob's value; kAllPorts = all r-1 of a digit.
inline constexpr int kAllPorts = 0;

// The shared-memory exchange's knobs (shm's row; the intra=shm phases of
// tra2, tuna-hier and clustered hold them at their defaults): blocks of at
// least `direct` bytes skip the segment and go straight from the sender's
// buffer to the receiver's, by `via`.  kDirectAuto and Via::automatic are
// the machine's measured crossover and cheaper path, resolved by the front
// end before the call (AlgorithmInfo::shm_knobs), read as "off" where not.
struct ShmKnobs {
  static constexpr long long kDirectAuto = -1, kDirectOff = LLONG_MAX;
  long long direct = kDirectAuto;
  enum class Via { automatic, cma, p2p } via = Via::automatic;
  bool machine_decides() const { return direct == kDirectAuto || via == Via::automatic; }
};

// An algorithm's knobs: each algorithm's own struct (in its file, or a
// shared one of core/row.hpp; trivially copyable, at most kBytes), made at
// its defaults by its row (AlgorithmInfo::knobs), each knob set through its
// ParamInfo, read back with as<K>() (checked in debug builds).
class Params {
 public:
  static constexpr size_t kBytes = 64;
  Params() = default;  // an algorithm without knobs
  template <class K>
  explicit Params(const K& knobs) : type_(type_of<K>()) {
    static_assert(std::is_trivially_copyable_v<K> && sizeof(K) <= kBytes && alignof(K) <= alignof(long long));
    new (bytes_) K(knobs);
  }
  template <class K>
  const K& as() const {
    assert(type_ == type_of<K>());
    return *std::launder(reinterpret_cast<const K*>(bytes_));
  }
  template <class K>
  K& as() {
    assert(type_ == type_of<K>());
    return *std::launder(reinterpret_cast<K*>(bytes_));
  }

 private:
  template <class K>
  static const void* type_of() {
    static const char tag = 0;
    return &tag;
  }
  [[maybe_unused]] const void* type_ = nullptr;  // read by the asserts only
  alignas(long long) unsigned char bytes_[kBytes] = {};
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
  bool of_fallback = false;  // recorded by the registry's fallback (the algorithm fell back at init)
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
