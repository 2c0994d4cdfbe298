// The machine's costs as the cost model uses them (cost_model.hpp), measured
// on the communicator that decides first: each a short collective of well
// under a few milliseconds, once per job where that communicator holds all
// the job's ranks (select/auto.cpp).
//  - links: alpha from an 8-byte ping-pong, then ping-pongs of 1 KiB to
//    256 KiB (eager, rendezvous and, past every eager limit, the library's
//    single-copy path where it has one; beta the slope of the last two),
//    between rank 0 and a node-mate and a rank of another node; a 16-message burst (overhead per message) and
//    persistent requests (Open MPI's basic linear makes them per call);
//  - a 64 KiB memcpy (packing and rotations);
//  - rounds with every rank taking part: a ring step of 8-byte messages and
//    a flag round through memory the node shares, which on a time-sliced
//    machine cost the scheduling no ping-pong sees;
//  - shm's copies as calls make them: a block written into a shared window
//    by rank 0 and copied out by its node-mate, and the same block read by
//    the node-mate straight from rank 0's memory with CMA (process_vm_readv),
//    at kShmCopyBytes; a flag ping-pong through the window.
// Ranks outside a part wait asleep (wait_quietly).  Rank 0 returns the
// figures; the caller broadcasts them.
#pragma once
#include <mpi.h>

#include "select/cost_model.hpp"

namespace a2a::detail {

// The link between rank 0 and `peer` (collective over the pair: the other
// ranks return at once).  open_mpi: also the persistent-request overhead.
// oversubscribed (agreed, the same on every rank): fewer repetitions.
void measure_link(MPI_Comm comm, int rank, int peer, bool open_mpi, bool oversubscribed, LinkCost& link,
                  double& overhead, double& persistent);

// Seconds per byte of a local memcpy (this rank alone).
double measure_copy();

// Seconds per round of 8-byte messages to the next rank while receiving from
// the previous one, every rank of comm taking part (collective).
double measure_round(MPI_Comm comm, bool oversubscribed);

// What shm costs between rank 0 and the next rank of its node (the memory
// it shares, whatever layout a2a is told), and a flag round among all of
// rank 0's node (collective over comm; zeros where there is no node-mate,
// no shared window (SMPI) or, for the CMA figures, no permission to read
// another process's memory).  Waits spin, then yield (at once where
// oversubscribed), as shm's do.
struct NodeCosts {
  double flag = 0, flag_round = 0;
  double seg[kShmCopySizes] = {}, cma[kShmCopySizes] = {};
};
NodeCosts measure_node(MPI_Comm comm, bool oversubscribed);

// Every rank of comm meets here (collective).  Ranks with nothing to measure
// wait here asleep between tests instead of spinning in a blocking call: a
// spinning bystander that shares a core with the measured pair (time-sliced
// or hyperthreaded nodes, an emulated cluster) would time the scheduler,
// not the link.
void wait_quietly(MPI_Comm comm);

}  // namespace a2a::detail
