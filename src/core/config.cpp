#include "core/config.hpp"

#include <cstdlib>
#include <cstring>

namespace a2a::detail {

namespace {
const char* nonempty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
}  // namespace

const Config& config() {
  static const Config c = [] {
    Config x;
    if (const char* v = nonempty("A2A_ALLTOALL")) x.alltoall = v;
    if (const char* v = nonempty("A2A_ALLTOALLV")) x.alltoallv = v;
    if (const char* v = nonempty("A2A_ERROR_CHECK")) x.agree = std::strcmp(v, "agree") == 0;
    if (const char* v = nonempty("A2A_VERBOSE")) x.verbose = std::strcmp(v, "0") != 0;
    x.tuning_file = nonempty("A2A_TUNING_FILE") != nullptr;
    return x;
  }();
  return c;
}

}  // namespace a2a::detail
