// Zero-rotation store-and-forward engine shared by TRA and zero-rotation
// Bruck.  Slot i starts in send block (p + dir*i)%P, read in place through
// that index (no initial rotation); every received hop is written into the
// slot's final receive block (p - dir*i)%P, so after the last step the data
// is already in order (no final rotation).  Scratch: two buffers of the
// largest step (send pack and receive landing).
#pragma once
#include <vector>

#include "schedule/schedule.hpp"
#include "uniform/uniform.hpp"

namespace a2a::detail {

Task<int> run_zero_rotation(const UniformCall& c, const std::vector<schedule::Step>& steps, int dir);

}  // namespace a2a::detail
