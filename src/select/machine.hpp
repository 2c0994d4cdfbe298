// The machine's costs that auto's model prices with (cost_model.hpp):
// rank 0's measurement (measure.hpp), broadcast, made once per job on a
// communicator of all its ranks and read by the later ones, or the values
// A2A_COST_MODEL gives (parsed once per process; a whole model there
// measures nothing).  Also shm's direct knobs, resolved from them.
#pragma once
#include <map>
#include <string>

#include "select/cost_model.hpp"

namespace a2a::detail {

struct CommContext;
struct Resolved;  // select/registry.hpp

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

// "alpha_intra=1e-6,beta_intra=1e-10,alpha_inter=...,beta_inter=...,overhead=...,copy=...[,persistent=...]"
// (A2A_COST_MODEL): fills the keys given, sets `given` bits (1 << key index,
// in that order); false with a message on anything else.  The first six
// (kAllCostKeys) are a whole model; persistent, flag, round, flag_round are
// 0 unless given; shm_copy and cma (seconds per byte) set every measured
// size of seg and cma.
bool parse_cost_model(const std::string& text, MachineModel& m, unsigned& given, std::string& error);
// m as A2A_COST_MODEL's scalar keys, then shm's copy curves in microseconds
// per block size ("; shm segment 16K:1.2 64K:4.8 ...; cma ...").
std::string describe_costs(const MachineCosts& m);
// The keys set in `keys` (parse_cost_model's `given`) copied from `given`
// into m; a link's alpha or beta given drops its measured curve (`at`),
// which would otherwise price its messages instead of them.
void apply_cost_keys(MachineCosts& m, const MachineCosts& given, unsigned keys);
constexpr unsigned kAllCostKeys = 0x3f;
// Whether the keys given make a whole model, so nothing is measured
// (the optional keys besides).
constexpr bool whole_model(unsigned keys) { return (keys & kAllCostKeys) == kAllCostKeys; }

}  // namespace a2a::detail
