#include "core/cost.hpp"

#include <algorithm>
#include <iterator>

#include "core/algorithm.hpp"
#include "schedule/shm.hpp"

namespace a2a::detail {

int crossing(const ModelLayout& l, int node, long long distance) {
  const auto& ranks = l.ranks[node];
  const int P = static_cast<int>(l.node_of.size()), Q = static_cast<int>(ranks.size());
  const long long d = schedule::mod(distance, P);
  if (ranks.back() - ranks.front() + 1 == Q) {  // one run: shifted by d it overlaps itself at its two ends
    const long long stay = std::max(0LL, Q - d) + std::max(0LL, Q - (P - d));
    return Q - static_cast<int>(std::min<long long>(Q, stay));
  }
  int n = 0;
  for (int q : ranks) n += l.node_of[schedule::mod(q + d, P)] != node;
  return n;
}

std::vector<int> evaluated_ranks(const ModelLayout& l) {
  const int P = static_cast<int>(l.node_of.size());
  std::vector<int> out;
  if (P <= 64) {
    for (int p = 0; p < P; ++p) out.push_back(p);
    return out;
  }
  out = {0, 1, P / 2, P - 1, l.ranks.front().back(), l.ranks.back().front()};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Seconds of a block of `bytes` on a curve measured at kShmCopyBytes:
// straight lines between the points; past the last, its cost per byte;
// before the first, the first line extended (`proportional`: the first
// point's cost per byte instead).
double on_curve(const double (&t)[kShmCopySizes], long long bytes, bool proportional) {
  const auto x = [](int i) { return static_cast<double>(kShmCopyBytes[i]); };
  const double b = static_cast<double>(bytes);
  constexpr int last = kShmCopySizes - 1;
  if (b >= x(last)) return t[last] * b / x(last);
  if (b < x(0) && proportional) return t[0] * b / x(0);
  int i = 0;
  while (i + 1 < last && b > x(i + 1)) ++i;
  return std::max(0.0, t[i] + (b - x(i)) * (t[i + 1] - t[i]) / (x(i + 1) - x(i)));
}

template <size_t N>
bool known(const double (&t)[N]) {
  return std::all_of(std::begin(t), std::end(t), [](double v) { return v > 0; });
}

}  // namespace

double link_seconds(const LinkCost& link, long long bytes) {
  const double b = static_cast<double>(bytes);
  if (!known(link.at)) return link.alpha + link.beta * b;
  double x0 = 8, t0 = link.alpha;
  for (int i = 0; i < kLinkSizes; ++i) {
    const double x1 = static_cast<double>(kLinkBytes[i]), t1 = link.at[i];
    if (b <= x1) return b <= x0 ? t0 : t0 + (b - x0) * (t1 - t0) / (x1 - x0);
    x0 = x1, t0 = t1;
  }
  return t0 + (b - x0) * link.beta;
}

double shm_segment_seconds(const MachineCosts& m, long long bytes) {
  if (!known(m.seg)) return 2 * m.copy * static_cast<double>(bytes);
  return on_curve(m.seg, bytes, true);
}

double shm_cma_seconds(const MachineCosts& m, long long bytes) {
  if (!known(m.cma)) return 1e30;
  return on_curve(m.cma, bytes, false);
}

ShmDirect shm_direct_choice(const MachineCosts& m, int P) {
  ShmDirect d{ShmKnobs::kDirectOff, known(m.cma)};
  if (P < 2) return d;
  const double peers = P - 1;
  // One block's direct cost: a CMA read, or a message of the node link.
  const auto direct = [&](long long n) {
    return d.cma ? shm_cma_seconds(m, n) + m.flag : link_seconds(m.intra, n);
  };
  if (!d.cma && m.intra.alpha <= 0) return d;
  // The smallest power of two from the smallest size measured on (a CMA
  // read's fixed cost known there, not extrapolated) where direct blocks win, at it
  // and at every larger size up to 1 GiB; where the two are within
  // kDirectBias the single copy wins (the library's own way for large
  // messages, and the copies through the segment measured warm, which
  // calls on data the application just wrote may not be).
  for (long long n = 1LL << 30; n >= kShmCopyBytes[0]; n /= 2) {
    if (peers * direct(n) >= kDirectBias * shm_segment_seconds(m, static_cast<long long>(peers) * n)) break;
    d.from = n;
  }
  return d;
}

void tra_rounds(RankClock& c, const std::vector<schedule::StepShape>& steps, const std::vector<int>& group, int idx,
                long long bs, long long meta, int ports, bool world) {
  const int n = static_cast<int>(group.size());
  c.copy(2LL * n * bs);
  auto dst = [&](const schedule::StepShape& s) {
    return group[schedule::mod(static_cast<long long>(idx) + s.distance, n)];
  };
  const auto send = [&](int to, long long bytes) { world ? c.shifted(to, bytes) : c.message(to, bytes); };
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = schedule::batch_end(steps, first, ports);
    if (meta) {
      for (size_t k = first; k < last; ++k) send(dst(steps[k]), steps[k].slots * meta);
      c.end_round();
    }
    for (size_t k = first; k < last; ++k) {
      const long long slots = steps[k].slots;
      send(dst(steps[k]), slots * bs);
      if (slots > 1 || meta) c.copy(2 * slots * bs);
    }
    c.end_round();
  }
}

std::vector<int> all_ranks(int P) {
  std::vector<int> g(P);
  for (int p = 0; p < P; ++p) g[p] = p;
  return g;
}

std::pair<int, int> place(const ModelLayout& l, int p) {
  const int n = l.node_of[p];
  const auto& node = l.ranks[n];
  return {n, static_cast<int>(std::find(node.begin(), node.end(), p) - node.begin())};
}

std::vector<int> port_of(const ModelLayout& l, int q) {
  std::vector<int> g;
  for (const auto& node : l.ranks) g.push_back(node[q]);
  return g;
}

void shm_round(RankClock& clock, const MachineModel& m, const std::vector<int>& group, long long bytes,
               const ShmKnobs& knobs) {
  const int Q = static_cast<int>(group.size());
  if (Q < 2) return;
  ShmDirect direct = shm_direct_choice(m, Q);
  if (knobs.direct != ShmKnobs::kDirectAuto) direct.from = knobs.direct;
  if (knobs.via != ShmKnobs::Via::automatic) direct.cma = knobs.via == ShmKnobs::Via::cma && m.cma[0] > 0;
  clock.copy(bytes);  // the own block
  if (!schedule::shm_direct(static_cast<size_t>(bytes), direct.from)) {
    clock.add(shm_segment_seconds(m, (Q - 1) * bytes));
    clock.flags(Q - 1);
    return;
  }
  clock.flags(Q - 1);
  if (direct.cma) {
    clock.add((Q - 1) * shm_cma_seconds(m, bytes));
    clock.flags(Q - 1);
    return;
  }
  for (int i = 1; i < Q; ++i) clock.message(group[static_cast<size_t>(i)], bytes);
  clock.end_round();
}

}  // namespace a2a::detail
