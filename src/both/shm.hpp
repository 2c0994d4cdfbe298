// shm's segment and turns, for the algorithms whose intra-node phase runs
// through it (tra2, tuna-hier, clustered) and the front end (its set-up).
#pragma once
#include <utility>
#include <vector>

#include "core/algorithm.hpp"

namespace a2a::detail {

// A call's set-up on ctx's shared-memory segment and, for a nonblocking
// operation, its turn on it: operations in flight together take the
// segment in the order of their turns, which must be the same on every
// rank, so a turn is taken in the operation's start (start order); an
// algorithm that reaches its shm phase only after a wait takes its turn
// with shm_reserve before that wait.  `state` null: no exchange through
// the segment (it falls back).  The turn passes at release or destruction.
struct ShmTurn {
  ShmState* state = nullptr;
  unsigned long long ticket = 0;
  bool holds = false;  // a nonblocking operation's turn, not yet passed
  ShmTurn() = default;
  ShmTurn(const ShmTurn&) = delete;
  ShmTurn& operator=(const ShmTurn&) = delete;
  ~ShmTurn() { release(); }
  void release();
};
// Collective over ctx on first use (the segment's making).
int shm_reserve(CommContext& ctx, const ShmKnobs& knobs, ShmTurn& turn);
// shm's segment for ctx made now where all its ranks share a node
// (collective; A2A_Comm_prepare), so that no call pays for it.
int shm_prepare(CommContext& ctx);
// Where each rank's data halves of that segment lie in this process (none
// where ctx has no segment): what the making touched (tests).
std::vector<std::pair<const char*, size_t>> shm_data_parts(const CommContext& ctx);
void shm_forget_kept();  // at MPI_Finalize: the segments kept per group go

// shm as the intra=shm phase of tra2, tuna-hier and clustered
// (src/both/shm.cpp): where it falls back (the node's ranks share no
// memory, SMPI) and the caller runs the phase point to point instead, the
// stats name loses "intra=shm", naming what ran.
// `reserved`: the turn shm_reserve took for it in the operation's start.
Task<Result> shm_phase(const UniformCall& c, ShmKnobs knobs, ShmTurn* reserved = nullptr);
Task<Result> shm_phase(const VarCall& c, ShmKnobs knobs, ShmTurn* reserved = nullptr);

}  // namespace a2a::detail
