/* The floor under any one-synchronisation exchange on a node, against what
 * shm and the MPI library take, in one tight loop each (no barrier between
 * calls): a bare barrier over a shared window (each rank raises its word,
 * then waits for every peer's, polling 16 times before each sched_yield, as
 * shm waits when ranks outnumber cores), MPI_Alltoall, A2A_Alltoall with
 * "shm", and a started shm plan.  Usage: mpirun -np P shm_floor [BYTES]
 * (block bytes, default 16); rank 0 prints us per iteration. */
#include <a2a/a2a.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { kIters = 50000, kWarm = 200 };

static double bare_barrier(void) {
  int P, me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Win win;
  long long* mine = NULL;
  MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  long long** word = malloc(sizeof(long long*) * (size_t)P);
  for (int p = 0; p < P; ++p) {
    MPI_Aint size;
    int unit;
    MPI_Win_shared_query(win, p, &size, &unit, &word[p]);
  }
  __atomic_store_n(mine, 0, __ATOMIC_RELEASE);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  for (long long e = 1; e <= kWarm + kIters; ++e) {
    if (e == kWarm + 1) t0 = MPI_Wtime();
    __atomic_store_n(mine, e, __ATOMIC_RELEASE);
    for (int p = 0; p < P; ++p)
      for (int i = 0; p != me && __atomic_load_n(word[p], __ATOMIC_ACQUIRE) < e; ++i)
        if (i >= 16) sched_yield();
  }
  const double t = (MPI_Wtime() - t0) / kIters;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  free(word);
  return t;
}

/* kind 0: MPI_Alltoall, 1: A2A_Alltoall "shm", 2: a started shm plan. */
static double exchange(int kind, int bytes) {
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char *s = calloc((size_t)P, (size_t)bytes), *r = calloc((size_t)P, (size_t)bytes);
  A2A_Plan plan = NULL;
  if (kind == 2) A2A_Alltoall_init(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD, "shm", &plan);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  for (int i = 0; i < kWarm + kIters; ++i) {
    if (i == kWarm) t0 = MPI_Wtime();
    if (kind == 0) MPI_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD);
    if (kind == 1) A2A_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD, "shm");
    if (kind == 2) A2A_Start(plan);
  }
  const double t = (MPI_Wtime() - t0) / kIters;
  if (plan) A2A_Plan_free(&plan);
  free(s);
  free(r);
  return t;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P, me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int bytes = argc > 1 ? atoi(argv[1]) : 16;
  const double floor_s = bare_barrier(), mpi = exchange(0, bytes), shm = exchange(1, bytes), plan = exchange(2, bytes);
  if (me == 0)
    printf("P=%d %d B, us per iteration: bare barrier %.3f, MPI_Alltoall %.3f, shm %.3f, plan/shm %.3f\n", P, bytes,
           floor_s * 1e6, mpi * 1e6, shm * 1e6, plan * 1e6);
  MPI_Finalize();
  return 0;
}
