// The front end every call goes through: A2A_Alltoall(v), the shim, plans.
// This header: a call's arguments, its prepared form, prepare and agree;
// cache.hpp the prepared-call cache, pipeline.hpp execute and the hot call,
// plan.hpp a persistent call.
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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/datatype.hpp"
#include "select/auto.hpp"
#include "registry/registry.hpp"

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
  // spec is a2a's configured default (never changes once parsed), so a
  // signature whose spec pointer is the same has the same spec.
  bool spec_owned = false;
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
// What a repeated call reads comes first (the signature, the class):
// three cache lines.
struct Prepared {
  // The signature: a later call matches when all of these are equal.
  CallArgs args;              // pointers to arrays are not compared ...
  // The value of its stale_counter when made (0 until prepared whole:
  // never current); the cache's generation then (CallGlobals).
  uint64_t stale_at = 0, generation = 0;
  CommContext* ctx = nullptr;
  int P = 1, rank = 0;  // ctx's
  // The last call ran the library's own collective on the user's arguments
  // as decided (execute's hot path; remember_hot), or an alltoall of a2a's
  // own algorithm as decided; cleared where the choice may change.
  bool native_decided = false;
  bool own_decided = false;
  // The hot call's block view (alltoall of gap-free types: the same every
  // call on the same buffers), made by its first run_hot_own; reset by
  // remember_hot.
  std::optional<UniformCall> hot_view;
  // A plan's recorded metadata (PlanLog; record_plan_meta), replayed by
  // every start of the plan's alltoallv; null for plain calls.
  std::unique_ptr<PlanLog> plan_log;
  bool decided = false;  // see `chosen`
  std::shared_ptr<ClassState> cls;
  unsigned long long class_generation = 0;
  std::string spec;
  std::vector<int> counts;    // ... their contents are: scounts, sdispls, rcounts, rdispls
  uint64_t key = 0;           // hash of the signature (but the arrays' contents) and generation
  uint64_t serial = 0;        // unique per prepared call (Stats::named_from)
  bool cacheable = true;
  bool reusable = false;      // prepared whole: a recycled object may keep what the next signature shares
  bool types_known = false;   // sti, rti and cacheable describe args' types
  bool derived_types = true;  // either is derived (stale_counter)
  // The time the running call spent preparing this (0 where it was found):
  // what a class event costs beyond its agreement where counts change
  // every call (the event's call cannot be the hot call).
  double prepare_seconds = 0;

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
  Resolved chosen;
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

// ---- agree (agree.cpp) ----
// One allreduce over the communicator: every rank's error (max), block
// sizes, bytes sent and placements; then g.err also holds what only the
// agreed values show (alltoall block sizes that differ, device and host
// buffers mixed), with its message in `msg`.  Returns the MPI error of the
// allreduce.
int agree(const Prepared& p, int err, Global& g, std::string& msg);

// ---- the C API's helpers (capi.cpp) ----
bool agree_mode();  // the error check: agree (true) or local
CallArgs alltoall_args(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm);
CallArgs alltoallv_args(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, const char* algorithm);
// Every error leaves a message for a2a::last_error_message(): a2a's own, or
// the MPI library's text for an error an MPI call returned.
int explain(int rc);
inline int explained(int rc) { return __builtin_expect(rc == MPI_SUCCESS, 1) ? rc : explain(rc); }
}  // namespace a2a::detail
