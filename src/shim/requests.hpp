// The MPI requests the shim hands out for a2a's operations, which the MPI
// library's own MPI_Wait / MPI_Test / MPI_Waitall ... complete, mixed with
// the program's other requests (only where a progress hook advances a2a's
// operations inside any MPI call: a2a::interpose::strong_progress()):
//   nonblocking  a generalized request (MPI_Grequest_start), completed from
//                the hook when the operation is done; its query completes
//                the a2a operation (A2A_Wait) inside the program's wait;
//   persistent   a persistent receive on a private duplicate of
//                MPI_COMM_WORLD: MPI_Start (wrapped) starts it and the plan
//                (A2A_Istart), and the hook sends it a message when the
//                operation is done, so the library's wait completes it.
#pragma once
#include <mpi.h>

#include "a2a/a2a.h"

namespace a2a::shim {

// What the verbose summary counts (pmpi.cpp).
enum class Kind { blocking, nonblocking, persistent };
void count_served(MPI_Comm comm, bool alltoallv, Kind kind);
void count_algorithm(MPI_Comm comm);  // the thread's last a2a stats, for comm's summary

// `op` (just started) behind a new generalized request in *request.
int hand_out(A2A_Request op, MPI_Comm comm, bool alltoallv, MPI_Request* request);

// MPI_Init (collective): the persistent requests' communicator made;
// until then (a Fortran program's MPI_INIT reaches PMPI_Init directly)
// persistent calls go to the library.
int open_requests();
bool requests_open();

// A persistent request of `plan` in *request.
int hand_out_plan(A2A_Plan plan, MPI_Comm comm, bool alltoallv, MPI_Request* request);
// Whether r is one of them (no lock where none was made).
bool is_plan(MPI_Request r);
// MPI_Start of one (the plan's last start must be complete, as MPI requires).
int start_plan(MPI_Request* r);
// MPI_Request_free of one: its plan freed, *r null.
int free_plan(MPI_Request* r);

// Operations whose requests the program freed while they ran, completed
// now (outside the hook); and everything at MPI_Finalize.
void reap();
void finalize_requests();

}  // namespace a2a::shim
