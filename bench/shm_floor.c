/* The floor under any one-synchronisation exchange on a node, against what
 * shm and the MPI library take: a bare barrier over a shared window (each
 * rank raises its word, then waits for every peer's; no copies, no MPI),
 * MPI_Alltoall, A2A_Alltoall with "shm", and a started shm plan.
 * Two ways of timing, close to `a2a bench` with -b 100 and with -b 1:
 * - tight loop: 50000 iterations back to back, us per iteration;
 * - one per sample: MPI_Barrier, then one timed call; the slowest rank's
 *   time, median over 2000 samples, the rows taking turns.
 * The barrier waits as shm waits when ranks outnumber cores (peers in rank
 * order, 16 polls of each before each sched_yield), and in the tight loop
 * also as a trial that shm does not use (the peers in a round from the
 * next rank, 64 polls of the round before each yield).  Usage: mpirun -np
 * P shm_floor [BYTES] (block bytes, default 16); rank 0 prints. */
#include <a2a/a2a.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { kIters = 50000, kWarm = 200, kSamples = 2000 };

static int P, me;
static MPI_Win win;
static long long** word; /* each rank's word in the shared window */
static long long epoch;

static void barrier_open(void) {
  long long* mine = NULL;
  MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  word = malloc(sizeof(long long*) * (size_t)P);
  for (int p = 0; p < P; ++p) {
    MPI_Aint size;
    int unit;
    MPI_Win_shared_query(win, p, &size, &unit, &word[p]);
  }
  __atomic_store_n(mine, 0, __ATOMIC_RELEASE);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void bare_barrier(int round) {
  const long long e = ++epoch;
  __atomic_store_n(word[me], e, __ATOMIC_RELEASE);
  if (round) {
    for (int i = 0;; ++i) {
      int q = 1;
      while (q < P && __atomic_load_n(word[(me + q) % P], __ATOMIC_ACQUIRE) >= e) ++q;
      if (q == P) return;
      if (i >= 64) sched_yield();
    }
  }
  for (int p = 0; p < P; ++p)
    for (int i = 0; p != me && __atomic_load_n(word[p], __ATOMIC_ACQUIRE) < e; ++i)
      if (i >= 16) sched_yield();
}

static char *sbuf, *rbuf;
static int bytes;
static A2A_Plan plan;

/* 0: bare barrier, 1: round-wait barrier, 2: MPI_Alltoall, 3: shm, 4: plan. */
static void run(int kind) {
  if (kind <= 1) bare_barrier(kind);
  if (kind == 2) MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
  if (kind == 3) A2A_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, "shm");
  if (kind == 4) A2A_Start(plan);
}

static double tight_loop(int kind) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  for (int i = 0; i < kWarm + kIters; ++i) {
    if (i == kWarm) t0 = MPI_Wtime();
    run(kind);
  }
  return (MPI_Wtime() - t0) / kIters;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* t[k] = the median over samples of the slowest rank's time of kinds[k]. */
static void per_sample(const int* kinds, int n, double* t) {
  double* s = malloc(sizeof(double) * (size_t)(n * kSamples));
  for (int i = 0; i < kSamples; ++i)
    for (int k = 0; k < n; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      run(kinds[k]);
      s[k * kSamples + i] = MPI_Wtime() - t0;
    }
  MPI_Allreduce(MPI_IN_PLACE, s, n * kSamples, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < n; ++k) {
    qsort(s + k * kSamples, kSamples, sizeof(double), by_value);
    t[k] = s[k * kSamples + kSamples / 2];
  }
  free(s);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  bytes = argc > 1 ? atoi(argv[1]) : 16;
  sbuf = calloc((size_t)P, (size_t)bytes);
  rbuf = calloc((size_t)P, (size_t)bytes);
  A2A_Alltoall_init(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, "shm", &plan);
  barrier_open();
  double t[5];
  for (int kind = 0; kind < 5; ++kind) t[kind] = tight_loop(kind);
  if (me == 0)
    printf("P=%d %d B, tight loop, us per iteration: bare barrier %.3f (round-wait trial %.3f), MPI_Alltoall %.3f, "
           "shm %.3f, plan/shm %.3f\n",
           P, bytes, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[3] * 1e6, t[4] * 1e6);
  const int kinds[3] = {0, 2, 3};
  per_sample(kinds, 3, t);
  if (me == 0)
    printf("P=%d %d B, one per sample, us: bare barrier %.3f, MPI_Alltoall %.3f, shm %.3f; of MPI_Alltoall: barrier "
           "%.2f, shm %.2f\n",
           P, bytes, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[0] / t[1], t[2] / t[1]);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  A2A_Plan_free(&plan);
  free(word);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
