// The interface every uniform all-to-all algorithm implements.  Blocks arrive
// as bytes: block i of the send side starts at send + i*sstride and holds bs
// contiguous bytes (the API layer packs non-contiguous datatypes and copies
// MPI_IN_PLACE input first), and likewise for the receive side.
#pragma once
#include <cstddef>
#include <cstring>

#include "core/context.hpp"
#include "core/transport.hpp"

namespace a2a::detail {

struct Params {
  int radix = 2;   // tra, resolved against P ("auto" -> ceil(sqrt(P)), clamped to P)
  int block = 32;  // scattered batch size
  bool dt = false; // pack with MPI derived datatypes instead of memcpy
};

struct UniformCall {
  const char* send;
  MPI_Aint sstride;
  char* recv;
  MPI_Aint rstride;
  size_t bs;
  CommContext& ctx;
  Stats& stats;

  int P() const { return ctx.size; }
  int rank() const { return ctx.rank; }
  MPI_Comm comm() const { return ctx.comm; }
  const char* send_block(int i) const { return send + i * sstride; }
  char* recv_block(int i) const { return recv + i * rstride; }
  void copy_self() const { std::memcpy(recv_block(rank()), send_block(rank()), bs); }
  // One communication round of this rank carrying `blocks` blocks.
  void count_round(size_t blocks) const {
    ++stats.rounds;
    stats.blocks_sent += static_cast<long long>(blocks);
  }
};

using UniformFn = int (*)(const UniformCall&, const Params&);

int linear(const UniformCall&, const Params&);
int spread_out(const UniformCall&, const Params&);
int scattered(const UniformCall&, const Params&);
int pairwise(const UniformCall&, const Params&);
int bruck_basic(const UniformCall&, const Params&);
int bruck_modified(const UniformCall&, const Params&);
int bruck_zero_copy(const UniformCall&, const Params&);
int bruck_zero_rotation(const UniformCall&, const Params&);
int tra(const UniformCall&, const Params&);

}  // namespace a2a::detail
