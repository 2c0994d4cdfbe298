// Tuning files (A2A_TUNING_FILE): parse; an accepted table written back with
// tuning_json parses again to the same entries; lookups never fail.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "select/tuning.hpp"

using namespace a2a::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  TuningTable table;
  std::string error;
  if (!parse_tuning(text, "fuzz MPI", table, error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  TuningTable again;
  if (!parse_tuning(tuning_json(table), "fuzz MPI", again, error) || again.entries.size() != table.entries.size())
    std::abort();
  for (const auto& e : table.entries) (void)find_entry(table, e.collective, e.nodes, e.min_bytes, e.max_bytes);
  return 0;
}
