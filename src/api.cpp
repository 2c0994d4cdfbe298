// The C API: argument checks agreed by every rank, datatype handling (packing
// non-contiguous types and MPI_IN_PLACE input to bytes), dispatch through the
// registry, and the last call's statistics.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "core/context.hpp"
#include "core/datatype.hpp"
#include "core/regions.hpp"
#include "gpu/gpu.hpp"
#include "select/auto.hpp"
#include "select/registry.hpp"

namespace a2a::detail {
namespace {

// Each thread's last call (threads run collectives on their own
// communicators under MPI_THREAD_MULTIPLE).
thread_local Stats last_stats;
thread_local std::string last_error;

// See a2a::ErrorCheck; the environment is read once, at the first call.
std::atomic<bool>& agree_flag() {
  static std::atomic<bool> agree{[] {
    const char* v = std::getenv("A2A_ERROR_CHECK");
    return !(v && std::strcmp(v, "local") == 0);
  }()};
  return agree;
}
bool agree_on_errors() { return agree_flag().load(std::memory_order_relaxed); }

const char* spec_text(const char* algorithm, const char* env) {
  if (algorithm) return algorithm;
  const char* v = std::getenv(env);
  return v && *v ? v : "auto";
}

// Applications repeat the same call: remember the last resolution per
// collective and thread, so a repeat costs a string compare.
struct Choice {
  std::string text;
  int P = -1;
  long long bs = -2;
  int rc = MPI_SUCCESS;
  Resolved res;
  std::string error;
};

const Choice& choose(Collective coll, const char* text, int P, long long bs) {
  thread_local Choice last[2];
  Choice& c = last[coll == Collective::alltoall ? 0 : 1];
  if (c.P != P || c.bs != bs || c.text != text) {
    c.text = text;
    c.P = P;
    c.bs = bs;
    c.rc = resolve(coll, c.text, P, bs, c.res, c.error);
  }
  return c;
}

void name_algorithm(Stats& st, const std::string& canonical) {
  std::strncpy(st.algorithm, canonical.c_str(), sizeof st.algorithm - 1);
}

// Where the buffers of a call live, over the ranks that pass data: device
// (every buffer in device memory) and host flags, ORed over ranks by the
// agreement; both set is an error (a rank cannot take part in a device
// algorithm with host buffers, nor the reverse).
struct Placement {
  long long device = 0, host = 0;
  bool mixed() const { return device && host; }
};

// This rank's placement of a call's send and receive buffers (when it moves
// bytes); MPI_ERR_BUFFER when one is device memory and the other not, and
// MPI_ERR_TYPE for device buffers with non-contiguous datatypes.
int place(const void* sendbuf, const void* recvbuf, bool moves_bytes, bool contiguous, Placement& out,
          std::string& msg) {
  out = Placement{};
  if (!moves_bytes) return MPI_SUCCESS;
  if (!gpu::built_with_cuda()) {
    out.host = 1;
    return MPI_SUCCESS;
  }
  const auto r = gpu::memory_of(recvbuf);
  const auto s = sendbuf == MPI_IN_PLACE ? r : gpu::memory_of(sendbuf);
  if (r != s) {
    msg = "a2a: one of the send and receive buffers is in device memory and the other is not";
    return MPI_ERR_BUFFER;
  }
  (r == gpu::Memory::device ? out.device : out.host) = 1;
  if (out.device && !contiguous) {
    msg = "a2a: device buffers need contiguous datatypes (gap-free, extent = size)";
    return MPI_ERR_TYPE;
  }
  return MPI_SUCCESS;
}

// Folds local error codes (MAX), checks that every rank's value agrees and
// ORs the buffer placements.
int agree(CommContext& ctx, int err, long long value, bool& values_differ, Placement& where) {
  values_differ = false;
  if (!agree_on_errors()) return err;
  long long v[5] = {err, -value, value, where.device, where.host};
  const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, ctx.comm);
  if (rc != MPI_SUCCESS) return rc;
  values_differ = -v[1] != v[2];
  where.device = v[3];
  where.host = v[4];
  return static_cast<int>(v[0]);
}

const char* const kMixedPlacement = "a2a: some ranks pass device buffers and others host buffers";

// MPI_ERR_BUFFER when a receive block overlaps another receive block or a
// send block (send null: MPI_IN_PLACE, receive blocks only).  Blocks are
// given as byte offsets and sizes from each buffer's first data byte.
int check_aliasing(CommContext& ctx, const void* send, const long long* soff, const long long* sbytes,
                   const void* recv, const long long* roff, const long long* rbytes, std::string& msg) {
  auto& regions = ctx.regions;
  regions.clear();
  if (send) add_regions(regions, send, soff, sbytes, ctx.size, false);
  add_regions(regions, recv, roff, rbytes, ctx.size, true);
  std::string which;
  if (!regions_collide(regions, which)) return MPI_SUCCESS;
  msg = "a2a: " + which + " overlap (buffers must not alias; MPI_IN_PLACE sends from the receive buffer)";
  return MPI_ERR_BUFFER;
}

// An error found on another rank leaves this rank's message empty.
int failed(int err, std::string& msg) {
  if (msg.empty()) msg = "a2a: another rank found an argument error (error class " + std::to_string(err) + ")";
  return err;
}

// Points the call's stats at the communicator's layout.
void track_nodes(const CommContext& ctx, Stats& st) {
  st.node_of = ctx.topology.node_of.data();
  st.my_node = ctx.topology.node_of[ctx.rank];
}

// Stats for the fallback algorithm: counts start over, what the first one
// already spent (metadata, scratch) stays.
void restart_stats(const CommContext& ctx, Stats& st, const std::string& name) {
  const long long meta = st.meta_bytes_sent, temp = st.temp_bytes;
  st = Stats{};
  track_nodes(ctx, st);
  name_algorithm(st, name);
  st.meta_bytes_sent = meta;
  st.temp_bytes = temp;
}

int start(MPI_Comm comm, CommContext*& ctx) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return MPI_ERR_OTHER;
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
  const int rc = get_context(comm, ctx);
  if (rc == MPI_SUCCESS) ctx->scratch.begin_call();
  return rc;
}

// run: a normal call.  validate: checks, agreement and choice only (a plan's
// init).  prechecked: a plan's start, whose arguments init has checked and
// agreed, so no agreement round.
enum class Mode { run, validate, prechecked };

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, Stats& st, std::string& msg,
             Mode mode = Mode::run);
int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              const char* algorithm, Stats& st, std::string& msg, Mode mode = Mode::run);

// ---- Device buffers --------------------------------------------------------
// They take cuda-ipc when the call names it or auto; any other algorithm runs
// on pinned host copies of the buffers ("staged:NAME"), as does cuda-ipc's
// hybrid path below its ipc-threshold ("staged:" and auto's choice).

bool is_cuda_ipc(const Resolved& r) { return r.info && std::strcmp(r.info->name, "cuda-ipc") == 0; }

// The spec that runs device buffers: the named one, or cuda-ipc for auto.
const Resolved& device_target(Collective coll, const Resolved& named, int P, Resolved& storage) {
  if (named.info) return named;
  std::string ignored;
  resolve(coll, "cuda-ipc", P, -1, storage, ignored);
  return storage;
}

// "cuda-ipc:path=hybrid,..." -> "cuda-ipc:path=hybrid(kernel),...": what ran.
std::string ipc_name(const Resolved& r, schedule::GpuPath path) {
  std::string name = r.canonical;
  const auto at = name.find("path=hybrid");
  if (at != std::string::npos) name.insert(at + 11, std::string("(") + schedule::gpu_path_name(path) + ")");
  return name;
}

// Bytes [lo, hi) that the blocks at off[i] (bytes[i] long) cover.
void span_of(const MPI_Aint* off, const long long* bytes, int P, MPI_Aint& lo, MPI_Aint& hi) {
  lo = hi = 0;
  bool any = false;
  for (int i = 0; i < P; ++i) {
    if (bytes[i] == 0) continue;
    lo = any ? std::min(lo, off[i]) : off[i];
    hi = any ? std::max(hi, off[i] + static_cast<MPI_Aint>(bytes[i])) : off[i] + static_cast<MPI_Aint>(bytes[i]);
    any = true;
  }
}

// Runs host_call(host send, host recv) on pinned host mirrors of the device
// buffers: the send blocks' span copied in first (the receive span when
// dsend is null: MPI_IN_PLACE), then the receive blocks copied back one by
// one, so the receive buffer's gaps stay untouched.
template <class HostCall>
int staged(CommContext& ctx, Stats& st, const char* dsend, const MPI_Aint* soff, const long long* sbytes, char* drecv,
           const MPI_Aint* roff, const long long* rbytes, HostCall&& host_call) {
  const int P = ctx.size;
  MPI_Aint slo, shi, rlo, rhi;
  span_of(soff, sbytes, P, slo, shi);
  span_of(roff, rbytes, P, rlo, rhi);
  char* hs = dsend ? gpu::staging(ctx, 0, static_cast<size_t>(shi - slo), st) : nullptr;
  char* hr = gpu::staging(ctx, 1, static_cast<size_t>(rhi - rlo), st);
  int rc = !hr || (dsend && !hs) ? MPI_ERR_NO_MEM
           : dsend               ? gpu::copy_to_host(hs, dsend + slo, static_cast<size_t>(shi - slo))
                                 : gpu::copy_to_host(hr, drecv + rlo, static_cast<size_t>(rhi - rlo));
  // A rank that could not stage must not leave the others waiting in the
  // host algorithm: agree first.
  if (const int e = MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, ctx.comm)) return e;
  if (rc != MPI_SUCCESS) return rc;
  // The mirrors stand where the device buffers' first block byte would be.
  rc = host_call(dsend ? static_cast<const void*>(hs - slo) : MPI_IN_PLACE, static_cast<void*>(hr - rlo));
  if (rc != MPI_SUCCESS) return rc;
  return gpu::copy_blocks_to_device(drecv, hr - rlo, roff, rbytes, P);
}

void name_staged(Stats& st) {
  const std::string inner = st.algorithm;
  name_algorithm(st, "staged:" + inner);
}

int device_alltoall(CommContext& ctx, MPI_Comm comm, const Resolved& named, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, const TypeInfo& sti, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    const TypeInfo& rti, long long bs, Stats& st, std::string& msg, Mode mode) {
  const int P = ctx.size;
  Resolved storage;
  const Resolved& target = device_target(Collective::alltoall, named, P, storage);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const MPI_Aint sstep = static_cast<MPI_Aint>(sendcount) * sti.extent;
  const MPI_Aint rstep = static_cast<MPI_Aint>(recvcount) * rti.extent;
  char* recv = static_cast<char*>(recvbuf) + rti.true_lb;
  std::string host_spec = target.canonical;
  if (is_cuda_ipc(target)) {
    const Params& pr = target.params;
    const auto path = schedule::gpu_path(pr.gpu_path, bs, pr.ipc_threshold, pr.memcpy_threshold);
    if (mode == Mode::validate) {  // a plan keeps this name as its spec
      name_algorithm(st, target.canonical);
      return MPI_SUCCESS;
    }
    if (path != schedule::GpuPath::host) {
      name_algorithm(st, ipc_name(target, path));
      const char* send = in_place ? recv : static_cast<const char*>(sendbuf) + sti.true_lb;
      const UniformCall call{send, in_place ? rstep : sstep, recv, rstep, static_cast<size_t>(bs), ctx, st};
      return gpu::ipc_alltoall(call, pr, path);
    }
    host_spec = "auto";
  }
  name_algorithm(st, mode == Mode::validate ? target.canonical : "staged:" + host_spec);
  if (mode == Mode::validate) return MPI_SUCCESS;
  // Own block views: the nested call may use the context's.
  std::vector<MPI_Aint> soff(P), roff(P);
  const std::vector<long long> sbytes(P, bs), rbytes(P, bs);
  for (int i = 0; i < P; ++i) {
    soff[i] = i * (in_place ? rstep : sstep);
    roff[i] = i * rstep;
  }
  const char* dsend = in_place ? nullptr : static_cast<const char*>(sendbuf) + sti.true_lb;
  const Mode inner = mode == Mode::prechecked ? Mode::prechecked : Mode::run;
  const int rc = staged(ctx, st, dsend, soff.data(), sbytes.data(), recv, roff.data(), rbytes.data(),
                        [&](const void* hs, void* hr) {
                          // hs, hr stand for the buffers' first block byte.
                          const void* s = hs == MPI_IN_PLACE ? hs : static_cast<const char*>(hs) - sti.true_lb;
                          return alltoall(s, sendcount, sendtype, static_cast<char*>(hr) - rti.true_lb, recvcount,
                                          recvtype, comm, host_spec.c_str(), st, msg, inner);
                        });
  if (rc == MPI_SUCCESS) name_staged(st);
  return rc;
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, Stats& st, std::string& msg,
             Mode mode) {
  CommContext* ctx = nullptr;
  if (const int rc = start(comm, ctx)) return rc;
  track_nodes(*ctx, st);
  const int P = ctx->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {
    sendcount = recvcount;
    sendtype = recvtype;
  }
  int err = MPI_SUCCESS;
  TypeInfo sti, rti;
  long long bs = -1;
  if (sendcount < 0 || recvcount < 0) {
    err = MPI_ERR_COUNT;
  } else if (sendtype == MPI_DATATYPE_NULL || recvtype == MPI_DATATYPE_NULL || describe(sendtype, sti) ||
             describe(recvtype, rti)) {
    err = MPI_ERR_TYPE;
  } else {
    bs = static_cast<long long>(recvcount) * rti.size;
    if (static_cast<long long>(sendcount) * sti.size != bs) {
      err = MPI_ERR_TYPE;
      msg = "a2a: send and receive type signatures differ in size";
    } else if (bs > 0 && (!recvbuf || !sendbuf)) {
      err = MPI_ERR_BUFFER;
    } else if (bs > 0 && sti.contiguous(sendcount) && rti.contiguous(recvcount)) {
      auto& so = ctx->aliasing_soff;  // offsets, then sizes
      auto& ro = ctx->aliasing_roff;
      so.resize(2 * P);
      ro.resize(2 * P);
      for (int i = 0; i < P; ++i) {
        so[i] = i * static_cast<long long>(sendcount) * sti.extent;
        ro[i] = i * static_cast<long long>(recvcount) * rti.extent;
        so[P + i] = ro[P + i] = bs;
      }
      err = check_aliasing(*ctx, in_place ? nullptr : static_cast<const char*>(sendbuf) + sti.true_lb, so.data(),
                           so.data() + P, static_cast<const char*>(recvbuf) + rti.true_lb, ro.data(), ro.data() + P,
                           msg);
    }
  }
  Placement where;
  if (err == MPI_SUCCESS)
    err = place(sendbuf, recvbuf, bs > 0, sti.contiguous(sendcount) && rti.contiguous(recvcount), where, msg);
  const Choice* choice = nullptr;
  if (err == MPI_SUCCESS) {
    choice = &choose(Collective::alltoall, spec_text(algorithm, "A2A_ALLTOALL"), P, bs);
    err = choice->rc;
    msg = choice->error;
  }
  bool differ = false;
  if (mode != Mode::prechecked) err = agree(*ctx, err, bs, differ, where);
  if (err == MPI_SUCCESS && differ) {
    msg = "a2a: ranks disagree on the block size";
    err = MPI_ERR_TYPE;
  } else if (err == MPI_SUCCESS && where.mixed()) {
    msg = kMixedPlacement;
    err = MPI_ERR_BUFFER;
  }
  if (err != MPI_SUCCESS) return failed(err, msg);
  if (where.device)
    return device_alltoall(*ctx, comm, choice->res, sendbuf, sendcount, sendtype, sti, recvbuf, recvcount, recvtype,
                           rti, bs, st, msg, mode);
  const Resolved* chosen = &choice->res;
  if (!chosen->info) {  // auto: decided from values every rank shares
    const AutoDecision* d = nullptr;
    if (const int rc = resolve_auto(*ctx, Collective::alltoall, bs, bs, d, msg)) return rc;
    chosen = &d->resolved;
    st.decided_by = d->source;
  }
  const Resolved& res = *chosen;
  name_algorithm(st, res.canonical);
  if (bs == 0 || mode == Mode::validate) return MPI_SUCCESS;

  if (!res.info->uniform) {  // native
    st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = -1;  // the library's schedule is hidden
    st.blocks_sent = P - 1;
    st.bytes_sent = (P - 1) * bs;
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, ctx->comm);
  }

  const size_t nbytes = static_cast<size_t>(bs);
  const char* send = nullptr;
  MPI_Aint sstride = static_cast<MPI_Aint>(bs);
  const void* src_buf = in_place ? recvbuf : sendbuf;
  const MPI_Aint src_step = static_cast<MPI_Aint>(sendcount) * sti.extent;
  if (!in_place && sti.contiguous(sendcount)) {
    send = static_cast<const char*>(sendbuf) + sti.true_lb;
    sstride = src_step;
  } else {
    char* packed = ctx->scratch.get(Scratch::kPackedSend, P * nbytes, st);
    for (int i = 0; i < P; ++i)
      if (const int rc = pack(static_cast<const char*>(src_buf) + i * src_step, sendcount, sendtype, sti,
                              packed + i * nbytes, ctx->comm))
        return rc;
    send = packed;
  }
  const MPI_Aint dst_step = static_cast<MPI_Aint>(recvcount) * rti.extent;
  const bool recv_direct = rti.contiguous(recvcount);
  char* recv = recv_direct ? static_cast<char*>(recvbuf) + rti.true_lb
                           : ctx->scratch.get(Scratch::kPackedRecv, P * nbytes, st);
  const UniformCall call{send, sstride, recv, recv_direct ? dst_step : static_cast<MPI_Aint>(bs), nbytes, *ctx, st};
  int rc = res.info->uniform(call, res.params);
  if (rc == kFallback) {  // decided from values every rank shares, so all fall back alike
    Resolved fallback;
    std::string ignored;
    resolve(Collective::alltoall, res.info->fallback, P, bs, fallback, ignored);
    restart_stats(*ctx, st, fallback.canonical);
    rc = fallback.info->uniform(call, fallback.params);
  }
  if (rc != MPI_SUCCESS) return rc;
  if (!recv_direct)
    for (int i = 0; i < P; ++i)
      if (const int rc = unpack(recv + i * nbytes, recvcount, recvtype, rti, static_cast<char*>(recvbuf) + i * dst_step,
                                ctx->comm))
        return rc;
  return MPI_SUCCESS;
}

// One block view side of A2A_Alltoallv: block i at base + off[i], bytes[i]
// long.  Direct when the datatype is gap-free for every count (the user's
// buffer is used in place); otherwise packed into `packed` block after block.
struct VarSide {
  bool direct;
  char* base;
};

// Allreduce over (error, largest block, bytes sent, device, host) tuples:
// max, max, sum, max, max.
void max_max_sum_fn(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i + 4 < *len; i += 5) {
    for (int k : {0, 1, 3, 4}) b[i + k] = std::max(a[i + k], b[i + k]);
    b[i + 2] += a[i + 2];
  }
}
MPI_Op max_max_sum() {
  static const MPI_Op op = [] {
    MPI_Op o = MPI_OP_NULL;
    MPI_Op_create(&max_max_sum_fn, 1, &o);
    return o;
  }();
  return op;
}

bool gap_free(const TypeInfo& t, const int counts[], int P) {
  if (t.size != t.true_extent) return false;
  if (t.extent == t.size) return true;
  for (int i = 0; i < P; ++i)
    if (counts[i] > 1) return false;
  return true;
}

int device_alltoallv(CommContext& ctx, MPI_Comm comm, const Resolved& named, const void* sendbuf,
                     const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, const TypeInfo& sti,
                     void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                     const TypeInfo& rti, Stats& st, std::string& msg, Mode mode) {
  const int P = ctx.size;
  Resolved storage;
  const Resolved& target = device_target(Collective::alltoallv, named, P, storage);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  auto& soff = ctx.soff;
  auto& roff = ctx.roff;
  soff.resize(P);
  roff.resize(P);
  for (int i = 0; i < P; ++i) {
    soff[i] = static_cast<MPI_Aint>(sdispls[i]) * sti.extent;
    roff[i] = static_cast<MPI_Aint>(rdispls[i]) * rti.extent;
  }
  char* recv = static_cast<char*>(recvbuf) + rti.true_lb;
  const char* send = in_place ? recv : static_cast<const char*>(sendbuf) + sti.true_lb;
  std::string host_spec = target.canonical;
  if (is_cuda_ipc(target)) {
    if (mode == Mode::validate) {
      name_algorithm(st, target.canonical);
      return MPI_SUCCESS;
    }
    // One allreduce: the smallest and largest block over all ranks, and
    // whether any rank's send blocks are unevenly spaced (the paper's test
    // for an alltoallv that is an alltoall, plus what pulling needs).
    long long lo = -1, hi = 0;
    for (int i = 0; i < P; ++i) {
      lo = lo < 0 ? ctx.sbytes[i] : std::min(lo, ctx.sbytes[i]);
      hi = std::max(hi, ctx.sbytes[i]);
    }
    std::vector<long long> off(soff.begin(), soff.end());
    long long stride = 0;
    long long v[3] = {-lo, hi, schedule::evenly_spaced(off.data(), P, stride) ? 0 : 1};
    if (const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, ctx.comm)) return rc;
    const Params& pr = target.params;
    const auto path = schedule::gpu_path(pr.gpu_path, v[1], pr.ipc_threshold, pr.memcpy_threshold);
    if (path != schedule::GpuPath::host) {
      name_algorithm(st, ipc_name(target, path));
      const VarCall call{send, soff.data(), ctx.sbytes.data(), recv, roff.data(), ctx.rbytes.data(), ctx, st, v[1]};
      return gpu::ipc_alltoallv(call, pr, path, -v[0] == v[1] && v[2] == 0);
    }
    host_spec = "auto";
  }
  name_algorithm(st, mode == Mode::validate ? target.canonical : "staged:" + host_spec);
  if (mode == Mode::validate) return MPI_SUCCESS;
  // The nested call rebuilds the context's block views: keep copies.
  const std::vector<MPI_Aint> so(soff), ro(roff);
  const std::vector<long long> sb(ctx.sbytes), rb(ctx.rbytes);
  const Mode inner = mode == Mode::prechecked ? Mode::prechecked : Mode::run;
  const int rc = staged(ctx, st, in_place ? nullptr : send, so.data(), sb.data(), recv, ro.data(), rb.data(),
                        [&](const void* hs, void* hr) {
                          const void* s = hs == MPI_IN_PLACE ? hs : static_cast<const char*>(hs) - sti.true_lb;
                          return alltoallv(s, sendcounts, sdispls, sendtype, static_cast<char*>(hr) - rti.true_lb,
                                           recvcounts, rdispls, recvtype, comm, host_spec.c_str(), st, msg, inner);
                        });
  if (rc == MPI_SUCCESS) name_staged(st);
  return rc;
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              const char* algorithm, Stats& st, std::string& msg, Mode mode) {
  CommContext* ctx = nullptr;
  if (const int rc = start(comm, ctx)) return rc;
  track_nodes(*ctx, st);
  const int P = ctx->size, me = ctx->rank;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {  // the send data is the receive buffer's, described by the receive arguments
    sendcounts = recvcounts;
    sdispls = rdispls;
    sendtype = recvtype;
  }
  int err = MPI_SUCCESS;
  TypeInfo sti, rti;
  auto& sbytes = ctx->sbytes;
  auto& rbytes = ctx->rbytes;
  sbytes.assign(P, 0);
  rbytes.assign(P, 0);
  long long largest = 0, total = 0;
  if (!recvcounts || !rdispls || !sendcounts || !sdispls) {
    err = MPI_ERR_ARG;
  } else if (recvtype == MPI_DATATYPE_NULL || sendtype == MPI_DATATYPE_NULL || describe(recvtype, rti) ||
             describe(sendtype, sti)) {
    err = MPI_ERR_TYPE;
  } else {
    for (int i = 0; i < P && err == MPI_SUCCESS; ++i) {
      if (recvcounts[i] < 0 || sendcounts[i] < 0) err = MPI_ERR_COUNT;
      sbytes[i] = static_cast<long long>(sendcounts[i]) * sti.size;
      rbytes[i] = static_cast<long long>(recvcounts[i]) * rti.size;
      largest = std::max(largest, sbytes[i]);
      total += sbytes[i] + rbytes[i];
    }
    if (err == MPI_SUCCESS && sbytes[me] != rbytes[me]) {
      err = MPI_ERR_TRUNCATE;
      msg = "a2a: this rank's block to itself differs in size on the send and receive side";
    } else if (err == MPI_SUCCESS && total > 0 && (!recvbuf || !sendbuf)) {
      err = MPI_ERR_BUFFER;
    } else if (err == MPI_SUCCESS && total > 0 && gap_free(sti, sendcounts, P) && gap_free(rti, recvcounts, P)) {
      auto& so = ctx->aliasing_soff;
      auto& ro = ctx->aliasing_roff;
      so.resize(P);
      ro.resize(P);
      for (int i = 0; i < P; ++i) {
        so[i] = static_cast<long long>(sdispls[i]) * sti.extent;
        ro[i] = static_cast<long long>(rdispls[i]) * rti.extent;
      }
      err = check_aliasing(*ctx, in_place ? nullptr : static_cast<const char*>(sendbuf) + sti.true_lb, so.data(),
                           sbytes.data(), static_cast<const char*>(recvbuf) + rti.true_lb, ro.data(), rbytes.data(),
                           msg);
    }
  }
  Placement where;
  if (err == MPI_SUCCESS)
    err = place(sendbuf, recvbuf, total > 0, gap_free(sti, sendcounts, P) && gap_free(rti, recvcounts, P), where,
                msg);
  const Choice& choice = choose(Collective::alltoallv, spec_text(algorithm, "A2A_ALLTOALLV"), P, -1);
  const bool is_auto = choice.rc == MPI_SUCCESS && !choice.res.info;
  if (err == MPI_SUCCESS) {
    err = choice.rc;
    msg = choice.error;
  }
  // One allreduce agrees on errors and yields the global largest block (the
  // padded and two-phase algorithms need it) and the bytes sent by all ranks
  // (auto decides on the global mean and maximum block, unless nothing it
  // could pick needs them: auto_without_sizes).
  long long global_max = -1, global_sent = 0;
  const AutoDecision* without_sizes = nullptr;
  if (is_auto && mode != Mode::prechecked)
    if (const int rc = auto_without_sizes(*ctx, without_sizes, msg)) return rc;
  if ((agree_on_errors() || (is_auto && !without_sizes)) && mode != Mode::prechecked) {
    long long sent = 0;
    for (int i = 0; i < P; ++i) sent += sbytes[i];
    long long v[5] = {err, largest, sent, where.device, where.host};
    if (const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, max_max_sum(), ctx->comm)) return rc;
    err = static_cast<int>(v[0]);
    global_max = v[1];
    global_sent = v[2];
    where.device = v[3];
    where.host = v[4];
    if (err == MPI_SUCCESS && where.mixed()) {
      err = MPI_ERR_BUFFER;
      msg = kMixedPlacement;
    }
  }
  if (err != MPI_SUCCESS) return failed(err, msg);
  if (where.device)
    return device_alltoallv(*ctx, comm, choice.res, sendbuf, sendcounts, sdispls, sendtype, sti, recvbuf, recvcounts,
                            rdispls, recvtype, rti, st, msg, mode);
  const Resolved* chosen = &choice.res;
  if (is_auto) {
    const AutoDecision* d = without_sizes;
    const long long mean = global_sent / (static_cast<long long>(P) * P);
    if (!d)
      if (const int rc = resolve_auto(*ctx, Collective::alltoallv, mean, global_max, d, msg)) return rc;
    chosen = &d->resolved;
    st.decided_by = d->source;
  }
  const AlgorithmInfo* info = chosen->info;
  name_algorithm(st, chosen->canonical);
  if (mode == Mode::validate) return MPI_SUCCESS;

  if (!info->varying) {  // native
    st.rounds = st.messages = st.inter_node_messages = st.inter_node_bytes = -1;
    for (int i = 0; i < P; ++i)
      if (i != me) st.bytes_sent += sbytes[i];
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, ctx->comm);
  }

  static char nothing = 0;  // stands in for a null buffer of a rank with no data
  if (!sendbuf) sendbuf = &nothing;
  if (!recvbuf) recvbuf = &nothing;
  auto& soff = ctx->soff;
  auto& roff = ctx->roff;
  soff.resize(P);
  roff.resize(P);
  const char* send = nullptr;
  const void* src_buf = in_place ? recvbuf : sendbuf;
  if (!in_place && gap_free(sti, sendcounts, P)) {
    send = static_cast<const char*>(sendbuf) + sti.true_lb;
    for (int i = 0; i < P; ++i) soff[i] = static_cast<MPI_Aint>(sdispls[i]) * sti.extent;
  } else {
    long long bytes = 0;
    for (int i = 0; i < P; ++i) bytes += sbytes[i];
    char* packed = ctx->scratch.get(Scratch::kPackedSend, static_cast<size_t>(bytes), st);
    MPI_Aint off = 0;
    for (int i = 0; i < P; ++i) {
      soff[i] = off;
      const int rc = pack(static_cast<const char*>(src_buf) + static_cast<MPI_Aint>(sdispls[i]) * sti.extent,
                          sendcounts[i], sendtype, sti, packed + off, ctx->comm);
      if (rc != MPI_SUCCESS) return rc;
      off += static_cast<MPI_Aint>(sbytes[i]);
    }
    send = packed;
  }
  const bool recv_direct = gap_free(rti, recvcounts, P);
  char* recv = nullptr;
  if (recv_direct) {
    recv = static_cast<char*>(recvbuf) + rti.true_lb;
    for (int i = 0; i < P; ++i) roff[i] = static_cast<MPI_Aint>(rdispls[i]) * rti.extent;
  } else {
    long long bytes = 0;
    for (int i = 0; i < P; ++i) {
      roff[i] = static_cast<MPI_Aint>(bytes);
      bytes += rbytes[i];
    }
    recv = ctx->scratch.get(Scratch::kPackedRecv, static_cast<size_t>(bytes), st);
  }
  VarCall call{send, soff.data(), sbytes.data(), recv, roff.data(), rbytes.data(), *ctx, st, global_max};
  int rc = info->varying(call, chosen->params);
  if (rc == kFallback) {  // decided from global values, so every rank falls back alike
    Resolved fallback;
    std::string ignored;
    resolve(Collective::alltoallv, info->fallback, P, -1, fallback, ignored);
    restart_stats(*ctx, st, fallback.canonical);
    rc = fallback.info->varying(call, fallback.params);
  }
  if (rc != MPI_SUCCESS) return rc;
  if (!recv_direct)
    for (int i = 0; i < P; ++i) {
      rc = unpack(recv + roff[i], recvcounts[i], recvtype, rti,
                  static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(rdispls[i]) * rti.extent, ctx->comm);
      if (rc != MPI_SUCCESS) return rc;
    }
  return MPI_SUCCESS;
}

template <class F>
int record(F&& body) {
  Stats st;
  std::string msg;
  const int rc = body(st, msg);
  last_stats = st;
  last_error = rc == MPI_SUCCESS ? std::string() : msg;
  return rc;
}

}  // namespace
}  // namespace a2a::detail

// A persistent call: the arguments (which, as for MPI's persistent
// collectives, must stay valid and unchanged until the plan is freed) and the
// algorithm init resolved and agreed on.
struct A2A_Plan_s {
  bool v = false;
  const void* sendbuf;
  int sendcount;
  const int *sendcounts, *sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  const int *recvcounts, *rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;
  std::string algorithm;
};

using a2a::detail::Mode;
using a2a::detail::Stats;

extern "C" int A2A_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm) {
  return a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm, st, msg);
  });
}

extern "C" int A2A_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, const char* algorithm) {
  return a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  comm, algorithm, st, msg);
  });
}

extern "C" int A2A_Last_stats(A2A_Stats* stats) {
  if (!stats) return MPI_ERR_ARG;
  const Stats& s = a2a::detail::last_stats;
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
  return MPI_SUCCESS;
}

extern "C" const char* A2A_Last_decided_by(void) {
  return a2a::detail::last_stats.decided_by;
}

std::string a2a::tuning_status() {
  std::string status;
  a2a::detail::process_tuning(&status);
  return status;
}

std::string a2a::last_error_message() {
  return a2a::detail::last_error;
}

void a2a::set_error_check(ErrorCheck mode) { a2a::detail::agree_flag() = mode == ErrorCheck::agree; }

a2a::ErrorCheck a2a::error_check() {
  return a2a::detail::agree_on_errors() ? ErrorCheck::agree : ErrorCheck::local;
}

std::string a2a::layout(MPI_Comm comm) {
  a2a::detail::CommContext* ctx = nullptr;
  if (a2a::detail::get_context(comm, ctx) != MPI_SUCCESS) return "unknown";
  return ctx->topology.describe();
}

extern "C" int A2A_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm,
                                 A2A_Plan* plan) {
  if (!plan) return MPI_ERR_ARG;
  *plan = nullptr;
  const int rc = a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm, st, msg,
                                 Mode::validate);
  });
  if (rc != MPI_SUCCESS) return rc;
  A2A_Stats st;
  A2A_Last_stats(&st);
  *plan = new A2A_Plan_s{false,   sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                         nullptr, nullptr, recvtype,  comm,    st.algorithm};
  return MPI_SUCCESS;
}

extern "C" int A2A_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, A2A_Plan* plan) {
  if (!plan) return MPI_ERR_ARG;
  *plan = nullptr;
  const int rc = a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  algorithm, st, msg, Mode::validate);
  });
  if (rc != MPI_SUCCESS) return rc;
  A2A_Stats st;
  A2A_Last_stats(&st);
  *plan = new A2A_Plan_s{true,       sendbuf, 0,       sendcounts, sdispls, sendtype, recvbuf, 0,
                         recvcounts, rdispls, recvtype, comm,       st.algorithm};
  return MPI_SUCCESS;
}

extern "C" int A2A_Start(A2A_Plan plan) {
  if (!plan) return MPI_ERR_ARG;
  const A2A_Plan_s& p = *plan;
  return a2a::detail::record([&](Stats& st, std::string& msg) {
    if (p.v)
      return a2a::detail::alltoallv(p.sendbuf, p.sendcounts, p.sdispls, p.sendtype, p.recvbuf, p.recvcounts,
                                    p.rdispls, p.recvtype, p.comm, p.algorithm.c_str(), st, msg, Mode::prechecked);
    return a2a::detail::alltoall(p.sendbuf, p.sendcount, p.sendtype, p.recvbuf, p.recvcount, p.recvtype, p.comm,
                                 p.algorithm.c_str(), st, msg, Mode::prechecked);
  });
}

extern "C" int A2A_Plan_free(A2A_Plan* plan) {
  if (!plan) return MPI_ERR_ARG;
  delete *plan;
  *plan = nullptr;
  return MPI_SUCCESS;
}
