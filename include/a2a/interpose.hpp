// For libraries that interpose on MPI (a2a's PMPI shim, src/shim/): what a2a
// knows about communicators and calls it did not run itself.  The policy of
// when to pass a call to the MPI library is theirs; a2a only keeps the marks
// and the stats.
#pragma once
#include <mpi.h>

#include "a2a/a2a.h"

namespace a2a::interpose {

// A2A_VERBOSE=1, as a2a read it.
bool verbose();
// A call that names no algorithm runs "auto" (A2A_ALLTOALL / A2A_ALLTOALLV).
bool runs_auto(bool alltoallv);
// Device memory (CUDA builds; false elsewhere).
bool device_memory(const void* p);

// Marks `comm` as met and returns true where a2a had not met it (no context,
// no earlier mark): its first call ran elsewhere, and the context a2a makes
// at the next call counts it.  False while MPI is not live under a2a.
bool claim(MPI_Comm comm);
// Takes a claim back (the call went to a2a after all).
void unclaim(MPI_Comm comm);
// `comm` is being freed: a mark has no delete callback, so it goes here,
// before the handle can name another communicator.
void forget(MPI_Comm comm);
// How many communicators a2a has seen freed: a cache of met handles starts
// over when this changes.
unsigned long long forgotten();

// Whether a2a has set `comm` up (its context made by an earlier call or
// A2A_Comm_prepare): a call on it then makes no collective set-up.  Local.
bool set_up(MPI_Comm comm);
// Whether a2a's nonblocking operations advance inside any MPI call of the
// process, through the MPI library's own hook or a2a's progress thread
// (a2a::progress_mode()): only then may an interposer hand out requests
// that the MPI library completes.
bool strong_progress();
// Whether the program runs at MPI_THREAD_MULTIPLE (below it one thread
// makes every MPI call, the progress hook's included).
bool threads_multiple();
// done(arg, rc) once `request`'s operation is done (rc: its MPI code), from
// inside whichever MPI call advanced it, or at once where it is done
// already.  done may complete an MPI request of the interposer's
// (MPI_Grequest_complete, a nonblocking send to itself), nothing of a2a's;
// A2A_Wait / A2A_Test complete the operation afterwards, outside the hook.
void when_done(A2A_Request request, void (*done)(void* arg, int rc), void* arg);

// The calling thread's last call ran the library's collective, sending
// `blocks` blocks of `bytes` bytes in all to others: A2A_Last_stats reports it as native.
void served_by_library(bool alltoallv, long long blocks, long long bytes);

}  // namespace a2a::interpose
