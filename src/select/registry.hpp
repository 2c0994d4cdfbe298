// The one registry of algorithms: names, knobs with defaults, entry points,
// and resolution of a spec string (plus "auto") into a runnable choice.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/algorithm.hpp"

namespace a2a::detail {

// How a knob's text becomes a value: parsed and range-checked in one place
// (resolve), stored through `set`, and shown in the canonical name.
enum class KnobKind {
  radix,         // "auto" (ceil(sqrt P)) or an integer >= 2, clamped to P; shown as resolved
  intra_radix,   // "auto" (stored 0) or an integer >= 2: a radix among a node's Q ranks, resolved by the algorithm
  inter_radix,   // the same among the N nodes
  ports,         // "all" (stored Params::kAllPorts) or an integer >= 1: exchanges in flight; at or above r-1 runs as all
  integer,       // an integer in [lo, hi]
  bytes,         // a byte count with an optional K, M or G, in [lo, hi]
  bytes_auto,    // the same, or "auto" (stored -1: the machine's measured value) or "off" (stored LLONG_MAX)
  choice,        // one of `choices`; the index is stored
};

struct ParamInfo {
  const char* key;
  KnobKind kind;
  std::string fallback;  // the default, as text (numbers from Params{}: one source)
  const char* help;
  void (*set)(Params&, long long);
  long long lo = 0, hi = 0;          // integer, bytes
  std::vector<std::string> choices;  // choice
  bool quiet_default = false;  // left out of the canonical name at its default (knobs added later)
  bool swept = true;           // choice knobs: sweeps take every choice (else only the default)
  const char* radix_key = nullptr;  // ports knobs: the radix knob they count exchanges of (r-1 or more: all)
};

enum class Collective { alltoall, alltoallv };

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
struct Where {
  bool nodes = false, equal_nodes = false, device = false, one_node = true;
};
constexpr Where kAnyHostLayout{true, true, false, true};  // the tests' and the bench's sweeps: every host row
// A host layout given as the ranks of each node.
Where where_of(const std::vector<std::vector<int>>& node_ranks);

struct ModelCall;  // the cost model's input and output (select/cost_model.hpp)
struct ModelCost;
using CostFn = ModelCost (*)(const ModelCall&, const Params&);

// A registry row, written with designated initializers (registry.cpp):
// what a row leaves out is its default here.
struct AlgorithmInfo {
  const char* name = nullptr;
  Collective collective = Collective::alltoall;
  const char* summary = nullptr;
  std::vector<ParamInfo> params = {};
  UniformFn uniform = nullptr;  // alltoall entry; nullptr for native
  VarFn varying = nullptr;      // alltoallv entry; nullptr for native
  const char* fallback = nullptr;  // spec that runs when this cannot (Result::fallback())
  unsigned needs = kNeedsNothing;
  CostFn cost = nullptr;  // the schedule the cost model costs; nullptr: auto never picks it
  bool private_comm = true;  // sends on a2a's duplicate of the communicator (made on first use)
  // Its metadata (block sizes, largest block) can be exchanged once by a
  // plan's init and replayed by its starts (VarCall::plan, meta_only).
  bool plan_meta = false;
};

const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* find_algorithm(Collective coll, const std::string& name);
bool fits(const AlgorithmInfo& a, const Where& where);

// The values a sweep gives each kind of radix knob (empty: its default).
// Choice knobs take every choice; integer and byte knobs their default.
struct SweepValues {
  std::vector<std::string> radix, intra, inter, ports;
};
std::vector<std::string> radix_values(const std::vector<int>& radices);
// The ports every sweep takes (the model's, the tests', a2a tune's, the
// bench's radix sweep): one exchange at a time, and a whole digit at once.
inline const std::vector<std::string> kSweptPorts = {"1", "all"};

// One row's specs: every combination of its knobs' sweep values, written
// with the non-default values only ("tra:radix=4", "bruck-basic:dt=1",
// "spread-out").
std::vector<std::string> sweep(const AlgorithmInfo& a, const SweepValues& values);
// Every row of `coll` that fits `where`, swept, in registry order (native first).
std::vector<std::string> sweep(Collective coll, const Where& where, const SweepValues& values);

struct Resolved {
  const AlgorithmInfo* info = nullptr;
  Params params;
  std::string canonical;  // e.g. "tra:radix=4", with every knob's value as run
  // Knobs the machine's measurements decide (shm's direct path, Params::
  // machine_knobs) are still "auto": the front end resolves them
  // (resolve_machine_knobs) before the algorithm runs.
  bool machine_knobs = false;
};

// Parses and validates `text` (syntax cached per distinct string) and
// resolves knobs that depend on the call (radix=auto, radix > P).  Returns MPI_SUCCESS or
// MPI_ERR_ARG with a message in `error`.  "auto" resolves to info == nullptr,
// canonical "auto": the communicator decides it (select/auto.hpp).
int resolve(Collective coll, const std::string& text, int P, long long block_bytes, Resolved& out,
            std::string& error);

// The distinct strings whose syntax is cached now (at most kMaxValidated).
constexpr size_t kMaxValidated = 256;
size_t validated_specs();

}  // namespace a2a::detail
