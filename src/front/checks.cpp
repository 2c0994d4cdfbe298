// Preparing a call: this rank's argument checks (MPI's local ones, plus
// aliasing of gap-free buffers), the datatypes described, the block view in
// bytes, where the buffers live and the spec resolved.  No communication
// here but the communicator's first use (get_context).
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <utility>

#include "core/regions.hpp"
#include "front/cache.hpp"
#include "gpu/gpu.hpp"

namespace a2a::detail {

int check_comm(MPI_Comm comm) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return MPI_ERR_OTHER;
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
  return MPI_SUCCESS;
}

int open_comm(MPI_Comm comm, CommContext*& ctx) {
  if (const int rc = check_comm(comm)) return rc;
  return get_context(comm, ctx);
}

namespace {

// `count` elements of every block form one gap-free run for every count.
bool gap_free(const TypeInfo& t, const int counts[], int P) {
  if (t.size != t.true_extent) return false;
  if (t.extent == t.size) return true;
  for (int i = 0; i < P; ++i)
    if (counts[i] > 1) return false;
  return true;
}

// MPI_ERR_BUFFER when a receive block overlaps another receive block or a
// send block (send null: MPI_IN_PLACE, receive blocks only).
int check_aliasing(int P, const void* send, const long long* soff, const long long* sbytes, const void* recv,
                   const long long* roff, const long long* rbytes, std::string& msg) {
  thread_local std::vector<Region> regions;  // reused: a call with new counts allocates nothing here
  regions.clear();
  if (send) add_regions(regions, send, soff, sbytes, P, false);
  add_regions(regions, recv, roff, rbytes, P, true);
  std::string which;
  if (!regions_collide(regions, which)) return MPI_SUCCESS;
  msg = "a2a: " + which + " overlap (buffers must not alias; MPI_IN_PLACE sends from the receive buffer)";
  return MPI_ERR_BUFFER;
}

// Where this rank's buffers live, when it moves bytes: MPI_ERR_BUFFER when
// one is device memory and the other not, MPI_ERR_TYPE for device buffers
// with non-contiguous datatypes.  host: known to be host memory already.
int place(const void* sendbuf, const void* recvbuf, bool moves, bool contiguous, bool host, Placement& out,
          std::string& msg) {
  out = Placement{};
  if (!moves) return MPI_SUCCESS;
  if (host || !gpu::built_with_cuda()) {
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

int describe_types(const CallArgs& a, Prepared& p) {
  if (p.types_known) return MPI_SUCCESS;  // the same types as the object's last signature
  if (a.stype == MPI_DATATYPE_NULL || a.rtype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  if (describe(a.stype, p.sti) || describe(a.rtype, p.rti)) return MPI_ERR_TYPE;
  bool sd = true, rd = true;
  p.cacheable = watch_datatype(a.stype, sd) && watch_datatype(a.rtype, rd);
  p.derived_types = sd || rd;
  p.types_known = true;
  return MPI_SUCCESS;
}

int prepare_alltoall(const CallArgs& a, Prepared& p, std::string& msg, bool host_buffers) {
  const int P = p.P;
  if (a.scount < 0 || a.rcount < 0) return MPI_ERR_COUNT;
  if (const int rc = describe_types(a, p)) return rc;
  p.bs = static_cast<long long>(a.rcount) * p.rti.size;
  if (static_cast<long long>(a.scount) * p.sti.size != p.bs) {
    msg = "a2a: send and receive type signatures differ in size";
    return MPI_ERR_TYPE;
  }
  if (p.bs > 0 && (!a.recvbuf || !a.sendbuf)) return MPI_ERR_BUFFER;
  p.sstep = static_cast<MPI_Aint>(a.scount) * p.sti.extent;
  p.rstep = static_cast<MPI_Aint>(a.rcount) * p.rti.extent;
  const bool contiguous = p.sti.contiguous(a.scount) && p.rti.contiguous(a.rcount);
  p.send_direct = !a.in_place() && p.sti.contiguous(a.scount);
  p.recv_direct = p.rti.contiguous(a.rcount);
  p.sent = p.largest = p.bs;
  if (p.bs > 0 && contiguous) {
    thread_local std::vector<long long> so, ro;  // offsets, then sizes
    so.resize(2 * static_cast<size_t>(P));
    ro.resize(2 * static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) {
      so[i] = i * static_cast<long long>(p.sstep);
      ro[i] = i * static_cast<long long>(p.rstep);
      so[P + i] = ro[P + i] = p.bs;
    }
    const char* send = a.in_place() ? nullptr : static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
    if (const int rc = check_aliasing(P, send, so.data(), so.data() + P,
                                      static_cast<const char*>(a.recvbuf) + p.rti.true_lb, ro.data(), ro.data() + P,
                                      msg))
      return rc;
  }
  return place(a.sendbuf, a.recvbuf, p.bs > 0, contiguous, host_buffers, p.where, msg);
}

int prepare_alltoallv(const CallArgs& a, Prepared& p, std::string& msg, bool host_buffers) {
  const int P = p.P, me = p.ctx->rank;
  if (!a.rcounts || !a.rdispls || !a.scounts || !a.sdispls) return MPI_ERR_ARG;
  if (const int rc = describe_types(a, p)) return rc;
  p.counts.resize(4 * static_cast<size_t>(P));  // capacity kept across recycled signatures
  store_counts(p.counts.data(), P, a);
  p.sbytes.assign(P, 0);
  p.rbytes.assign(P, 0);
  for (int i = 0; i < P; ++i) {
    if (a.rcounts[i] < 0 || a.scounts[i] < 0) return MPI_ERR_COUNT;
    p.sbytes[i] = static_cast<long long>(a.scounts[i]) * p.sti.size;
    p.rbytes[i] = static_cast<long long>(a.rcounts[i]) * p.rti.size;
    p.largest = std::max(p.largest, p.sbytes[i]);
    p.sent += p.sbytes[i];
    p.packed_recv += p.rbytes[i];
  }
  p.packed_send = p.sent;
  if (p.sbytes[me] != p.rbytes[me]) {
    msg = "a2a: this rank's block to itself differs in size on the send and receive side";
    return MPI_ERR_TRUNCATE;
  }
  const bool any = p.sent + p.packed_recv > 0;
  if (any && (!a.recvbuf || !a.sendbuf)) return MPI_ERR_BUFFER;
  const bool sgap = gap_free(p.sti, a.scounts, P), rgap = gap_free(p.rti, a.rcounts, P);
  // The block view: the user's buffers where the types are gap-free,
  // otherwise packed block after block.
  p.send_direct = !a.in_place() && sgap;
  p.recv_direct = rgap;
  p.soff.resize(P);
  p.roff.resize(P);
  MPI_Aint packed = 0;
  for (int i = 0; i < P; ++i) {
    p.soff[i] = p.send_direct ? static_cast<MPI_Aint>(a.sdispls[i]) * p.sti.extent : packed;
    packed += static_cast<MPI_Aint>(p.sbytes[i]);
  }
  packed = 0;
  for (int i = 0; i < P; ++i) {
    p.roff[i] = p.recv_direct ? static_cast<MPI_Aint>(a.rdispls[i]) * p.rti.extent : packed;
    packed += static_cast<MPI_Aint>(p.rbytes[i]);
  }
  if (any && sgap && rgap) {
    thread_local std::vector<long long> so, ro;
    so.resize(static_cast<size_t>(P));
    ro.resize(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) {
      so[i] = static_cast<long long>(a.sdispls[i]) * p.sti.extent;
      ro[i] = static_cast<long long>(a.rdispls[i]) * p.rti.extent;
    }
    const char* send = a.in_place() ? nullptr : static_cast<const char*>(a.sendbuf) + p.sti.true_lb;
    if (const int rc = check_aliasing(P, send, so.data(), p.sbytes.data(),
                                      static_cast<const char*>(a.recvbuf) + p.rti.true_lb, ro.data(), p.rbytes.data(),
                                      msg))
      return rc;
  }
  return place(a.sendbuf, a.recvbuf, any, sgap && rgap, host_buffers, p.where, msg);
}

}  // namespace

bool hot_new_blocks(HotCall& h, const CallArgs& a) {
  const int P = h.P, me = h.rank;
  if (!a.sendbuf || !a.recvbuf || a.in_place() != h.args.in_place()) return false;
  const bool new_buffers = !same_buffers(h.args, a);
  if (new_buffers && gpu::any_device(a.recvbuf, a.in_place() ? nullptr : a.sendbuf)) return false;
  const TypeInfo &s = h.sti, &r = h.rti;
  bool s_gap = true, r_gap = true;  // gap_free, in the same pass
  long long sent = 0;
  for (int i = 0; i < P; ++i) {
    const int sc = a.scounts[i], rc = a.rcounts[i];
    if (sc < 0 || rc < 0) return false;
    sent += i != me ? sc * static_cast<long long>(s.size) : 0;
    s_gap = s_gap && s.contiguous(sc);
    r_gap = r_gap && r.contiguous(rc);
  }
  if (a.scounts[me] * static_cast<long long>(s.size) != a.rcounts[me] * static_cast<long long>(r.size)) return false;
  if (s_gap && r_gap) {  // check_aliasing's question, answered for the common layout only
    const auto span = [](const void* buf, const TypeInfo& t, const int* counts, const int* displs, int i) {
      const long long lo = reinterpret_cast<intptr_t>(buf) + t.true_lb + static_cast<long long>(displs[i]) * t.extent;
      return std::pair<long long, long long>{lo, lo + counts[i] * static_cast<long long>(t.size)};
    };
    long long rlo = LLONG_MAX, rhi = LLONG_MIN;
    for (int i = 0; i < P; ++i) {
      if (a.rcounts[i] == 0) continue;
      const auto [lo, hi] = span(a.recvbuf, r, a.rcounts, a.rdispls, i);
      if (lo < rhi) return false;  // before the last block's end: out of order, or overlapping
      rlo = std::min(rlo, lo);
      rhi = hi;
    }
    if (!a.in_place())
      for (int i = 0; i < P; ++i) {
        if (a.scounts[i] == 0) continue;
        const auto [lo, hi] = span(a.sendbuf, s, a.scounts, a.sdispls, i);
        if (lo < rhi && rlo < hi) return false;
      }
  }
  store_counts(h.counts, P, a);
  h.bytes_sent = sent;
  if (new_buffers) {
    h.args.sendbuf = a.sendbuf;
    h.args.recvbuf = a.recvbuf;
  }
  return true;
}

int prepare(const CallArgs& a, CommContext& ctx, Prepared& p, std::string& msg) {
  // The object may hold an earlier signature (run_call recycles the least
  // recent one): what depends only on what both share stays (the types
  // described, the spec resolved, the choice where the counts cannot move
  // it), so a program whose alltoallv counts change every call pays little
  // more than the lookup.
  const uint64_t gen = generation(), comm_gen = call_globals.comm_generation.load(std::memory_order_acquire);
  const bool same = p.reusable && p.ctx == &ctx && p.generation == gen && p.args.comm == a.comm &&
                    p.args.coll == a.coll && p.P == ctx.size;
  p.types_known = same && p.types_known && p.args.stype == a.stype && p.args.rtype == a.rtype;
  const bool same_spec = same && p.spec == a.spec;
  // Buffers the last signature found in host memory need no pointer query.
  const bool host_buffers = same && p.where.host && p.args.sendbuf == a.sendbuf && p.args.recvbuf == a.recvbuf;
  const long long old_bs = p.bs;
  p.reusable = false;
  p.native_decided = p.own_decided = false;
  p.args = a;
  static std::atomic<uint64_t> serials{0};
  p.serial = ++serials;
  if (!same_spec) p.spec = a.spec;
  p.generation = gen;
  p.stale_at = 0;  // not matched before it is prepared whole
  p.key = signature_hash(a);
  p.ctx = &ctx;
  p.P = ctx.size;
  p.rank = ctx.rank;
  p.bs = 0;
  p.sstep = p.rstep = 0;
  p.largest = p.sent = p.packed_send = p.packed_recv = 0;
  p.send_direct = p.recv_direct = true;
  p.where = Placement{};
  const int rc = a.v() ? prepare_alltoallv(a, p, msg, host_buffers) : prepare_alltoall(a, p, msg, host_buffers);
  // The choice stays with the spec where the counts cannot change it: a
  // named spec; auto's class of an alltoallv without sizes (v_fixed) or of
  // an alltoall of the same block size.
  const bool keep_choice =
      same_spec && (p.named.info || (a.v() ? p.cls != nullptr : p.cls != nullptr && p.bs == old_bs));
  if (!keep_choice) {
    p.decided = false;
    p.chosen = Resolved{};
    p.cls.reset();
    p.class_generation = 0;
    p.stats = Stats{};
  }
  p.stats.node_of = ctx.topology.node_of.data();
  p.stats.my_node = ctx.topology.node_of[ctx.rank];
  if (rc != MPI_SUCCESS) return rc;
  if (!same_spec) {
    std::string error;
    if (resolve(a.coll, p.spec, p.P, p.bs, p.named, error) != MPI_SUCCESS) {
      msg = error;
      return MPI_ERR_ARG;
    }
  }
  if (p.named.info && !keep_choice) {  // a named spec is the choice (once the machine decides its knobs, execute.cpp)
    p.chosen = p.named;
    p.decided = !p.named.machine_knobs;
    std::strncpy(p.stats.algorithm, p.chosen.canonical.c_str(), sizeof p.stats.algorithm - 1);
  }
  p.stale_at = p.derived_types ? gen : comm_gen;
  p.reusable = true;
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
