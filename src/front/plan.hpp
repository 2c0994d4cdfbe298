// A2A_Plan_s: what a persistent call keeps (capi.cpp, nonblocking.cpp).
#pragma once
#include <memory>

#include "front/call.hpp"


// A persistent call: the arguments (which, as for MPI's persistent
// collectives, must stay valid and unchanged until the plan is freed), the
// call prepared, agreed and its algorithm chosen at init.
struct A2A_Plan_s {
  a2a::detail::CallArgs args;
  std::unique_ptr<a2a::detail::Prepared> prepared;
  a2a::detail::Global global;
  // Below MPI_THREAD_SERIALIZED one thread makes every call, so a start
  // that runs the library's own collective may leave its stats for
  // last_stats (ThreadState::lazy), as a hot call does: the plan's free
  // writes them first.  Above, another thread could free the plan.
  bool stats_when_asked = false;
  bool active = false;  // a start in flight (A2A_Istart)
};


