// C++ conveniences over the C API.
#pragma once
#include <string>

#include "a2a/a2a.h"

namespace a2a {

// How argument errors reach the ranks.
//  local (default): each rank checks its own arguments before any
//    communication, as MPI libraries do; errors agree when every rank passes
//    the same (bad) arguments, as MPI itself assumes.
//  agree: one 6-integer MPI_Allreduce per call folds every rank's checks, so
//    a bad argument on any one rank fails the call on all (for debugging).
// Plans agree once, at init, in either mode.  The initial mode comes from
// A2A_ERROR_CHECK=agree|local; set_error_check changes it for this process
// (every rank of a communicator must match).
enum class ErrorCheck { agree, local };
void set_error_check(ErrorCheck mode);
ErrorCheck error_check();

// The node layout a2a uses for `comm`, e.g. "3 nodes (A2A_NODE_SIZES): sizes
// 1,2,3" (collective on a communicator's first use, like every a2a call).
std::string layout(MPI_Comm comm);

// Where "auto" gets its decisions from in this process: "tuning file PATH:
// N entries", "no tuning file (A2A_TUNING_FILE unset)", or "tuning file PATH
// ignored: <why>" (not JSON, not an a2a tuning file, another version or MPI
// library, a bad entry).  Reads the file on first use (needs MPI initialised).
std::string tuning_status();

// Why the calling thread's last call failed, e.g. "a2a: unknown parameter 'radx' for
// tra; expected radix"; empty after a successful call.
std::string last_error_message();

}  // namespace a2a
