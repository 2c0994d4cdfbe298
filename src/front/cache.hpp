// The prepared-call cache: per thread, the hot call and the prepared calls
// kept by signature (cache.cpp), and the compares a repeated call makes.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "front/call.hpp"

namespace a2a::detail {

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
  // its communicator, to the library and left what its stats need here
  // (a2a::interpose::served_by_library).
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

}  // namespace a2a::detail
