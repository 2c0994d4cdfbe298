// The C API (a2a.h), persistent plans and the C++ conveniences (a2a.hpp)
// over the front end (call.hpp).
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "core/config.hpp"
#include "front/pipeline.hpp"
#include "front/plan.hpp"
#include "front/progress.hpp"
#include "select/auto.hpp"
#include "select/tuning.hpp"
#include "core/algorithm.hpp"
#include "both/shm.hpp"

namespace a2a::detail {
namespace {

// Core's callbacks (core/context.hpp), set before any communicator is met.
const bool hooks_set = [] {
  ContextHooks h;
  h.context_freed = invalidate_prepared;
  h.finalizing = [] {
    invalidate_prepared();
    shm_forget_kept();
    release_spare_operations();  // at thread exit SMPI's shared scratch would be gone
    stop_progress();
  };
  h.tuning_fingerprint = [] {
    uint64_t print = 0;
    process_tuning(nullptr, &print);
    return print;
  };
  set_context_hooks(h);
  return true;
}();

}  // namespace

// The error check: the configuration's until set.
bool agree_mode() {
  const int mode = call_globals.agree.load(std::memory_order_relaxed);
  if (__builtin_expect(mode >= 0, 1)) return mode == 1;
  int unread = -1;
  call_globals.agree.compare_exchange_strong(unread, config().agree ? 1 : 0);
  return call_globals.agree.load() == 1;
}

// The spec of calls of coll that pass NULL: config's, read once.
[[gnu::noinline, gnu::cold]] const char* read_default_spec(Collective coll) {
  const char* s = coll == Collective::alltoall ? config().alltoall.c_str() : config().alltoallv.c_str();
  call_globals.spec[static_cast<int>(coll)].store(s, std::memory_order_release);
  return s;
}
inline const char* default_spec(Collective coll) {
  const char* s = call_globals.spec[static_cast<int>(coll)].load(std::memory_order_acquire);
  return __builtin_expect(s != nullptr, 1) ? s : read_default_spec(coll);
}

CallArgs alltoall_args(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm) {
  CallArgs a;
  a.coll = Collective::alltoall;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  a.scount = in_place ? recvcount : sendcount;
  a.stype = in_place ? recvtype : sendtype;
  a.rcount = recvcount;
  a.rtype = recvtype;
  a.comm = comm;
  a.spec = algorithm ? algorithm : default_spec(Collective::alltoall);
  a.spec_owned = !algorithm;
  return a;
}

CallArgs alltoallv_args(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, const char* algorithm) {
  CallArgs a;
  a.coll = Collective::alltoallv;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  const bool in_place = sendbuf == MPI_IN_PLACE;  // the send data is described by the receive arguments
  a.scounts = in_place ? recvcounts : sendcounts;
  a.sdispls = in_place ? rdispls : sdispls;
  a.stype = in_place ? recvtype : sendtype;
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  a.rtype = recvtype;
  a.comm = comm;
  a.spec = algorithm ? algorithm : default_spec(Collective::alltoallv);
  a.spec_owned = !algorithm;
  return a;
}

[[gnu::noinline, gnu::cold]] int explain(int rc) {
  std::string& msg = thread_state().error;
  if (msg.empty()) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
    msg = "a2a: MPI error " + std::to_string(rc) + (len ? ": " + std::string(text, static_cast<size_t>(len)) : "");
  }
  return rc;
}

namespace {

// The hot call again (hot_repeat's test passed): a2a's own algorithm on
// it, or the library's collective, its stats left for last_stats.
template <Collective C>
inline int run_hot(ThreadState& ts, HotCall& hot, const CallArgs& a) {
  if (hot.own) {
    ts.lazy = nullptr;
    return explained(run_hot_own(a, *hot.prepared, ts.stats));
  }
  ts.lazy = hot.prepared;
  return explained(library_call_of<C>(a, hot.on));
}

// A repeated call (found, no agreement) goes straight to execute, and
// where it runs the library's own collective straight to it (the hot
// call), its stats left for last_stats: the hot path (docs/results.md's
// call overhead).  hot_tested: call's test of the hot call failed with
// nothing pending, no error kept and the local check (not tested again).
[[gnu::noinline]] int call_full(const CallArgs& a, bool hot_tested) {
  progress_pending();  // weak progress: pending operations advance in every call
  ThreadState& ts = thread_state();
  if (__builtin_expect(!ts.error.empty(), 0)) ts.error.clear();
  const bool agree = agree_mode();
  HotCall& hot = ts.hot_of(a.coll);
  if (!hot_tested && !agree && hot_repeat(hot, a))
    return a.v() ? run_hot<Collective::alltoallv>(ts, hot, a) : run_hot<Collective::alltoall>(ts, hot, a);
  ts.lazy = nullptr;
  if (__builtin_expect(ts.time_next_call, 0) && !agree) ts.call_began = MPI_Wtime();
  Prepared* p = find_prepared(ts, a);
  // A hot call that goes the full way (an event, a decision changed, its
  // checks) is kept hot again below where it still runs as decided.  A
  // call of another signature leaves it hot: programs alternate calls (a
  // transpose and its inverse; the bench's rows), and a hot call that
  // stayed so costs 0.15 us less each time it comes back (P = 2).
  if (!p || p == hot.prepared) hot.prepared = nullptr;
  if (p && !agree) {
    const int rc = execute(a, *p, nullptr, ts.stats, ts.error);
    ts.call_began = 0;
    if (rc == MPI_SUCCESS && (p->native_decided || p->own_decided)) remember_hot(hot, a, *p);
    return explained(rc);
  }
  const int rc = run_found(ts, a, p, agree, ts.stats, ts.error);
  ts.call_began = 0;
  // A call prepared now (kept first) is the hot call too: the next call
  // may differ in its counts or buffers alone (hot_new_blocks).
  if (rc == MPI_SUCCESS && !agree && !p && ts.slot[0] && (ts.slot[0]->native_decided || ts.slot[0]->own_decided) &&
      matches(*ts.slot[0], a))
    remember_hot(hot, a, *ts.slot[0]);
  return explained(rc);
}

// A call of collective C: the hot call's test inline in the entry point,
// its collective known (the arguments stay in registers), else call_full.
// Nothing pending, no error message to clear and the local error check
// are what call_full finds first on a hot call.
template <Collective C>
[[gnu::always_inline]] inline int call(const CallArgs& a) {
  ThreadState* t = current_thread_state;
  const bool plain = t && pending_count.load(std::memory_order_relaxed) == 0 && t->error.empty() &&
                     call_globals.agree.load(std::memory_order_relaxed) == 0;
  if (__builtin_expect(plain, 1)) {
    HotCall& hot = C == Collective::alltoall ? t->hot : t->hot_v;
    if (__builtin_expect(hot_repeat_of<C>(hot, a), 1)) return run_hot<C>(*t, hot, a);
  }
  return call_full(a, plain);
}

}  // namespace

}  // namespace a2a::detail

namespace a2a::detail {
namespace {

// Init: prepare, agree (always: once per plan), and fix the algorithm,
// alltoallv's auto included (the counts stay as they are).
int plan_init(const CallArgs& a, A2A_Plan* plan) {
  ThreadState& ts = thread_state();
  ts.error.clear();
  ts.lazy = nullptr;
  if (!plan) {
    ts.error = "a2a: plan is NULL";
    return MPI_ERR_ARG;
  }
  *plan = nullptr;
  std::string& msg = ts.error;
  CommContext* ctx = nullptr;
  if (const int rc = open_comm(a.comm, ctx)) return rc;
  auto p = std::make_unique<A2A_Plan_s>();
  p->args = a;
  p->prepared = std::make_unique<Prepared>();
  Prepared& pr = *p->prepared;
  int err = prepare(a, *ctx, pr, msg);
  Global& g = p->global;
  if (const int rc = agree(pr, err, g, msg)) return rc;
  err = g.err;
  ts.stats = pr.stats;
  if (err != MPI_SUCCESS) return failed(err, msg);
  if (!g.where.device) {
    if (const int rc = decide(pr, &g, true, msg)) return rc;
    // A plan is for repeated calls: its private communicator now (auto's
    // first call on a communicator would otherwise run native, execute.cpp).
    if (!pr.cls && (pr.chosen.info->uniform || pr.chosen.info->varying) && pr.chosen.info->private_comm)
      if (const int rc = ctx->open_private()) return rc;
    if (const int rc = record_plan_meta(pr, g)) return rc;
  }
  ts.stats = pr.stats;
  int threads = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threads);
  p->stats_when_asked = threads <= MPI_THREAD_FUNNELED;
  *plan = p.release();
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace a2a::detail

using a2a::detail::Stats;

extern "C" int A2A_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm) {
  return a2a::detail::call<a2a::detail::Collective::alltoall>(
      a2a::detail::alltoall_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm));
}

extern "C" int A2A_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, const char* algorithm) {
  return a2a::detail::call<a2a::detail::Collective::alltoallv>(a2a::detail::alltoallv_args(
      sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, algorithm));
}

extern "C" int A2A_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm,
                                 A2A_Plan* plan) {
  return a2a::detail::explained(a2a::detail::plan_init(
      a2a::detail::alltoall_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm), plan));
}

extern "C" int A2A_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, A2A_Plan* plan) {
  return a2a::detail::explained(a2a::detail::plan_init(
      a2a::detail::alltoallv_args(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  comm, algorithm),
      plan));
}

extern "C" int A2A_Start(A2A_Plan plan) {
  using namespace a2a::detail;
  ThreadState& ts = thread_state();
  if (__builtin_expect(!ts.error.empty(), 0)) ts.error.clear();
  if (!plan) {
    ts.lazy = nullptr;
    ts.error = "a2a: plan is NULL";
    return MPI_ERR_ARG;
  }
  progress_pending();
  if (plan->active) {
    ts.lazy = nullptr;
    ts.error = "a2a: the plan's last start has not completed";
    return explained(MPI_ERR_REQUEST);
  }
  Prepared& p = *plan->prepared;
  if (plan->stats_when_asked && p.native_decided && class_quiet(p)) {  // as a hot call (capi's call)
    ts.lazy = &p;
    return explained(library_call(plan->args, decided_native_comm(plan->args, p)));
  }
  ts.lazy = nullptr;
  return explained(execute(plan->args, p, &plan->global, ts.stats, ts.error));
}

extern "C" int A2A_Plan_free(A2A_Plan* plan) {
  if (!plan) return MPI_ERR_ARG;
  if (*plan && (*plan)->active) return MPI_ERR_REQUEST;  // its start still in flight
  if (*plan) {
    a2a::detail::ThreadState& ts = a2a::detail::thread_state();
    if (ts.lazy == (*plan)->prepared.get()) a2a::detail::last_stats(ts);  // written before they go
  }
  delete *plan;
  *plan = nullptr;
  return MPI_SUCCESS;
}

namespace a2a::detail {
namespace {
// Prices alltoall's classes of every power-of-two block size up to 8 MiB,
// smallest first, until `seconds` have passed: a program that makes a
// communicator per plan (FFTW) then meets its class priced instead of
// pricing it inside a call on cold code (10-25 us at P = 2 here, against
// 2-5 us warm).  Local once the machine is measured (the model is pure), so
// ranks may stop at different classes.
void price_alltoall_classes(CommContext& ctx, double seconds) {
  MachineModel m;
  std::string error;
  if (machine_model(ctx, m, error) != MPI_SUCCESS) return;  // measured already, or nothing priced
  // The process's own clock, not MPI_Wtime: under SMPI that is simulated
  // time, which pricing never advances, so every simulated rank priced all
  // 24 classes in turn on the one host.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::shared_ptr<ClassState> c;
  for (long long bytes = 1; bytes <= (8LL << 20) && std::chrono::steady_clock::now() < until; bytes *= 2)
    if (auto_class(ctx, Collective::alltoall, bytes, bytes, c, error) != MPI_SUCCESS) return;
}
}  // namespace
}  // namespace a2a::detail

// The communicator's context (collective: its layout), the machine's costs
// for auto (collective, measured on a duplicate freed at once), shm's
// segment, auto's alltoallv class and (for up to a millisecond) its
// alltoall classes priced by the model, then a
// byte-per-peer alltoall and alltoallv prepared and dropped, never run:
// the call path's code, the spec's resolution, the tuning file and (CUDA
// builds) the driver's pointer queries are warm before the first real
// call.  Once per process an alltoall class is priced and the rest of the
// path (lookup, execution, stats) runs too, on MPI_COMM_SELF with one byte
// and `native`, so no other rank takes part; the calling thread's last
// stats and error stay as they were.
extern "C" int A2A_Comm_prepare(MPI_Comm comm) {
  using namespace a2a::detail;
  CommContext* ctx = nullptr;
  if (const int rc = open_comm(comm, ctx)) return rc;
  const size_t P = static_cast<size_t>(ctx->size);
  std::vector<char> send(P), recv(P);
  std::vector<int> ones(P, 1), displs(P);
  for (size_t i = 0; i < P; ++i) displs[i] = static_cast<int>(i);
  std::string ignored;
  Prepared uniform, varying;
  prepare(alltoall_args(send.data(), 1, MPI_BYTE, recv.data(), 1, MPI_BYTE, comm, nullptr), *ctx, uniform, ignored);
  prepare(alltoallv_args(send.data(), ones.data(), displs.data(), MPI_BYTE, recv.data(), ones.data(), displs.data(),
                         MPI_BYTE, comm, nullptr),
          *ctx, varying, ignored);
  MachineModel machine;  // auto's costs, measured now (once per job for world's ranks); errors show at auto's use
  machine_model(*ctx, machine, ignored);
  shm_prepare(*ctx);  // the node's segment, where there is one
  std::shared_ptr<ClassState> every_size;  // alltoallv's size-free class priced now (nothing run, nothing tried)
  auto_without_sizes(*ctx, every_size, ignored);
  static std::once_flag warm;
  std::call_once(warm, [ctx] {
    // An alltoall class priced (64 KiB blocks, where most of the model's
    // branches run): the model's code is warm for the first class a
    // program meets, 30-40 us on cold code.  Local: this communicator's
    // model and tuning are ready (above), so only this process takes part.
    std::shared_ptr<ClassState> priced;
    std::string unused;
    auto_class(*ctx, Collective::alltoall, 65536, 65536, priced, unused);
    ThreadState& ts = thread_state();
    const Stats stats = last_stats(ts);
    const std::string error = ts.error;
    char one = 0, back = 0;
    int count = 1, displ = 0;
    call<Collective::alltoall>(alltoall_args(&one, 1, MPI_BYTE, &back, 1, MPI_BYTE, MPI_COMM_SELF, "native"));
    call<Collective::alltoallv>(
        alltoallv_args(&one, &count, &displ, MPI_BYTE, &back, &count, &displ, MPI_BYTE, MPI_COMM_SELF, "native"));
    ts.stats = stats;
    ts.lazy = nullptr;
    ts.error = error;
  });
  // Alltoall's classes priced ahead, for a millisecond at most: a program
  // that makes a communicator per plan (FFTW) meets each class's first
  // call with its pricing done.
  price_alltoall_classes(*ctx, 1e-3);
  return MPI_SUCCESS;
}

extern "C" int A2A_Last_stats(A2A_Stats* stats) {
  if (!stats) return MPI_ERR_ARG;
  const Stats& s = a2a::detail::last_stats(a2a::detail::thread_state());
  std::memset(stats, 0, sizeof *stats);
  std::memcpy(stats->algorithm, s.algorithm, sizeof stats->algorithm);
  stats->rounds = s.rounds;
  stats->messages = s.messages;
  stats->blocks_sent = s.blocks_sent;
  stats->bytes_sent = s.bytes_sent;
  stats->meta_bytes_sent = s.meta_bytes_sent;
  stats->temp_bytes = s.temp_bytes;
  stats->inter_node_messages = s.inter_node_messages;
  stats->inter_node_bytes = s.inter_node_bytes;
  stats->waits = s.waits;
  return MPI_SUCCESS;
}

extern "C" const char* A2A_Last_decided_by(void) {
  return a2a::detail::last_stats(a2a::detail::thread_state()).decided_by;
}

std::string a2a::tuning_status() {
  std::string status;
  a2a::detail::process_tuning(&status);
  return status;
}

std::string a2a::last_error_message() { return a2a::detail::thread_state().error; }

void a2a::set_error_check(ErrorCheck mode) { a2a::detail::call_globals.agree = mode == ErrorCheck::agree ? 1 : 0; }

a2a::ErrorCheck a2a::error_check() {
  return a2a::detail::agree_mode() ? ErrorCheck::agree : ErrorCheck::local;
}

std::string a2a::layout(MPI_Comm comm) {
  a2a::detail::CommContext* ctx = nullptr;
  if (a2a::detail::get_context(comm, ctx) != MPI_SUCCESS) return "unknown";
  return ctx->topology.describe();
}
