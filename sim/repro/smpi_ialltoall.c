/* SMPI's own MPI_Ialltoall(v), nothing of a2a: the smallest input found
 * that crashes SimGrid 3.32 (docs/simulation.md, "Overlap at P = 1024").
 *
 *   smpicc -O2 -o /tmp/ia sim/repro/smpi_ialltoall.c
 *   smpirun -platform sim/theta-16x64.xml -hostfile sim/theta-16x64.hosts \
 *     --log=root.thres:critical -np 136 /tmp/ia 1024 1
 *
 * Arguments: bytes per destination; 1 to complete with MPI_Wait (0: poll
 * MPI_Test); v for MPI_Ialltoallv with every count n.  On theta-16x64
 * both segfault from P = 136 (3 nodes) at 1 KiB, and MPI_Ialltoall at
 * P = 256 from 64 B; P = 128 (2 nodes) completes.  The fault is in
 * SimGrid's MaxMin::do_solve (gdb); no solver or precision setting tried
 * completes P = 1024 (docs/simulation.md). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P, r;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  const int n = argc > 1 ? atoi(argv[1]) : 1024, wait = argc > 2 ? atoi(argv[2]) : 0;
  const int v = argc > 3 && strcmp(argv[3], "v") == 0;
  char* s = malloc((size_t)n * P);
  char* d = malloc((size_t)n * P);
  for (size_t i = 0; i < (size_t)n * P; ++i) s[i] = (char)(r + i);
  int* counts = malloc(sizeof(int) * P);
  int* displs = malloc(sizeof(int) * P);
  for (int i = 0; i < P; ++i) {
    counts[i] = n;
    displs[i] = i * n;
  }
  MPI_Request q;
  if (v)
    MPI_Ialltoallv(s, counts, displs, MPI_BYTE, d, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &q);
  else
    MPI_Ialltoall(s, n, MPI_BYTE, d, n, MPI_BYTE, MPI_COMM_WORLD, &q);
  if (wait)
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  else
    for (int done = 0; !done;) MPI_Test(&q, &done, MPI_STATUS_IGNORE);
  if (r == 0) printf("P=%d n=%d %s%s: done\n", P, n, v ? "alltoallv " : "", wait ? "wait" : "test");
  free(counts);
  free(displs);
  free(s);
  free(d);
  MPI_Finalize();
  return 0;
}
