// The one registry of algorithms: names, knobs with defaults, entry points,
// and resolution of a spec string (plus "auto") into a runnable choice.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "uniform/uniform.hpp"

namespace a2a::detail {

struct ParamInfo {
  const char* key;
  const char* fallback;  // default value
  const char* help;
  bool by_layout = false;  // a radix the algorithm resolves against the node layout ("auto" = 0)
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
