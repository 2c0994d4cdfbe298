// The requests the shim hands out for a2a's operations (requests.hpp).
#include "requests.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "a2a/interpose.hpp"

namespace a2a::shim {
namespace {

std::mutex lock;  // the handshakes below, the plans' table, the orphans

// `lock`, at MPI_THREAD_MULTIPLE only: else one thread makes every MPI
// call, the progress hook's included.
std::unique_lock<std::mutex> guard() {
  return a2a::interpose::threads_multiple() ? std::unique_lock<std::mutex>(lock) : std::unique_lock<std::mutex>();
}
// Inside a watcher's call (the progress hook): the a2a operation must not
// be completed here (A2A_Wait belongs outside the hook).
thread_local bool telling = false;

// One MPI_Ialltoall(v) served by a2a.
struct Handed {
  A2A_Request op = A2A_REQUEST_NULL;
  MPI_Request greq = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  bool done = false;       // told by the hook (under `lock`)
  bool freed = false;      // its free_fn ran before it could be completed
  bool completed = false;  // A2A_Wait ran
};
// Spent ones kept for this thread's next calls: no allocation per call
// (initial-exec: read from the thread pointer; a thread's last few stay
// allocated when it ends).
constexpr int kSpareHanded = 8;
struct SpareHanded {
  Handed* kept[kSpareHanded];
  int count;
};
thread_local SpareHanded spare_handed __attribute__((tls_model("initial-exec")));
Handed* new_handed() {
  SpareHanded& s = spare_handed;
  if (s.count == 0) return new Handed;
  Handed* h = s.kept[--s.count];
  *h = Handed{};
  return h;
}
void delete_handed(Handed* h) {
  SpareHanded& s = spare_handed;
  if (s.count < kSpareHanded)
    s.kept[s.count++] = h;
  else
    delete h;
}

std::vector<Handed*> orphans;  // freed by the program before their operation ended
std::atomic<int> orphan_count{0};  // reap's look without the lock

void add_orphan(Handed* h) {  // under `lock`
  orphans.push_back(h);
  orphan_count.fetch_add(1, std::memory_order_relaxed);
}

void complete(Handed& h) {
  if (h.completed) return;
  h.rc = A2A_Wait(&h.op, MPI_STATUS_IGNORE);
  h.completed = true;
  if (a2a::interpose::verbose()) count_algorithm(h.comm);
}

int query(void* state, MPI_Status* status) {
  Handed& h = *static_cast<Handed*>(state);
  if (!telling) complete(h);
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return h.rc;
}

int release(void* state) {
  auto* h = static_cast<Handed*>(state);
  {
    const auto held = guard();
    if (telling || !h->done) {  // completed later, outside the hook (reap)
      h->freed = true;
      if (h->done) add_orphan(h);
      return MPI_SUCCESS;
    }
  }
  complete(*h);
  delete_handed(h);
  return MPI_SUCCESS;
}

int cancel(void*, int) { return MPI_SUCCESS; }  // an all-to-all is not cancelled

// The hook: h's operation is done.  After MPI_Grequest_complete, h may be
// gone (the program's wait, on another thread, frees it).
void tell(void* state, int rc) {
  auto* h = static_cast<Handed*>(state);
  {
    const auto held = guard();
    h->rc = rc;
    h->done = true;
    if (h->freed) add_orphan(h);
  }
  telling = true;
  PMPI_Grequest_complete(h->greq);
  telling = false;
}

// One persistent MPI_Alltoall(v)_init served by a2a: its request is a
// persistent receive of the code of each start, sent by the hook.
struct Planned {
  A2A_Plan plan = nullptr;
  A2A_Request op = A2A_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  bool alltoallv = false;
  MPI_Request recv = MPI_REQUEST_NULL;
  int tag = 0;
  int code_in = MPI_SUCCESS, code_out = MPI_SUCCESS;
  bool alone = false;  // a communicator of one rank
  std::atomic<bool> told{false};
};
std::unordered_map<MPI_Request, Planned*> plans;
std::atomic<int> plan_count{0};
// The receives' private duplicate of MPI_COMM_WORLD (open_requests), each
// receive matched by a send to this process's own rank.  Not a duplicate of
// MPI_COMM_SELF: MPICH 4.0.2 completes a message on a one-rank
// communicator sent by another thread (A2A_PROGRESS_THREAD's) without
// waking an MPI_Wait that already waits for it (docs/progress.md).
MPI_Comm own = MPI_COMM_NULL;
int own_rank = 0;
int next_tag = 0;
constexpr int kTags = 32767;  // MPI_TAG_UB is at least this

// Its start done: the code to the receive (a send to itself, matched at once).
void tell_plan(void* state, int rc) {
  auto* p = static_cast<Planned*>(state);
  p->code_out = rc;
  p->told = true;  // before the send: the receive's waiter may start the plan again at once
  MPI_Request r;
  if (PMPI_Isend(&p->code_out, 1, MPI_INT, own_rank, p->tag, own, &r) == MPI_SUCCESS) PMPI_Request_free(&r);
}

Planned* find_plan(MPI_Request r) {
  const auto held = guard();
  const auto it = plans.find(r);
  return it == plans.end() ? nullptr : it->second;
}

// The last start's operation completed (the program completed its request,
// or is freeing it): its stats for the summary.
int complete_start(Planned& p) {
  if (p.op == A2A_REQUEST_NULL) return MPI_SUCCESS;
  const int rc = A2A_Wait(&p.op, MPI_STATUS_IGNORE);
  if (a2a::interpose::verbose()) count_algorithm(p.comm);
  // Not told by the hook (A2A_Wait returns after a telling in progress):
  // its receive still waits.
  if (!p.told) tell_plan(&p, rc);
  return rc;
}

}  // namespace

int hand_out(A2A_Request op, MPI_Comm comm, bool alltoallv, MPI_Request* request) {
  Handed* h = new_handed();
  h->op = op;
  h->comm = comm;
  if (const int rc = PMPI_Grequest_start(query, release, cancel, h, &h->greq)) {
    A2A_Wait(&h->op, MPI_STATUS_IGNORE);
    delete_handed(h);
    return rc;
  }
  *request = h->greq;  // before the hook may complete it
  a2a::interpose::when_done(op, tell, h);
  count_served(comm, alltoallv, Kind::nonblocking);
  return MPI_SUCCESS;
}

int hand_out_plan(A2A_Plan plan, MPI_Comm comm, bool alltoallv, MPI_Request* request) {
  auto* p = new Planned;
  p->plan = plan;
  p->comm = comm;
  p->alltoallv = alltoallv;
  int ranks = 0;
  PMPI_Comm_size(comm, &ranks);
  p->alone = ranks == 1;
  {
    const auto held = guard();
    p->tag = next_tag;
    next_tag = (next_tag + 1) % kTags;
  }
  const int rc = PMPI_Recv_init(&p->code_in, 1, MPI_INT, own_rank, p->tag, own, &p->recv);
  if (rc != MPI_SUCCESS) {
    A2A_Plan_free(&p->plan);
    delete p;
    return rc;
  }
  {
    const auto held = guard();
    plans[p->recv] = p;
    plan_count.fetch_add(1, std::memory_order_relaxed);
  }
  *request = p->recv;
  return MPI_SUCCESS;
}

bool is_plan(MPI_Request r) {
  return plan_count.load(std::memory_order_relaxed) != 0 && r != MPI_REQUEST_NULL && find_plan(r);
}

int start_plan(MPI_Request* r) {
  Planned& p = *find_plan(*r);
  if (const int rc = complete_start(p)) return rc;  // the last start's error, reported by this one
  if (const int rc = PMPI_Start(r)) return rc;
  p.told = false;
  if (const int rc = A2A_Istart(p.plan, &p.op)) {
    tell_plan(&p, rc);  // its receive completes with the error's code
    return rc;
  }
  // One rank waits for no other: its start completes it, and this thread
  // sends the message (see `own`: with one rank, `own` may be one too).
  if (p.alone)
    complete_start(p);
  else
    a2a::interpose::when_done(p.op, tell_plan, &p);
  count_served(p.comm, p.alltoallv, Kind::persistent);
  return MPI_SUCCESS;
}

int free_plan(MPI_Request* r) {
  Planned* p = find_plan(*r);
  {
    const auto held = guard();
    plans.erase(*r);
    plan_count.fetch_sub(1, std::memory_order_relaxed);
  }
  const int rc = complete_start(*p);  // an active one is waited for, and told
  PMPI_Wait(&p->recv, MPI_STATUS_IGNORE);  // its message in before its buffer goes
  PMPI_Request_free(&p->recv);
  A2A_Plan_free(&p->plan);
  delete p;
  *r = MPI_REQUEST_NULL;
  return rc;
}

void reap() {
  if (orphan_count.load(std::memory_order_relaxed) == 0) return;
  std::vector<Handed*> done;
  {
    const auto held = guard();
    done.swap(orphans);
    orphan_count.store(0, std::memory_order_relaxed);
  }
  for (Handed* h : done) {
    complete(*h);
    delete_handed(h);
  }
}

int open_requests() {
  if (const int rc = PMPI_Comm_dup(MPI_COMM_WORLD, &own)) return rc;
  return PMPI_Comm_rank(own, &own_rank);
}

bool requests_open() { return own != MPI_COMM_NULL; }

void finalize_requests() {
  reap();
  if (own != MPI_COMM_NULL) PMPI_Comm_free(&own);
}

}  // namespace a2a::shim
