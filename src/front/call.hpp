// The front end every call goes through: A2A_Alltoall(v), the shim, plans.
//
//  prepare   (checks.cpp)  local argument and aliasing checks, datatypes,
//                          the block view in bytes, where the buffers live,
//                          the spec resolved: everything that does not
//                          change between identical calls;
//  cache     (cache.cpp)   prepared calls kept per thread and looked up by
//                          signature, so a repeated call skips all of that;
//  agree     (agree.cpp)   the one allreduce that makes errors, block sizes
//                          and placements the same on every rank (opt-in per
//                          call, once at a plan's init);
//  execute   (execute.cpp) the algorithm chosen (auto once per prepared
//                          call where it can), packing, native or a2a's
//                          algorithm, the registry's fallback;
//  device    (device.cpp)  device buffers: cuda-ipc or host staging.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/datatype.hpp"
#include "select/auto.hpp"
#include "select/registry.hpp"

namespace a2a::detail {

// One call's arguments.  With MPI_IN_PLACE the send side is described by
// the receive arguments (the caller folds them in).  spec is never null.
struct CallArgs {
  Collective coll = Collective::alltoall;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  int scount = 0, rcount = 0;                        // alltoall
  const int *scounts = nullptr, *sdispls = nullptr;  // alltoallv
  const int *rcounts = nullptr, *rdispls = nullptr;
  MPI_Datatype stype = MPI_DATATYPE_NULL, rtype = MPI_DATATYPE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  const char* spec = "auto";
  bool in_place() const { return sendbuf == MPI_IN_PLACE; }
  bool v() const { return coll == Collective::alltoallv; }
};

// Where a call's buffers live; ORed over ranks by the agreement, where both
// set is an error.
struct Placement {
  long long device = 0, host = 0;
  bool mixed() const { return device && host; }
};

// Global values of one call, from the agreement allreduce (or auto's size
// allreduce): alltoall's block size range, alltoallv's largest block and
// total bytes sent, the placements.
struct Global {
  int err = MPI_SUCCESS;
  long long lo = 0, hi = 0;  // alltoall: smallest and largest block size; alltoallv: largest block (hi)
  long long sent = 0;        // alltoallv: bytes sent by all ranks
  Placement where;
};

// Everything about a call that identical calls share.
struct Prepared {
  // The signature: a later call matches when all of these are equal.
  CallArgs args;              // pointers to arrays are not compared ...
  std::string spec;
  uint64_t key = 0;           // hash of the signature (but the arrays' contents) and generation
  std::vector<int> counts;    // ... their contents are: scounts, sdispls, rcounts, rdispls
  uint64_t generation = 0;    // cache.hpp: communicators and datatypes freed since
  uint64_t serial = 0;        // unique per prepared call (Stats::named_from)
  bool cacheable = true;
  bool reusable = false;      // prepared whole: a recycled object may keep what the next signature shares
  bool types_known = false;   // sti, rti and cacheable describe args' types

  CommContext* ctx = nullptr;
  int P = 1;
  TypeInfo sti, rti;
  // The block view in bytes.  Alltoall: blocks of bs bytes, sstep/rstep
  // apart in the user's buffers.  Alltoallv: block i at soff[i], sbytes[i]
  // long, in the user's buffer (send_direct) or in the packed scratch.
  long long bs = 0;
  MPI_Aint sstep = 0, rstep = 0;
  std::vector<MPI_Aint> soff, roff;
  std::vector<long long> sbytes, rbytes;
  long long largest = 0, sent = 0, packed_send = 0, packed_recv = 0;
  bool send_direct = true, recv_direct = true;
  Placement where;

  Resolved named;  // the spec; info null: auto
  // The choice, once it is fixed for every later identical call (a named
  // spec, its machine knobs resolved), or the class of auto's calls it
  // follows (alltoall; alltoallv without global sizes; a plan's alltoallv):
  // then `chosen` is the class's decision as of `class_generation`.
  bool decided = false;
  Resolved chosen;
  std::shared_ptr<ClassState> cls;
  unsigned long long class_generation = 0;
  Stats stats;  // each call's stats start from this (layout, name)

  bool moves_bytes() const { return args.v() ? sent > 0 || packed_recv > 0 : bs > 0; }
};

// ---- prepare (checks.cpp) ----
// MPI_ERR_COMM / MPI_ERR_OTHER, with no communication, for a null, inter-
// or uninitialised communicator a2a does not serve.
int check_comm(MPI_Comm comm);
// The communicator's context, or check_comm's error.
int open_comm(MPI_Comm comm, CommContext*& ctx);
// Fills p from the arguments; returns this rank's argument error (p.ctx is
// set whatever happens, so the agreement can run).  p may be a fresh object
// or a recycled one holding another signature, whose buffers are reused
// and whose types, spec and choice stay where the two share them.
int prepare(const CallArgs& a, CommContext& ctx, Prepared& p, std::string& msg);

// ---- the shim (capi.cpp) ----
// True where the shim may hand this call to the library untouched: auto's
// first call on a communicator a2a has not met (it would run native and
// decide nothing, execute.cpp), host buffers, one type, local checks, more
// than one rank.  It marks the communicator (mark_first_use) and leaves the
// stats of a native first call.  A communicator used once (FFTW makes one
// per plan) then costs what the library costs; the next call makes the
// context and decides.
bool first_alltoall_to_library(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
bool first_alltoallv_to_library(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm);

// ---- per thread (cache.cpp) ----
// The calling thread's last stats and error message, and its prepared
// calls, most recent first.
constexpr size_t kPreparedSlots = 16;
struct ThreadState {
  Stats stats;
  std::string error;
  // Side by side, a hash of each slot's signature: a lookup reads one or two
  // cache lines, not every prepared call.
  uint64_t key[kPreparedSlots] = {};
  std::unique_ptr<Prepared> slot[kPreparedSlots];
};
ThreadState& make_thread_state();
// initial-exec: one load from the thread pointer, no call (the pointer is all
// the static TLS it takes).  SMPI loads a copy of the program per simulated
// rank, which static TLS could not hold.
#ifdef A2A_SMPI
extern thread_local ThreadState* current_thread_state;
#else
extern thread_local ThreadState* current_thread_state __attribute__((tls_model("initial-exec")));
#endif
inline ThreadState& thread_state() {
  ThreadState* t = current_thread_state;
  return t ? *t : make_thread_state();
}

// ---- cache (cache.cpp) ----
// Bumped whenever a communicator a2a knows, a derived datatype a prepared
// call used, or MPI itself (finalize) goes away: older prepared calls are
// then never matched.
uint64_t generation();
void invalidate_prepared();
// The hash of a call's signature (not the contents of alltoallv's arrays).
uint64_t signature_hash(const CallArgs& a, uint64_t generation);
// Registers a delete callback on a derived datatype (predefined ones never
// go away); false when the MPI library cannot, so the call is not cached.
bool watch_datatype(MPI_Datatype type);
Prepared* find_prepared(ThreadState& ts, const CallArgs& a);
Prepared* keep_prepared(ThreadState& ts, std::unique_ptr<Prepared> p);
// The least recent prepared call, out of its slot, to prepare a new
// signature in (a new object where the slot is empty).
std::unique_ptr<Prepared> recycle_prepared(ThreadState& ts);

// ---- agree (agree.cpp) ----
// One allreduce over the communicator: every rank's error (max), block
// sizes, bytes sent and placements; then g.err also holds what only the
// agreed values show (alltoall block sizes that differ, device and host
// buffers mixed), with its message in `msg`.  Returns the MPI error of the
// allreduce.
int agree(const Prepared& p, int err, Global& g, std::string& msg);

// ---- execute (execute.cpp) ----
// The whole pipeline of a call.  agree: run the agreement allreduce.
int run_call(ThreadState& ts, const CallArgs& a, bool agree, Stats& st, std::string& msg);
// Fixes p's algorithm, or its class of auto's calls, when it can be fixed
// (collective on auto's first use; call after the agreement).  g: the
// agreed globals, or null; fixed_sizes: they hold for every call of p (a
// plan), so an alltoallv follows the class of its sizes.
int decide(Prepared& p, const Global* g, bool fixed_sizes, std::string& msg);
// A call's stats start from its prepared call's (the name copied only when
// the last call's came from elsewhere).
void begin_stats(Stats& st, const Prepared& p);
// Names the algorithm in the stats (the name copied afresh).
void name_algorithm(Stats& st, const std::string& canonical);
// The registry's native for coll, for auto's first call on a communicator.
const Resolved& native_of(Collective coll);
// Runs a prepared call whose arguments every rank has checked.
int execute(const CallArgs& a, Prepared& p, const Global* g, Stats& st, std::string& msg);
// The message of an error found on another rank.
int failed(int err, std::string& msg);

// ---- device (device.cpp) ----
int device_call(const CallArgs& a, Prepared& p, Stats& st, std::string& msg);

}  // namespace a2a::detail
