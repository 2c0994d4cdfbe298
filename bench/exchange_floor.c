/* What the MPI library alone charges for one pairwise exchange, blocking
 * and nonblocking: the floor under a2a's blocking round (MPI_Sendrecv) and
 * under a nonblocking operation's (MPI_Irecv + MPI_Isend, then
 * MPI_Waitall), so that the rest of i/X over X is a2a's own bookkeeping.
 * Rows: sendrecv; irecv+isend+waitall; irecv+isend+wait+wait;
 * irecv+send+wait.  Usage: mpirun -np 2 exchange_floor [BYTES [ITERS]]
 * (default 16 B, 200000); rank 0 prints us per exchange, the best of 7
 * passes, the rows taking turns within each pass. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double pass(int row, MPI_Comm c, int peer, char* s, char* d, int bytes, int iters) {
  MPI_Barrier(c);
  const double t = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Request q[2];
    MPI_Status st[2];  // not MPI_STATUSES_IGNORE: GCC 12 reads MPICH's (a pointer of value 1) as an empty array
    switch (row) {
      case 0:
        MPI_Sendrecv(s, bytes, MPI_BYTE, peer, 5, d, bytes, MPI_BYTE, peer, 5, c, MPI_STATUS_IGNORE);
        break;
      case 1:
        MPI_Irecv(d, bytes, MPI_BYTE, peer, 5, c, &q[0]);
        MPI_Isend(s, bytes, MPI_BYTE, peer, 5, c, &q[1]);
        MPI_Waitall(2, q, st);
        break;
      case 2:
        MPI_Irecv(d, bytes, MPI_BYTE, peer, 5, c, &q[0]);
        MPI_Isend(s, bytes, MPI_BYTE, peer, 5, c, &q[1]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        break;
      default:
        MPI_Irecv(d, bytes, MPI_BYTE, peer, 5, c, &q[0]);
        MPI_Send(s, bytes, MPI_BYTE, peer, 5, c);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    }
  }
  return (MPI_Wtime() - t) / iters * 1e6;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int bytes = argc > 1 ? atoi(argv[1]) : 16, iters = argc > 2 ? atoi(argv[2]) : 200000;
  if (P != 2 || bytes < 0 || iters < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 exchange_floor [BYTES [ITERS]]\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  char* s = calloc((size_t)bytes + 1, 1);
  char* d = calloc((size_t)bytes + 1, 1);
  static const char* names[] = {"sendrecv", "irecv+isend+waitall", "irecv+isend+wait+wait", "irecv+send+wait"};
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  for (int k = 0; k < 7; ++k)
    for (int row = 0; row < 4; ++row) {
      const double us = pass(row, c, 1 - rank, s, d, bytes, iters);
      if (us < best[row]) best[row] = us;
    }
  if (rank == 0)
    for (int row = 0; row < 4; ++row) printf("%d B  %-22s %.3f us\n", bytes, names[row], best[row]);
  free(s);
  free(d);
  MPI_Comm_free(&c);
  MPI_Finalize();
  return 0;
}
