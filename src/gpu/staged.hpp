// The staged inter-node path of the CUDA IPC algorithm: Debian's Open MPI is
// not CUDA-aware, so blocks for off-node peers go device -> pinned host ->
// MPI -> pinned host -> device, in chunks through a few staging slots, so
// that copies of one chunk overlap the messages of others (and the caller's
// intra-node IPC copies, already queued on their own stream).
// The copy engine is an interface: CUDA streams and events in the library,
// plain memcpy in the tests, which so run this same pipeline on host memory
// on any machine.
#pragma once
#include <mpi.h>

#include <vector>

#include "core/context.hpp"
#include "schedule/gpu_plan.hpp"

namespace a2a::detail::gpu {

// Asynchronous copies between device memory and pinned host memory; each
// copy is tagged with a slot whose last copy `ready` reports on.
class StageCopier {
 public:
  virtual ~StageCopier() = default;
  virtual int to_host(char* host, const char* device, size_t bytes, int slot) = 0;
  virtual int to_device(char* device, const char* host, size_t bytes, int slot) = 0;
  // MPI_SUCCESS with `done` set, or an MPI error class (a failed copy).
  virtual int ready(int slot, bool& done) = 0;
};

// Copies with memcpy, at once: ready() is always true.
class HostCopier : public StageCopier {
 public:
  int to_host(char* host, const char* device, size_t bytes, int slot) override;
  int to_device(char* device, const char* host, size_t bytes, int slot) override;
  int ready(int slot, bool& done) override;
};

struct StagedSide {
  const std::vector<schedule::StagedChunk>* chunks;
  char* base;          // the device buffer (const for sends)
  const MPI_Aint* off; // block offsets from base, by peer
};

// Staging memory: `slots` send slots then `slots` receive slots of `chunk`
// bytes each (2 * slots * chunk bytes).  Copier slots 0..slots-1 are the send
// slots, slots..2*slots-1 the receive slots.  Counts messages and rounds into
// `stats`.  Returns when every chunk has been sent and copied to the device.
constexpr int kStageSlots = 4;
int run_staged(MPI_Comm comm, int tag, const StagedSide& send, const StagedSide& recv, char* staging,
               long long chunk, int slots, StageCopier& copier, Stats& stats);

}  // namespace a2a::detail::gpu
