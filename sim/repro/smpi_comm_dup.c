/* What a new communicator costs under SMPI's MPICH selector, nothing of
 * a2a: MPI_Comm_dup, MPI_Comm_split_type, a barrier and two allreduces on
 * the duplicate, an allgather on the node
 * (docs/simulation.md, "Where the time goes at P = 4096").
 *
 *   smpicc -O2 -o /tmp/dup sim/repro/smpi_comm_dup.c
 *   smpirun -platform sim/theta-16x64.xml -hostfile sim/theta-16x64.hosts \
 *     --cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:mpich \
 *     --log=root.thres:critical -np 1024 /tmp/dup
 *
 * Rank 0 prints each call's simulated time.  At P = 1024 (2026-11-29,
 * other simulations sharing the machine) the run takes 56 s of wall time
 * and the dup 2,187 us; with --cfg=smpi/bcast:default the dup costs 3 us
 * but the first allreduce 2,235 us (52 s); with --cfg=smpi/allreduce:rdb
 * as well, 2.4 s, the allreduce 11.5 us (the barrier stays MPICH's).
 * SMPI's communicator set-up broadcasts on the new communicator, and the
 * MPICH selector's broadcast and allreduce first learn its node layout
 * (a ring allgather, P - 1 rounds of P messages). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm dup, node;
  const double t0 = MPI_Wtime();
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const double t1 = MPI_Wtime();
  MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const double t2 = MPI_Wtime();
  MPI_Barrier(dup);
  const double t3 = MPI_Wtime();
  int one = 1, sum = 0, local = 1;
  MPI_Comm_size(node, &local);
  int* all = malloc(sizeof(int) * (size_t)local);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
  const double t4 = MPI_Wtime();
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
  const double t5 = MPI_Wtime();
  MPI_Allgather(&one, 1, MPI_INT, all, 1, MPI_INT, node);
  const double t6 = MPI_Wtime();
  if (r == 0)
    printf("simulated us: MPI_Comm_dup %.1f, MPI_Comm_split_type %.1f, MPI_Barrier %.1f, MPI_Allreduce %.1f then "
           "%.1f, MPI_Allgather (node) %.1f\n",
           1e6 * (t1 - t0), 1e6 * (t2 - t1), 1e6 * (t3 - t2), 1e6 * (t4 - t3), 1e6 * (t5 - t4), 1e6 * (t6 - t5));
  free(all);
  MPI_Comm_free(&node);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
