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

// ---- the shim (capi.cpp) ----
// True where the shim may hand this call to the library untouched: auto's
// first call on a communicator a2a has not met (it would run native and
// decide nothing, execute.cpp), host buffers, one type, local checks, more
// than one rank.  It marks the communicator (claim_first_use) and leaves the
// stats of a native first call.  A communicator used once (FFTW makes one
// per plan) then costs what the library costs; the next call makes the
// context and decides.
bool first_alltoall_to_library(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
bool first_alltoallv_to_library(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm);

// ---- per thread (cache.cpp) ----
// The last call, where execute ran the library's own collective on the
// user's arguments as decided: the next call compares itself with this
// copy, which lies in its thread's first cache lines, and where it is the
// same (and no class event is due) runs the library without reaching its
// prepared call.  Where caches are cold (another process ran between two
// calls) every dependent load a call makes before the library's costs a
// miss: this is the shortest chain (thread state, then the class).
constexpr int kHotRanks = 8;  // alltoallv's counts copied up to this P
struct alignas(64) HotCall {
  // What a repeated call's test reads comes first: three cache lines and
  // the counts' first (at P <= 4 all of them).
  Prepared* prepared = nullptr;  // null: none
  uint64_t stale_at = 0;         // the prepared call's, and derived_types
  ClassState* cls = nullptr;     // the prepared call's class and its generation then
  unsigned long long class_generation = 0;
  MPI_Comm on = MPI_COMM_NULL;  // where the library runs
  int P = 0;
  unsigned spec_size = 0;
  bool own = false;  // runs a2a's algorithm (run_hot_own), not the library's
  bool derived_types = false;
  // args.spec held the kept spec's text (its n + 1 bytes were readable
  // there): a call passing that pointer again is compared in words.
  bool spec_at_args = false;
  CallArgs args;
  char spec[24] = {};
  alignas(64) int counts[4 * kHotRanks] = {};
  // alltoallv, for a call whose counts or buffers alone are new (hot_new_blocks): this
  // rank, the types' layout, and the bytes the last call sent to others
  // (its stats', where they are not the prepared call's).
  int rank = 0;
  long long bytes_sent = 0;
  TypeInfo sti, rti;
};

// The calling thread's last stats and error message, and its prepared
// calls, most recent first.
constexpr size_t kPreparedSlots = 16;
struct ThreadState {
  // The last call ran the library's own collective on this prepared call
  // (the hot call) and left its stats unwritten: last_stats() writes them
  // when asked.  Null otherwise (every other entry point clears it).
  // Or first_call_marker(): the shim handed the last call, the first on
  // its communicator, to the library (first_alltoall_to_library) and left
  // what its stats need here.
  Prepared* lazy = nullptr;
  std::string error;
  struct FirstCall {
    Collective coll = Collective::alltoall;
    long long blocks = 0, bytes = 0;
  } first;
  Prepared* first_call_marker() { return reinterpret_cast<Prepared*>(&first); }  // compared, never read
  HotCall hot;  // alltoall's; alltoallv's (hot_v) below
  HotCall& hot_of(Collective c) { return c == Collective::alltoall ? hot : hot_v; }
  // Side by side, a hash of each slot's signature: a lookup reads one or two
  // cache lines, not every prepared call.
  uint64_t key[kPreparedSlots] = {};
  std::unique_ptr<Prepared> slot[kPreparedSlots];
  Stats stats;
  // While the trial of the thread's last trial call runs, calls off the
  // hot path note their start (call, capi.cpp): a candidate is timed with
  // what its calls pay beyond its run (their lookup and, where counts
  // change, an algorithm of a2a's its preparation; the library's alltoallv
  // goes the hot way with new counts).  Not in the agree mode, where every
  // call pays its agreement.
  bool time_next_call = false;
  double call_began = 0;  // MPI_Wtime at the running call's start, or 0
  // One hot call per collective: programs that exchange counts by alltoall
  // before each alltoallv alternate the two.  Last, so that alltoall's
  // lines stay where they were (at P = 2 a hot alltoall cost 0.01-0.05 us
  // more with both side by side at the top).
  HotCall hot_v;
};
ThreadState& make_thread_state();
// initial-exec: one load from the thread pointer, no call (the pointer is all
// the static TLS it takes).  SMPI loads a copy of the program per simulated
// rank, which static TLS could not hold.
// constinit: no dynamic initialisation, so no TLS wrapper's check per call.
#ifdef A2A_SMPI
extern constinit thread_local ThreadState* current_thread_state;
#else
extern constinit thread_local ThreadState* current_thread_state __attribute__((tls_model("initial-exec")));
#endif
inline ThreadState& thread_state() {
  ThreadState* t = current_thread_state;
  return t ? *t : make_thread_state();
}

// ---- cache (cache.cpp) ----
// What every call reads, side by side in one cache line.  generation:
// bumped whenever a communicator a2a knows, a derived datatype a prepared
// call used, or MPI itself (finalize) goes away: older prepared calls are
// then never matched, but for those of predefined datatypes alone (which
// never go away), which watch comm_generation, bumped for the others
// only: a program that makes and frees a datatype for a phase (a2a-closure
// per run) keeps its other calls hot.  agree: the error check (1 agree, 0
// local; -1 until the configuration is read, capi.cpp).
struct alignas(64) CallGlobals {
  std::atomic<uint64_t> generation{1}, comm_generation{1};
  std::atomic<int> agree{-1};
  // The specs of calls that pass NULL (config's, by collective), once
  // read (null before: default_spec reads the configuration).
  std::atomic<const char*> spec[2] = {nullptr, nullptr};
};
extern CallGlobals call_globals;
inline uint64_t generation() { return call_globals.generation.load(std::memory_order_acquire); }
// What makes a prepared call of derived datatypes (or not) stale; both
// start at 1, so a stale_at of 0 is never current.
inline const std::atomic<uint64_t>& stale_counter(bool derived) {
  return derived ? call_globals.generation : call_globals.comm_generation;
}
inline bool current(bool derived, uint64_t stale_at) {
  return stale_counter(derived).load(std::memory_order_acquire) == stale_at;
}
inline bool current(const Prepared& p) { return current(p.derived_types, p.stale_at); }
// The calling thread's completed operations kept for reuse, and their
// scratch, released (nonblocking.cpp): at MPI_Finalize, while the MPI
// library (SMPI: its shared buffers) is still there to take them.
void release_spare_operations();
void invalidate_prepared();      // a communicator or MPI itself gone
void forget_derived_datatype();  // a derived datatype gone
// The hash of a call's signature (not the contents of alltoallv's arrays).
uint64_t signature_hash(const CallArgs& a);
// Registers a delete callback on a derived datatype (predefined ones never
// go away), which `derived` then tells; false when the MPI library cannot,
// so the call is not cached.
bool watch_datatype(MPI_Datatype type, bool& derived);

// A signature's fields but the buffers, the spec and alltoallv's arrays' contents.
inline bool same_shape(const CallArgs& k, const CallArgs& a) {
  return k.comm == a.comm && k.coll == a.coll && k.stype == a.stype && k.rtype == a.rtype && k.scount == a.scount &&
         k.rcount == a.rcount;
}
inline bool same_buffers(const CallArgs& k, const CallArgs& a) {
  return k.sendbuf == a.sendbuf && k.recvbuf == a.recvbuf;
}
// A signature's fields but the spec and alltoallv's arrays' contents.
inline bool same_fields(const CallArgs& k, const CallArgs& a) { return same_shape(k, a) && same_buffers(k, a); }
// Specs are a few characters: compared inline, no library call, the kept
// one's length known (a shorter given one differs at its terminator, so
// nothing past it is read); a2a's own default by its pointer.
inline bool same_spec(const CallArgs& k, const char* kept, size_t n, const CallArgs& a) {
  if (a.spec_owned && a.spec == k.spec) return true;
  for (size_t i = 0; i < n; ++i)
    if (kept[i] != a.spec[i]) return false;
  return a.spec[n] == '\0';
}
// m bytes (1..24) of x and y, both readable that far, in a few word loads.
inline bool same_text(const char* x, const char* y, size_t m) {
  auto eq = [&]<class W>(W, size_t at) {
    W u, v;
    std::memcpy(&u, x + at, sizeof u);
    std::memcpy(&v, y + at, sizeof v);
    return u == v;
  };
  if (m >= 8) {  // whole words, then the last 8 bytes (overlapping where m is not a multiple)
    for (size_t i = 0; i + 8 < m; i += 8)
      if (!eq(uint64_t{}, i)) return false;
    return eq(uint64_t{}, m - 8);
  }
  if (m >= 4) return eq(uint32_t{}, 0) && eq(uint32_t{}, m - 4);
  if (m >= 2) return eq(uint16_t{}, 0) && eq(uint16_t{}, m - 2);
  return *x == *y;
}
// alltoallv's four arrays copied into c (scounts, sdispls, rcounts, rdispls).
inline void store_counts(int* c, int P, const CallArgs& a) {
  std::copy(a.scounts, a.scounts + P, c);
  std::copy(a.sdispls, a.sdispls + P, c + P);
  std::copy(a.rcounts, a.rcounts + P, c + 2 * P);
  std::copy(a.rdispls, a.rdispls + P, c + 3 * P);
}
// alltoallv's four arrays against c (scounts, sdispls, rcounts, rdispls).
inline bool same_counts(const int* c, int P, const CallArgs& a) {
  if (P <= 8) {  // a few ranks: one inline pass over the four arrays
    for (int i = 0; i < P; ++i)
      if (c[i] != a.scounts[i] || c[P + i] != a.sdispls[i] || c[2 * P + i] != a.rcounts[i] ||
          c[3 * P + i] != a.rdispls[i])
        return false;
    return true;
  }
  const size_t n = sizeof(int) * static_cast<size_t>(P);
  return std::memcmp(c, a.scounts, n) == 0 && std::memcmp(c + P, a.sdispls, n) == 0 &&
         std::memcmp(c + 2 * P, a.rcounts, n) == 0 && std::memcmp(c + 3 * P, a.rdispls, n) == 0;
}

inline bool matches(const Prepared& p, const CallArgs& a) {
  return current(p) && same_fields(p.args, a) && same_spec(p.args, p.spec.data(), p.spec.size(), a) &&
         (!a.v() || same_counts(p.counts.data(), p.P, a));
}

// The other slots, by their hashes (cache.cpp).
Prepared* find_in_slots(ThreadState& ts, const CallArgs& a);
// The prepared call matching a's signature, or null.  The most recent call
// first, compared field by field, inline: a repeated call (the common
// case) computes no hash and makes no call.
inline Prepared* find_prepared(ThreadState& ts, const CallArgs& a) {
  if (ts.slot[0] && matches(*ts.slot[0], a)) return ts.slot[0].get();
  return find_in_slots(ts, a);
}
Prepared* keep_prepared(ThreadState& ts, std::unique_ptr<Prepared> p);
// No hot call refers to p any more (it leaves the cache: recycled, pushed
// out, or taken by a nonblocking operation).
inline void forget_hot(ThreadState& ts, const Prepared* p) {
  for (HotCall* h : {&ts.hot, &ts.hot_v})
    if (h->prepared == p) h->prepared = nullptr;
}
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
// The same with the lookup done: `found` is find_prepared's answer.
int run_found(ThreadState& ts, const CallArgs& a, Prepared* found, bool agree, Stats& st, std::string& msg);
// Fixes p's algorithm, or its class of auto's calls, when it can be fixed
// (collective on auto's first use; call after the agreement).  g: the
// agreed globals, or null; fixed_sizes: they hold for every call of p (a
// plan), so an alltoallv follows the class of its sizes.
int decide(Prepared& p, const Global* g, bool fixed_sizes, std::string& msg);
// A call's stats start from its prepared call's (the name copied only when
// the last call's came from elsewhere).
void begin_stats(Stats& st, const Prepared& p);
// Native's stats (the library's schedule hidden: -1).
void native_stats(const CallArgs& a, const Prepared& p, Stats& st);
// The bytes this rank sends to the others in a call of p.
inline long long native_bytes_sent(const Prepared& p) {
  return p.args.v() ? p.sent - p.sbytes[p.rank] : (p.P - 1) * p.bs;
}
// The thread's last stats, written now where the last call left them
// (ThreadState::lazy).
Stats& last_stats(ThreadState& ts);
// Where a call whose native run set p.native_decided runs the library:
// the user's communicator, or alone on one the duplicate native_comm made
// (execute.cpp).
inline MPI_Comm decided_native_comm(const CallArgs& a, const Prepared& p) { return p.P > 1 ? a.comm : p.ctx->comm; }
// Whether a call bound to class c at generation `bound` must go the full
// way: an event of c is due, or c changed its decision since.
inline bool class_event_due(const ClassState* c, unsigned long long bound) {
  return c && (c->since + 1 >= c->next_event || bound != c->generation);
}

// The hot call (ThreadState::hot) after a call that execute ran as the
// library's own collective or as a2a's alltoall algorithm, decided: p's
// signature, class and where it ran.
inline void remember_hot(HotCall& h, const CallArgs& a, const Prepared& p) {
  h.prepared = nullptr;
  h.own = p.own_decided;
  const_cast<Prepared&>(p).hot_view.reset();
  if (p.spec.size() >= sizeof h.spec || (a.v() && p.P > kHotRanks)) return;
  h.derived_types = p.derived_types;
  h.stale_at = p.stale_at;
  h.args = p.args;
  h.on = decided_native_comm(a, p);
  h.cls = p.cls.get();
  h.class_generation = p.class_generation;
  h.P = p.P;
  h.spec_size = static_cast<unsigned>(p.spec.size());
  std::memcpy(h.spec, p.spec.c_str(), p.spec.size() + 1);
  h.spec_at_args = a.spec && std::strcmp(a.spec, h.spec) == 0;
  if (a.v()) {
    std::memcpy(h.counts, p.counts.data(), sizeof(int) * 4 * static_cast<size_t>(p.P));
    h.rank = p.rank;
    h.bytes_sent = native_bytes_sent(p);
    h.sti = p.sti;
    h.rti = p.rti;
  }
  h.prepared = const_cast<Prepared*>(&p);
}
// A plan's init: the decided alltoallv algorithm run once without data,
// its exchanged metadata recorded into p.plan_log for the starts to replay
// (where the registry says it can: plan_meta; not auto's classes, whose
// algorithm may change, nor intra=shm).  Collective.
int record_plan_meta(Prepared& p, const Global& g);
// A hot call of a2a's own algorithm (HotCall::own): p's decided algorithm
// on the call's blocks, without the rest of execute's way to it.
int run_hot_own(const CallArgs& a, Prepared& p, Stats& st);
// An alltoallv with the hot call's signature but new counts or buffers:
// true where they pass prepare's checks for certain (counts not negative,
// this rank's block as long on both sides, host buffers given, MPI_IN_PLACE
// as before, and for gap-free types the receive blocks in address order
// and apart and the send blocks apart from their range); h then holds
// them.  False sends the call the full way, which checks and reports.  A
// program whose counts change every call (a graph shuffle, its buffers
// resized) then reaches the library without preparing each call.
bool hot_new_blocks(HotCall& h, const CallArgs& a);
// The hot call's four arrays (P <= kHotRanks) against a's: word compares
// of a size known here, no call (same_counts loops).
template <int P>
[[gnu::always_inline]] inline bool hot_counts_equal(const int* c, const CallArgs& a) {
  constexpr size_t n = sizeof(int) * P;
  return std::memcmp(c, a.scounts, n) == 0 && std::memcmp(c + P, a.sdispls, n) == 0 &&
         std::memcmp(c + 2 * P, a.rcounts, n) == 0 && std::memcmp(c + 3 * P, a.rdispls, n) == 0;
}
[[gnu::noinline]] inline bool hot_same_counts_any(const int* c, int P, const CallArgs& a) {
  static_assert(kHotRanks == 8);
  switch (P) {
    case 1: return hot_counts_equal<1>(c, a);
    case 2: return hot_counts_equal<2>(c, a);
    case 3: return hot_counts_equal<3>(c, a);
    case 4: return hot_counts_equal<4>(c, a);
    case 5: return hot_counts_equal<5>(c, a);
    case 6: return hot_counts_equal<6>(c, a);
    case 7: return hot_counts_equal<7>(c, a);
    case 8: return hot_counts_equal<8>(c, a);
    default: return false;
  }
}
// P = 2 inline (the calls whose every line counts), others out of line.
[[gnu::always_inline]] inline bool hot_same_counts(const int* c, int P, const CallArgs& a) {
  return P == 2 ? hot_counts_equal<2>(c, a) : hot_same_counts_any(c, P, a);
}
// The hot call's spec against a's: the same pointer as the kept call's
// (one call site, the common case) in words, else byte by byte.
inline bool hot_same_spec(const HotCall& h, const CallArgs& a) {
  if (a.spec == h.args.spec && h.spec_at_args) return a.spec_owned || same_text(h.spec, a.spec, h.spec_size + 1);
  return same_spec(h.args, h.spec, h.spec_size, a);
}
// True where a (a call of collective C) is the hot call again, no class
// event is due and the class has not changed its decision: the class's
// count advances, and the caller runs library_call on h.on (execute's hot
// path, without its frame or its stats, left to last_stats).  C known at
// compile time: alltoallv's counts (0) and alltoall's arrays go unread.
template <Collective C>
inline bool hot_repeat_of(HotCall& h, const CallArgs& a) {
  if (!h.prepared || !current(h.derived_types, h.stale_at) || h.args.comm != a.comm || h.args.coll != C ||
      h.args.stype != a.stype || h.args.rtype != a.rtype)
    return false;
  if constexpr (C == Collective::alltoall)
    if (h.args.scount != a.scount || h.args.rcount != a.rcount) return false;
  if (!hot_same_spec(h, a)) return false;
  ClassState* c = h.cls;
  if (class_event_due(c, h.class_generation)) return false;
  if constexpr (C == Collective::alltoall) {
    if (!same_buffers(h.args, a)) return false;
  } else if (!a.scounts || !a.sdispls || !a.rcounts || !a.rdispls ||
             ((!same_buffers(h.args, a) || !hot_same_counts(h.counts, h.P, a)) && !hot_new_blocks(h, a))) {
    return false;
  }
  if (c) ++c->since;
  return true;
}
inline bool hot_repeat(HotCall& h, const CallArgs& a) {
  return a.v() ? hot_repeat_of<Collective::alltoallv>(h, a) : hot_repeat_of<Collective::alltoall>(h, a);
}
// A decided call of auto's class, or one outside a class, with no class
// event due and no decision changed since it was bound: the class's count
// advances (as execute's would).
inline bool class_quiet(const Prepared& p) {
  ClassState* c = p.cls.get();
  if (class_event_due(c, p.class_generation)) return false;
  if (c) ++c->since;
  return true;
}
// The library's own collective on the user's arguments, on `on`.
template <Collective C>
inline int library_call_of(const CallArgs& a, MPI_Comm on) {
  if constexpr (C == Collective::alltoallv)
    return PMPI_Alltoallv(a.sendbuf, a.scounts, a.sdispls, a.stype, a.recvbuf, a.rcounts, a.rdispls, a.rtype, on);
  else
    return PMPI_Alltoall(a.sendbuf, a.scount, a.stype, a.recvbuf, a.rcount, a.rtype, on);
}
inline int library_call(const CallArgs& a, MPI_Comm on) {
  return a.v() ? library_call_of<Collective::alltoallv>(a, on) : library_call_of<Collective::alltoall>(a, on);
}
// The bytes this rank moves in a call (sent and received), by which a
// class's drift watch scales its expected time.
inline double call_bytes(const Prepared& p) {
  return p.args.v() ? static_cast<double>(p.sent + p.packed_recv) : 2.0 * p.P * static_cast<double>(p.bs);
}
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

// ---- nonblocking (execute.cpp, nonblocking.cpp) ----
// execute as an operation on the engine: the same choice, the algorithm
// run on the operation's own scratch; device buffers complete inside.
Task<Result> execute_op(const CallArgs& a, Prepared& p, const Global* g, Stats& st, OpScratch& os,
                        std::string& msg);
// A start of a2a's own alltoall on p, decided for it by name, its types
// gap-free (the nonblocking hot call: one frame around the algorithm's,
// no choice made again), and that operation.  Where the algorithm ran
// without falling back, `kept` holds its block view (in the operation's
// stats and scratch) for the next start with the same arguments to run
// the algorithm on straight.
bool own_start(const Prepared& p);
Task<Result> own_op(const CallArgs& a, Prepared& p, Stats& st, OpScratch& os, std::optional<UniformCall>& kept);

}  // namespace a2a::detail

namespace a2a::detail {
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

// A persistent call: the arguments (which, as for MPI's persistent
// collectives, must stay valid and unchanged until the plan is freed), the
// call prepared, agreed and its algorithm chosen at init.
struct A2A_Plan_s {
  a2a::detail::CallArgs args;
  std::unique_ptr<a2a::detail::Prepared> prepared;
  a2a::detail::Global global;
  // Below MPI_THREAD_SERIALIZED one thread makes every call, so a start
  // that runs the library's own collective may leave its stats for
  // last_stats (ThreadState::lazy), as a hot call does: the plan's free
  // writes them first.  Above, another thread could free the plan.
  bool stats_when_asked = false;
  bool active = false;  // a start in flight (A2A_Istart)
};


