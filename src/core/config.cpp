#include "core/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace a2a::detail {

namespace {
const char* nonempty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
long long positive(const char* name) {
  const char* v = nonempty(name);
  const long long n = v ? std::atoll(v) : 0;
  return n > 0 ? n : 0;
}
}  // namespace

const Config& config() {
  static const Config c = [] {
    Config x;
    if (const char* v = nonempty("A2A_ALLTOALL")) x.alltoall = v;
    if (const char* v = nonempty("A2A_ALLTOALLV")) x.alltoallv = v;
    if (const char* v = nonempty("A2A_ERROR_CHECK")) x.agree = std::strcmp(v, "agree") == 0;
    if (const char* v = nonempty("A2A_VERBOSE")) x.verbose = std::strcmp(v, "0") != 0;
    if (const char* v = nonempty("A2A_TUNING_FILE")) x.tuning_path = v;
    x.tuning_file = !x.tuning_path.empty();
    if (const char* v = nonempty("A2A_COST_MODEL")) x.cost_model = v;
    if (const char* v = nonempty("A2A_TEST_SLOWDOWN")) x.test_slowdown = std::max(1.0, std::atof(v));
    if (const char* v = nonempty("A2A_AUTO_TRIAL"))
      x.trial = std::strcmp(v, "off") == 0 ? Config::Trial::off : std::strcmp(v, "all") == 0 ? Config::Trial::all
                                                                                            : Config::Trial::model;
    if (const char* v = nonempty("A2A_NODE_MAP")) x.node_map = v;
    if (const char* v = nonempty("A2A_NODE_SIZES")) x.node_sizes = v;
    if (const char* v = nonempty("A2A_NODE_SIZE")) x.node_size = v;
    if (const char* v = nonempty("A2A_PROGRESS_PATIENCE")) x.progress_patience_us = std::max(0.0, std::atof(v));
    if (const char* v = nonempty("A2A_PROGRESS_THREAD")) x.progress_thread = std::strcmp(v, "0") != 0;
    if (const long long n = positive("A2A_SCRATCH_LIMIT")) x.scratch_limit = static_cast<size_t>(n);
    x.max_message_bytes = static_cast<size_t>(positive("A2A_MAX_MESSAGE_BYTES"));
    if (const char* v = nonempty("A2A_SIM_SHARED")) x.sim_shared = std::strcmp(v, "0") != 0;
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
      if (const char* v = nonempty(var)) {
        x.launcher_local_ranks = std::atoll(v);
        break;
      }
    return x;
  }();
  return c;
}

}  // namespace a2a::detail
