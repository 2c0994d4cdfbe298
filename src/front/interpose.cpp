// a2a/interpose.hpp: the marks and stats a library interposing on MPI (the
// shim) leaves with a2a; its policy lives with it (src/shim/).
#include "a2a/interpose.hpp"

#include "core/config.hpp"
#include "core/context.hpp"
#include "front/cache.hpp"
#include "front/progress.hpp"
#include "gpu/gpu.hpp"

namespace a2a::interpose {

using namespace a2a::detail;

bool verbose() { return config().verbose; }

bool runs_auto(bool alltoallv) { return (alltoallv ? config().alltoallv : config().alltoall) == "auto"; }

bool device_memory(const void* p) { return gpu::any_device(p, nullptr); }

bool claim(MPI_Comm comm) { return claim_first_use(comm); }

void unclaim(MPI_Comm comm) { unclaim_first_use(comm); }

void forget(MPI_Comm comm) { forget_comm(comm); }

unsigned long long forgotten() { return comms_freed(); }

bool set_up(MPI_Comm comm) { return has_context(comm); }

bool strong_progress() { return ensure_progress() != ProgressMode::none; }

bool threads_multiple() { return a2a::detail::threads_multiple(); }

void when_done(A2A_Request request, void (*done)(void* arg, int rc), void* arg) {
  watch_operation(request, done, arg);
}

// The stats are written when asked (last_stats): this memory is cold.
void served_by_library(bool alltoallv, long long blocks, long long bytes) {
  ThreadState& ts = thread_state();
  if (!ts.error.empty()) ts.error.clear();
  ts.lazy = ts.first_call_marker();
  ts.first = {alltoallv ? Collective::alltoallv : Collective::alltoall, blocks, bytes};
}

}  // namespace a2a::interpose
