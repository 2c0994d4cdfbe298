// Prepared calls kept per thread, most recent first, and matched by
// signature: the same communicator, buffers, counts (alltoallv: the arrays'
// contents), datatypes and spec.  A handle can come back for a new object
// once the old one is freed, so every prepared call carries the generation
// it was made in, and freeing anything it relies on starts a new one: a
// communicator (its context's attribute delete callback), a derived
// datatype (a delete callback cached on it here), MPI itself (a delete
// callback on MPI_COMM_SELF, which MPI_Finalize runs first).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include "front/cache.hpp"

namespace a2a::detail {

namespace {

std::mutex keyval_lock;
int type_keyval = MPI_KEYVAL_INVALID;

int forget_on_free(MPI_Datatype, int, void*, void*) {
  forget_derived_datatype();
  return MPI_SUCCESS;
}

// Frees the thread's state when the thread ends.
struct Owner {
  std::unique_ptr<ThreadState> state;
  ~Owner() { current_thread_state = nullptr; }
};

}  // namespace

CallGlobals call_globals;

#ifdef A2A_SMPI
constinit thread_local ThreadState* current_thread_state = nullptr;
#else
constinit thread_local ThreadState* current_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;
#endif

ThreadState& make_thread_state() {
  thread_local Owner owner;
  owner.state = std::make_unique<ThreadState>();
  current_thread_state = owner.state.get();
  return *current_thread_state;
}


int comm_size(MPI_Comm comm) {
  int P = 0;
  return comm != MPI_COMM_NULL && MPI_Comm_size(comm, &P) == MPI_SUCCESS ? P : 0;
}

// A hash of alltoallv's count and displacement arrays' contents, so that
// calls whose counts change every time do not compare against every slot.
uint64_t counts_hash(const CallArgs& a, int P) {
  uint64_t h = 0x2545f4914f6cdd1dull;
  for (const int* arr : {a.scounts, a.sdispls, a.rcounts, a.rdispls})
    for (int i = 0; i < P; ++i) h = (h ^ static_cast<uint32_t>(arr[i])) * 0x9e3779b97f4a7c15ull;
  return h;
}

uint64_t signature_hash(const CallArgs& a) {  // FNV-1a over the spec, then the fields mixed in
  uint64_t h = 1469598103934665603ull;
  for (const char* c = a.spec; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  const uint64_t fields[] = {handle_bits(a.comm),
                             reinterpret_cast<uintptr_t>(a.sendbuf),
                             reinterpret_cast<uintptr_t>(a.recvbuf),
                             handle_bits(a.stype),
                             handle_bits(a.rtype),
                             (static_cast<uint64_t>(static_cast<uint32_t>(a.scount)) << 32) |
                                 static_cast<uint32_t>(a.rcount),
                             static_cast<uint64_t>(a.coll),
                             a.v() && a.scounts && a.sdispls && a.rcounts && a.rdispls ? counts_hash(a, comm_size(a.comm))
                                                                                       : 0};
  for (uint64_t f : fields) h = (h ^ f) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
void invalidate_prepared() {
  call_globals.comm_generation.fetch_add(1, std::memory_order_acq_rel);
  call_globals.generation.fetch_add(1, std::memory_order_acq_rel);
}
void forget_derived_datatype() { call_globals.generation.fetch_add(1, std::memory_order_acq_rel); }

bool watch_datatype(MPI_Datatype type, bool& derived) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  derived = true;
  if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  derived = combiner != MPI_COMBINER_NAMED;
  if (!derived) return true;
  {
    std::lock_guard<std::mutex> guard(keyval_lock);
    if (type_keyval == MPI_KEYVAL_INVALID &&
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, forget_on_free, &type_keyval, nullptr) != MPI_SUCCESS)
      return false;
  }
  int found = 0;
  void* value = nullptr;
  if (MPI_Type_get_attr(type, type_keyval, &value, &found) != MPI_SUCCESS) return false;
  return found || MPI_Type_set_attr(type, type_keyval, nullptr) == MPI_SUCCESS;
}

Prepared* find_in_slots(ThreadState& ts, const CallArgs& a) {
  if (ts.slot[1] && matches(*ts.slot[1], a)) {  // two calls in turn: no hash
    std::swap(ts.slot[0], ts.slot[1]);
    std::swap(ts.key[0], ts.key[1]);
    return ts.slot[0].get();
  }
  const uint64_t key = signature_hash(a);
  for (size_t i = 1; i < kPreparedSlots; ++i)
    if (ts.key[i] == key && ts.slot[i] && matches(*ts.slot[i], a)) {
      std::rotate(ts.slot, ts.slot + i, ts.slot + i + 1);  // most recent first
      std::rotate(ts.key, ts.key + i, ts.key + i + 1);
      return ts.slot[0].get();
    }
  return nullptr;
}

std::unique_ptr<Prepared> recycle_prepared(ThreadState& ts) {
  std::unique_ptr<Prepared> p = std::move(ts.slot[kPreparedSlots - 1]);
  forget_hot(ts, p.get());  // it may be the one recycled (a nested call's, device.cpp)
  ts.key[kPreparedSlots - 1] = 0;
  return p ? std::move(p) : std::make_unique<Prepared>();
}

Prepared* keep_prepared(ThreadState& ts, std::unique_ptr<Prepared> p) {
  if (const Prepared* gone = ts.slot[kPreparedSlots - 1].get())  // a completed operation's may push one out
    forget_hot(ts, gone);
  std::rotate(ts.slot, ts.slot + kPreparedSlots - 1, ts.slot + kPreparedSlots);  // the least recent goes
  std::rotate(ts.key, ts.key + kPreparedSlots - 1, ts.key + kPreparedSlots);
  ts.key[0] = p->key;
  ts.slot[0] = std::move(p);
  return ts.slot[0].get();
}

}  // namespace a2a::detail
