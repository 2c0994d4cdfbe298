// Two-phase store-and-forward engine shared by two-phase Bruck and TuNA.
// Every round first exchanges the sizes of the blocks it carries (metadata,
// 8 bytes per block), then the blocks themselves, so a receiver always knows
// what arrives.  Orientation as modified Bruck (send to p - d, receive from
// p + d): slot i starts as send block (p-i)%P, read in place (no rotation),
// and its final hop lands in receive block (p+i)%P (no final rotation).
// Blocks with hops left wait in a temporary store T of `capacity` places of
// M bytes each (M: the global largest block), slot i at place index(i).
// Scratch: capacity*M (T) + the largest round's outgoing and incoming bytes
// (send pack and receive landing, each at most W*M, W = the widest round) +
// 2*W*8 (sizes); two_phase_scratch() is that bound.
#pragma once
#include <functional>
#include <vector>

#include "schedule/schedule.hpp"
#include "uniform/uniform.hpp"

namespace a2a::detail {

// The most scratch the engine can use for the given store and schedule.
long long two_phase_scratch(const std::vector<schedule::Step>& steps, long long capacity, long long M);

Task<int> run_two_phase(const VarCall& c, const std::vector<schedule::Step>& steps, long long capacity,
                  const std::function<long long(int)>& index);

}  // namespace a2a::detail
