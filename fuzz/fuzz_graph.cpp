// a2a-closure's edge lists: read; accepted ones have non-negative ids, and
// the sequential closure of a small accepted graph runs.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "closure/closure.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<apps::closure::Edge> edges;
  std::string error;
  if (!apps::closure::read_edges(in, "fuzz", edges, error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  long long largest = 0;
  for (const auto& [a, b] : edges) {
    if (a < 0 || b < 0) std::abort();
    largest = std::max(largest, std::max(a, b));
  }
  if (largest < 2000) (void)apps::closure::sequential_closure(edges);  // ids bound the memory it takes
  return 0;
}
