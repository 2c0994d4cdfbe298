/* An unchanged MPI application: MPI_Alltoall and MPI_Alltoallv with data
 * encoding (source, destination, index), checked on arrival.  Built twice:
 * linked with liba2a_pmpi, and plain (the shim comes by LD_PRELOAD).  When
 * a2a is underneath, A2A_Last_stats (found with dlsym, the application needs
 * no a2a header) must name the algorithm the environment asked for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char algorithm[128];
  long long rest[9];
} Stats;

static int value(int src, int dst, int j) { return (src * 64 + dst) * 1000 + j; }

/* 1 when a2a ran the collective with the algorithm named in `env`. */
static int ran(const char* env) {
  int (*last)(Stats*) = NULL;
  *(void**)(&last) = dlsym(RTLD_DEFAULT, "A2A_Last_stats"); /* POSIX's way to a function pointer */
  const char* want = getenv(env);
  Stats st;
  if (!last || !want) return 0;
  memset(&st, 0, sizeof st);
  last(&st);
  if (strcmp(want, "auto") == 0) return st.algorithm[0] != '\0'; /* whatever auto chose */
  return strncmp(st.algorithm, want, strcspn(want, ":")) == 0;
}

/* Who decided the last call (A2A_Last_decided_by), "" without a2a. */
static const char* decided_by(void) {
  const char* (*by)(void) = NULL;
  *(void**)(&by) = dlsym(RTLD_DEFAULT, "A2A_Last_decided_by");
  return by ? by() : "";
}

/* Communicators a2a has not met: auto's first call on each runs the
 * library's (the shim hands it over untouched, A2A_Last_decided_by says
 * "first-call"), the second a2a's choice; a named algorithm runs from the
 * first call.  One is used once and freed (nothing made for it), and an
 * in-place call comes first on another.  Returns the wrong values and
 * expectations missed. */
static int fresh_communicators(int rank, int P, int expect_a2a) {
  const int n = 3;
  int bad = 0;
  int* s = malloc(sizeof(int) * n * P);
  int* r = malloc(sizeof(int) * n * P);
  int *c = malloc(sizeof(int) * P), *d = malloc(sizeof(int) * P);
  for (int i = 0; i < P; ++i) c[i] = n, d[i] = n * (P - 1 - i); /* blocks in reverse order */
  for (int k = 0; k < 3; ++k) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int call = 0; call < (k == 2 ? 1 : 2); ++call) {
      for (int i = 0; i < n * P; ++i) s[i] = value(rank, i / n, i % n + 10 * call), r[i] = -1;
      const char* env = k == 1 ? "A2A_ALLTOALLV" : "A2A_ALLTOALL";
      if (k == 1) { /* send block i at d[i], receive from i at d[i] */
        int* sv = malloc(sizeof(int) * n * P);
        for (int i = 0; i < P; ++i)
          for (int j = 0; j < n; ++j) sv[d[i] + j] = s[i * n + j];
        MPI_Alltoallv(sv, c, d, MPI_INT, r, c, d, MPI_INT, comm);
        free(sv);
        for (int src = 0; src < P; ++src)
          for (int j = 0; j < n; ++j) bad += r[d[src] + j] != value(src, rank, j + 10 * call);
      } else {
        if (k == 2) memcpy(r, s, sizeof(int) * n * P);
        MPI_Alltoall(k == 2 ? MPI_IN_PLACE : (const void*)s, n, MPI_INT, r, n, MPI_INT, comm);
        for (int src = 0; src < P; ++src)
          for (int j = 0; j < n; ++j) bad += r[src * n + j] != value(src, rank, j + 10 * call);
      }
      const char* want = getenv(env);
      const int auto_spec = !want || strcmp(want, "auto") == 0;
      const int first = strcmp(decided_by(), "first-call") == 0;
      if (expect_a2a && (auto_spec ? first != (call == 0) : !ran(env))) {
        fprintf(stderr, "client: rank %d, communicator %d, call %d: decided by \"%s\"\n", rank, k, call, decided_by());
        bad += 1000;
      }
    }
    MPI_Comm_free(&comm);
  }
  free(s), free(r), free(c), free(d);
  return bad;
}

/* Two fresh communicators called in turn (FFTW's forward and backward
 * plans): each one's first call is the first-call, its second is not,
 * whichever was called in between; the data are checked every call. */
static int alternating_communicators(int rank, int P, int expect_a2a) {
  const char* want = getenv("A2A_ALLTOALL");
  if (!expect_a2a || (want && strcmp(want, "auto") != 0)) return 0;
  const int n = 2;
  int bad = 0;
  int* s = malloc(sizeof(int) * n * P);
  int* r = malloc(sizeof(int) * n * P);
  MPI_Comm comm[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]);
  for (int call = 0; call < 4; ++call) {
    for (int i = 0; i < n * P; ++i) s[i] = value(rank, i / n, i % n + 100 * call), r[i] = -1;
    MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, comm[call % 2]);
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < n; ++j) bad += r[src * n + j] != value(src, rank, j + 100 * call);
    if ((strcmp(decided_by(), "first-call") == 0) != (call < 2)) {
      fprintf(stderr, "client: rank %d, alternating call %d: decided by \"%s\"\n", rank, call, decided_by());
      bad += 1000;
    }
  }
  MPI_Comm_free(&comm[0]);
  MPI_Comm_free(&comm[1]);
  free(s), free(r);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, P, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int n = 5;
  int* s = malloc(sizeof(int) * n * P);
  int* r = malloc(sizeof(int) * n * P);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < n; ++j) s[d * n + j] = value(rank, d, j);
  MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
  for (int src = 0; src < P; ++src)
    for (int j = 0; j < n; ++j) bad += r[src * n + j] != value(src, rank, j);
  const int a2a_alltoall = ran("A2A_ALLTOALL");

  /* alltoallv: rank s sends (s + d) % 4 ints to d, blocks in reverse order. */
  int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P), *rc = malloc(sizeof(int) * P),
      *rd = malloc(sizeof(int) * P);
  int so = 0, ro = 0;
  for (int i = P - 1; i >= 0; --i) {
    sc[i] = (rank + i) % 4;
    sd[i] = so;
    so += sc[i];
    rc[i] = (i + rank) % 4;
    rd[i] = ro;
    ro += rc[i];
  }
  int* sv = malloc(sizeof(int) * (so + 1));
  int* rv = malloc(sizeof(int) * (ro + 1));
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) sv[sd[d] + j] = value(rank, d, j);
  MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD);
  for (int src = 0; src < P; ++src)
    for (int j = 0; j < rc[src]; ++j) bad += rv[rd[src] + j] != value(src, rank, j);
  const int a2a_alltoallv = ran("A2A_ALLTOALLV");

  int expect_a2a = getenv("CLIENT_EXPECT_A2A") != NULL;
  if (expect_a2a && (!a2a_alltoall || !a2a_alltoallv)) bad += 1000000;
  bad += fresh_communicators(rank, P, expect_a2a);
  bad += alternating_communicators(rank, P, expect_a2a);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("client: P=%d alltoall via %s, alltoallv via %s: %s\n", P, a2a_alltoall ? "a2a" : "MPI",
           a2a_alltoallv ? "a2a" : "MPI", bad ? "WRONG" : "ok");
  free(s), free(r), free(sc), free(sd), free(rc), free(rd), free(sv), free(rv);
  MPI_Finalize();
  return bad != 0;
}
