// Nonblocking calls (A2A_Ialltoall(v), A2A_Istart) and their completion
// (A2A_Wait/Test/Waitall/Testall): an operation is execute's choice run as
// a coroutine on the engine (core/engine.hpp), started here (it runs until
// its first wait), advanced by every a2a call's progress step and completed
// by a wait or test.  Its prepared call comes from the thread's cache (taken
// out while it runs, so no other call recycles it) or is made now, or is a
// plan's; it goes back into the cache of the thread that completes it, or,
// for a2a's own alltoall algorithm, stays with the completed operation for
// that thread's next start with the same arguments.
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "a2a/a2a.h"
#include "core/config.hpp"
#include "front/pipeline.hpp"
#include "front/plan.hpp"
#include "front/progress.hpp"

namespace a2a::detail {
namespace {

// A started operation's state (A2A_Request points to it).
struct Operation {
  OpState state;
  Task<Result> task;
  CallArgs args;
  std::unique_ptr<Prepared> owned;  // taken from the cache or made now; null for a plan's start
  Prepared* prepared = nullptr;
  A2A_Plan plan = nullptr;
  Global global;
  bool agreed = false;
  Stats stats;
  OpScratch scratch;
  std::string error;
  bool pending = false;  // in the progress list
  // A completed operation of a2a's own alltoall algorithm keeps its
  // prepared call (`owned`) for the thread's next start with the same
  // arguments (`hot`: hot_repeat's test), which then takes it without the
  // cache's lookup, nor gives it back there at completion.
  HotCall hot;
  // The block view its last run of a2a's own algorithm ran on, where that
  // did not fall back (run_full): a start from `hot` runs the algorithm on it
  // straight, as the blocking hot call runs on Prepared::hot_view.  Its
  // stats and scratch are this operation's.
  std::optional<UniformCall> view;
  // Who is told when it is done (watch_operation): the shim completes the
  // MPI request it handed out from there.
  void (*on_done)(void*, int) = nullptr;
  void* on_done_arg = nullptr;
};

// The operations a watcher waits for, told from the progress hook
// (advance_operations) once done.  Never destroyed: hooks may run at exit.
struct WatchList {
  std::mutex lock;  // taken only at MPI_THREAD_MULTIPLE (else one thread calls MPI, hooks included)
  std::vector<Operation*> ops;
  std::unique_lock<std::mutex> guard() {
    return threads_multiple() ? std::unique_lock<std::mutex>(lock) : std::unique_lock<std::mutex>();
  }
};
WatchList& watch_list() {
  static auto* w = new WatchList;
  return *w;
}
std::atomic<int> watched_count{0};
void unwatch(Operation& op) {
  WatchList& w = watch_list();
  const auto guard = w.guard();
  for (Operation*& o : w.ops)
    if (o == &op) {
      o = w.ops.back();
      w.ops.pop_back();
      watched_count.fetch_sub(1, std::memory_order_relaxed);
      break;
    }
}

// Completed operations kept for the thread's next start (at most
// kSpareOps): their scratch stays allocated (bounded by the largest call
// each made, as a communicator's own scratch is) and nothing is allocated
// per start.
constexpr size_t kSpareOps = 8;
// Reached through an initial-exec pointer (as ThreadState is): the
// default model's __tls_get_addr cost a start and a completion a call
// each, and so did the guard of a thread_local with a destructor.
using SpareOps = std::vector<std::unique_ptr<Operation>>;
#ifdef A2A_SMPI
constinit thread_local SpareOps* spare_list = nullptr;
#else
constinit thread_local SpareOps* spare_list __attribute__((tls_model("initial-exec"))) = nullptr;
#endif
struct SpareOwner {
  SpareOps ops;
  ~SpareOwner() { spare_list = nullptr; }
};
SpareOps& make_spare_ops() {
  static thread_local SpareOwner owner;
  spare_list = &owner.ops;
  return owner.ops;
}
inline SpareOps& spare_ops() { return __builtin_expect(spare_list != nullptr, 1) ? *spare_list : make_spare_ops(); }
void give_back(ThreadState& ts, std::unique_ptr<Prepared> p, const CallArgs& a);
// A spare operation, holding no prepared call: one that kept none if any,
// else the least recently completed, whose kept call goes back to the cache.
std::unique_ptr<Operation> new_operation(ThreadState& ts) {
  auto& spare = spare_ops();
  if (spare.empty()) return std::make_unique<Operation>();
  auto it = spare.end();
  while (it != spare.begin() && (*(it - 1))->hot.prepared) --it;
  it = it == spare.begin() ? spare.begin() : it - 1;
  std::unique_ptr<Operation> op = std::move(*it);
  spare.erase(it);
  if (op->hot.prepared) {  // a spare without one kept no view either (recycle)
    op->hot.prepared = nullptr;
    op->view.reset();
    CallArgs kept = op->hot.args;  // its spec as copied (the caller's string may be gone)
    kept.spec = op->hot.spec;
    kept.spec_owned = false;
    if (current(*op->owned)) give_back(ts, std::move(op->owned), kept);
    op->owned.reset();
  }
  return op;
}
// The spare operation that kept a's prepared call, the most recent first
// (hot_repeat: the same arguments, still current); null where none did.
std::unique_ptr<Operation> spare_for(const CallArgs& a) {
  auto& spare = spare_ops();
  for (auto it = spare.rbegin(); it != spare.rend(); ++it) {
    Operation& op = **it;
    if (op.hot.prepared && hot_repeat(op.hot, a)) {
      std::unique_ptr<Operation> found = std::move(*it);
      spare.erase(std::next(it).base());
      return found;
    }
  }
  return nullptr;
}
void recycle(std::unique_ptr<Operation> op) {
  auto& spare = spare_ops();
  if (spare.size() >= kSpareOps) return;
  op->task = Task<Result>();  // its frame back to the pool
  op->state = OpState{};
  if (!op->hot.prepared) {
    op->owned.reset();
    op->view.reset();
  }
  op->prepared = nullptr;
  op->plan = nullptr;
  op->agreed = false;
  op->pending = false;
  op->on_done = nullptr;
  op->on_done_arg = nullptr;
  op->error.clear();
  spare.push_back(std::move(op));
}

// p out of the thread's cache, for an operation to own while it runs.
std::unique_ptr<Prepared> take_from_cache(ThreadState& ts, Prepared* p) {
  for (size_t i = 0; i < kPreparedSlots; ++i)
    if (ts.slot[i].get() == p) {
      ts.key[i] = 0;
      forget_hot(ts, p);
      return std::move(ts.slot[i]);
    }
  return nullptr;
}

// A completed operation's prepared call back in the thread's cache: into
// the first slot, where its start left it empty and no call has been kept
// or found since (each moves the empty slot down), without a lookup; else
// kept where no call of its signature was kept meanwhile.
// `a`: the operation's arguments (p's own may point to arrays since freed:
// alltoallv's counts match by content).
void give_back(ThreadState& ts, std::unique_ptr<Prepared> p, const CallArgs& a) {
  if (!ts.slot[0]) {
    ts.key[0] = p->key;
    ts.slot[0] = std::move(p);
  } else if (!find_prepared(ts, a)) {
    keep_prepared(ts, std::move(p));
  }
}

// Runs op's task until its first wait; pending where not done.
void run_until_wait(Operation& op) {
  OpState*& cur = current_op();
  OpState* outer = cur;
  cur = &op.state;
  op.task.handle().resume();
  cur = outer;
  if (!op.task.done() && !op.pending) {
    op.pending = true;
    pending_add(&op.state);
    progress_kick();
  }
}

// The way to op's algorithm: the blocking calls' pipeline, which keeps the
// view of a2a's own alltoall algorithm for the next start.
void run_full(Operation& op) {
  op.view.reset();
  op.task = execute_op(op.args, *op.prepared, op.agreed ? &op.global : nullptr, op.stats, &op.scratch, op.error,
                       own_start(*op.prepared) ? &op.view : nullptr);
  run_until_wait(op);
}

// Runs op until its first wait (every rank starts operations in one order
// per communicator, so what runs here, any collective set-up included, is
// ordered as blocking calls are).  A start from the view its last run
// kept runs the algorithm on it straight; where that falls back (fixed by
// values every rank shares, so never where the last run did not), the
// full way runs the registry's fallback.
void launch(Operation& op) {
  op.state.blocking = false;
  op.state.tag = op.prepared->ctx->next_op_tag();
  if (!op.view) return run_full(op);
  const Prepared& p = *op.prepared;
  begin_stats(op.stats, p);
  op.scratch.begin_call();
  op.task = p.chosen.info->uniform(*op.view, p.chosen.params);
  run_until_wait(op);
  if (op.task.done() && op.task.value().fell_back()) run_full(op);
}

// Whether op has completed (its task done with an MPI code); a kept
// view's algorithm that fell back after its first wait (see launch) goes
// the full way now.
bool finished(Operation& op) {
  if (!op.task.done()) return false;
  if (!op.task.value().fell_back()) return true;
  run_full(op);
  return op.task.done();
}

int start(const CallArgs& a, A2A_Request* request) {
  progress_pending();
  ThreadState& ts = thread_state();
  ts.error.clear();
  if (!request) {
    ts.error = "a2a: request is NULL";
    return MPI_ERR_ARG;
  }
  *request = A2A_REQUEST_NULL;
  const bool agreeing = agree_mode();
  // A spare's own call again: the thread's cache untouched, so a hot
  // call's lazy stats (ts.lazy, a call in the cache) stay valid.
  if (!agreeing)
    if (std::unique_ptr<Operation> op = spare_for(a)) {
      op->args = a;
      op->prepared = op->owned.get();
      launch(*op);
      *request = reinterpret_cast<A2A_Request>(op.release());
      return MPI_SUCCESS;
    }
  last_stats(ts);  // a hot call's lazy stats written before its call may be taken or recycled
  ts.lazy = nullptr;
  std::unique_ptr<Operation> op = new_operation(ts);
  op->args = a;
  Prepared* found = find_prepared(ts, a);
  int err = MPI_SUCCESS;
  if (found) {
    op->owned = take_from_cache(ts, found);
  } else {
    CommContext* ctx = nullptr;
    if (const int rc = open_comm(a.comm, ctx)) {
      ts.stats = Stats{};
      return rc;
    }
    op->owned = recycle_prepared(ts);
    err = prepare(a, *ctx, *op->owned, ts.error);
  }
  op->prepared = op->owned.get();
  if (agreeing) {
    if (const int rc = agree(*op->prepared, err, op->global, ts.error)) return rc;
    err = op->global.err;
    op->agreed = true;
  }
  if (err != MPI_SUCCESS) {
    ts.stats = op->prepared->stats;
    return failed(err, ts.error);
  }
  launch(*op);
  *request = reinterpret_cast<A2A_Request>(op.release());
  return MPI_SUCCESS;
}

Operation* operation(A2A_Request r) { return reinterpret_cast<Operation*>(r); }

void empty_status(MPI_Status* status, int rc) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = rc;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
}

// A done operation completed: its result, its stats the thread's last, its
// prepared call back in the thread's cache (or its plan free to start
// again), the request null.
int complete(A2A_Request* request, MPI_Status* status) {
  std::unique_ptr<Operation> op(operation(*request));
  *request = A2A_REQUEST_NULL;
  if (op->pending) pending_remove(&op->state);
  if (op->on_done) unwatch(*op);  // also waits for a watcher being told now
  const int rc = op->task.value().code();
  ThreadState& ts = thread_state();
  ts.lazy = nullptr;  // replaced whole
  ts.stats = op->stats;
  if (!op->error.empty() || !ts.error.empty()) ts.error = op->error;
  if (op->plan) op->plan->active = false;
  const bool keep = op->owned && op->owned->cacheable && current(*op->owned);
  const bool kept_before = op->hot.prepared && op->hot.prepared == op->owned.get();  // started from it
  if (keep && rc == MPI_SUCCESS && (kept_before || own_start(*op->owned))) {
    if (!kept_before) remember_hot(op->hot, op->args, *op->owned);
  } else {
    op->hot.prepared = nullptr;  // its view goes with it (recycle)
  }
  if (keep && !op->hot.prepared) give_back(ts, std::move(op->owned), op->args);  // else kept with the spare
  empty_status(status, rc);
  recycle(std::move(op));
  return explained(rc);
}

// The watchers of operations now done, told under the list's lock: an
// A2A_Wait on another thread (unwatch) returns only once its watcher is
// told, so what the watcher was given outlives the telling.  Their watch
// ends here; completion stays A2A_Wait's (a watcher completes only an MPI
// request, and the shim's guard keeps a completion it triggers off a2a).
int tell_watchers() {
  WatchList& w = watch_list();
  std::unique_lock<std::mutex> guard(w.lock, std::defer_lock);
  if (threads_multiple() && !guard.try_lock()) return 0;
  int told = 0;
  for (size_t i = 0; i < w.ops.size();) {
    Operation& op = *w.ops[i];
    if (!finished(op)) {
      ++i;
      continue;
    }
    w.ops[i] = w.ops.back();
    w.ops.pop_back();
    watched_count.fetch_sub(1, std::memory_order_relaxed);
    op.on_done(op.on_done_arg, op.task.value().code());
    ++told;
  }
  return told;
}

}  // namespace

void release_spare_operations() { spare_ops().clear(); }

void watch_operation(A2A_Request request, void (*done)(void*, int), void* arg) {
  Operation& op = *operation(request);
  op.on_done = done;
  op.on_done_arg = arg;
  if (finished(op)) {
    done(arg, op.task.value().code());
    return;
  }
  WatchList& w = watch_list();
  {
    const auto guard = w.guard();
    w.ops.push_back(&op);
    watched_count.fetch_add(1, std::memory_order_relaxed);
  }
  progress_kick();
}

// Every pending operation stepped, the watchers of those done told: the
// progress hook's body.  Nothing (at the cost of two loads) where nothing
// is pending; nothing inside a step of this thread's (the hook runs in the
// step's own MPI calls).
Advanced advance_operations() {
  if (pending_count.load(std::memory_order_relaxed) == 0 && watched_count.load(std::memory_order_relaxed) == 0)
    return {};
  bool& stepping = engine_thread.stepping;
  if (stepping) return {0, true};
  Advanced a;
  a.busy = progress_pending_slow();
  if (watched_count.load(std::memory_order_relaxed) != 0) {
    stepping = true;
    a.done = tell_watchers();
    stepping = false;
  }
  // A watcher not told yet (its list busy on another thread) keeps it busy.
  a.busy = a.busy || watched_count.load(std::memory_order_relaxed) != 0;
  return a;
}

}  // namespace a2a::detail

using a2a::detail::Operation;

extern "C" int A2A_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, A2A_Request* request) {
  using namespace a2a::detail;
  return explained(
      start(alltoall_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm), request));
}

extern "C" int A2A_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, const char* algorithm, A2A_Request* request) {
  using namespace a2a::detail;
  return explained(start(alltoallv_args(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                        recvtype, comm, algorithm),
                         request));
}

extern "C" int A2A_Istart(A2A_Plan plan, A2A_Request* request) {
  using namespace a2a::detail;
  progress_pending();
  ThreadState& ts = thread_state();
  ts.error.clear();
  last_stats(ts);
  ts.lazy = nullptr;
  if (!plan || !request) {
    ts.error = !plan ? "a2a: plan is NULL" : "a2a: request is NULL";
    return MPI_ERR_ARG;
  }
  *request = A2A_REQUEST_NULL;
  if (plan->active) {
    ts.error = "a2a: the plan's last start has not completed";
    return explained(MPI_ERR_REQUEST);
  }
  std::unique_ptr<Operation> op = new_operation(ts);
  op->args = plan->args;
  op->prepared = plan->prepared.get();
  op->plan = plan;
  op->global = plan->global;
  op->agreed = true;
  plan->active = true;
  launch(*op);
  *request = reinterpret_cast<A2A_Request>(op.release());
  return MPI_SUCCESS;
}

extern "C" int A2A_Test(A2A_Request* request, int* flag, MPI_Status* status) {
  using namespace a2a::detail;
  if (!request || !flag) return MPI_ERR_ARG;
  progress_pending();
  if (*request == A2A_REQUEST_NULL) {
    *flag = 1;
    empty_status(status, MPI_SUCCESS);
    return MPI_SUCCESS;
  }
  *flag = finished(*operation(*request));
  return *flag ? complete(request, status) : MPI_SUCCESS;
}

extern "C" int A2A_Wait(A2A_Request* request, MPI_Status* status) {
  using namespace a2a::detail;
  if (!request) return MPI_ERR_ARG;
  if (*request == A2A_REQUEST_NULL) {
    progress_pending();
    empty_status(status, MPI_SUCCESS);
    return MPI_SUCCESS;
  }
  Operation* op = operation(*request);
  while (!finished(*op))
    if (!wait_alone(op->state)) progress_pending_slow();  // this one is pending
  return complete(request, status);
}

extern "C" int A2A_Waitall(int count, A2A_Request requests[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && !requests)) return MPI_ERR_ARG;
  int err = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const int rc = A2A_Wait(&requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
    if (rc != MPI_SUCCESS && err == MPI_SUCCESS) err = rc;
  }
  return err == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_IN_STATUS;
}

extern "C" int A2A_Testall(int count, A2A_Request requests[], int* flag, MPI_Status statuses[]) {
  using namespace a2a::detail;
  if (count < 0 || (count > 0 && !requests) || !flag) return MPI_ERR_ARG;
  progress_pending();
  *flag = 1;
  for (int i = 0; i < count; ++i)
    if (requests[i] != A2A_REQUEST_NULL && !finished(*operation(requests[i]))) *flag = 0;
  if (!*flag) return MPI_SUCCESS;
  int err = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    const int rc = requests[i] == A2A_REQUEST_NULL ? (empty_status(st, MPI_SUCCESS), MPI_SUCCESS)
                                                    : complete(&requests[i], st);
    if (rc != MPI_SUCCESS && err == MPI_SUCCESS) err = rc;
  }
  return err == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_IN_STATUS;
}
