// Workload specs (`a2a bench --workload`): parse; an accepted one gives a
// non-negative count for every pair at a few P.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  a2a::workload::Workload w;
  std::string error;
  if (!a2a::workload::parse(text, w, error)) return 0;
  const auto sized = a2a::workload::with_size(w, 64);
  for (int P : {1, 3, 8})
    for (int s = 0; s < P; ++s)
      for (int d = 0; d < P; ++d)
        if (a2a::workload::count(sized, s, d, P) < 0) std::abort();
  return 0;
}
