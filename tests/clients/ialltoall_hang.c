/* Issue 28's hang test for the PMPI shim's nonblocking collectives: rank 0
 * starts MPI_Ialltoall (then MPI_Ialltoallv) and blocks in MPI_Recv for a
 * message that rank 1 sends only after its own MPI_Wait on the same
 * all-to-all returned.  Valid MPI; it completes only where rank 0's part of
 * the all-to-all advances while rank 0 sits in MPI_Recv (the library's own
 * progress engine drives it).  Data encodes (source, destination, index)
 * and is checked on arrival. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int value(int src, int dst, int j) { return (src * 64 + dst) * 1000 + j; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int n = 5;
  int *s = malloc(sizeof(int) * n * P), *r = malloc(sizeof(int) * n * P);
  int *c = malloc(sizeof(int) * P), *d = malloc(sizeof(int) * P);
  long long wrong = 0;
  for (int v = 0; v < 2; ++v) {
    for (int i = 0; i < P; ++i) {
      c[i] = n;
      d[i] = n * (P - 1 - i); /* blocks in reverse order */
      for (int j = 0; j < n; ++j) s[(v ? d[i] : n * i) + j] = value(rank, i, j);
    }
    for (int i = 0; i < n * P; ++i) r[i] = -1;
    MPI_Request req;
    if (v)
      MPI_Ialltoallv(s, c, d, MPI_INT, r, c, d, MPI_INT, MPI_COMM_WORLD, &req);
    else
      MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &req);
    int token = 0;
    if (rank == 0 && P > 1) {
      MPI_Recv(&token, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      if (rank == 1) MPI_Send(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
    }
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < n; ++j) wrong += r[(v ? d[i] : n * i) + j] != value(i, rank, j);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("hang test: %s (%lld wrong)\n", wrong ? "WRONG" : "ok", wrong);
  free(s);
  free(r);
  free(c);
  free(d);
  MPI_Finalize();
  return wrong != 0;
}
