#include "select/cost_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <tuple>

#include "schedule/clustered.hpp"
#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"
#include "registry/registry.hpp"
#include "schedule/shm.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail {
namespace {

CostedSpec costed(std::string spec, const ModelCost& w) { return {std::move(spec), w.seconds, w.rounds}; }

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
  return worst_rank(ModelCall{l, m, 8, 8, false}, [&](RankClock& c, int p) {
    for (int k = 0; k < rounds; ++k) {
      const int partner = p ^ (1 << k);
      c.message(partner < P ? partner : (p + (1 << k)) % P, 8);
      c.end_round();
    }
  }).seconds;
}

namespace {

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

}  // namespace

SweepValues model_values(int P, int Q, int N) {
  return {radix_values(candidate_radices(P)), radix_values(layer_radices(Q)), radix_values(layer_radices(N)),
          kSweptPorts};
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
    const ModelCall one{l, m, bytes, max_bytes, coll == Collective::alltoallv};
    out.push_back(costed("spread-out", find_algorithm(coll, "spread-out")->cost(one, Params{})));
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
