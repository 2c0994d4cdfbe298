/* What one exchange a round costs under SMPI, nothing of a2a (docs/
 * simulation.md, "The k-port form"): P-1 rounds of one S-byte block, round
 * z to rank p + dir*z from p - dir*z, as TRA at radix P runs them one at a
 * time, posted three ways: MPI_Sendrecv; MPI_Irecv, MPI_Isend, MPI_Waitall
 * (the receive first); MPI_Isend, MPI_Irecv, MPI_Waitall (the send
 * first); each with dir = +1 (a2a's TRA) and -1 (the authors' code).  Each
 * row runs four times back to back after one barrier; rank 0 prints the
 * simulated us of each (the maximum over ranks): the first carries the
 * barrier's exit skew, the others do not.
 *
 *   smpicc -O2 -o /tmp/order sim/repro/smpi_round_order.c
 *   head -64 sim/polaris-8x32.hosts > /tmp/h64
 *   smpirun -platform sim/polaris-8x32.xml -hostfile /tmp/h64 --cfg=smpi/simulate-computation:no \
 *     --cfg=smpi/coll-selector:mpich --log=root.thres:critical -np 64 /tmp/order */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rounds(int row, int S, int dir, const char* s, char* d, MPI_Comm c) {
  int p, P;
  MPI_Comm_rank(c, &p);
  MPI_Comm_size(c, &P);
  for (int z = 1; z < P; ++z) {
    const int dst = (p + dir * z + P) % P, src = (p - dir * z + P) % P;
    MPI_Request q[2];
    if (row == 0) {
      MPI_Sendrecv(s + (size_t)dst * S, S, MPI_BYTE, dst, 1, d + (size_t)src * S, S, MPI_BYTE, src, 1, c,
                   MPI_STATUS_IGNORE);
      continue;
    }
    if (row == 1) MPI_Irecv(d + (size_t)src * S, S, MPI_BYTE, src, 1, c, &q[0]);
    MPI_Isend(s + (size_t)dst * S, S, MPI_BYTE, dst, 1, c, &q[1]);
    if (row == 2) MPI_Irecv(d + (size_t)src * S, S, MPI_BYTE, src, 1, c, &q[0]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &p);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  static const char* names[] = {"sendrecv", "irecv+isend+waitall", "isend+irecv+waitall"};
  const int sizes[] = {16, 128, 1024};
  for (int k = 0; k < 3; ++k)
    for (int dir = 1; dir >= -1; dir -= 2)
      for (int row = 0; row < 3; ++row) {
        const int S = sizes[k];
        char* s = calloc((size_t)S * P, 1);
        char* d = calloc((size_t)S * P, 1);
        double t[4], worst[4];
        MPI_Barrier(MPI_COMM_WORLD);
        for (int rep = 0; rep < 4; ++rep) {
          const double t0 = MPI_Wtime();
          rounds(row, S, dir, s, d, MPI_COMM_WORLD);
          t[rep] = MPI_Wtime() - t0;
        }
        MPI_Reduce(t, worst, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (p == 0)
          printf("%5d B  dir %+d  %-20s %7.2f %7.2f %7.2f %7.2f us\n", S, dir, names[row], worst[0] * 1e6,
                 worst[1] * 1e6, worst[2] * 1e6, worst[3] * 1e6);
        free(s);
        free(d);
      }
  MPI_Finalize();
  return 0;
}
