/* The cost of a process's first all-to-alls, with or without the PMPI shim
 * (docs/results.md, "The shim"): the first MPI_Alltoall of the process on a
 * fresh duplicate of MPI_COMM_WORLD (as FFTW calls on a communicator of
 * each plan's), then the first on a second fresh duplicate; prints the
 * maximum over ranks of each, in us.  Plain MPI: it does not link a2a.
 *   mpirun -np 2 build/bench/first_call [DOUBLES_PER_BLOCK]
 *   mpirun -np 2 -x LD_PRELOAD=$PWD/build/liba2a_pmpi.so build/bench/first_call */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P, me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  double* s = calloc((size_t)n * P, sizeof(double));
  double* r = calloc((size_t)n * P, sizeof(double));
  double t[2], worst[2];
  for (int k = 0; k < 2; ++k) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Barrier(c);
    MPI_Barrier(c);
    const double t0 = MPI_Wtime();
    MPI_Alltoall(s, n, MPI_DOUBLE, r, n, MPI_DOUBLE, c);
    t[k] = MPI_Wtime() - t0;
    MPI_Comm_free(&c);
  }
  MPI_Reduce(t, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0) printf("first %.1f us, first on a second communicator %.1f us\n", worst[0] * 1e6, worst[1] * 1e6);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
