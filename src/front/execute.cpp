// Running a call: the pipeline (prepared call from the cache or made now,
// the optional agreement, the choice), then native or one of a2a's
// algorithms on the block view, with packing for non-contiguous types and
// the registry's fallback.
#include <cstring>

#include "front/call.hpp"
#include "select/auto.hpp"

namespace a2a::detail {

namespace {

const char* const kMixedPlacement = "a2a: some ranks pass device buffers and others host buffers";

void name_algorithm(Stats& st, const std::string& canonical) {
  std::strncpy(st.algorithm, canonical.c_str(), sizeof st.algorithm - 1);
  st.named_from = 0;
}

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

int run_alltoall(const CallArgs& a, Prepared& p, const Resolved& res, Stats& st) {
  CommContext& ctx = *p.ctx;
  const int P = p.P;
  if (p.bs == 0) return MPI_SUCCESS;
  if (!res.info->uniform) {  // native: the library's schedule is hidden
    st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = -1;
    st.blocks_sent = P - 1;
    st.bytes_sent = (P - 1) * p.bs;
    MPI_Comm on;
    if (const int rc = native_comm(a, ctx, on)) return rc;
    return PMPI_Alltoall(a.sendbuf, a.scount, a.stype, a.recvbuf, a.rcount, a.rtype, on);
  }
  if (const int rc = ctx.open_private()) return rc;
  ctx.scratch.begin_call();
  const size_t n = static_cast<size_t>(p.bs);
  const char* send = nullptr;
  MPI_Aint sstride = static_cast<MPI_Aint>(n);
  if (p.send_direct) {
    send = static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
    sstride = p.sstep;
  } else {  // non-contiguous, or MPI_IN_PLACE: the input copied out first
    const char* src = static_cast<const char*>(a.in_place() ? a.recvbuf : a.sendbuf);
    char* packed = ctx.scratch.get(Scratch::kPackedSend, P * n, st);
    for (int i = 0; i < P; ++i)
      if (const int rc = pack(src + i * p.sstep, a.scount, a.stype, p.sti, packed + i * n, ctx.comm)) return rc;
    send = packed;
  }
  char* recv = p.recv_direct ? static_cast<char*>(a.recvbuf) + p.rti.true_lb
                             : ctx.scratch.get(Scratch::kPackedRecv, P * n, st);
  const UniformCall call{send, sstride, recv, p.recv_direct ? p.rstep : static_cast<MPI_Aint>(n), n, ctx, st};
  int rc = res.info->uniform(call, res.params);
  if (rc == kFallback) {
    Resolved storage;
    const Resolved& fb = fallback_of(res, p, storage);
    restart_stats(p, st, fb.canonical);
    rc = fb.info->uniform(call, fb.params);
  }
  if (rc != MPI_SUCCESS || p.recv_direct) return rc;
  for (int i = 0; i < P; ++i)
    if (const int e = unpack(recv + i * n, a.rcount, a.rtype, p.rti, static_cast<char*>(a.recvbuf) + i * p.rstep,
                             ctx.comm))
      return e;
  return MPI_SUCCESS;
}

int run_alltoallv(const CallArgs& a, Prepared& p, const Resolved& res, long long global_max, Stats& st) {
  CommContext& ctx = *p.ctx;
  const int P = p.P, me = ctx.rank;
  if (!res.info->varying) {  // native
    st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = -1;
    st.bytes_sent = p.sent - p.sbytes[me];
    MPI_Comm on;
    if (const int rc = native_comm(a, ctx, on)) return rc;
    return PMPI_Alltoallv(a.sendbuf, a.scounts, a.sdispls, a.stype, a.recvbuf, a.rcounts, a.rdispls, a.rtype, on);
  }
  if (const int rc = ctx.open_private()) return rc;
  ctx.scratch.begin_call();
  static char nothing = 0;  // stands in for a null buffer of a rank with no data
  const char* send = nullptr;
  if (p.send_direct) {
    send = a.sendbuf ? static_cast<const char*>(a.sendbuf) + p.sti.true_lb : &nothing;
  } else {
    const char* src = static_cast<const char*>(a.in_place() ? a.recvbuf : a.sendbuf);
    char* packed = ctx.scratch.get(Scratch::kPackedSend, static_cast<size_t>(p.packed_send), st);
    for (int i = 0; i < P; ++i)
      if (const int rc = pack(src + static_cast<MPI_Aint>(a.sdispls[i]) * p.sti.extent, a.scounts[i], a.stype, p.sti,
                              packed + p.soff[i], ctx.comm))
        return rc;
    send = packed;
  }
  char* recv = p.recv_direct ? (a.recvbuf ? static_cast<char*>(a.recvbuf) + p.rti.true_lb : &nothing)
                             : ctx.scratch.get(Scratch::kPackedRecv, static_cast<size_t>(p.packed_recv), st);
  const VarCall call{send, p.soff.data(), p.sbytes.data(), recv, p.roff.data(), p.rbytes.data(), ctx, st, global_max};
  int rc = res.info->varying(call, res.params);
  if (rc == kFallback) {
    Resolved storage;
    const Resolved& fb = fallback_of(res, p, storage);
    restart_stats(p, st, fb.canonical);
    rc = fb.info->varying(call, fb.params);
  }
  if (rc != MPI_SUCCESS || p.recv_direct) return rc;
  for (int i = 0; i < P; ++i)
    if (const int e = unpack(recv + p.roff[i], a.rcounts[i], a.rtype, p.rti,
                             static_cast<char*>(a.recvbuf) + static_cast<MPI_Aint>(a.rdispls[i]) * p.rti.extent,
                             ctx.comm))
      return e;
  return MPI_SUCCESS;
}

}  // namespace

int decide(Prepared& p, const Global*, std::string& msg) {
  if (p.decided) return MPI_SUCCESS;
  const AutoDecision* d = nullptr;
  if (!p.args.v()) {
    if (const int rc = resolve_auto(*p.ctx, Collective::alltoall, p.bs, p.bs, d, msg)) return rc;
  } else {
    if (const int rc = auto_without_sizes(*p.ctx, d, msg)) return rc;
    if (!d) return MPI_SUCCESS;  // decided per call on the global sizes
  }
  p.chosen = d->resolved;
  p.decided_by = d->source;
  p.decided = true;
  p.stats.decided_by = d->source;
  name_algorithm(p.stats, p.chosen.canonical);
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
  st.decided_by = t.decided_by;
  st.node_of = t.node_of;
  st.my_node = t.my_node;
  if (st.named_from != p.serial || !p.decided) {
    std::memcpy(st.algorithm, t.algorithm, sizeof st.algorithm);
    st.named_from = p.decided ? p.serial : 0;
  }
}

// The native choice, for auto's first call on a communicator.
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

int execute(const CallArgs& a, Prepared& p, const Global* g, Stats& st, std::string& msg) {
  ++p.ctx->calls;
  if (p.where.device || (g && g->where.device)) return device_call(a, p, st, msg);
  // auto's first call on a communicator runs native without deciding:
  // deciding may measure the machine, and an algorithm of a2a's needs the
  // private duplicate first (both collective), which cost more than any
  // algorithm wins in one call; a program that calls once on a
  // communicator (FFTW makes one per plan) never pays them.
  if (!p.named.info && !p.decided && p.ctx->comm == MPI_COMM_NULL && p.ctx->calls == 1) {
    begin_stats(st, p);
    st.decided_by = kFirstCall;
    name_algorithm(st, "native");
    const Resolved& native = native_of(a.coll);
    return a.v() ? run_alltoallv(a, p, native, -1, st) : run_alltoall(a, p, native, st);
  }
  if (!p.decided)
    if (const int rc = decide(p, g, msg)) return rc;
  begin_stats(st, p);
  const Resolved* res = &p.chosen;
  Global sizes;
  if (!p.decided) {  // alltoallv auto on the global mean and largest block
    if (!g) {
      if (const int rc = agree(p, MPI_SUCCESS, sizes)) return rc;
      g = &sizes;
    }
    const AutoDecision* d = nullptr;
    const long long mean = g->sent / (static_cast<long long>(p.P) * p.P);
    if (const int rc = resolve_auto(*p.ctx, Collective::alltoallv, mean, g->hi, d, msg)) return rc;
    res = &d->resolved;
    st.decided_by = d->source;
    name_algorithm(st, res->canonical);
  }
  return a.v() ? run_alltoallv(a, p, *res, g ? g->hi : -1, st) : run_alltoall(a, p, *res, st);
}

int run_call(ThreadState& ts, const CallArgs& a, bool do_agree, Stats& st, std::string& msg) {
  Prepared* p = find_prepared(ts, a);
  std::unique_ptr<Prepared> fresh;
  int err = MPI_SUCCESS;
  if (!p) {
    CommContext* ctx = nullptr;
    if (const int rc = open_comm(a.comm, ctx)) {
      st = Stats{};
      return rc;
    }
    fresh = std::make_unique<Prepared>();
    err = prepare(a, *ctx, *fresh, msg);
    p = fresh.get();
  }
  Global g;
  if (do_agree) {
    if (const int rc = agree(*p, err, g)) return rc;
    err = g.err;
    if (err == MPI_SUCCESS && !a.v() && g.lo != g.hi) {
      msg = "a2a: ranks disagree on the block size";
      err = MPI_ERR_TYPE;
    } else if (err == MPI_SUCCESS && g.where.mixed()) {
      msg = kMixedPlacement;
      err = MPI_ERR_BUFFER;
    }
  }
  if (err != MPI_SUCCESS) {
    st = p->stats;
    return failed(err, msg);
  }
  if (fresh && fresh->cacheable) p = keep_prepared(ts, std::move(fresh));
  return execute(a, *p, do_agree ? &g : nullptr, st, msg);
}

}  // namespace a2a::detail
