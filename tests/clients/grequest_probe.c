/* Whether the MPI library calls an extended generalized request's poll
 * function (MPIX_Grequest_start) while the process blocks in another call:
 * the condition for the shim to serve MPI_Ialltoall(v) with a2a's engine
 * without hanging a valid program (tests/clients/ialltoall_hang.c).  Rank 0
 * starts a generalized request, then waits in MPI_Recv for a message rank 1
 * sends after 0.1 s; it prints how often the poll function ran meanwhile.
 * MPICH 4.0.2: 0 (polled only in MPI_Test/MPI_Wait on that request), so the
 * shim hands MPI_Ialltoall(v) to the library there too (docs/architecture.md). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static int polls = 0, done = 0;
static MPI_Request greq;

static int query(void* state, MPI_Status* st) {
  (void)state;
  MPI_Status_set_elements(st, MPI_BYTE, 0);
  MPI_Status_set_cancelled(st, 0);
  return MPI_SUCCESS;
}
static int release(void* state) { (void)state; return MPI_SUCCESS; }
static int cancel(void* state, int complete) { (void)state; (void)complete; return MPI_SUCCESS; }
static int poll_fn(void* state, MPI_Status* st) {
  (void)state;
  (void)st;
  ++polls;
  if (done && polls > 0) MPI_Grequest_complete(greq);
  return MPI_SUCCESS;
}
static int wait_fn(int n, void** states, double timeout, MPI_Status* st) {
  (void)n;
  (void)states;
  (void)timeout;
  return poll_fn(NULL, st);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, token = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPIX_Grequest_start(query, release, cancel, poll_fn, wait_fn, NULL, &greq);
    MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("grequest polls during MPI_Recv: %d\n", polls);
    done = 1;
    MPI_Wait(&greq, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    usleep(100000);
    MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
