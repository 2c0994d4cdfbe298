// Running a call: the pipeline (prepared call from the cache or made now,
// the optional agreement, the choice), then native or one of a2a's
// algorithms on the block view, with packing for non-contiguous types and
// the registry's fallback.
#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#include "front/pipeline.hpp"
#include "select/auto.hpp"

namespace a2a::detail {

void (*after_prepare_for_tests)() = nullptr;

void name_algorithm(Stats& st, const std::string& canonical) {
  std::strncpy(st.algorithm, canonical.c_str(), sizeof st.algorithm - 1);
  st.named_from = 0;
}

namespace {

// Stats for the fallback algorithm: counts start over, what the first one
// already spent (metadata, scratch) stays.
void restart_stats(const Prepared& p, Stats& st, const std::string& name) {
  const long long meta = st.meta_bytes_sent, temp = st.temp_bytes;
  st = p.stats;
  name_algorithm(st, name);
  st.meta_bytes_sent = meta;
  st.temp_bytes = temp;
}

// The registry's fallback of `res` (decided from values every rank shares,
// so all fall back alike).
const Resolved& fallback_of(const Resolved& res, const Prepared& p, Resolved& storage) {
  std::string ignored;
  resolve(p.args.coll, res.info->fallback, p.P, p.bs, storage, ignored);
  return storage;
}

// Where native runs: the user's communicator, except alone on it, where
// MPICH 4.0.2's collectives hang while a user's MPI_ANY_SOURCE receive is
// pending on it (the self copy matches it); a duplicate costs nothing there.
int native_comm(const CallArgs& a, CommContext& ctx, MPI_Comm& on) {
  on = a.comm;
  if (ctx.size > 1) return MPI_SUCCESS;
  const int rc = ctx.open_private();
  on = ctx.comm;
  return rc;
}

}  // namespace

void native_stats(const CallArgs& a, const Prepared& p, Stats& st) {
  st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = st.waits = -1;
  st.blocks_sent = a.v() ? st.blocks_sent : p.P - 1;
  st.bytes_sent = native_bytes_sent(p);
}

namespace {

// Whether res is the library's own collective for this call (no entry of a2a's).
bool library_own(const Resolved& res, bool v) {
  return !(v ? res.info->varying != nullptr : res.info->uniform != nullptr);
}

int run_native(const CallArgs& a, Prepared& p, Stats& st) {
  native_stats(a, p, st);
  MPI_Comm on;
  if (const int rc = native_comm(a, *p.ctx, on)) return rc;
  return library_call(a, on);
}

// Native over the block view in bytes, for calls whose send and receive
// types differ: Open MPI 4.1.4's own Bruck alltoall (its choice for small
// blocks from P = 16) returns wrong data for them, and bytes are one type.
// False where the view does not fit int counts (the caller runs the
// library on the user's types).
bool native_bytes_fits(const Prepared& p) {
  if (!p.args.v()) return p.bs <= INT_MAX && (!p.send_direct || p.sstep == p.bs) && (!p.recv_direct || p.rstep == p.bs);
  const auto big = [](const auto& v) {
    return std::any_of(v.begin(), v.end(), [](auto x) { return x > static_cast<decltype(x)>(INT_MAX); });
  };
  return !big(p.sbytes) && !big(p.rbytes) && !big(p.soff) && !big(p.roff);
}
// Blocking, the library's call; in an operation, its nonblocking form, awaited.
Task<int> native_op(const CallArgs& a, Prepared& p, Stats& st) {
  if (blocking_now()) co_return run_native(a, p, st);
  native_stats(a, p, st);
  MPI_Comm on;
  if (const int rc = native_comm(a, *p.ctx, on)) co_return rc;
  Requests r(1);
  if (!a.v())
    r.note(PMPI_Ialltoall(a.sendbuf, a.scount, a.stype, a.recvbuf, a.rcount, a.rtype, on, r.add()));
  else
    r.note(PMPI_Ialltoallv(a.sendbuf, a.scounts, a.sdispls, a.stype, a.recvbuf, a.rcounts, a.rdispls, a.rtype, on,
                           r.add()));
  co_return co_await wait(r);
}
Task<int> native_bytes(const CallArgs& a, Prepared& p, const char* send, char* recv, Stats& st) {
  native_stats(a, p, st);
  MPI_Comm on;
  if (const int rc = native_comm(a, *p.ctx, on)) co_return rc;
  const int n = static_cast<int>(p.bs);
  const bool blocking = blocking_now();
  Requests r(1);
  if (!a.v()) {
    if (blocking) co_return PMPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, on);
    r.note(PMPI_Ialltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, on, r.add()));
    co_return co_await wait(r);
  }
  const size_t P = static_cast<size_t>(p.P);
  std::vector<int> c(4 * P);
  for (size_t i = 0; i < P; ++i) {
    c[i] = static_cast<int>(p.sbytes[i]);
    c[P + i] = static_cast<int>(p.soff[i]);
    c[2 * P + i] = static_cast<int>(p.rbytes[i]);
    c[3 * P + i] = static_cast<int>(p.roff[i]);
  }
  if (blocking)
    co_return PMPI_Alltoallv(send, c.data(), c.data() + P, MPI_BYTE, recv, c.data() + 2 * P, c.data() + 3 * P,
                             MPI_BYTE, on);
  r.note(PMPI_Ialltoallv(send, c.data(), c.data() + P, MPI_BYTE, recv, c.data() + 2 * P, c.data() + 3 * P, MPI_BYTE,
                         on, r.add()));
  co_return co_await wait(r);
}

// Block i of one side in the user's buffer: its byte offset and elements.
struct UserBlocks {
  const int *counts, *displs;  // alltoallv; null for alltoall
  int count;                   // alltoall
  MPI_Aint step, extent;
  MPI_Aint offset(int i) const { return displs ? static_cast<MPI_Aint>(displs[i]) * extent : i * step; }
  int elements(int i) const { return counts ? counts[i] : count; }
};

// The block view of a call in bytes: the user's buffers where the types
// are gap-free, else packed block after block into `scratch`'s packing
// regions (the input copied out first for MPI_IN_PLACE), and the received
// blocks unpacked after the algorithm.
struct BlockView {
  const char* send = nullptr;
  char* recv = nullptr;
};
struct UserSides {
  UserBlocks sb, rb;
  explicit UserSides(const CallArgs& a, const Prepared& p)
      : sb{a.scounts, a.sdispls, a.scount, p.sstep, p.sti.extent}, rb{a.rcounts, a.rdispls, a.rcount, p.rstep, p.rti.extent} {}
};
MPI_Aint packed_at(const Prepared& p, const std::vector<MPI_Aint>& off, int i) {
  return p.args.v() ? off[i] : static_cast<MPI_Aint>(i * static_cast<size_t>(p.bs));
}
MPI_Comm packing_comm(const CallArgs& a, const CommContext& ctx) { return ctx.comm != MPI_COMM_NULL ? ctx.comm : a.comm; }

inline int view_blocks(const CallArgs& a, Prepared& p, Scratch& scratch, Stats& st, BlockView& out) {
  static char nothing = 0;  // stands in for a null buffer of a rank with no data
  const bool v = a.v();
  const int P = p.P;
  const size_t n = static_cast<size_t>(p.bs);  // alltoall's block bytes
  if (p.send_direct) {
    out.send = a.sendbuf ? static_cast<const char*>(a.sendbuf) + p.sti.true_lb : &nothing;
  } else {  // non-contiguous, or MPI_IN_PLACE: the input copied out first
    const UserSides u(a, p);
    const char* src = static_cast<const char*>(a.in_place() ? a.recvbuf : a.sendbuf);
    char* packed = scratch.get(Scratch::kPackedSend, v ? static_cast<size_t>(p.packed_send) : P * n, st);
    for (int i = 0; i < P; ++i)
      if (const int rc = pack(src + u.sb.offset(i), u.sb.elements(i), a.stype, p.sti, packed + packed_at(p, p.soff, i),
                              packing_comm(a, *p.ctx)))
        return rc;
    out.send = packed;
  }
  out.recv = p.recv_direct ? (a.recvbuf ? static_cast<char*>(a.recvbuf) + p.rti.true_lb : &nothing)
                           : scratch.get(Scratch::kPackedRecv, v ? static_cast<size_t>(p.packed_recv) : P * n, st);
  return MPI_SUCCESS;
}

inline int unpack_blocks(const CallArgs& a, const Prepared& p, const BlockView& view) {
  if (p.recv_direct) return MPI_SUCCESS;
  const UserSides u(a, p);
  for (int i = 0; i < p.P; ++i)
    if (const int e = unpack(view.recv + packed_at(p, p.roff, i), u.rb.elements(i), a.rtype, p.rti,
                             static_cast<char*>(a.recvbuf) + u.rb.offset(i), packing_comm(a, *p.ctx)))
      return e;
  return MPI_SUCCESS;
}

UniformCall uniform_view(const Prepared& p, const BlockView& view, Stats& st, OpScratch* os) {
  const MPI_Aint n = static_cast<MPI_Aint>(p.bs);
  return UniformCall{view.send, p.send_direct ? p.sstep : n, view.recv, p.recv_direct ? p.rstep : n,
                     static_cast<size_t>(p.bs), *p.ctx, st, os};
}
VarCall var_view(const Prepared& p, const BlockView& view, Stats& st, long long global_max, OpScratch* os) {
  PlanLog* log = p.plan_log.get();
  if (log) log->cursor = 0;  // each start replays from the first value
  return VarCall{view.send, p.soff.data(), p.sbytes.data(), view.recv, p.roff.data(), p.rbytes.data(),
                 *p.ctx, st, global_max, os, log};
}

// Both collectives and every mode, one way to an algorithm: native, or
// the block view, a2a's algorithm on it (the registry's fallback where it
// cannot run the call) and the received blocks unpacked.  Its steps are
// Blocks'; run_blocks runs them as a coroutine (any mode), run_blocks_now
// in place for blocking calls, with no frame of its own: each frame cost
// a decided call of a2a's 0.03 us at P = 1 (docs/results.md's overhead).
// A constructor, not an aggregate: aggregate initialization zeroed the
// whole object, 55 instructions a call.
class Blocks {
 public:
  Blocks(const CallArgs& a, Prepared& p, const Resolved& res, Stats& st, OpScratch* os)
      : a(a), p(p), res(res), st(st), os(os) {}
  const CallArgs& a;
  Prepared& p;
  const Resolved& res;
  Stats& st;
  OpScratch* os;  // an operation's scratch (null: the context's)
  BlockView view;
  std::optional<UniformCall> uc;
  std::optional<VarCall> vc;
  std::optional<Resolved> storage;  // the fallback's, made only where one runs
  const Resolved* ran = nullptr;    // the algorithm running: res or its fallback
  enum class Way { done, library, library_bytes, own };

  // Up to the algorithm: which way the call goes (done: rc says how it ended).
  [[gnu::always_inline]] Way begin(long long global_max, int& rc) {
    rc = MPI_SUCCESS;
    CommContext& ctx = *p.ctx;
    const bool v = a.v();
    if (!v && p.bs == 0) return Way::done;
    const bool native = library_own(res, v);
    if (native && (a.stype == a.rtype || !native_bytes_fits(p))) return Way::library;
    // shm sends nothing: no duplicate for it (FFTW makes a communicator per plan).
    if (!native && res.info->private_comm)
      if ((rc = ctx.open_private())) return Way::done;
    if (os)
      os->begin_call();
    else
      ctx.scratch.begin_call();
    if ((rc = view_blocks(a, p, os ? os->of(ctx) : ctx.scratch, st, view))) return Way::done;
    if (native) return Way::library_bytes;
    if (a.v())
      vc.emplace(var_view(p, view, st, global_max, os));
    else
      uc.emplace(uniform_view(p, view, st, os));
    ran = &res;
    return Way::own;
  }
  // The running algorithm's task on the view.
  Task<Result> algorithm() const {
    return vc ? ran->info->varying(*vc, ran->params) : ran->info->uniform(*uc, ran->params);
  }
  // After a fallback (decided from values every rank shares: all fall back
  // alike): the registry's fallback becomes the running algorithm.
  int fall_back() {
    ran = &fallback_of(res, p, storage.emplace());
    if (ran->info->private_comm)
      if (const int rc = p.ctx->open_private()) return rc;
    restart_stats(p, st, ran->canonical);
    if (vc) {  // the fallback replays what it recorded at the plan's init, if it did
      vc->plan = vc->plan && vc->plan->of_fallback ? vc->plan : nullptr;
      if (vc->plan) vc->plan->cursor = 0;
    }
    return MPI_SUCCESS;
  }
  // kept: where given, an alltoall of a2a's on the user's buffers leaves
  // its view there unless it fell back (the hot call and an operation's
  // next start run the algorithm on it straight).
  int end(Result r, std::optional<UniformCall>* kept) {
    if (r.fell_back()) return MPI_ERR_INTERN;  // fallbacks run every call
    if (kept && uc && ran == &res && p.send_direct && p.recv_direct) kept->emplace(*uc);
    return r.code() != MPI_SUCCESS ? r.code() : unpack_blocks(a, p, view);
  }
};

Task<int> run_blocks(const CallArgs& a, Prepared& p, const Resolved& res, long long global_max, Stats& st,
                     OpScratch* os, std::optional<UniformCall>* kept = nullptr) {
  Blocks b(a, p, res, st, os);
  int rc = MPI_SUCCESS;
  switch (b.begin(global_max, rc)) {
    case Blocks::Way::done:
      co_return rc;
    case Blocks::Way::library:
      co_return co_await native_op(a, p, st);
    case Blocks::Way::library_bytes:
      rc = co_await native_bytes(a, p, b.view.send, b.view.recv, st);
      co_return rc != MPI_SUCCESS ? rc : unpack_blocks(a, p, b.view);
    case Blocks::Way::own:
      break;
  }
  // A blocking call takes its tag here: ranks agree on when a2a's
  // algorithm runs, not on which calls go the hot way.
  if (OpState* op = current_op(); op && op->blocking) op->tag = p.ctx->next_op_tag();
  Result r = co_await b.algorithm();
  if (r.fell_back()) {
    if ((rc = b.fall_back())) co_return rc;
    r = co_await b.algorithm();
  }
  co_return b.end(r, kept);
}

int run_blocks_now(const CallArgs& a, Prepared& p, const Resolved& res, long long global_max, Stats& st,
                   std::optional<UniformCall>* kept = nullptr) {
  Blocks b(a, p, res, st, nullptr);
  int rc = MPI_SUCCESS;
  switch (b.begin(global_max, rc)) {
    case Blocks::Way::done:
      return rc;
    case Blocks::Way::library:
      return run_native(a, p, st);
    case Blocks::Way::library_bytes:
      rc = drive_blocking(native_bytes(a, p, b.view.send, b.view.recv, st), 1);
      return rc != MPI_SUCCESS ? rc : unpack_blocks(a, p, b.view);
    case Blocks::Way::own:
      break;
  }
  const int tag = p.ctx->next_op_tag();
  Result r = drive_blocking(b.algorithm(), tag);
  if (r.fell_back()) {
    if ((rc = b.fall_back())) return rc;
    r = drive_blocking(b.algorithm(), tag);
  }
  return b.end(r, kept);
}

// A decided call: whether the library's own collective runs on the
// user's arguments, for the hot call's marks (run_chosen).
bool native_as_decided(const CallArgs& a, const Prepared& p) {
  return library_own(p.chosen, a.v()) && a.stype == a.rtype && (a.v() || p.bs > 0);
}
void mark_decided(const CallArgs& a, Prepared& p) {
  const bool native = native_as_decided(a, p);
  p.native_decided = native && (p.P > 1 || p.ctx->comm != MPI_COMM_NULL);
  p.own_decided = !native && !a.v();
}

}  // namespace

int decide(Prepared& p, const Global* g, bool fixed_sizes, std::string& msg) {
  if (p.decided) return MPI_SUCCESS;
  CommContext& ctx = *p.ctx;
  if (p.named.info) {  // a named spec whose machine knobs the model decides
    p.chosen = p.named;
    if (const int rc = resolve_machine_knobs(ctx, p.chosen, msg)) return rc;
    p.decided = true;
    return MPI_SUCCESS;
  }
  std::shared_ptr<ClassState> c;
  if (!p.args.v()) {
    if (const int rc = auto_class(ctx, Collective::alltoall, p.bs, p.bs, c, msg)) return rc;
  } else {
    if (const int rc = auto_without_sizes(ctx, c, msg)) return rc;
    if (!c && fixed_sizes && g) {
      const long long mean = g->sent / (static_cast<long long>(p.P) * p.P);
      if (const int rc = auto_class(ctx, Collective::alltoallv, mean, g->hi, c, msg)) return rc;
    }
    if (!c) return MPI_SUCCESS;  // decided per call on the global sizes
  }
  p.cls = std::move(c);
  p.class_generation = 0;  // p.chosen follows the class at the next call
  p.decided = true;
  return MPI_SUCCESS;
}

void begin_stats(Stats& st, const Prepared& p) {
  const Stats& t = p.stats;
  st.rounds = t.rounds;
  st.messages = t.messages;
  st.blocks_sent = t.blocks_sent;
  st.bytes_sent = t.bytes_sent;
  st.meta_bytes_sent = t.meta_bytes_sent;
  st.temp_bytes = t.temp_bytes;
  st.inter_node_messages = t.inter_node_messages;
  st.inter_node_bytes = t.inter_node_bytes;
  st.waits = t.waits;
  st.decided_by = t.decided_by;
  st.node_of = t.node_of;
  st.my_node = t.my_node;
  if (st.named_from != p.serial || !p.decided) {
    std::memcpy(st.algorithm, t.algorithm, sizeof st.algorithm);
    st.named_from = p.decided ? p.serial : 0;
  }
}

Stats& last_stats(ThreadState& ts) {
  Stats& st = ts.stats;
  if (ts.lazy == ts.first_call_marker()) {  // as the shim's first call would have written them
    st = Stats{};
    st.decided_by = kFirstCall;
    name_algorithm(st, native_of(ts.first.coll).canonical);
    st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = st.waits = -1;
    st.blocks_sent = ts.first.blocks;
    st.bytes_sent = ts.first.bytes;
  } else if (const Prepared* p = ts.lazy) {  // as execute's hot path would have written them
    begin_stats(st, *p);
    native_stats(p->args, *p, st);
    if (p->args.v() && ts.hot_v.prepared == p)
      st.bytes_sent = ts.hot_v.bytes_sent;  // the counts may be newer than p's (hot_new_blocks); a plan's are its own
  }
  ts.lazy = nullptr;
  return st;
}

const Resolved& native_of(Collective coll) {
  static const auto make = [](Collective c) {
    Resolved r;
    std::string ignored;
    resolve(c, "native", 1, 0, r, ignored);
    return r;
  };
  static const Resolved alltoall = make(Collective::alltoall), alltoallv = make(Collective::alltoallv);
  return coll == Collective::alltoall ? alltoall : alltoallv;
}

namespace {

// p's algorithm as decided.  A blocking call marks p for the hot call
// (capi.cpp): the library's own collective on the user's arguments, or
// a2a's alltoall (alltoallv's hot calls may bring new counts, which p's
// block view would not follow).
Task<int> run_chosen(const CallArgs& a, Prepared& p, long long hi, Stats& st, OpScratch* os,
                     std::optional<UniformCall>* kept = nullptr) {
  const int rc = co_await run_blocks(a, p, p.chosen, hi, st, os, kept);
  if (blocking_now()) mark_decided(a, p);
  co_return rc;
}

// A call of auto's class c: a trial call (its candidate runs), the first
// call after the class's decision changed (bind: p follows it), or a
// decided call at its event (a sample; the drift agreement where one is
// due).  Only blocking calls are timed and count towards events: an
// operation's time from start to completion is its overlap's, not its
// cost, and its events' agreements would block.
Task<int> class_call(const CallArgs& a, Prepared& p, ClassState& c, const Global* g, bool bind, Stats& st,
                     OpScratch* os, std::string& msg) {
  CommContext& ctx = *p.ctx;
  const long long hi = g ? g->hi : -1;
  const bool timed = blocking_now();
  // An operation runs a copy: the class's decision may change while it waits.
  std::optional<Resolved> copied;
  if (c.trying()) {
    const Resolved& res = timed ? trial_candidate(c).resolved : copied.emplace(trial_candidate(c).resolved);
    name_algorithm(st, res.canonical);
    st.decided_by = kByTrial;
    if (!timed) co_return co_await run_blocks(a, p, res, hi, st, os);
    ThreadState& ts = thread_state();
    // From the call's start (where call() noted it), as its decided calls
    // will cost: both pay their way in (native's hot call less than this
    // call's lookup, a2a's alltoallv all of it), and native's alltoallv
    // skips preparing new counts (hot_new_blocks), which a2a's cannot.
    // Timed by its run alone, native at P = 2 looked 0.1 us faster than its
    // decided calls ran and kept small calls from `shm`, 0.8 of it.
    const bool native = library_own(res, a.v());
    const double t0 = ts.call_began <= 0 ? MPI_Wtime() : ts.call_began + (native && a.v() ? p.prepare_seconds : 0);
    const int rc = co_await run_blocks(a, p, res, hi, st, os);
    const int e = trial_record(ctx, c, MPI_Wtime() - t0, call_bytes(p), msg);
    ts.time_next_call = c.trying();  // calls in between (another collective's) leave it armed
    co_return e ? e : rc;
  }
  if (bind && p.class_generation != c.generation) {
    p.native_decided = p.own_decided = false;
    p.chosen = c.decision.resolved;
    p.stats.decided_by = c.decision.source;
    name_algorithm(p.stats, p.chosen.canonical);
    p.class_generation = c.generation;
    st.named_from = 0;  // the name copied afresh
    begin_stats(st, p);
  }
  const Resolved& res = bind ? p.chosen : timed ? c.decision.resolved : copied.emplace(c.decision.resolved);
  if (!bind) {
    name_algorithm(st, res.canonical);
    st.decided_by = c.decision.source;
  }
  // No co_await in a conditional expression: GCC 12 evaluates both.
  const bool sample = timed && c.since >= c.next_event;
  const double t0 = sample ? MPI_Wtime() : 0;  // every event is a sample
  int rc = MPI_SUCCESS;
  if (bind)
    rc = co_await run_chosen(a, p, hi, st, os);
  else
    rc = co_await run_blocks(a, p, res, hi, st, os);
  if (!sample) co_return rc;
  if (const int e = class_event(ctx, c, MPI_Wtime() - t0, call_bytes(p), p.prepare_seconds, msg)) co_return e;
  co_return rc;
}

}  // namespace

// The pipeline of every call below the hot call's test, driven to
// completion in place (execute) or as an operation (nonblocking.cpp):
// device buffers, auto's first call on a communicator, the choice, its
// class, then run_blocks.
Task<Result> execute_op(const CallArgs& a, Prepared& p, const Global* g, Stats& st, OpScratch* os,
                        std::string& msg, std::optional<UniformCall>* kept) {
  ++p.ctx->calls;  // hot calls (capi.cpp) not counted: by then one was
  // An operation's device call completes here (docs/gpu.md).
  if (p.where.device || (g && g->where.device)) co_return device_call(a, p, st, msg);
  const long long hi = g ? g->hi : -1;
  // auto's first call on a communicator runs native without deciding:
  // deciding may measure the machine, and an algorithm of a2a's needs the
  // private duplicate first (both collective), which cost more than any
  // algorithm wins in one call; a program that calls once on a
  // communicator (FFTW makes one per plan) never pays them.
  const bool first_call = !p.decided && !p.named.info && p.ctx->comm == MPI_COMM_NULL && p.ctx->calls == 1;
  if (!first_call)
    if (const int rc = decide(p, g, false, msg)) co_return rc;
  begin_stats(st, p);
  if (first_call) {
    const Resolved& native = native_of(a.coll);
    st.decided_by = kFirstCall;
    name_algorithm(st, native.canonical);
    co_return co_await run_blocks(a, p, native, hi, st, os);
  }
  const bool counted = blocking_now();  // events count blocking calls (class_call)
  if (p.decided) {  // a named spec, or the auto class p follows
    ClassState* c = p.cls.get();
    if (c && ((counted ? ++c->since >= c->next_event : c->trying()) || p.class_generation != c->generation))
      co_return co_await class_call(a, p, *c, g, true, st, os, msg);
    co_return co_await run_chosen(a, p, hi, st, os, kept);
  }
  // alltoallv auto on the global mean and largest block
  Global sizes;
  if (!g) {
    std::string ignored;  // local mode: the sizes only (the checks stay local)
    if (const int rc = agree(p, MPI_SUCCESS, sizes, ignored)) co_return rc;
    g = &sizes;
  }
  std::shared_ptr<ClassState> c;
  const long long mean = g->sent / (static_cast<long long>(p.P) * p.P);
  if (const int rc = auto_class(*p.ctx, Collective::alltoallv, mean, g->hi, c, msg)) co_return rc;
  if (counted) ++c->since;
  co_return co_await class_call(a, p, *c, g, false, st, os, msg);
}


int record_plan_meta(Prepared& p, const Global& g) {
  const Resolved& res = p.chosen;
  if (!p.args.v() || p.cls || !res.info->plan_meta || shm_knobs_of(*res.info, res.params)) return MPI_SUCCESS;
  auto log = std::make_unique<PlanLog>();
  log->mode = PlanLog::Mode::recording;
  Stats dropped = p.stats;
  VarCall call = var_view(p, BlockView{}, dropped, g.hi, nullptr);
  call.plan = log.get();
  call.meta_only = true;
  Result r = drive_blocking(res.info->varying(call, res.params), p.ctx->next_op_tag());
  if (r.fell_back()) {  // the starts fall back alike: the fallback's metadata is the one to keep
    Resolved storage;
    const Resolved& fb = fallback_of(res, p, storage);
    if (!fb.info->plan_meta || shm_knobs_of(*fb.info, fb.params)) return MPI_SUCCESS;
    log->values.clear();
    log->of_fallback = true;
    if (fb.info->private_comm)
      if (const int rc = p.ctx->open_private()) return rc;
    r = drive_blocking(fb.info->varying(call, fb.params), p.ctx->next_op_tag());
    if (r.fell_back()) return MPI_SUCCESS;
  }
  if (r.code() != MPI_SUCCESS) return r.code();
  log->mode = PlanLog::Mode::replaying;
  p.plan_log = std::move(log);
  return MPI_SUCCESS;
}

int run_hot_own(const CallArgs& a, Prepared& p, Stats& st) {
  begin_stats(st, p);
  if (p.hot_view) {  // straight to the algorithm (a fallback goes the full way)
    p.ctx->scratch.begin_call();
    const Result r = drive_blocking(p.chosen.info->uniform(*p.hot_view, p.chosen.params), p.ctx->next_op_tag());
    if (!r.fell_back()) return r.code();
    p.hot_view.reset();
    begin_stats(st, p);
  }
  return run_blocks_now(a, p, p.chosen, -1, st, &p.hot_view);
}

int execute(const CallArgs& a, Prepared& p, const Global* g, Stats& st, std::string& msg) {
  // A decided call whose class has no event due runs in place (run_blocks_now).
  if (p.decided && !p.where.device && !(g && g->where.device) && class_quiet(p)) {
    ++p.ctx->calls;
    begin_stats(st, p);
    const int rc = run_blocks_now(a, p, p.chosen, g ? g->hi : -1, st);
    mark_decided(a, p);
    return rc;
  }
  return drive_blocking(execute_op(a, p, g, st, nullptr, msg, nullptr), 1).code();
}

bool own_start(const Prepared& p) {
  return p.decided && !p.cls && !p.args.v() && p.send_direct && p.recv_direct && p.bs > 0 && !p.where.device &&
         p.chosen.info->uniform;
}

int run_call(ThreadState& ts, const CallArgs& a, bool do_agree, Stats& st, std::string& msg) {
  return run_found(ts, a, find_prepared(ts, a), do_agree, st, msg);
}

int run_found(ThreadState& ts, const CallArgs& a, Prepared* p, bool do_agree, Stats& st, std::string& msg) {
  std::unique_ptr<Prepared> fresh;
  int err = MPI_SUCCESS;
  double prepared_in = 0;  // seconds
  if (!p) {
    const double t0 = MPI_Wtime();
    fresh = recycle_prepared(ts);
    // The recycled call's context serves where it was made on the same
    // communicator since nothing was freed (the generation), as the most
    // recent calls often were; else the communicator is checked and its
    // context looked up.
    CommContext* ctx = fresh->reusable && fresh->args.comm == a.comm && fresh->generation == generation() ? fresh->ctx
                                                                                                        : nullptr;
    if (!ctx)
      if (const int rc = open_comm(a.comm, ctx)) {
        st = Stats{};
        return rc;
      }
    err = prepare(a, *ctx, *fresh, msg);
    p = fresh.get();
    if (__builtin_expect(after_prepare_for_tests != nullptr, 0)) after_prepare_for_tests();
    prepared_in = MPI_Wtime() - t0;
  }
  Global g;
  if (do_agree) {
    if (const int rc = agree(*p, err, g, msg)) return rc;
    err = g.err;
  }
  if (err != MPI_SUCCESS) {
    st = p->stats;
    return failed(err, msg);
  }
  if (!fresh) return execute(a, *p, do_agree ? &g : nullptr, st, msg);
  if (fresh->cacheable) p = keep_prepared(ts, std::move(fresh));
  p->prepare_seconds = prepared_in;
  const int rc = execute(a, *p, do_agree ? &g : nullptr, st, msg);
  p->prepare_seconds = 0;
  return rc;
}

}  // namespace a2a::detail
