// The pipeline below the entry points: execute (execute.cpp) runs a
// prepared call, decided once, the hot call's test and run, device buffers
// (device.cpp) and nonblocking operations (nonblocking.cpp).
#pragma once
#include <optional>
#include <string>

#include "front/cache.hpp"

namespace a2a::detail {

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
// A plan's init: the decided alltoallv algorithm run once without data
// (its registry fallback where it falls back, as every start will), the
// exchanged metadata recorded into p.plan_log for the starts to replay
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
// Tests only: runs after a call is prepared anew (null: nothing), e.g. to
// make preparing cost what it does where the application evicts a2a's state.
extern void (*after_prepare_for_tests)();
// Runs a prepared call whose arguments every rank has checked: execute_op
// driven to completion.
int execute(const CallArgs& a, Prepared& p, const Global* g, Stats& st, std::string& msg);
// The message of an error found on another rank.
int failed(int err, std::string& msg);

// ---- device (device.cpp) ----
int device_call(const CallArgs& a, Prepared& p, Stats& st, std::string& msg);

// ---- every mode (execute.cpp) ----
// The pipeline below the hot call's test: device buffers, auto's first
// call, the choice and its class, then the algorithm (or the library's
// collective) on the block view.  execute drives it to completion in
// place; an operation (nonblocking.cpp) runs it on the engine with its own
// scratch `os` (device buffers complete inside).  Only blocking calls are
// timed for auto's trial and events.  kept: see own_start.
Task<Result> execute_op(const CallArgs& a, Prepared& p, const Global* g, Stats& st, OpScratch* os,
                        std::string& msg, std::optional<UniformCall>* kept = nullptr);
// Whether p is decided for a2a's own alltoall by name, its types gap-free:
// an operation's run then keeps its block view in `kept` (where the
// algorithm did not fall back), in the operation's stats and scratch, for
// the next start with the same arguments to run the algorithm on straight.
bool own_start(const Prepared& p);

}  // namespace a2a::detail
