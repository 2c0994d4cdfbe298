// Store-and-forward over one working array of P blocks, shared by basic and
// modified Bruck: slot i lives at W + ((i+shift)%P)*stride for the whole run,
// each step sends the listed slots and overwrites them with the blocks
// received.  With dt the slots travel as one cached hindexed datatype per
// step (exchange_replace, core/transport.hpp); without it they are packed and
// unpacked by memcpy through two scratch buffers of the largest step.
#pragma once
#include <string>
#include <vector>

#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail {

Task<int> run_working_array(const UniformCall& c, char* W, MPI_Aint stride, int shift,
                            const std::vector<schedule::Step>& steps, int dir, bool dt, const char* name);

}  // namespace a2a::detail
