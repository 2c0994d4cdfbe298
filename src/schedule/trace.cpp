#include "schedule/trace.hpp"

#include <algorithm>

#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"

namespace a2a::detail::schedule {

namespace {

// Ranks g = 0..n-1 of a sub-communicator are world ranks base + g*stride.
struct Group {
  int n, base, stride;
  int world(long long g) const { return base + mod(g, n) * stride; }
};

// a2a's TRA (zero-rotation engine; dir +1: round (x, z) sends its slots
// to g + d and receives as many from g - d; -1, Bruck's mirror: to g - d);
// a batch of `ports` rounds (batch_end) posts each round's receive, then
// its send, and waits once.
void tra_on(Trace& t, const Group& grp, int radix, long long block, int g, int ports, int dir = +1) {
  const auto steps = tra_shape(grp.n, phase_radix(radix, grp.n));
  if (block <= 0) return;
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = batch_end(steps, first, ports);
    for (size_t k = first; k < last; ++k) {
      t.push_back({TraceOp::irecv, false, -1, grp.world(g - dir * steps[k].distance), steps[k].slots * block, 0});
      t.push_back({TraceOp::isend, false, grp.world(g + dir * steps[k].distance), -1, steps[k].slots * block, 0});
    }
    t.push_back({TraceOp::waitall});
  }
}

// SMPI's MPICH selector on a node communicator: Bruck below 256 B per block
// (TRA's radix-2 rounds; its self-copies are local), else every message
// posted at once.
void size_alltoall(Trace& t, const Group& grp, int g, long long block) {
  if (block < 256 && grp.n >= 8) {  // the selector's Bruck: a sendrecv a round
    for (const auto& s : tra_shape(grp.n, 2))
      t.push_back({TraceOp::sendrecv, true, grp.world(g + s.distance), grp.world(g - s.distance), s.slots * block,
                   s.slots * block});
    return;
  }
  for (int i = 1; i < grp.n; ++i) t.push_back({TraceOp::irecv, true, -1, grp.world(g - i), block, 0});
  for (int i = 1; i < grp.n; ++i) t.push_back({TraceOp::isend, true, grp.world(g + i), -1, block, 0});
  if (grp.n > 1) t.push_back({TraceOp::waitall});
}

// Recursive doubling of 8 bytes on `grp` (SMPI's allreduce__rdb): the first
// 2*rem members of a non-power of two folded in pairs.
void rdb_8(Trace& t, const Group& grp, int g) {
  int pof2 = 1;
  while (pof2 * 2 <= grp.n) pof2 *= 2;
  const int rem = grp.n - pof2;
  const int newg = g >= 2 * rem ? g - rem : (g % 2 ? g / 2 : -1);
  if (g < 2 * rem) {
    if (g % 2 == 0) t.push_back({TraceOp::send, true, grp.world(g + 1), -1, 8, 0});
    else t.push_back({TraceOp::recv, true, -1, grp.world(g - 1), 8, 0});
  }
  auto old = [rem](int x) { return x < rem ? 2 * x + 1 : x + rem; };
  for (int mask = 1; newg >= 0 && mask < pof2; mask *= 2) {
    const int peer = old(newg ^ mask);
    t.push_back({TraceOp::sendrecv, true, grp.world(peer), grp.world(peer), 8, 8});
  }
  if (g < 2 * rem) {
    if (g % 2) t.push_back({TraceOp::send, true, grp.world(g - 1), -1, 8, 0});
    else t.push_back({TraceOp::recv, true, -1, grp.world(g + 1), 8, 0});
  }
}

// A binomial broadcast of 8 bytes from member 0 of `grp`.
void bcast_8(Trace& t, const Group& grp, int g) {
  int mask = 1;
  for (; mask < grp.n; mask *= 2)
    if (g & mask) {
      t.push_back({TraceOp::recv, true, -1, grp.world(g - mask), 8, 0});
      break;
    }
  for (mask /= 2; mask > 0; mask /= 2)
    if (g + mask < grp.n) t.push_back({TraceOp::send, true, grp.world(g + mask), -1, 8, 0});
}

// The largest-block allreduce (8 bytes) as SMPI's MPICH selector runs it:
// its two-level algorithm (allreduce__mvapich2_two_level), recursive
// doubling on each node, then among the nodes' first ranks, then a
// binomial broadcast on each node.  Nodes of Q consecutive ranks; `rank`
// in 0..P-1 of the ranks [base, base + P).
void allreduce_8(Trace& t, int P, int Q, int base, int rank) {
  const Group node{Q, base + rank / Q * Q, 1}, leaders{P / Q, base, Q};
  rdb_8(t, node, rank % Q);
  if (rank % Q == 0 && P > Q) rdb_8(t, leaders, rank / Q);
  bcast_8(t, node, rank % Q);
}

// a2a's two-phase exchange (src/alltoallv/two_phase.cpp: TuNA, two-phase
// Bruck) on `grp`, every member's trace at once (traces[g]), sb[x][y] the
// bytes member x sends member y: per batch of `ports` rounds (batch_end)
// the sizes of every round, then its blocks (none where both ways are
// empty), to g - d and from g + d, each round's receive before its send.  The
// sizes a slot carries are followed on every member.
void two_phase_on(std::vector<Trace>& traces, const Group& grp, const std::vector<Step>& steps,
                  const std::vector<std::vector<long long>>& sb, int ports = 1) {
  const int n = grp.n;
  std::vector<std::vector<long long>> held(n, std::vector<long long>(n, -1));
  // out[k - first][x]: the bytes member x sends in the batch's round k, slot by slot.
  std::vector<std::vector<std::vector<long long>>> out;
  auto src_of = [&](int g, const Step& s) { return mod(static_cast<long long>(g) + s.distance, n); };
  auto dst_of = [&](int g, const Step& s) { return mod(static_cast<long long>(g) - s.distance, n); };
  auto total = [](const std::vector<long long>& v) {
    long long sum = 0;
    for (long long b : v) sum += b;
    return sum;
  };
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = batch_end(steps, first, ports);
    out.assign(last - first, std::vector<std::vector<long long>>(n));
    for (size_t k = first; k < last; ++k)  // the batch's slots are disjoint: held is read before it changes
      for (int x = 0; x < n; ++x)
        for (int i : steps[k].slots) out[k - first][x].push_back(held[x][i] >= 0 ? held[x][i] : sb[x][mod(x - i, n)]);
    for (int g = 0; g < n; ++g) {
      Trace& t = traces[static_cast<size_t>(g)];
      for (size_t k = first; k < last; ++k) {
        const long long sizes = 8LL * static_cast<long long>(steps[k].slots.size());
        t.push_back({TraceOp::irecv, true, -1, grp.world(src_of(g, steps[k])), sizes, 0});
        t.push_back({TraceOp::isend, true, grp.world(dst_of(g, steps[k])), -1, sizes, 0});
      }
      t.push_back({TraceOp::waitall});
      bool posted = false;
      for (size_t k = first; k < last; ++k) {
        if (const long long arriving = total(out[k - first][src_of(g, steps[k])]); arriving > 0)
          t.push_back({TraceOp::irecv, false, -1, grp.world(src_of(g, steps[k])), arriving, 0}), posted = true;
        if (const long long sent = total(out[k - first][g]); sent > 0)
          t.push_back({TraceOp::isend, false, grp.world(dst_of(g, steps[k])), -1, sent, 0}), posted = true;
      }
      if (posted) t.push_back({TraceOp::waitall});
    }
    for (size_t k = first; k < last; ++k)
      for (int x = 0; x < n; ++x) {
        const auto& from = out[k - first][src_of(x, steps[k])];
        for (size_t j = 0; j < steps[k].slots.size(); ++j) held[x][steps[k].slots[j]] = from[j];
      }
  }
}

long long largest(const std::vector<std::vector<long long>>& sb) {
  long long M = 0;
  for (const auto& row : sb) M = std::max(M, *std::max_element(row.begin(), row.end()));
  return M;
}

// The bytes every rank sends every other, as a matrix.
std::vector<std::vector<long long>> block_matrix(int P, const BlockBytes& bytes) {
  std::vector<std::vector<long long>> sb(P, std::vector<long long>(P, 0));
  for (int x = 0; x < P; ++x)
    for (int y = 0; y < P; ++y) sb[x][y] = bytes(x, y);
  return sb;
}

}  // namespace

Trace trace_tra(int P, int radix, long long block, int rank, int ports) {
  Trace t;
  tra_on(t, {P, 0, 1}, radix, block, rank, ports);
  return t;
}

Trace trace_tra2(int P, int Q, int r1, int r2, long long block, int rank, int ports_intra, int ports_inter) {
  const int N = P / Q, n = rank / Q, q = rank % Q;
  Trace t;
  tra_on(t, {Q, n * Q, 1}, r1, N * block, q, ports_intra);  // node phase
  tra_on(t, {N, q, Q}, r2, Q * block, n, ports_inter);      // port phase
  return t;
}

std::vector<Trace> trace_tuna_hier(int P, int Q, int radix, int batch, bool staggered, const BlockBytes& bytes,
                                   int node, int ports) {
  const int N = P / Q, n = node;
  // Group y of node-mate x: x's blocks for local index y on every node.
  std::vector<std::vector<long long>> sb(Q, std::vector<long long>(Q, 0));
  for (int x = 0; x < Q; ++x)
    for (int y = 0; y < Q; ++y)
      for (int m = 0; m < N; ++m) sb[x][y] += bytes(n * Q + x, m * Q + y);
  const auto plan = tuna_hier_inter_plan(N, Q, staggered);
  const Group node_grp{Q, n * Q, 1};
  std::vector<Trace> traces(Q);
  for (int q = 0; q < Q; ++q) {
    size_alltoall(traces[q], node_grp, q, 8LL * N);
    allreduce_8(traces[q], Q, Q, n * Q, q);  // on the node communicator: one node
  }
  if (largest(sb) > 0) two_phase_on(traces, node_grp, tra_steps(Q, phase_radix(radix, Q)), sb, ports);
  for (int q = 0; q < Q; ++q) {
    const int rank = n * Q + q;
    const Group port{N, q, Q};
    Trace& t = traces[q];
    for (size_t first = 0; first < plan.size(); first += static_cast<size_t>(batch)) {
      const size_t last = std::min(plan.size(), first + static_cast<size_t>(batch));
      bool posted = false;
      auto post = [&](TraceOp op) {
        if (op.bytes > 0) t.push_back(op), posted = true;
      };
      for (size_t k = first; k < last; ++k) {
        const int from = mod(n - plan[k].offset, N);
        long long in = 0;
        for (int qs = 0; qs < Q; ++qs)
          if (!staggered || qs == plan[k].q_src) in += bytes(from * Q + qs, rank);
        post({TraceOp::irecv, false, -1, port.world(from), in, 0});
      }
      for (size_t k = first; k < last; ++k) {
        const int to = mod(n + plan[k].offset, N);
        long long out = 0;
        for (int qs = 0; qs < Q; ++qs)
          if (!staggered || qs == plan[k].q_src) out += bytes(n * Q + qs, to * Q + q);
        post({TraceOp::isend, false, port.world(to), -1, out, 0});
      }
      if (posted) t.push_back({TraceOp::waitall});
    }
  }
  return traces;
}

std::vector<Trace> trace_tuna(int P, int Q, int radix, const BlockBytes& bytes, int ports) {
  std::vector<Trace> traces(P);
  for (int p = 0; p < P; ++p) allreduce_8(traces[p], P, Q, 0, p);
  const auto sb = block_matrix(P, bytes);
  if (largest(sb) > 0) two_phase_on(traces, {P, 0, 1}, tra_steps(P, phase_radix(radix, P)), sb, ports);
  return traces;
}

std::vector<Trace> trace_padded_bruck(int P, int Q, const BlockBytes& bytes) {
  long long M = 0;
  for (int x = 0; x < P; ++x)
    for (int y = 0; y < P; ++y) M = std::max(M, bytes(x, y));
  std::vector<Trace> traces(P);
  for (int p = 0; p < P; ++p) {
    allreduce_8(traces[p], P, Q, 0, p);
    tra_on(traces[p], {P, 0, 1}, 2, M, p, 1, -1);  // bruck_zero_rotation's orientation
  }
  return traces;
}

Trace trace_native_alltoall(long long block) { return {{TraceOp::alltoall, false, -1, -1, block, block}}; }

Trace trace_native_alltoallv(int P, const BlockBytes& bytes, int rank) {
  long long out = 0, in = 0;
  for (int i = 0; i < P; ++i) out += bytes(rank, i), in += bytes(i, rank);
  return {{TraceOp::alltoallv, false, -1, -1, out, in}};
}

TraceTotals trace_totals(const Trace& t, int rank, int Q) {
  TraceTotals s;
  for (const auto& op : t) {
    const bool sends = op.kind == TraceOp::sendrecv || op.kind == TraceOp::send || op.kind == TraceOp::isend;
    if (!sends || op.bytes <= 0) continue;
    if (op.meta) {
      s.meta_bytes += op.bytes;
      continue;
    }
    ++s.messages;
    s.bytes += op.bytes;
    if (op.dst / Q != rank / Q) ++s.inter_messages, s.inter_bytes += op.bytes;
  }
  return s;
}

std::string trace_line(int rank, const TraceOp& op, int P, const BlockBytes& bytes) {
  const std::string r = std::to_string(rank) + ' ';
  auto n = [](long long v) { return std::to_string(v); };
  switch (op.kind) {
    case TraceOp::sendrecv:  // MPI_BYTE is datatype 6 in SMPI's encoding
      return r + "sendRecv " + n(op.bytes) + ' ' + n(op.dst) + ' ' + n(op.recv_bytes) + ' ' + n(op.src) + " 6 6";
    case TraceOp::send: return r + "send " + n(op.dst) + " 1 " + n(op.bytes) + " 6";
    case TraceOp::recv: return r + "recv " + n(op.src) + " 1 " + n(op.bytes) + " 6";
    case TraceOp::isend: return r + "isend " + n(op.dst) + " 1 " + n(op.bytes) + " 6";
    case TraceOp::irecv: return r + "irecv " + n(op.src) + " 1 " + n(op.bytes) + " 6";
    case TraceOp::waitall: return r + "waitall";
    case TraceOp::alltoall: return r + "alltoall " + n(op.bytes) + ' ' + n(op.recv_bytes);
    case TraceOp::alltoallv: {
      std::string s = r + "alltoallv " + n(op.bytes);
      for (int i = 0; i < P; ++i) s += ' ' + n(bytes(rank, i));
      s += ' ' + n(op.recv_bytes);
      for (int i = 0; i < P; ++i) s += ' ' + n(bytes(i, rank));
      return s;
    }
  }
  return r;
}

}  // namespace a2a::detail::schedule
