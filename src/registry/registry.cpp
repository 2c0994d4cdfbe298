#include "registry/registry.hpp"

#include <map>
#include <mutex>
#include <string_view>

#include "schedule/gpu_plan.hpp"
#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"
#include "registry/spec.hpp"

namespace a2a::detail {

// The rows, one per algorithm file (those of both collectives take which).
AlgorithmInfo linear_row(Collective);
AlgorithmInfo spread_out_row(Collective);
AlgorithmInfo scattered_row(Collective);
AlgorithmInfo pairwise_row(Collective);
AlgorithmInfo factor_row(Collective);
AlgorithmInfo clustered_row(Collective);
AlgorithmInfo shm_row(Collective);
AlgorithmInfo bruck_basic_row();
AlgorithmInfo bruck_modified_row();
AlgorithmInfo bruck_zero_copy_row();
AlgorithmInfo bruck_zero_rotation_row();
AlgorithmInfo tra_row();
AlgorithmInfo tra2_row();
AlgorithmInfo padded_bruck_row();
AlgorithmInfo padded_alltoall_row();
AlgorithmInfo two_phase_bruck_row();
AlgorithmInfo tuna_row();
AlgorithmInfo tuna_hier_row();
AlgorithmInfo cuda_ipc_row(Collective);  // src/gpu/row.cpp

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> table = {
      {.name = "native", .collective = Collective::alltoall, .summary = "the MPI library's own MPI_Alltoall"},
      linear_row(Collective::alltoall),
      spread_out_row(Collective::alltoall),
      scattered_row(Collective::alltoall),
      pairwise_row(Collective::alltoall),
      bruck_basic_row(),
      bruck_modified_row(),
      bruck_zero_copy_row(),
      bruck_zero_rotation_row(),
      tra_row(),
      tra2_row(),
      factor_row(Collective::alltoall),
      cuda_ipc_row(Collective::alltoall),
      clustered_row(Collective::alltoall),
      shm_row(Collective::alltoall),
      {.name = "native", .collective = Collective::alltoallv, .summary = "the MPI library's own MPI_Alltoallv"},
      linear_row(Collective::alltoallv),
      spread_out_row(Collective::alltoallv),
      scattered_row(Collective::alltoallv),
      pairwise_row(Collective::alltoallv),
      padded_bruck_row(),
      padded_alltoall_row(),
      two_phase_bruck_row(),
      tuna_hier_row(),
      factor_row(Collective::alltoallv),
      clustered_row(Collective::alltoallv),
      tuna_row(),
      shm_row(Collective::alltoallv),
      cuda_ipc_row(Collective::alltoallv)
  };
  return table;
}

const AlgorithmInfo* find_algorithm(Collective coll, const std::string& name) {
  for (const auto& a : algorithms())
    if (a.collective == coll && name == a.name) return &a;
  return nullptr;
}

bool fits(const AlgorithmInfo& a, const Where& where) {
  return (!(a.needs & kNeedsNodes) || where.nodes) && (!(a.needs & kNeedsEqualNodes) || where.equal_nodes) &&
         (!(a.needs & kNeedsDevice) || where.device) && (!(a.needs & kNeedsOneNode) || where.one_node);
}

Where where_of(const std::vector<std::vector<int>>& node_ranks) {
  const bool nodes = node_ranks.size() > 1;
  return {nodes, nodes && node_ranks[0].size() > 1 && schedule::equal_nodes(node_ranks), false, !nodes};
}

std::vector<std::string> radix_values(const std::vector<int>& radices) {
  std::vector<std::string> v;
  for (int r : radices) v.push_back(std::to_string(r));
  return v;
}

std::vector<std::string> sweep(const AlgorithmInfo& a, const SweepValues& values) {
  std::vector<std::string> specs = {""};  // knob settings so far, non-default ones only
  for (const ParamInfo& p : a.params) {
    std::vector<std::string> own;
    if (p.kind == KnobKind::choice && p.swept) own = p.choices;
    if (p.kind == KnobKind::radix) own = values.radix;
    if (p.kind == KnobKind::intra_radix) own = values.intra;
    if (p.kind == KnobKind::inter_radix) own = values.inter;
    if (p.kind == KnobKind::ports) own = values.ports;
    if (own.empty()) own = {p.fallback};
    std::vector<std::string> next;
    for (const std::string& so_far : specs)
      for (const std::string& v : own)
        next.push_back(v == p.fallback ? so_far : so_far + (so_far.empty() ? "" : ",") + p.key + "=" + v);
    specs = std::move(next);
  }
  for (std::string& s : specs) s = s.empty() ? a.name : a.name + (":" + s);
  return specs;
}

std::vector<std::string> sweep(Collective coll, const Where& where, const SweepValues& values) {
  std::vector<std::string> out;
  for (const AlgorithmInfo& a : algorithms())
    if (a.collective == coll && fits(a, where))
      for (std::string& s : sweep(a, values)) out.push_back(std::move(s));
  return out;
}

namespace {

std::string expected_keys(const AlgorithmInfo& a) {
  if (a.params.empty()) return "it takes no parameters";
  std::string keys = "expected ";
  for (size_t k = 0; k < a.params.size(); ++k) keys += (k ? ", " : "") + std::string(a.params[k].key);
  return keys;
}

struct Validated {
  std::mutex lock;
  std::map<std::pair<int, std::string>, std::pair<Spec, std::string>> cache;
};
Validated& validated() {  // built on first use (resolve may run during static initialisation)
  static Validated v;
  return v;
}

// Syntax and names checked once per distinct string; defaults filled in.
// The cache starts over at kMaxValidated strings, so a program that builds
// many distinct strings does not grow without bound (found by fuzz_spec).
int validate(Collective coll, const std::string& text, Spec& spec, std::string& error) {
  auto& cache = validated().cache;
  std::lock_guard<std::mutex> guard(validated().lock);
  const auto key = std::make_pair(static_cast<int>(coll), text);
  auto it = cache.find(key);
  if (it == cache.end()) {
    Spec s;
    std::string err;
    if (split_spec(text, s, err)) {
      const AlgorithmInfo* info = s.name == "auto" ? nullptr : find_algorithm(coll, s.name);
      if (s.name == "auto") {
        if (!s.params.empty()) err = "a2a: 'auto' takes no parameters";
      } else if (!info) {
        err = "a2a: unknown algorithm '" + s.name + "' (see `a2a list`)";
      } else {
        for (const auto& kv : s.params) {
          bool known = false;
          for (const auto& p : info->params) known = known || kv.first == p.key;
          if (!known) err = "a2a: unknown parameter '" + kv.first + "' for " + s.name + "; " + expected_keys(*info);
        }
        for (const auto& p : info->params) s.params.emplace(p.key, p.fallback);
      }
    }
    if (cache.size() >= kMaxValidated) cache.clear();
    it = cache.emplace(key, std::make_pair(s, err)).first;
  }
  spec = it->second.first;
  error = it->second.second;
  return error.empty() ? MPI_SUCCESS : MPI_ERR_ARG;
}


}  // namespace

size_t validated_specs() {
  std::lock_guard<std::mutex> guard(validated().lock);
  return validated().cache.size();
}

int resolve(Collective coll, const std::string& text, int P, long long /*block_bytes*/, Resolved& out,
            std::string& error) {
  Spec spec;
  if (const int rc = validate(coll, text, spec, error)) return rc;
  out = Resolved{};
  if (spec.name == "auto") {
    out.canonical = "auto";
    return MPI_SUCCESS;
  }
  out.info = find_algorithm(coll, spec.name);
  out.params = out.info->knobs;
  out.canonical = spec.name;
  const char* sep = ":";
  // Radix knobs resolved so far (they precede their ports knobs).
  std::pair<const char*, int> radices[4] = {};
  size_t n_radices = 0;
  for (const auto& p : out.info->params) {
    const std::string& value = spec.params[p.key];
    long long v = 0;
    std::string shown = value;
    int radix = 0;
    for (size_t k = 0; k < n_radices; ++k)
      if (p.radix_key && std::string_view(p.radix_key) == radices[k].first) radix = radices[k].second;
    if (const std::string why = parse_knob(p, value, P, radix, v, shown); !why.empty()) {
      error = std::string("a2a: ").append(p.key).append(" must be ").append(why).append(", got '").append(value) + "'";
      return MPI_ERR_ARG;
    }
    p.set(out.params, v);
    if ((p.kind == KnobKind::radix || p.kind == KnobKind::intra_radix || p.kind == KnobKind::inter_radix) &&
        n_radices < std::size(radices))
      radices[n_radices++] = {p.key, static_cast<int>(v)};
    if (p.quiet_default && shown == p.fallback) continue;
    out.canonical.append(sep).append(p.key).append("=").append(shown);
    sep = ",";
  }
  const ShmKnobs* shm = shm_knobs_of(*out.info, out.params);
  out.machine_knobs = shm && shm->machine_decides();
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
