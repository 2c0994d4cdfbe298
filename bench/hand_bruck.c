/* a2a's own-algorithm path against the same algorithm written by hand
 * (docs/results.md, "What a call adds"): at P = 2 radix-2 Bruck is one
 * exchange, so the rows are the bare exchange (MPI_Irecv, MPI_Isend,
 * MPI_Waitall of one block), that exchange with the own block's copy
 * (hand-written Bruck, as a2a's zero-rotation engine runs it: no packing,
 * the block straight from the send buffer into the receive buffer),
 * MPI_Alltoall, then A2A_Alltoall with each SPEC.  Every iteration runs
 * each row once, in an order shuffled every iteration (the same on both
 * ranks), after a barrier; rank 0 prints per row the median over the
 * iterations of the maximum over ranks.
 *   mpirun -np 2 build/bench/hand_bruck [BYTES=16 [ITERS=2000]] [SPEC...]
 *   (default SPECs: tra:radix=2 pairwise native) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"

enum { kMaxRows = 16, kFixed = 3 };
static MPI_Comm own;  /* the hand-written rows' duplicate, as a2a's private one */
static int me, bytes;
static char *sbuf, *rbuf;
static const char* specs[kMaxRows];

static int exchange(void) {
  const int peer = 1 - me;
  MPI_Request q[2];
  MPI_Status st[2];  /* not MPI_STATUSES_IGNORE: MPICH's constant is a cast 1, which GCC 12 flags (-Wstringop-overflow) */
  MPI_Irecv(rbuf + (size_t)peer * bytes, bytes, MPI_BYTE, peer, 5, own, &q[0]);
  MPI_Isend(sbuf + (size_t)peer * bytes, bytes, MPI_BYTE, peer, 5, own, &q[1]);
  return MPI_Waitall(2, q, st);
}

static int hand_bruck(void) {
  memcpy(rbuf + (size_t)me * bytes, sbuf + (size_t)me * bytes, (size_t)bytes);
  return exchange();
}

static int run(int row) {
  switch (row) {
    case 0: return exchange();
    case 1: return hand_bruck();
    case 2: return MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
    default: return A2A_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, specs[row - kFixed]);
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  bytes = argc > 1 ? atoi(argv[1]) : 16;
  const int iters = argc > 2 ? atoi(argv[2]) : 2000;
  int rows = kFixed;
  static const char* fallback[] = {"tra:radix=2", "pairwise", "native"};
  for (int i = 3; i < argc && rows < kMaxRows; ++i) specs[rows++ - kFixed] = argv[i];
  for (int i = 0; rows == kFixed && i < 3; ++i) specs[rows++ - kFixed] = fallback[i];
  if (P != 2 || bytes < 1 || iters < 1) {
    if (me == 0) fprintf(stderr, "usage: mpirun -np 2 hand_bruck [BYTES [ITERS]] [SPEC...]\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &own);
  sbuf = calloc(2 * (size_t)bytes, 1);
  rbuf = calloc(2 * (size_t)bytes, 1);
  double* t = calloc((size_t)rows * iters, sizeof(double));
  int order[kMaxRows];
  for (int r = 0; r < rows; ++r) order[r] = r;
  unsigned seed = 7;  /* the same order on both ranks */
  for (int it = -100; it < iters; ++it) {
    for (int r = rows - 1; r > 0; --r) {
      seed = seed * 1103515245u + 12345u;
      const int j = (int)((seed >> 16) % (unsigned)(r + 1)), x = order[r];
      order[r] = order[j], order[j] = x;
    }
    for (int k = 0; k < rows; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (run(order[k]) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);  /* a bench, not the library */
      if (it >= 0) t[(size_t)order[k] * iters + it] = MPI_Wtime() - t0;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, t, rows * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  static const char* names[kFixed] = {"exchange", "hand-bruck", "MPI_Alltoall"};
  for (int r = 0; r < rows && me == 0; ++r) {
    qsort(t + (size_t)r * iters, (size_t)iters, sizeof(double), by_value);
    printf("%d B  %-22s %.3f us\n", bytes, r < kFixed ? names[r] : specs[r - kFixed], t[(size_t)r * iters + iters / 2] * 1e6);
  }
  free(t);
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&own);
  MPI_Finalize();
  return 0;
}
