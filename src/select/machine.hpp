// The machine's costs that auto's model prices with (cost_model.hpp):
// rank 0's measurement (measure.hpp), broadcast, made once per job on a
// communicator of all its ranks and read by the later ones, or the values
// A2A_COST_MODEL gives (core/cost_keys.hpp, parsed once per process; a whole model there
// measures nothing).  Also shm's direct knobs, resolved from them.
#pragma once
#include <map>
#include <string>

#include "select/cost_model.hpp"

namespace a2a::detail {

struct CommContext;
struct Resolved;  // registry/registry.hpp

// A communicator family's model, and shm's direct knobs per group size
// (shm_direct_choice), each computed once.
struct MachineState {
  bool ready = false;
  MachineModel model;
  std::map<int, ShmDirect> shm_direct;
};
// ctx's (shared as its auto state is: auto.cpp).
MachineState& machine_state(CommContext& ctx);

// The model's parameters for ctx (measuring them if needed; collective).
int machine_model(CommContext& ctx, MachineModel& out, std::string& error);

// Fills r's machine knobs (shm's direct threshold and path) from ctx's
// model (collective where it must be measured); nothing when it has none.
int resolve_machine_knobs(CommContext& ctx, Resolved& r, std::string& error);

}  // namespace a2a::detail
