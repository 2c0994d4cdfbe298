// A2A_COST_MODEL's text form of the machine's costs (core/cost.hpp): its
// keys parsed into MachineCosts, applied over measured ones, and the costs
// written back as keys and curves (A2A_VERBOSE=1's "machine measured" line).
#pragma once
#include <string>

#include "core/cost.hpp"

namespace a2a::detail {

// "alpha_intra=1e-6,beta_intra=1e-10,alpha_inter=...,beta_inter=...,overhead=...,copy=...[,persistent=...]"
// (A2A_COST_MODEL): fills the keys given, sets `given` bits (1 << key index,
// in that order); false with a message on anything else.  The first six
// (kAllCostKeys) are a whole model; persistent, flag, round, flag_round are
// 0 unless given; shm_copy and cma (seconds per byte) set every measured
// size of seg and cma.
bool parse_cost_model(const std::string& text, MachineCosts& m, unsigned& given, std::string& error);
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
