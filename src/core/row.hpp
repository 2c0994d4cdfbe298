// What an algorithm file says of itself: its row (name, summary, knobs
// with defaults, entry points, fallback, needs), which the registry
// (registry/registry.hpp) lists; and the knobs several algorithms share.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "core/algorithm.hpp"
#include "core/collective.hpp"

namespace a2a::detail {

// How a knob's text becomes a value: parsed and range-checked in one place
// (resolve), stored through `set`, and shown in the canonical name.
enum class KnobKind {
  radix,         // "auto" (ceil(sqrt P)) or an integer >= 2, clamped to P; shown as resolved
  intra_radix,   // "auto" (stored 0) or an integer >= 2: a radix among a node's Q ranks, resolved by the algorithm
  inter_radix,   // the same among the N nodes
  ports,         // "all" (stored kAllPorts) or an integer >= 1: exchanges in flight; at or above r-1 runs as all
  integer,       // an integer in [lo, hi]
  bytes,         // a byte count with an optional K, M or G, in [lo, hi]
  bytes_auto,    // the same, or "auto" (stored -1: the machine's measured value) or "off" (stored LLONG_MAX)
  choice,        // one of `choices`; the index is stored
};

struct ParamInfo {
  const char* key;
  KnobKind kind;
  std::string fallback;  // the default, as text (numbers from the knob struct's defaults: one source)
  const char* help;
  void (*set)(Params&, long long);  // into the algorithm's knob struct (set_knob)
  long long lo = 0, hi = 0;          // integer, bytes
  std::vector<std::string> choices;  // choice
  bool quiet_default = false;  // left out of the canonical name at its default (knobs added later)
  bool swept = true;           // choice knobs: sweeps take every choice (else only the default)
  const char* radix_key = nullptr;  // ports knobs: the radix knob they count exchanges of (r-1 or more: all)
};


// Where an algorithm is worth running (it runs anywhere, falling back where
// it must): every sweep (a2a tune, the cost model) skips rows that need
// more than the layout offers.
enum Needs : unsigned {
  kNeedsNothing = 0,
  kNeedsNodes = 1,       // more than one node
  kNeedsEqualNodes = 2,  // more than one node, of equal sizes above one rank
  kNeedsDevice = 4,      // device buffers
  kNeedsOneNode = 8,     // every rank on one node (they share memory)
};
// ParamInfo::set for member M of an algorithm's knob struct K (Params::as):
// set_knob<&Tra2Knobs::radix_intra>.  K has a name of its own, outside any
// anonymous namespace: GCC 12 gives set_knob<&(anonymous)::Knobs::x> weak
// linkage and merges same-named ones across files.
template <class K, class T>
K knobs_of(T K::*);
template <auto M>
void set_knob(Params& p, long long v) {
  auto& field = p.as<decltype(knobs_of(M))>().*M;
  field = static_cast<std::remove_reference_t<decltype(field)>>(v);
}

// Knob structs several rows share: Bruck's datatype switch, and the radix
// and ports of the digit algorithms (tra, tuna).
struct DtKnobs {
  bool dt = false;  // move blocks with MPI derived datatypes instead of memcpy
};
struct DigitKnobs {
  int radix = 2;  // resolved against P ("auto": ceil(sqrt(P)), clamped to P)
  int ports = kAllPorts;
};

// AlgorithmInfo::shm_knobs of a node-aware row whose knob struct K holds
// `intra_shm` (its intra knob) and the phase's `shm` knobs.
template <class K>
ShmKnobs* intra_shm_knobs(Params& p) {
  K& k = p.as<K>();
  return k.intra_shm ? &k.shm : nullptr;
}

struct ModelCall;  // a cost entry's input and output (core/cost.hpp)
struct ModelCost;
using CostFn = ModelCost (*)(const ModelCall&, const Params&);

// An algorithm's row, written with designated initializers in its own
// file: what a row leaves out is its default here.  The registry
// (registry/registry.cpp) lists the rows.
struct AlgorithmInfo {
  const char* name = nullptr;
  Collective collective = Collective::alltoall;
  const char* summary = nullptr;
  std::vector<ParamInfo> params = {};
  Params knobs = {};  // its knob struct at its defaults, which `params` set
  // The shm knobs its call runs with (shm; an intra=shm phase), which the
  // front end resolves from the machine's measurements; null: none.
  ShmKnobs* (*shm_knobs)(Params&) = nullptr;
  UniformFn uniform = nullptr;  // alltoall entry; nullptr for native
  VarFn varying = nullptr;      // alltoallv entry; nullptr for native
  const char* fallback = nullptr;  // spec that runs when this cannot (Result::fallback())
  unsigned needs = kNeedsNothing;
  CostFn cost = nullptr;  // its rounds on the cost model's clock (core/cost.hpp); nullptr: auto never picks it
  bool private_comm = true;  // sends on a2a's duplicate of the communicator (made on first use)
  // Its metadata (block sizes, largest block) can be exchanged once by a
  // plan's init and replayed by its starts (VarCall::plan, meta_only).
  bool plan_meta = false;
};

// 4096 -> "4K": byte values shown as a user would write them.
std::string bytes_text(long long v);

// The shm knobs of a resolved call of `a`, or null (AlgorithmInfo::shm_knobs).
const ShmKnobs* shm_knobs_of(const AlgorithmInfo& a, const Params& p);

// Knobs that several rows share (core/row.cpp); `set` writes the row's own struct.
ParamInfo ports_knob(const char* key, const char* radix_key, const char* help, void (*set)(Params&, long long));
ParamInfo digit_radix_knob();  // DigitKnobs' radix and ports (tra, tuna)
ParamInfo digit_ports_knob();
ParamInfo block_knob(const char* help, int fallback, void (*set)(Params&, long long));
ParamInfo dt_knob();  // DtKnobs
ParamInfo intra_knob(void (*set)(Params&, long long));
ParamInfo bytes_knob(const char* key, long long fallback, long long lo, long long hi, const char* help,
                     void (*set)(Params&, long long));
// `value` of knob `p` as a number in `v` (and as shown in the canonical
// name); on error, what the knob must be.
// `radix`: the radix a ports knob counts exchanges of, as given (0: auto,
// the algorithm resolves it); at or above r-1 the knob shows as all (a
// radix the algorithm lowers, to the node size, only lowers r-1).
std::string parse_knob(const ParamInfo& p, const std::string& value, int P, int radix, long long& v,
                       std::string& shown);
// An algorithm of both collectives: `r` as the row of `coll`, with its entry.
AlgorithmInfo row_of(Collective coll, AlgorithmInfo r, UniformFn uniform, VarFn varying);

}  // namespace a2a::detail
