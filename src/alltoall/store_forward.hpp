// Zero-rotation store-and-forward engine shared by TRA and zero-rotation
// Bruck.  Slot i starts in send block (p + dir*i)%P, read in place through
// that index (no initial rotation); every received hop is written into the
// slot's final receive block (p - dir*i)%P, so after the last step the data
// is already in order (no final rotation).  The k-port form: the steps of
// one digit fly in batches of `ports` (schedule::batch_end; kAllPorts: the
// whole digit), exchange after exchange its receive posted, then its send
// (the order of MPICH's k-port Bruck; every receive first aborted SimGrid
// 3.32's solver at its default precision, docs/simulation-howto.md), one wait a
// batch; received blocks are placed after it (a batch's slots are disjoint).  A
// step of one block still in the send buffer needs no staging: it goes
// from there straight into its final place.  Scratch: two buffers of the
// largest batch's staged blocks (send pack and receive landing), and a
// batch's requests.  Steps from schedule::tra_steps (digits ascending).
#pragma once
#include <vector>

#include "schedule/schedule.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail {

Task<Result> run_zero_rotation(const UniformCall& c, const std::vector<schedule::Step>& steps, int dir, int ports = 1);

}  // namespace a2a::detail
