#include "core/row.hpp"

namespace a2a::detail {
namespace {

const Params kDefaults{};

}  // namespace

// 4096 -> "4K": byte defaults shown as a user would write them.
std::string bytes_text(long long v) {
  const char* units = "KMG";
  int u = -1;
  while (u < 2 && v != 0 && v % 1024 == 0) v /= 1024, ++u;
  return std::to_string(v) + (u >= 0 ? std::string(1, units[u]) : "");
}

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

AlgorithmInfo row_of(Collective coll, AlgorithmInfo r, UniformFn uniform, VarFn varying) {
  r.collective = coll;
  r.uniform = coll == Collective::alltoall ? uniform : nullptr;
  r.varying = coll == Collective::alltoallv ? varying : nullptr;
  return r;
}

}  // namespace a2a::detail
