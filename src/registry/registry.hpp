// The one registry of algorithms: every algorithm file's row (core/row.hpp)
// in one list (each with its cost, for auto), and
// resolution of a spec string (plus "auto") into a runnable choice.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/row.hpp"

namespace a2a::detail {

struct Where {
  bool nodes = false, equal_nodes = false, device = false, one_node = true;
};
constexpr Where kAnyHostLayout{true, true, false, true};  // the tests' and the bench's sweeps: every host row
// A host layout given as the ranks of each node.
Where where_of(const std::vector<std::vector<int>>& node_ranks);

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
  // Knobs the machine's measurements decide (shm's direct path,
  // ShmKnobs::machine_decides) are still "auto": the front end resolves them
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
