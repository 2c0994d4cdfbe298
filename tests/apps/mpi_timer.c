/* A preloadable timer of MPI_Alltoall(v) for measuring unchanged
 * applications against the a2a shim: each call goes straight to the MPI
 * library (PMPI) and its time is added up, and world rank 0 prints, at
 * MPI_Finalize, the line the shim prints with A2A_VERBOSE=1:
 *   a2a shim: communicator (all): N calls, 0 bytes sent by rank 0, S s; native xN
 * so the same parser reads both (scripts/apps-bench.sh). */
#include <mpi.h>
#include <stdio.h>

static long long calls;
static double seconds;

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  seconds += PMPI_Wtime() - t0;
  ++calls;
  return rc;
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  seconds += PMPI_Wtime() - t0;
  ++calls;
  return rc;
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    fprintf(stderr, "a2a shim: communicator (all): %lld calls, 0 bytes sent by rank 0, %.6f s; native x%lld\n", calls,
            seconds, calls);
  return PMPI_Finalize();
}
