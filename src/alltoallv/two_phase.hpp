// Two-phase store-and-forward engine shared by two-phase Bruck and TuNA.
// Every round first exchanges the sizes of the blocks it carries (metadata,
// 8 bytes per block), then the blocks themselves, so a receiver always knows
// what arrives.  Orientation as modified Bruck (send to p - d, receive from
// p + d): slot i starts as send block (p-i)%P, read in place (no rotation),
// and its final hop lands in receive block (p+i)%P (no final rotation).
// Blocks with hops left wait in a temporary store T of `capacity` places of
// M bytes each (M: the global largest block), slot i at place index(i).
// The k-port form: the rounds of one digit go in batches of `ports`
// (schedule::batch_end), the batch's size messages together (one wait),
// then its blocks together (one wait), each round's receive posted before
// its send; what arrives is placed after the batch (its slots are disjoint).  Scratch: capacity*M (T) + the largest
// batch's outgoing and incoming bytes (send pack and receive landing, each
// at most W*M, W = the widest batch's slots) + 2*W*8 (sizes) + a batch's
// requests; two_phase_scratch() is that bound.
#pragma once
#include <functional>
#include <vector>

#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail {

// The most scratch the engine can use for the given store, schedule and ports.
long long two_phase_scratch(const std::vector<schedule::Step>& steps, long long capacity, long long M, int ports = 1);

Task<int> run_two_phase(const VarCall& c, const std::vector<schedule::Step>& steps, long long capacity,
                        const std::function<long long(int)>& index, int ports = 1);

}  // namespace a2a::detail
