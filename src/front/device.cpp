// Device buffers.  They take cuda-ipc when the call names it; any other
// algorithm runs on pinned host copies of the buffers ("staged:NAME"), as
// does cuda-ipc's hybrid path below its ipc-threshold ("staged:" and
// auto's choice).  auto tries cuda-ipc against host staging of the
// library's own call (auto_device_class).
#include <algorithm>
#include <cstring>

#include "front/pipeline.hpp"
#include "gpu/gpu.hpp"
#include "schedule/gpu_plan.hpp"
#include "select/auto.hpp"

namespace a2a::detail {

namespace {

bool is_cuda_ipc(const Resolved& r) { return r.info && std::strcmp(r.info->name, "cuda-ipc") == 0; }

// The spec that runs device buffers: the named one, or for auto cuda-ipc
// (its knobs are bytes, the same at every P), resolved once.
const Resolved& device_target(const Prepared& p) {
  if (p.named.info) return p.named;
  static const auto make = [](Collective c) {
    Resolved r;
    std::string ignored;
    resolve(c, "cuda-ipc", 1, -1, r, ignored);
    return r;
  };
  static const Resolved alltoall = make(Collective::alltoall), alltoallv = make(Collective::alltoallv);
  return p.args.coll == Collective::alltoall ? alltoall : alltoallv;
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
    const MPI_Aint end = off[i] + static_cast<MPI_Aint>(bytes[i]);
    lo = any ? std::min(lo, off[i]) : off[i];
    hi = any ? std::max(hi, end) : end;
    any = true;
  }
}

// Runs the host call on pinned host mirrors of the device buffers: the send
// blocks' span copied in first (the receive span when dsend is null:
// MPI_IN_PLACE), then the receive blocks copied back one by one, so the
// receive buffer's gaps stay untouched.  `host` gets the mirrors where the
// buffers' first block byte would be.
template <class HostCall>
int staged(CommContext& ctx, Stats& st, const char* dsend, const MPI_Aint* soff, const long long* sbytes, char* drecv,
           const MPI_Aint* roff, const long long* rbytes, HostCall&& host) {
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
  rc = host(dsend ? static_cast<const void*>(hs - slo) : MPI_IN_PLACE, static_cast<void*>(hr - rlo));
  if (rc != MPI_SUCCESS) return rc;
  return gpu::copy_blocks_to_device(drecv, hr - rlo, roff, rbytes, P);
}

// The nested host call on the mirrors (hs, hr stand for the first block
// byte); every rank checked and agreed already.
int host_call(const CallArgs& a, const Prepared& p, const std::string& spec, const void* hs, void* hr, Stats& st,
              std::string& msg) {
  CallArgs h = a;
  h.sendbuf = hs == MPI_IN_PLACE ? hs : static_cast<const char*>(hs) - p.sti.true_lb;
  h.recvbuf = static_cast<char*>(hr) - p.rti.true_lb;
  h.spec = spec.c_str();
  h.spec_owned = false;  // a string of this call, not the configured default
  const long long staging = st.temp_bytes;
  const int rc = run_call(thread_state(), h, false, st, msg);
  st.temp_bytes += staging;
  if (rc == MPI_SUCCESS) {
    const std::string inner = st.algorithm;
    name_algorithm(st, "staged:" + inner);
  }
  return rc;
}

int device_alltoall(const CallArgs& a, Prepared& p, const Resolved& target, Stats& st, std::string& msg) {
  CommContext& ctx = *p.ctx;
  const int P = p.P;
  const bool in_place = a.in_place();
  char* recv = static_cast<char*>(a.recvbuf) + p.rti.true_lb;
  std::string host_spec = target.canonical;
  if (is_cuda_ipc(target)) {
    const auto& pr = target.params.as<gpu::Knobs>();
    const auto path = schedule::gpu_path(pr.path, p.bs, pr.ipc_threshold, pr.memcpy_threshold);
    if (path != schedule::GpuPath::host) {
      name_algorithm(st, ipc_name(target, path));
      const char* send = in_place ? recv : static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
      const UniformCall call{send, in_place ? p.rstep : p.sstep, recv, p.rstep, static_cast<size_t>(p.bs), ctx, st};
      return gpu::ipc_alltoall(call, pr, path);
    }
    host_spec = "auto";
  }
  std::vector<MPI_Aint> soff(P), roff(P);
  const std::vector<long long> bytes(P, p.bs);
  for (int i = 0; i < P; ++i) {
    soff[i] = i * (in_place ? p.rstep : p.sstep);
    roff[i] = i * p.rstep;
  }
  const char* dsend = in_place ? nullptr : static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
  return staged(ctx, st, dsend, soff.data(), bytes.data(), recv, roff.data(), bytes.data(),
                [&](const void* hs, void* hr) { return host_call(a, p, host_spec, hs, hr, st, msg); });
}

// What cuda-ipc needs of an alltoallv call, from one allreduce: the
// smallest and largest block over all ranks, and whether any rank's send
// blocks are unevenly spaced (the paper's test for an alltoallv that is an
// alltoall, plus what pulling needs).
struct DeviceSizes {
  long long lo = 0, hi = 0;
  bool uneven = false;
};

std::vector<MPI_Aint> send_offsets(const CallArgs& a, const Prepared& p) {
  std::vector<MPI_Aint> soff(p.P);
  for (int i = 0; i < p.P; ++i) soff[i] = static_cast<MPI_Aint>(a.sdispls[i]) * p.sti.extent;
  return soff;
}

int agree_sizes(const CallArgs& a, const Prepared& p, DeviceSizes& out) {
  const int P = p.P;
  long long lo = -1, hi = 0;
  for (int i = 0; i < P; ++i) {
    lo = lo < 0 ? p.sbytes[i] : std::min(lo, p.sbytes[i]);
    hi = std::max(hi, p.sbytes[i]);
  }
  const std::vector<MPI_Aint> soff = send_offsets(a, p);
  std::vector<long long> off(soff.begin(), soff.end());
  long long stride = 0;
  long long v[3] = {-lo, hi, schedule::evenly_spaced(off.data(), P, stride) ? 0 : 1};
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, p.ctx->comm)) return rc;
  out = {-v[0], v[1], v[2] != 0};
  return MPI_SUCCESS;
}

int device_alltoallv(const CallArgs& a, Prepared& p, const Resolved& target, const DeviceSizes& sizes, Stats& st,
                     std::string& msg) {
  CommContext& ctx = *p.ctx;
  const int P = p.P;
  const bool in_place = a.in_place();
  const std::vector<MPI_Aint> soff = send_offsets(a, p);
  std::vector<MPI_Aint> roff(P);
  for (int i = 0; i < P; ++i) roff[i] = static_cast<MPI_Aint>(a.rdispls[i]) * p.rti.extent;
  char* recv = static_cast<char*>(a.recvbuf) + p.rti.true_lb;
  const char* send = in_place ? recv : static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
  std::string host_spec = target.canonical;
  if (is_cuda_ipc(target)) {
    const auto& pr = target.params.as<gpu::Knobs>();
    const auto path = schedule::gpu_path(pr.path, sizes.hi, pr.ipc_threshold, pr.memcpy_threshold);
    if (path != schedule::GpuPath::host) {
      name_algorithm(st, ipc_name(target, path));
      const VarCall call{send, soff.data(), p.sbytes.data(), recv, roff.data(), p.rbytes.data(), ctx, st, sizes.hi};
      return gpu::ipc_alltoallv(call, pr, path, sizes.lo == sizes.hi && !sizes.uneven);
    }
    host_spec = "auto";
  }
  return staged(ctx, st, in_place ? nullptr : send, soff.data(), p.sbytes.data(), recv, roff.data(), p.rbytes.data(),
                [&](const void* hs, void* hr) { return host_call(a, p, host_spec, hs, hr, st, msg); });
}

int run_device(const CallArgs& a, Prepared& p, const Resolved& target, const DeviceSizes& sizes, Stats& st,
               std::string& msg) {
  name_algorithm(st, target.canonical);
  return a.v() ? device_alltoallv(a, p, target, sizes, st, msg) : device_alltoall(a, p, target, st, msg);
}

// A call of auto's device class c (auto_device_class): a trial call (its
// candidate runs, timed), or a decided call, timed where it is a sample,
// with the drift agreement where one is due; as host classes' calls
// (execute.cpp's class_call).
int device_class_call(const CallArgs& a, Prepared& p, ClassState& c, const DeviceSizes& sizes, Stats& st,
                      std::string& msg) {
  CommContext& ctx = *p.ctx;
  const double bytes = call_bytes(p);
  ++c.since;
  const bool trial = c.trying();
  const Resolved& res = trial ? trial_candidate(c).resolved : c.decision.resolved;
  const bool timed = trial || c.since >= c.next_event;
  const double t0 = timed ? MPI_Wtime() : 0;
  const int rc = run_device(a, p, res, sizes, st, msg);
  const double seconds = timed ? MPI_Wtime() - t0 : -1;
  st.decided_by = trial ? kByTrial : c.decision.source;
  if (trial) {
    if (const int e = trial_record(ctx, c, seconds, bytes, msg)) return e;
  } else if (c.since >= c.next_event) {
    if (const int e = class_event(ctx, c, seconds, bytes, 0, msg)) return e;
  }
  return rc;
}

}  // namespace

int device_call(const CallArgs& a, Prepared& p, Stats& st, std::string& msg) {
  if (const int rc = p.ctx->open_private()) return rc;
  st = p.stats;
  const Resolved& target = device_target(p);
  gpu::clear_last_error();
  DeviceSizes sizes{p.bs, p.bs, false};
  int rc = a.v() && is_cuda_ipc(target) ? agree_sizes(a, p, sizes) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS && !p.named.info && sizes.hi > 0) {
    std::shared_ptr<ClassState> c;
    rc = auto_device_class(*p.ctx, a.coll, sizes.hi, c, msg);
    if (rc == MPI_SUCCESS) rc = device_class_call(a, p, *c, sizes, st, msg);
  } else if (rc == MPI_SUCCESS) {
    rc = run_device(a, p, target, sizes, st, msg);
  }
  if (rc != MPI_SUCCESS && msg.empty() && gpu::error_recorded()) msg = gpu::last_error();  // a2a::last_error_message()
  return rc;
}

}  // namespace a2a::detail
