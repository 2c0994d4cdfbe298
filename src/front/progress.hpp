// Strong progress: a2a's pending nonblocking operations advanced inside any
// MPI call of the process, not only inside a2a's own calls (weak progress,
// core/engine.hpp).  One mechanism per MPI library, found at run time:
//   opal    Open MPI's opal_progress_register (libopen-pal): a callback run
//           by every progress loop of the library (MPI_Recv, MPI_Barrier,
//           MPI_Probe, MPI_Comm_split, MPI_Wait on a generalized request);
//   thread  A2A_PROGRESS_THREAD=1 at MPI_THREAD_MULTIPLE: a thread of a2a's
//           that steps pending operations while there are any;
//   none    weak progress (MPICH without the thread, SMPI).
// MPICH 4.3's MPIX_Async_start would serve as opal does; Debian 12 ships
// 4.0.2, so it is not used until it can be run (docs/progress.md).
// The shim serves MPI_Ialltoall(v) and the persistent calls only where one
// is active (src/shim/pmpi.cpp).  docs/progress.md has the table.
#pragma once
#include "a2a/a2a.h"

namespace a2a::detail {

enum class ProgressMode { none, opal, thread };

// What the process offers: the library's symbols, the environment, the thread level.
struct ProgressOffer {
  bool opal = false;             // opal_progress_register found
  bool thread_asked = false;     // A2A_PROGRESS_THREAD=1
  bool thread_multiple = false;  // MPI_THREAD_MULTIPLE provided
};

// The library's own hook first (it runs where the program blocks, at no
// thread's cost); the thread only where asked and safe.
constexpr ProgressMode choose_progress(const ProgressOffer& o) {
  if (o.opal) return ProgressMode::opal;
  if (o.thread_asked && o.thread_multiple) return ProgressMode::thread;
  return ProgressMode::none;
}

// One line for A2A_VERBOSE and a2a::progress_mode(), e.g. "opal_progress_register
// (Open MPI): operations advance inside any MPI call".
const char* progress_line(ProgressMode m, const ProgressOffer& o);

// The active mechanism, found on first use (MPI initialised; once per
// process, never removed while MPI lives).
ProgressMode ensure_progress();
// An operation went pending: the mechanism found (on the first), Open MPI's
// callback registered (on the first: until then the library's progress
// loop pays nothing for it), the thread woken.
void progress_kick();
// MPI_Finalize: the thread ends before the library does.
void stop_progress();

// The hook's body (front/nonblocking.cpp): steps every pending operation
// and tells the watchers of those done (interpose::when_done); returns at
// once where nothing is pending or this thread is inside a step already.
// The watchers told, and whether any operation still waits for its messages.
struct Advanced {
  int done = 0;
  bool busy = false;
};
Advanced advance_operations();
// `done`(arg, rc) once request's operation is done (rc its MPI code): from
// the progress hook, or now where it is done already.  `done` may complete
// an MPI request (MPI_Grequest_complete, a send to itself), nothing of
// a2a's; A2A_Wait completes the operation afterwards.
void watch_operation(A2A_Request request, void (*done)(void*, int), void* arg);

}  // namespace a2a::detail
