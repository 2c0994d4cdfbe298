/* A preloadable timer of MPI_Alltoall(v) for measuring unchanged
 * applications, with or without the a2a shim behind it:
 *   LD_PRELOAD=libmpi_timer.so                   the MPI library alone
 *   LD_PRELOAD=libmpi_timer.so:liba2a_pmpi.so    the shim (A2A_VERBOSE off)
 * Each call goes to the next MPI_Alltoall(v) in link order (the shim's, or
 * the MPI library's), so both are timed by the same outer clock and the
 * shim's own reporting stays out of the timed call.  World rank 0 prints,
 * at MPI_Finalize, the line the shim prints with A2A_VERBOSE=1:
 *   a2a shim: communicator (all): N calls, 0 bytes sent by rank 0, S s; timed xN
 * so the same parser reads both (scripts/parity.sh).  MPI_TIMER_EACH=1: world
 * rank 0 also prints each call's time as it returns ("mpi_timer: call N:
 * T us"), for comparing calls one by one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*alltoall_fn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
typedef int (*alltoallv_fn)(const void*, const int*, const int*, MPI_Datatype, void*, const int*, const int*,
                            MPI_Datatype, MPI_Comm);
typedef int (*finalize_fn)(void);

static long long calls;
static double seconds;

/* One call timed: the sum, and the call itself where MPI_TIMER_EACH=1. */
static void count(double dt) {
  static int each = -1;
  seconds += dt;
  ++calls;
  if (each < 0) {
    const char* e = getenv("MPI_TIMER_EACH");
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    each = e && strcmp(e, "1") == 0 && rank == 0;
  }
  if (each) fprintf(stderr, "mpi_timer: call %lld: %.1f us\n", calls, dt * 1e6);
}

/* The next definition after this library, or the MPI library's PMPI entry
 * point when this library is linked last. */
static int next(const char* name, void* slot) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f) memcpy(slot, &f, sizeof f); /* POSIX's way to a function pointer */
  return f != NULL;
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  static alltoall_fn call;
  if (!call && !next("MPI_Alltoall", &call)) call = PMPI_Alltoall;
  const double t0 = PMPI_Wtime();
  const int rc = call(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  count(PMPI_Wtime() - t0);
  return rc;
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  static alltoallv_fn call;
  if (!call && !next("MPI_Alltoallv", &call)) call = PMPI_Alltoallv;
  const double t0 = PMPI_Wtime();
  const int rc = call(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  count(PMPI_Wtime() - t0);
  return rc;
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    fprintf(stderr, "a2a shim: communicator (all): %lld calls, 0 bytes sent by rank 0, %.6f s; timed x%lld\n", calls,
            seconds, calls);
  finalize_fn fin;
  if (!next("MPI_Finalize", &fin)) fin = PMPI_Finalize;
  return fin();
}
