/* Issue 59's program for the shim's nonblocking and persistent calls, with
 * data encoding (source, destination, index, round) and alltoallv's blocks
 * at gapped, reversed displacements:
 *  1. blocked ranks: rank 0 sits in MPI_Recv, MPI_Probe or MPI_Barrier on
 *     another communicator while its MPI_Ialltoall(v) is pending, and the
 *     others reach that call only after their MPI_Wait on the all-to-all
 *     returned (completes only where rank 0's part advances meanwhile);
 *  2. three operations in flight with point-to-point requests, completed by
 *     one MPI_Waitall (in reverse order), by MPI_Waitany, by MPI_Testsome;
 *  3. persistent MPI_Alltoall(v)_init (Open MPI: MPIX_, its pcollreq
 *     extension) started 100 times, the send buffer changed between starts,
 *     completed by MPI_Wait and by MPI_Test loops, once by MPI_Startall, then
 *     MPI_Request_free of the inactive requests.
 * CLIENT_THREAD_MULTIPLE=1: MPI_Init_thread at MPI_THREAD_MULTIPLE. */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define ALLTOALL_INIT MPI_Alltoall_init
#define ALLTOALLV_INIT MPI_Alltoallv_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define ALLTOALL_INIT MPIX_Alltoall_init
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#endif

enum { N = 3 };  /* elements per block */
static int rank, P;
static long long wrong = 0;

static int value(int src, int dst, int j, int round) { return ((round * 64 + src) * 64 + dst) * 16 + j; }

/* One all-to-all's buffers: alltoall's blocks in rank order, alltoallv's at
 * displacements reversed with a gap of 2 elements between blocks. */
typedef struct {
  int v;
  int *s, *r, *c, *d;
  int len;
} Buffers;

static void make(Buffers* b, int v) {
  b->v = v;
  b->len = (N + 2) * P;
  b->s = malloc(sizeof(int) * b->len);
  b->r = malloc(sizeof(int) * b->len);
  b->c = malloc(sizeof(int) * P);
  b->d = malloc(sizeof(int) * P);
  for (int i = 0; i < P; ++i) {
    b->c[i] = N;
    b->d[i] = v ? (N + 2) * (P - 1 - i) + 1 : N * i;
  }
}
static void fill(Buffers* b, int round) {
  for (int i = 0; i < b->len; ++i) b->s[i] = -2, b->r[i] = -1;
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < N; ++j) b->s[b->d[i] + j] = value(rank, i, j, round);
}
static void check(const Buffers* b, int round) {
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < N; ++j) wrong += b->r[b->d[i] + j] != value(i, rank, j, round);
  if (b->v) /* the gaps untouched */
    for (int i = 0; i < P; ++i) wrong += b->r[(N + 2) * (P - 1 - i)] != -1;
}
static int start(Buffers* b, MPI_Request* req) {
  return b->v ? MPI_Ialltoallv(b->s, b->c, b->d, MPI_INT, b->r, b->c, b->d, MPI_INT, MPI_COMM_WORLD, req)
              : MPI_Ialltoall(b->s, N, MPI_INT, b->r, N, MPI_INT, MPI_COMM_WORLD, req);
}

/* 1: rank 0 blocked in `how` on `other` while its all-to-all is pending. */
static void blocked(Buffers* b, const char* how, MPI_Comm other, int round) {
  fill(b, round);
  MPI_Request req;
  start(b, &req);
  int token = 0;
  if (rank == 0) {
    if (!strcmp(how, "recv") && P > 1) MPI_Recv(&token, 1, MPI_INT, 1, 7, other, MPI_STATUS_IGNORE);
    if (!strcmp(how, "probe") && P > 1) {
      MPI_Probe(1, 7, other, MPI_STATUS_IGNORE);
      MPI_Recv(&token, 1, MPI_INT, 1, 7, other, MPI_STATUS_IGNORE);
    }
    if (!strcmp(how, "barrier")) MPI_Barrier(other);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == 1 && strcmp(how, "barrier")) MPI_Send(&token, 1, MPI_INT, 0, 7, other);
    if (!strcmp(how, "barrier")) MPI_Barrier(other);
  }
  check(b, round);
}

/* 2: a, b and c in flight with a ring exchange's two requests. */
static void in_flight(Buffers* x[3], const char* how, int round) {
  MPI_Request req[5];
  int ring_in = -1, ring_out = value(rank, (rank + 1) % P, 0, round);
  for (int k = 0; k < 3; ++k) fill(x[k], round + k);
  MPI_Irecv(&ring_in, 1, MPI_INT, (rank + P - 1) % P, 9, MPI_COMM_WORLD, &req[0]);
  for (int k = 0; k < 3; ++k) start(x[k], &req[1 + k]);
  MPI_Isend(&ring_out, 1, MPI_INT, (rank + 1) % P, 9, MPI_COMM_WORLD, &req[4]);
  if (!strcmp(how, "waitall")) {
    MPI_Request rev[5];
    for (int k = 0; k < 5; ++k) rev[k] = req[4 - k];
    MPI_Waitall(5, rev, MPI_STATUSES_IGNORE);
  } else if (!strcmp(how, "waitany")) {
    for (int left = 5; left > 0; --left) {
      int idx;
      MPI_Waitany(5, req, &idx, MPI_STATUS_IGNORE);
      wrong += idx == MPI_UNDEFINED;
    }
  } else { /* testsome */
    for (int left = 5; left > 0;) {
      int outcount, idx[5];
      MPI_Testsome(5, req, &outcount, idx, MPI_STATUSES_IGNORE);
      if (outcount != MPI_UNDEFINED) left -= outcount;
    }
  }
  for (int k = 0; k < 3; ++k) check(x[k], round + k);
  wrong += ring_in != value((rank + P - 1) % P, rank, 0, round);
}

int main(int argc, char** argv) {
  const char* multiple = getenv("CLIENT_THREAD_MULTIPLE");
  if (multiple && !strcmp(multiple, "1")) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm other;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  Buffers a, v, a2;
  make(&a, 0);
  make(&v, 1);
  make(&a2, 0);
  int round = 0;
  const char* hows[] = {"recv", "probe", "barrier"};
  for (int h = 0; h < 3; ++h) {
    blocked(&a, hows[h], other, ++round);
    blocked(&v, hows[h], other, ++round);
  }
  Buffers* three[3] = {&a, &v, &a2};
  const char* completions[] = {"waitall", "waitany", "testsome"};
  for (int h = 0; h < 3; ++h) in_flight(three, completions[h], round += 3);
#ifdef ALLTOALL_INIT
  MPI_Request pa, pv;
  ALLTOALL_INIT(a.s, N, MPI_INT, a.r, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &pa);
  ALLTOALLV_INIT(v.s, v.c, v.d, MPI_INT, v.r, v.c, v.d, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &pv);
  for (int i = 0; i < 100; ++i) {
    ++round;
    fill(&a, round);
    fill(&v, round + 1);
    MPI_Start(&pa);
    MPI_Start(&pv);
    if (i % 2) {
      MPI_Wait(&pv, MPI_STATUS_IGNORE);
      MPI_Wait(&pa, MPI_STATUS_IGNORE);
    } else {
      for (int done = 0; !done;) MPI_Test(&pa, &done, MPI_STATUS_IGNORE);
      for (int done = 0; !done;) MPI_Test(&pv, &done, MPI_STATUS_IGNORE);
    }
    check(&a, round);
    check(&v, round + 1);
  }
  MPI_Request both[2] = {pa, pv};
  fill(&a, ++round);
  fill(&v, round + 1);
  MPI_Startall(2, both);
  MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
  check(&a, round);
  check(&v, round + 1);
  MPI_Request_free(&both[0]);
  MPI_Request_free(&both[1]);
  wrong += both[0] != MPI_REQUEST_NULL || both[1] != MPI_REQUEST_NULL;
#endif
  MPI_Comm_free(&other);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nonblocking shim: %s (%lld wrong)\n", wrong ? "WRONG" : "ok", wrong);
  MPI_Finalize();
  return wrong != 0;
}
