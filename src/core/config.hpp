// The environment, read once per process (at a2a's first use), so no call
// reads a variable on its hot path.  A change to the environment after that
// first use is not seen; programs choose per call with the spec argument, or
// with a2a::set_error_check.
#pragma once
#include <string>

namespace a2a::detail {

struct Config {
  std::string alltoall = "auto";   // A2A_ALLTOALL: the spec of calls that pass NULL
  std::string alltoallv = "auto";  // A2A_ALLTOALLV
  bool agree = false;              // A2A_ERROR_CHECK=agree; default local, as MPI libraries check
  bool verbose = false;            // A2A_VERBOSE
  bool tuning_file = false;        // A2A_TUNING_FILE is set (on every rank or on none)
};

const Config& config();

}  // namespace a2a::detail
