// The one registry of algorithms: names, knobs with defaults, entry points,
// and resolution of a spec string (plus "auto") into a runnable choice.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "uniform/uniform.hpp"

namespace a2a::detail {

// How a knob's text becomes a value: parsed and range-checked in one place
// (resolve), stored through `set`, and shown in the canonical name.
enum class KnobKind {
  radix,         // "auto" (ceil(sqrt P)) or an integer >= 2, clamped to P; shown as resolved
  layout_radix,  // "auto" (stored 0) or an integer >= 2: the algorithm resolves it against the layout
  integer,       // an integer in [lo, hi]
  bytes,         // a byte count with an optional K, M or G, in [lo, hi]
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
};

enum class Collective { alltoall, alltoallv };

struct AlgorithmInfo {
  const char* name;
  Collective collective;
  const char* summary;
  std::vector<ParamInfo> params;
  UniformFn uniform = nullptr;  // alltoall entry; nullptr for native
  VarFn varying = nullptr;      // alltoallv entry; nullptr for native
  const char* fallback = nullptr;  // spec that runs when this cannot (kFallback)
};

const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* find_algorithm(Collective coll, const std::string& name);

struct Resolved {
  const AlgorithmInfo* info = nullptr;
  Params params;
  std::string canonical;  // e.g. "tra:radix=4", with every knob's value as run
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
