#include "core/row.hpp"

#include <algorithm>
#include <charconv>

#include "schedule/gpu_plan.hpp"
#include "schedule/schedule.hpp"

namespace a2a::detail {
// 4096 -> "4K": byte defaults shown as a user would write them.
std::string bytes_text(long long v) {
  const char* units = "KMG";
  int u = -1;
  while (u < 2 && v != 0 && v % 1024 == 0) v /= 1024, ++u;
  return std::to_string(v) + (u >= 0 ? std::string(1, units[u]) : "");
}

// The k-port form's batch size: knobs added later, so the default (all) is
// left out of the canonical name.
ParamInfo ports_knob(const char* key, const char* radix_key, const char* help, void (*set)(Params&, long long)) {
  return {key, KnobKind::ports, "all", help, set, 0, 0, {}, true, true, radix_key};
}
ParamInfo digit_radix_knob() {
  return {"radix", KnobKind::radix, "auto", "2..P, larger runs as P; auto = ceil(sqrt(P))",
          set_knob<&DigitKnobs::radix>, 0, 0, {}};
}
ParamInfo digit_ports_knob() {
  return ports_knob("ports", "radix", "exchanges of one digit in flight together, 1..r-1 or all (the k-port form)",
                    set_knob<&DigitKnobs::ports>);
}

ParamInfo block_knob(const char* help, int fallback, void (*set)(Params&, long long)) {
  return {"block", KnobKind::integer, std::to_string(fallback), help, set, 1, 1 << 30, {}};
}
ParamInfo dt_knob() {
  return {"dt", KnobKind::choice, DtKnobs{}.dt ? "1" : "0", "1: move blocks with MPI derived datatypes instead of memcpy",
          set_knob<&DtKnobs::dt>, 0, 0, {"0", "1"}};
}
// The intra-node phase of a node-aware algorithm: point-to-point messages,
// or the shared-memory exchange (shm) among the node's ranks.
ParamInfo intra_knob(void (*set)(Params&, long long)) {
  return {"intra", KnobKind::choice, "p2p", "intra-node phase: p2p (messages) or shm (through shared memory)", set, 0,
          0, {"p2p", "shm"}, true};
}

const ShmKnobs* shm_knobs_of(const AlgorithmInfo& a, const Params& p) {
  return a.shm_knobs ? a.shm_knobs(const_cast<Params&>(p)) : nullptr;  // reads only
}

ParamInfo bytes_knob(const char* key, long long fallback, long long lo, long long hi, const char* help,
                     void (*set)(Params&, long long)) {
  return {key, KnobKind::bytes, bytes_text(fallback), help, set, lo, hi, {}};
}

namespace {

bool parse_int(const std::string& s, long long& v) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::string parse_knob(const ParamInfo& p, const std::string& value, int P, int radix, long long& v,
                       std::string& shown) {
  switch (p.kind) {
    case KnobKind::ports:
      if (value == "all") return v = kAllPorts, "";
      if (!parse_int(value, v) || v < 1) return "an integer >= 1 or all";
      v = std::min<long long>(v, 1 << 30);
      if (radix >= 2 && v >= radix - 1) v = kAllPorts, shown = "all";
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
      if (value == "auto") return v = ShmKnobs::kDirectAuto, "";
      if (value == "off") return v = ShmKnobs::kDirectOff, "";
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

AlgorithmInfo row_of(Collective coll, AlgorithmInfo r, UniformFn uniform, VarFn varying) {
  r.collective = coll;
  r.uniform = coll == Collective::alltoall ? uniform : nullptr;
  r.varying = coll == Collective::alltoallv ? varying : nullptr;
  return r;
}

}  // namespace a2a::detail
