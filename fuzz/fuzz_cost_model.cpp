// A2A_COST_MODEL: any text parses or is refused, without a crash or a hang.
#include <cstdint>
#include <string>

#include "core/cost_keys.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  a2a::detail::MachineModel m;
  unsigned given = 0;
  std::string error;
  (void)a2a::detail::parse_cost_model(text, m, given, error);
  return 0;
}
