#include "select/cost_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <tuple>

#include "schedule/clustered.hpp"
#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"
#include "select/registry.hpp"
#include "schedule/shm.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail {
namespace {

// Ranks of `node` whose partner `distance` ranks on (mod P) is on another
// node.
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

// One rank's modelled time, built round by round.
class RankClock {
 public:
  RankClock(const ModelLayout& l, const MachineModel& m, int rank)
      : l_(l), m_(m), rank_(rank), node_(l.node_of[rank]) {}
  // An off-node message shares the node's one link with `sharers` messages
  // of the same round (default: every rank of the node sends off it at once),
  // so a rank gets 1/sharers of the measured (one-pair) inter-node bandwidth.
  void message(int dst, long long bytes, int sharers = -1) {
    const bool local = l_.node_of[dst] == node_;
    const LinkCost& link = local ? m_.intra : m_.inter;
    alpha_ = std::max({alpha_, link.alpha, m_.round});
    const int on_link = sharers < 0 ? static_cast<int>(l_.ranks[node_].size()) : sharers;
    beta_ += (link_seconds(link, bytes) - link.alpha) * (local ? 1.0 : on_link);
    ++n_;
  }
  // A round in which every rank sends to its partner at the same distance
  // (TRA's and pairwise's steps over all ranks): only the node's ranks whose
  // partner is off the node too share its link; in the lower digits of a
  // large node, few.
  void shifted(int dst, long long bytes) { message(dst, bytes, crossing(l_, node_, dst - rank_)); }
  void copy(long long bytes) { t_ += m_.copy * static_cast<double>(bytes); }
  void add(double seconds) { t_ += seconds; }
  // A round that waits for `peers` flags in shared memory: what a flag
  // round with every rank of the node taking part measured (on a
  // time-sliced machine one scheduling pass, not a pass per peer), else
  // the flags read one after another, else (nothing known) as intra-node
  // messages of no bytes.
  void flags(int peers) {
    if (peers <= 0) return;
    if (m_.flag <= 0 && m_.flag_round <= 0) {
      for (int i = 0; i < peers; ++i) message(l_.ranks[node_].front(), 0);
      end_round();
      return;
    }
    end_round();
    t_ += m_.flag_round > 0 ? m_.flag_round : peers * m_.flag;
    ++rounds_;
  }
  void end_round() {
    if (n_) {
      t_ += alpha_ + (n_ - 1) * m_.overhead + beta_;
      ++rounds_;
    }
    alpha_ = beta_ = 0;
    n_ = 0;
  }
  double seconds() {
    end_round();
    return t_;
  }
  int rounds() const { return rounds_; }

 private:
  const ModelLayout& l_;
  const MachineModel& m_;
  int rank_, node_;
  double t_ = 0, alpha_ = 0, beta_ = 0;
  long long n_ = 0;
  int rounds_ = 0;
};

// The ranks whose costs are evaluated: all of them up to 64, then a fixed
// sample (ends, middle, the edges of the first and last node), the same on
// every rank.
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

// The worst modelled time (and most rounds) over the evaluated ranks of
// `one_rank(clock, p)`.
struct Worst {
  double seconds = 0;
  int rounds = 0;
};
template <class F>
Worst worst(const ModelLayout& l, const MachineModel& m, F&& one_rank) {
  Worst w;
  for (int p : evaluated_ranks(l)) {
    RankClock clock(l, m, p);
    one_rank(clock, p);
    w.seconds = std::max(w.seconds, clock.seconds());
    w.rounds = std::max(w.rounds, clock.rounds());
  }
  return w;
}

CostedSpec costed(std::string spec, const Worst& w) { return {std::move(spec), w.seconds, w.rounds}; }

// TRA (and Bruck, radix 2) over `group` (rank p is group[idx]) with blocks
// of `bs` bytes: rotation in and out, each round packs and unpacks its
// slots (a lone block goes straight from buffer to buffer).  The rounds of
// a batch (`ports`, schedule::batch_end) are in flight together: one
// modelled round, its slowest message plus each other's injection
// overhead.  `meta` > 0 adds TuNA's metadata messages (meta bytes per
// slot), a batch's before its data.  `world`: the group is every rank in
// order, so a step is a shift (RankClock::shifted).
void tra_rounds(RankClock& c, const std::vector<schedule::StepShape>& steps, const std::vector<int>& group, int idx,
                long long bs, long long meta = 0, int ports = 1, bool world = false) {
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

void spread_out(RankClock& c, int p, int P, long long bs) {
  c.copy(bs);
  for (int i = 1; i < P; ++i) c.message((p + i) % P, bs);
  c.end_round();
}

void pairwise(RankClock& c, int p, int P, long long bs) {
  c.copy(bs);
  for (int i = 1; i < P; ++i) {
    c.shifted((p + i) % P, bs);
    c.end_round();
  }
}

void factor(RankClock& c, int p, int P, long long bs) {
  for (int i = 0; i < P; ++i) {
    const int peer = schedule::factor_partner(p, i, P);
    if (peer == p) c.copy(bs);
    else c.message(peer, bs);
    c.end_round();
  }
}

// Traff's steps; with `skip_node` the steps between node-mates are left out
// (intra=shm moved those blocks before).
void clustered(RankClock& c, const std::vector<schedule::PeerStep>& plan, int p, long long bs,
               const std::vector<int>* skip_node = nullptr) {
  for (const auto& s : plan) {
    if (skip_node && (*skip_node)[s.peer] == (*skip_node)[p]) continue;
    if (s.peer == p) c.copy(bs);
    else if (s.send) c.message(s.peer, bs);
    c.end_round();
  }
}

// Local index and node of rank p.
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

void sort_by_cost(std::vector<CostedSpec>& out) {
  std::stable_sort(out.begin(), out.end(), [](const CostedSpec& a, const CostedSpec& b) { return a.seconds < b.seconds; });
}

// A few radices for the small groups of the two-layer algorithms.
std::vector<int> layer_radices(int n) {
  std::vector<int> r = {2, static_cast<int>(schedule::ceil_sqrt(n)), n};
  r.erase(std::remove_if(r.begin(), r.end(), [n](int x) { return x < 2 || x > n; }), r.end());
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

}  // namespace

const CostedSpec* find_costed(const std::vector<CostedSpec>& ranked, const std::string& spec) {
  for (const auto& c : ranked)
    if (c.spec == spec) return &c;
  return nullptr;
}

std::vector<int> candidate_radices(int P) {
  std::vector<int> r;
  if (P < 2) return r;
  const int s = static_cast<int>(schedule::ceil_sqrt(P));
  for (int x = 2; x <= P; ++x)
    if (P <= 64 || x <= 2 * s + 2 || (x & (x - 1)) == 0 || x == P) r.push_back(x);
  return r;
}

namespace {


// native: the library's own choice when known (its persistent requests
// costing `persistent` per message more), else the best of the algorithms
// MPI libraries implement, among the candidates.
void add_native(std::vector<CostedSpec>& out, const LibraryChoice& choice, std::initializer_list<const char*> library,
                int P, const MachineModel& m) {
  const CostedSpec* pick = choice.spec.empty() ? nullptr : find_costed(out, choice.spec);
  if (!pick)
    for (const char* spec : library) {
      const CostedSpec* c = find_costed(out, spec);
      if (c && (!pick || c->seconds < pick->seconds)) pick = c;
    }
  const double extra = choice.persistent ? 2.0 * (P - 1) * m.persistent : 0;
  const CostedSpec native{"native", pick->seconds + extra, pick->rounds};
  out.insert(out.begin(), native);  // first: ties go to native
}

}  // namespace

Library library_from_version(const std::string& v) {
  if (v.find("Open MPI") != std::string::npos) return Library::open_mpi;
  if (v.find("MPICH") != std::string::npos) return Library::mpich;
  return Library::other;
}

LibraryChoice library_alltoall(Library library, int P, long long n) {
  if (library == Library::mpich) return {n <= 256 && P >= 8 ? "tra:radix=2" : n <= 32768 ? "spread-out" : "pairwise"};
  if (library != Library::open_mpi) return {};
  // coll/tuned's fixed rules (Open MPI 4.1): 1 linear, 2 pairwise, 3
  // modified Bruck, 4 linear with a window (all at once by default), 5 two
  // processes (one exchange); by block bytes n within each size class.
  struct Rule {
    int below_procs;
    std::vector<std::pair<long long, int>> up_to;  // (n below, algorithm); the last for larger n
  };
  static const std::vector<Rule> rules = {
      {3, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}, {0, 2}}},
      {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {0, 1}}},
      {16, {{262144, 4}, {0, 1}}},
      {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {0, 4}}},
      {64, {{512, 3}, {524288, 1}, {0, 4}}},
      {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}, {0, 2}}},
      {256, {{1024, 3}, {2048, 4}, {262144, 1}, {0, 2}}},
      {512, {{1024, 3}, {8192, 4}, {32768, 1}, {0, 2}}},
      {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}, {0, 2}}},
      {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}, {0, 4}}},
      {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}, {0, 1}}},
      {1 << 30, {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}, {0, 4}}}};
  int algorithm = 1;
  for (const auto& rule : rules)
    if (P < rule.below_procs) {
      for (const auto& [below, a] : rule.up_to) {
        algorithm = a;
        if (below && n < below) break;
      }
      break;
    }
  if (algorithm == 2 || algorithm == 5) return {"pairwise"};
  return {algorithm == 3 ? "tra:radix=2" : "spread-out", algorithm == 1};
}

LibraryChoice library_alltoallv(Library library, int P) {
  if (library == Library::mpich) return {"spread-out"};
  if (library != Library::open_mpi) return {};
  const bool pairwise = P < 4 || (P >= 64 && P < 128) || (P >= 256 && P < 1024);
  return pairwise ? LibraryChoice{"pairwise"} : LibraryChoice{"spread-out", true};
}

double model_allreduce(const ModelLayout& l, const MachineModel& m) {
  const int P = static_cast<int>(l.node_of.size());
  int rounds = 0;
  while ((1 << rounds) < P) ++rounds;
  return worst(l, m, [&](RankClock& c, int p) {
    for (int k = 0; k < rounds; ++k) {
      const int partner = p ^ (1 << k);
      c.message(partner < P ? partner : (p + (1 << k)) % P, 8);
      c.end_round();
    }
  }).seconds;
}

namespace {

// The shared-memory exchange among `group`: one round in which every
// peer's flag is awaited (RankClock::flags) and every block is copied
// twice, into this rank's part and out of the peer's (the measured copies
// of the Q-1 blocks together), or, from the direct threshold on, read once
// with CMA (a second flag round: the readers' `done`) or sent as messages.
void shm_round(RankClock& clock, const MachineModel& m, const std::vector<int>& group, long long bytes,
               const Params& prm) {
  const int Q = static_cast<int>(group.size());
  if (Q < 2) return;
  ShmDirect direct = shm_direct_choice(m, Q);
  if (prm.shm_direct != Params::kShmDirectAuto) direct.from = prm.shm_direct;
  if (prm.shm_via != Params::ShmVia::automatic) direct.cma = prm.shm_via == Params::ShmVia::cma && m.cma[0] > 0;
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

Worst cost_of(const ModelCall& c, void (*one)(RankClock&, int, int, long long)) {
  const int P = static_cast<int>(c.layout.node_of.size());
  return worst(c.layout, c.m, [&](RankClock& clock, int p) { one(clock, p, P, c.bytes); });
}

ModelCost cost(const Worst& w) { return {w.seconds, w.rounds}; }

// The specs a layout's model sweeps (registry rows with a cost entry that
// fit the layout, over the model's radices), resolved: they depend on the
// layout's shape only, not on the size priced, so each shape is swept once
// per thread (sweeping and parsing were most of a pricing's time).
const std::vector<Resolved>& swept(Collective coll, const ModelLayout& l) {
  const int P = static_cast<int>(l.node_of.size());
  const int Q = static_cast<int>(l.ranks[0].size()), N = static_cast<int>(l.ranks.size());
  const Where where = where_of(l.ranks);
  const auto key = std::make_tuple(static_cast<int>(coll), P, Q, N, where.nodes, where.equal_nodes, where.one_node);
  thread_local std::map<decltype(key), std::vector<Resolved>> shapes;
  if (auto it = shapes.find(key); it != shapes.end()) return it->second;
  if (shapes.size() >= 64) shapes.clear();
  std::vector<Resolved> specs;
  const SweepValues values = model_values(P, Q, N);
  for (const AlgorithmInfo& a : algorithms()) {
    if (a.collective != coll || !a.cost || !fits(a, where)) continue;
    for (const std::string& spec : sweep(a, values)) {
      Resolved r;
      std::string error;
      // once per row as it runs: ports at or above r-1 name the spec without them
      const auto same = [&r](const Resolved& x) { return x.canonical == r.canonical; };
      if (resolve(coll, spec, P, 0, r, error) == MPI_SUCCESS && std::none_of(specs.begin(), specs.end(), same))
        specs.push_back(std::move(r));
    }
  }
  return shapes.emplace(key, std::move(specs)).first->second;
}

// Every candidate of `coll`, costed and named canonically.
std::vector<CostedSpec> model_candidates(Collective coll, const ModelLayout& l, long long bytes, long long max_bytes,
                                         const MachineModel& m) {
  const ModelCall call{l, m, bytes, max_bytes, coll == Collective::alltoallv};
  const std::vector<Resolved>& specs = swept(coll, l);
  std::vector<CostedSpec> out;
  out.reserve(specs.size() + 1);
  for (const Resolved& r : specs) {
    const ModelCost c = r.info->cost(call, r.params);
    out.push_back({r.canonical, c.seconds, c.rounds});
  }
  return out;
}

constexpr long long kMetaPerBlock = sizeof(long long);  // two-phase algorithms' size per block

}  // namespace

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
  ShmDirect d{Params::kShmDirectOff, known(m.cma)};
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

SweepValues model_values(int P, int Q, int N) {
  return {radix_values(candidate_radices(P)), radix_values(layer_radices(Q)), radix_values(layer_radices(N)),
          kSweptPorts};
}

ModelCost cost_spread_out(const ModelCall& c, const Params&) { return cost(cost_of(c, spread_out)); }
ModelCost cost_pairwise(const ModelCall& c, const Params&) { return cost(cost_of(c, pairwise)); }
ModelCost cost_factor(const ModelCall& c, const Params&) { return cost(cost_of(c, factor)); }

ModelCost cost_shm(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  return cost(worst(c.layout, c.m, [&](RankClock& clock, int) { shm_round(clock, c.m, all_ranks(P), c.bytes, prm); }));
}

ModelCost cost_clustered(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  return cost(worst(l, c.m, [&](RankClock& clock, int p) {
    if (prm.intra_shm) {
      const auto [n, q] = place(l, p);
      shm_round(clock, c.m, l.ranks[n], c.bytes, prm);
    }
    clustered(clock, schedule::clustered_plan(l.ranks, p), p, c.bytes, prm.intra_shm ? &l.node_of : nullptr);
  }));
}

ModelCost cost_tra(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const auto steps = schedule::tra_shape(P, prm.radix);
  const auto everyone = all_ranks(P);
  return cost(worst(c.layout, c.m, [&](RankClock& clock, int p) {
    tra_rounds(clock, steps, everyone, p, c.bytes, 0, prm.ports, true);
  }));
}

ModelCost cost_tuna(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const auto steps = schedule::tra_shape(P, prm.radix);
  const auto everyone = all_ranks(P);
  return cost(worst(c.layout, c.m, [&](RankClock& clock, int p) {
    tra_rounds(clock, steps, everyone, p, c.bytes, kMetaPerBlock, prm.ports, true);
  }));
}

ModelCost cost_padded_bruck(const ModelCall& c, const Params&) {
  const int P = static_cast<int>(c.layout.node_of.size());
  const auto steps = schedule::tra_shape(P, 2);
  const auto everyone = all_ranks(P);
  return cost(worst(c.layout, c.m, [&](RankClock& clock, int p) {
    clock.copy(2LL * P * c.max_bytes);  // pad in, unpad out
    tra_rounds(clock, steps, everyone, p, c.max_bytes, 0, 1, true);
  }));
}

ModelCost cost_tra2(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  const int P = static_cast<int>(l.node_of.size());
  const int N = static_cast<int>(l.ranks.size()), Q = static_cast<int>(l.ranks[0].size());
  const auto node_steps = schedule::tra_shape(Q, prm.radix_intra), port_steps = schedule::tra_shape(N, prm.radix_inter);
  return cost(worst(l, c.m, [&](RankClock& clock, int p) {
    const auto [n, q] = place(l, p);
    if (prm.intra_shm) shm_round(clock, c.m, l.ranks[n], N * c.bytes, prm);
    else tra_rounds(clock, node_steps, l.ranks[n], q, N * c.bytes, 0, prm.ports_intra);
    clock.copy(static_cast<long long>(P) * c.bytes);  // regroup by destination node
    tra_rounds(clock, port_steps, port_of(l, q), n, Q * c.bytes, 0, prm.ports_inter);
  }));
}

ModelCost cost_tuna_hier(const ModelCall& c, const Params& prm) {
  const ModelLayout& l = c.layout;
  const int N = static_cast<int>(l.ranks.size()), Q = static_cast<int>(l.ranks[0].size());
  const auto steps = schedule::tra_shape(Q, prm.radix_intra);
  const auto plan = schedule::tuna_hier_inter_plan(N, Q, prm.staggered);
  return cost(worst(l, c.m, [&](RankClock& clock, int p) {
    const auto [n, q] = place(l, p);
    if (prm.intra_shm) shm_round(clock, c.m, l.ranks[n], N * c.bytes, prm);
    else tra_rounds(clock, steps, l.ranks[n], q, N * c.bytes, N * kMetaPerBlock, prm.ports_intra);
    int posted = 0;
    for (const auto& msg : plan) {
      clock.message(l.ranks[(n + msg.offset) % N][q], (msg.q_src < 0 ? Q : 1) * c.bytes);
      if (++posted % prm.block == 0) clock.end_round();
    }
  }));
}

namespace {

// The registry's candidates and native (costed as `library` chooses, among
// the algorithms `known` the library has), cheapest first; one rank: a copy.
std::vector<CostedSpec> model(Collective coll, const ModelLayout& l, long long bytes, long long max_bytes,
                              const MachineModel& m, const LibraryChoice& library,
                              std::initializer_list<const char*> known) {
  const int P = static_cast<int>(l.node_of.size());
  std::vector<CostedSpec> out;
  if (P < 2) {
    out.push_back(costed("spread-out", cost_of({l, m, bytes, max_bytes, coll == Collective::alltoallv}, spread_out)));
    add_native(out, {"spread-out"}, {}, P, m);
    return out;
  }
  out = model_candidates(coll, l, bytes, max_bytes, m);
  add_native(out, library, known, P, m);
  sort_by_cost(out);
  return out;
}

}  // namespace

std::vector<CostedSpec> model_alltoall(const ModelLayout& l, long long bs, const MachineModel& m) {
  const int P = static_cast<int>(l.node_of.size());
  return model(Collective::alltoall, l, bs, bs, m, library_alltoall(m.library, P, bs),
               {"spread-out", "pairwise", "tra:radix=2"});
}

std::vector<CostedSpec> model_alltoallv(const ModelLayout& l, long long mean, long long max_bytes,
                                        const MachineModel& m) {
  const int P = static_cast<int>(l.node_of.size());
  return model(Collective::alltoallv, l, mean, max_bytes, m, library_alltoallv(m.library, P),
               {"spread-out", "pairwise"});
}

}  // namespace a2a::detail
