#include "select/registry.hpp"

#include <charconv>
#include <map>
#include <mutex>
#include <string_view>

#include "schedule/gpu_plan.hpp"
#include "schedule/hier.hpp"
#include "schedule/schedule.hpp"
#include "select/cost_model.hpp"
#include "select/spec.hpp"

namespace a2a::detail {

// The entry points, one per algorithm file, declared where they are registered.
Task<Result> linear(const UniformCall&, const Params&);
Task<Result> spread_out(const UniformCall&, const Params&);
Task<Result> scattered(const UniformCall&, const Params&);
Task<Result> pairwise(const UniformCall&, const Params&);
Task<Result> bruck_basic(const UniformCall&, const Params&);
Task<Result> bruck_modified(const UniformCall&, const Params&);
Task<Result> bruck_zero_copy(const UniformCall&, const Params&);
Task<Result> bruck_zero_rotation(const UniformCall&, const Params&);
Task<Result> tra(const UniformCall&, const Params&);
Task<Result> factor(const UniformCall&, const Params&);
Task<Result> tra2(const UniformCall&, const Params&);
Task<Result> clustered(const UniformCall&, const Params&);

Task<Result> linear(const VarCall&, const Params&);
Task<Result> spread_out(const VarCall&, const Params&);
Task<Result> scattered(const VarCall&, const Params&);
Task<Result> pairwise(const VarCall&, const Params&);
Task<Result> padded_bruck(const VarCall&, const Params&);
Task<Result> padded_alltoall(const VarCall&, const Params&);
Task<Result> two_phase_bruck(const VarCall&, const Params&);
Task<Result> tuna(const VarCall&, const Params&);
Task<Result> factor(const VarCall&, const Params&);
Task<Result> tuna_hier(const VarCall&, const Params&);
Task<Result> clustered(const VarCall&, const Params&);
Task<Result> shm(const UniformCall&, const Params&);
Task<Result> shm(const VarCall&, const Params&);

// cuda-ipc on host buffers: a fallback (device buffers never reach the
// registry's entry; the API runs them in src/gpu).
Task<Result> cuda_ipc_host(const UniformCall&, const Params&) { co_return Result::fallback(); }
Task<Result> cuda_ipc_host(const VarCall&, const Params&) { co_return Result::fallback(); }

namespace {

// 4096 -> "4K": byte defaults shown as a user would write them.
std::string bytes_text(long long v) {
  const char* units = "KMG";
  int u = -1;
  while (u < 2 && v != 0 && v % 1024 == 0) v /= 1024, ++u;
  return std::to_string(v) + (u >= 0 ? std::string(1, units[u]) : "");
}

const Params kDefaults{};

ParamInfo radix_knob(const char* help) {
  return {"radix", KnobKind::radix, "auto", help, [](Params& p, long long v) { p.radix = static_cast<int>(v); }, 0, 0, {}};
}
// The k-port form's batch size (Params::ports): knobs added later, so the
// default (all) is left out of the canonical name.
ParamInfo ports_knob(const char* key, const char* radix_key, const char* help, void (*set)(Params&, long long)) {
  return {key, KnobKind::ports, "all", help, set, 0, 0, {}, true, true, radix_key};
}
ParamInfo tra_ports_knob() {
  return ports_knob("ports", "radix", "exchanges of one digit in flight together, 1..r-1 or all (the k-port form)",
                    [](Params& p, long long v) { p.ports = static_cast<int>(v); });
}

ParamInfo block_knob(const char* help) {
  return {"block", KnobKind::integer, std::to_string(kDefaults.block), help,
          [](Params& p, long long v) { p.block = static_cast<int>(v); }, 1, 1 << 30, {}};
}
ParamInfo dt_knob() {
  return {"dt", KnobKind::choice, kDefaults.dt ? "1" : "0", "1: move blocks with MPI derived datatypes instead of memcpy",
          [](Params& p, long long v) { p.dt = v == 1; }, 0, 0, {"0", "1"}};
}
// The intra-node phase of a node-aware algorithm: point-to-point messages,
// or the shared-memory exchange (shm) among the node's ranks.
ParamInfo intra_knob() {
  return {"intra", KnobKind::choice, "p2p", "intra-node phase: p2p (messages) or shm (through shared memory)",
          [](Params& p, long long v) { p.intra_shm = v == 1; }, 0, 0, {"p2p", "shm"}, true};
}

ParamInfo bytes_knob(const char* key, long long fallback, long long lo, long long hi, const char* help,
                     void (*set)(Params&, long long)) {
  return {key, KnobKind::bytes, bytes_text(fallback), help, set, lo, hi, {}};
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithms() {
  static const ParamInfo dt = dt_knob();
  static const std::vector<std::string> paths = {"kernel", "memcpy", "hybrid"};  // GpuPathMode's order
  static const std::vector<ParamInfo> ipc = {
      {"path", KnobKind::choice, paths[static_cast<int>(kDefaults.gpu_path)],
       "kernel, memcpy, or hybrid: a host algorithm (staged) below ipc-threshold, the kernel below memcpy-threshold, "
       "cudaMemcpyAsync above",
       [](Params& p, long long v) { p.gpu_path = static_cast<schedule::GpuPathMode>(v); }, 0, 0, paths},
      bytes_knob("ipc-threshold", kDefaults.ipc_threshold, 0, 1LL << 62,
                 "hybrid: smallest block (bytes; K, M, G) copied over CUDA IPC",
                 [](Params& p, long long v) { p.ipc_threshold = v; }),
      bytes_knob("memcpy-threshold", kDefaults.memcpy_threshold, 0, 1LL << 62,
                 "hybrid: smallest block copied with cudaMemcpyAsync",
                 [](Params& p, long long v) { p.memcpy_threshold = v; }),
      bytes_knob("chunk", kDefaults.chunk, 1, 1LL << 30,
                 "inter-node blocks go through pinned host memory in chunks of this many bytes (<= 1G)",
                 [](Params& p, long long v) { p.chunk = v; })};
  static const char* shm_summary =
      "one node: blocks copied through a segment the ranks share (MPI-3 shared window), one flag wait; "
      "large blocks straight from buffer to buffer (CMA or messages)";
  static const std::vector<ParamInfo> shm_knobs = {
      {"direct", KnobKind::bytes_auto, "auto",
       "smallest block (bytes; K, M, G) read straight from the sender's buffer instead of through the segment; "
       "auto: the measured crossover; off: never",
       [](Params& p, long long v) { p.shm_direct = v; }, 0, 1LL << 62, {}, true},
      {"via", KnobKind::choice, "auto", "how direct blocks travel: cma (one copy, process_vm_readv), p2p (messages); "
       "auto: the measured cheaper one where CMA is allowed",
       [](Params& p, long long v) { p.shm_via = static_cast<Params::ShmVia>(v); }, 0, 0, {"auto", "cma", "p2p"}, true,
       false}};
  static const char* ipc_summary =
      "device buffers: node-mates' blocks pulled over CUDA IPC, other nodes' staged through pinned memory";
  static const std::vector<AlgorithmInfo> table = {
      {.name = "native", .collective = Collective::alltoall, .summary = "the MPI library's own MPI_Alltoall"},
      {.name = "linear",
       .collective = Collective::alltoall,
       .summary = "Open MPI basic linear: all Irecv, then all Isend, one wait",
       .uniform = linear},
      {.name = "spread-out",
       .collective = Collective::alltoall,
       .summary = "Isend/Irecv with peer (rank+i)%P in round-robin order",
       .uniform = spread_out,
       .cost = cost_spread_out},
      {.name = "scattered",
       .collective = Collective::alltoall,
       .summary = "MPICH batched spread-out",
       .params = {block_knob("requests in flight per batch (>= 1)")},
       .uniform = scattered},
      {.name = "pairwise",
       .collective = Collective::alltoall,
       .summary = "P-1 blocking exchanges, to rank+i from rank-i",
       .uniform = pairwise,
       .cost = cost_pairwise},
      {.name = "bruck-basic",
       .collective = Collective::alltoall,
       .summary = "Bruck: rotation, log2 P steps, inverse rotation",
       .params = {dt},
       .uniform = bruck_basic},
      {.name = "bruck-modified",
       .collective = Collective::alltoall,
       .summary = "Bruck without the final rotation",
       .params = {dt},
       .uniform = bruck_modified},
      {.name = "bruck-zero-copy",
       .collective = Collective::alltoall,
       .summary = "Bruck alternating two buffers, received data never copied",
       .params = {dt},
       .uniform = bruck_zero_copy},
      {.name = "bruck-zero-rotation",
       .collective = Collective::alltoall,
       .summary = "Bruck with a rotation index, no rotation phase at all",
       .uniform = bruck_zero_rotation},
      {.name = "tra",
       .collective = Collective::alltoall,
       .summary = "tunable-radix Bruck, K = w(r-1) - floor((r^w-P)/r^(w-1)) rounds",
       .params = {radix_knob("2..P, larger runs as P; auto = ceil(sqrt(P))"), tra_ports_knob()},
       .uniform = tra,
       .cost = cost_tra},
      {.name = "tra2",
       .collective = Collective::alltoall,
       .summary = "two-layer TRA: intra-node rounds, then inter-node rounds between nodes",
       .params = {{"radix-intra",
                   KnobKind::intra_radix,
                   "auto",
                   "2..Q; auto = ceil(sqrt(Q))",
                   [](Params& p, long long v) { p.radix_intra = static_cast<int>(v); },
                   0,
                   0,
                   {}},
                  {"radix-inter",
                   KnobKind::inter_radix,
                   "auto",
                   "2..N; auto = N",
                   [](Params& p, long long v) { p.radix_inter = static_cast<int>(v); },
                   0,
                   0,
                   {}},
                  intra_knob(),
                  ports_knob("ports-intra", "radix-intra",
                             "node phase: exchanges of one digit in flight, 1..r1-1 or all",
                             [](Params& p, long long v) { p.ports_intra = static_cast<int>(v); }),
                  ports_knob("ports-inter", "radix-inter",
                             "node-to-node phase: exchanges of one digit in flight, 1..r2-1 or all",
                             [](Params& p, long long v) { p.ports_inter = static_cast<int>(v); })},
       .uniform = tra2,
       .fallback = "tra",
       .needs = kNeedsEqualNodes,
       .cost = cost_tra2},
      {.name = "factor",
       .collective = Collective::alltoall,
       .summary = "1-factor: round i pairs u with (i-u) mod P, lower rank sends first",
       .uniform = factor,
       .cost = cost_factor},
      {.name = "cuda-ipc",
       .collective = Collective::alltoall,
       .summary = ipc_summary,
       .params = ipc,
       .uniform = cuda_ipc_host,
       .fallback = "spread-out",
       .needs = kNeedsDevice},
      {.name = "clustered",
       .collective = Collective::alltoall,
       .summary = "Traff's hierarchical 1-factor algorithm, for nodes of any sizes",
       .params = {intra_knob()},
       .uniform = clustered,
       .needs = kNeedsNodes,
       .cost = cost_clustered},
      {.name = "shm",
       .collective = Collective::alltoall,
       .summary = shm_summary,
       .params = shm_knobs,
       .uniform = shm,
       .fallback = "spread-out",
       .needs = kNeedsOneNode,
       .cost = cost_shm,
       .private_comm = false},
      {.name = "native", .collective = Collective::alltoallv, .summary = "the MPI library's own MPI_Alltoallv"},
      {.name = "linear",
       .collective = Collective::alltoallv,
       .summary = "Open MPI basic linear: all Irecv, then all Isend, one wait",
       .varying = linear},
      {.name = "spread-out",
       .collective = Collective::alltoallv,
       .summary = "Isend/Irecv with peer (rank+i)%P in round-robin order",
       .varying = spread_out,
       .cost = cost_spread_out},
      {.name = "scattered",
       .collective = Collective::alltoallv,
       .summary = "MPICH batched spread-out",
       .params = {block_knob("requests in flight per batch (>= 1)")},
       .varying = scattered},
      {.name = "pairwise",
       .collective = Collective::alltoallv,
       .summary = "P-1 blocking exchanges, to rank+i from rank-i",
       .varying = pairwise,
       .cost = cost_pairwise},
      {.name = "padded-bruck",
       .collective = Collective::alltoallv,
       .summary = "pad every block to the global largest, then zero-rotation Bruck",
       .varying = padded_bruck,
       .fallback = "spread-out",
       .cost = cost_padded_bruck},
      {.name = "padded-alltoall",
       .collective = Collective::alltoallv,
       .summary = "pad every block to the global largest, then MPI_Alltoall",
       .varying = padded_alltoall,
       .fallback = "spread-out"},
      {.name = "two-phase-bruck",
       .collective = Collective::alltoallv,
       .summary = "radix-2 Bruck, block sizes then blocks each round, P-block store",
       .varying = two_phase_bruck,
       .plan_meta = true},
      {.name = "tuna-hier",
       .collective = Collective::alltoallv,
       .summary = "TuNA inside each node, then the nodes exchange scattered",
       .params = {{"variant",
                   KnobKind::choice,
                   kDefaults.staggered ? "staggered" : "coalesced",
                   "coalesced (one message per node) or staggered (one per block)",
                   [](Params& p, long long v) { p.staggered = v == 1; },
                   0,
                   0,
                   {"coalesced", "staggered"}},
                  {"radix",
                   KnobKind::intra_radix,
                   "auto",
                   "intra-node radix 2..Q; auto = ceil(sqrt(Q))",
                   [](Params& p, long long v) { p.radix_intra = static_cast<int>(v); },
                   0,
                   0,
                   {}},
                  block_knob("inter-node requests in flight per batch"),
                  intra_knob(),
                  ports_knob("ports", "radix", "node phase: TuNA exchanges of one digit in flight, 1..r-1 or all",
                             [](Params& p, long long v) { p.ports_intra = static_cast<int>(v); })},
       .varying = tuna_hier,
       .fallback = "tuna",
       .needs = kNeedsEqualNodes,
       .cost = cost_tuna_hier,
       .plan_meta = true},
      {.name = "factor",
       .collective = Collective::alltoallv,
       .summary = "1-factor: round i pairs u with (i-u) mod P, lower rank sends first",
       .varying = factor,
       .cost = cost_factor},
      {.name = "clustered",
       .collective = Collective::alltoallv,
       .summary = "Traff's hierarchical 1-factor algorithm, for nodes of any sizes",
       .params = {intra_knob()},
       .varying = clustered,
       .needs = kNeedsNodes,
       .cost = cost_clustered},
      {.name = "tuna",
       .collective = Collective::alltoallv,
       .summary = "tunable-radix two-phase Bruck with the tight P-(K+1) block store",
       .params = {radix_knob("2..P, larger runs as P; auto = ceil(sqrt(P))"), tra_ports_knob()},
       .varying = tuna,
       .cost = cost_tuna,
       .plan_meta = true},
      {.name = "shm",
       .collective = Collective::alltoallv,
       .summary = shm_summary,
       .params = shm_knobs,
       .varying = shm,
       .fallback = "spread-out",
       .needs = kNeedsOneNode,
       .cost = cost_shm,
       .private_comm = false},
      {.name = "cuda-ipc",
       .collective = Collective::alltoallv,
       .summary = ipc_summary,
       .params = ipc,
       .varying = cuda_ipc_host,
       .fallback = "spread-out",
       .needs = kNeedsDevice},
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

bool parse_int(const std::string& s, long long& v) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  return ec == std::errc() && ptr == end;
}

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

// `value` of knob `p` as a number in `v` (and as shown in the canonical
// name); on error, what the knob must be.
// `radix`: the radix a ports knob counts exchanges of, as given (0: auto,
// the algorithm resolves it); at or above r-1 the knob shows as all (a
// radix the algorithm lowers, to the node size, only lowers r-1).
std::string parse_knob(const ParamInfo& p, const std::string& value, int P, int radix, long long& v,
                       std::string& shown) {
  switch (p.kind) {
    case KnobKind::ports:
      if (value == "all") return v = Params::kAllPorts, "";
      if (!parse_int(value, v) || v < 1) return "an integer >= 1 or all";
      v = std::min<long long>(v, 1 << 30);
      if (radix >= 2 && v >= radix - 1) v = Params::kAllPorts, shown = "all";
      return "";
    case KnobKind::radix:
    case KnobKind::intra_radix:
    case KnobKind::inter_radix:
      if (value == "auto") {
        v = p.kind == KnobKind::radix ? schedule::ceil_sqrt(P) : 0;
      } else if (!parse_int(value, v) || v < 2) {
        return "an integer >= 2 or auto";
      }
      if (p.kind == KnobKind::radix) {
        v = std::max<long long>(2, std::min<long long>(v, P));  // larger radices run as P
        shown = std::to_string(v);
      }
      v = std::min<long long>(v, 1 << 30);
      return "";
    case KnobKind::integer:
      if (!parse_int(value, v) || v < p.lo || v > p.hi)
        return "an integer from " + std::to_string(p.lo) + " to " + std::to_string(p.hi);
      return "";
    case KnobKind::bytes_auto:
      if (value == "auto") return v = Params::kShmDirectAuto, "";
      if (value == "off") return v = Params::kShmDirectOff, "";
      if (!schedule::parse_bytes(value, v) || v < p.lo || v > p.hi)
        return "auto, off or a byte count from " + bytes_text(p.lo) + " to " + bytes_text(p.hi) +
               " (digits with an optional K, M or G)";
      return "";
    case KnobKind::bytes:
      if (!schedule::parse_bytes(value, v) || v < p.lo || v > p.hi)
        return "a byte count from " + bytes_text(p.lo) + " to " + bytes_text(p.hi) +
               " (digits with an optional K, M or G)";
      return "";
    case KnobKind::choice:
      for (size_t k = 0; k < p.choices.size(); ++k)
        if (value == p.choices[k]) return v = static_cast<long long>(k), "";
      std::string words;
      for (size_t k = 0; k < p.choices.size(); ++k) words += (k ? " or " : "") + p.choices[k];
      return words;
  }
  return "known";
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
  out.machine_knobs = (spec.name == "shm" || out.params.intra_shm) && out.params.machine_knobs();
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
