/* a2a: configurable all-to-all collectives for MPI.
 *
 * Every call is MPI-shaped and returns MPI_SUCCESS or an MPI error class:
 * each rank's own argument errors, as MPI libraries check them, or with
 * a2a::set_error_check (A2A_ERROR_CHECK=agree) the same class on every rank
 * of the communicator.  `algorithm` is a spec string
 * "name[:key=value[,key=value...]]" (see `a2a list`); NULL means the
 * environment variable A2A_ALLTOALL (A2A_ALLTOALLV for the v-variant), else
 * "auto". */
#ifndef A2A_A2A_H
#define A2A_A2A_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct A2A_Stats {
  char      algorithm[128]; /* the resolved spec that ran, e.g. "tra:radix=4" */
  long long rounds;         /* communication rounds in which this rank sent data (K) */
  long long messages;       /* point-to-point data messages this rank sent */
  long long blocks_sent;    /* data blocks this rank sent, forwarded ones included (D); self block excluded */
  long long bytes_sent;     /* payload bytes this rank sent, metadata excluded */
  long long meta_bytes_sent;/* metadata bytes sent (two-phase style algorithms) */
  long long temp_bytes;     /* peak scratch bytes this call used */
  long long inter_node_messages; /* data messages this rank sent to other nodes */
  long long inter_node_bytes;    /* payload bytes this rank sent to other nodes */
  long long waits;          /* times this rank waited for a batch of its messages in flight together
                               (K where rounds go one at a time; the k-port form waits once per batch) */
} A2A_Stats;                /* counts the MPI library hides (native) are -1 */

int A2A_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, const char *algorithm);

int A2A_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm, const char *algorithm);

/* Persistent calls, in the shape of MPI-4's persistent collectives: init
 * checks the arguments, agrees on them across ranks (whatever the error
 * mode) and resolves the algorithm once (collective); each A2A_Start then
 * runs the exchange on the buffers' current contents without any of that
 * (blocking, collective).  The buffers and count/displacement arrays must
 * stay valid and unchanged in shape until A2A_Plan_free, and the
 * communicator alive. */
typedef struct A2A_Plan_s *A2A_Plan;
int A2A_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      MPI_Comm comm, const char *algorithm, A2A_Plan *plan);
int A2A_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, const char *algorithm, A2A_Plan *plan);
int A2A_Start(A2A_Plan plan);
int A2A_Plan_free(A2A_Plan *plan);

/* Nonblocking calls, as MPI-3's MPI_Ialltoall(v): the same arguments and
 * choice as the blocking calls, argument errors reported by the start (as
 * the blocking call reports them), communication errors at completion.
 * Several may be in flight on one communicator (started in the same order
 * on every rank, completed in any order).  Progress is weak: every pending
 * operation of the process advances inside any a2a call (A2A_Test loops
 * included).  A2A_Istart starts a plan without blocking (A2A_Start
 * blocks); a plan has at most one start in flight.  Completion sets the
 * request to A2A_REQUEST_NULL; A2A_Last_stats then reports that operation.
 * MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are accepted. */
typedef struct A2A_Request_s *A2A_Request;
#define A2A_REQUEST_NULL ((A2A_Request)0)
int A2A_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, const char *algorithm, A2A_Request *request);
int A2A_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, const char *algorithm, A2A_Request *request);
int A2A_Istart(A2A_Plan plan, A2A_Request *request);
int A2A_Wait(A2A_Request *request, MPI_Status *status);
int A2A_Test(A2A_Request *request, int *flag, MPI_Status *status);
int A2A_Waitall(int count, A2A_Request requests[], MPI_Status statuses[]);
int A2A_Testall(int count, A2A_Request requests[], int *flag, MPI_Status statuses[]);

/* Collective over comm: learns its layout and the machine's costs that auto
 * prices its candidates with (a few milliseconds, on a duplicate of comm
 * freed at once; once per job for communicators of MPI_COMM_WORLD's ranks),
 * makes shm's segment where all its ranks share a node (kept for every
 * communicator over the same ranks), prices auto's alltoallv candidates
 * and its alltoall classes (for up to a millisecond) and warms the call path (nothing moves on comm, nothing is decided; once
 * per process one byte goes from this rank to itself over MPI_COMM_SELF),
 * so that the first all-to-all on it does not pay a2a's one-time set-up.  The last call's
 * stats and error message stay.  Optional; the PMPI shim calls it on
 * MPI_COMM_WORLD inside MPI_Init and MPI_Init_thread. */
int A2A_Comm_prepare(MPI_Comm comm);

/* This rank's statistics of the calling thread's last A2A_Alltoall /
 * A2A_Alltoallv call (or A2A_Start).  Under MPI_THREAD_MULTIPLE, threads may
 * run calls at once on distinct communicators. */
int A2A_Last_stats(A2A_Stats *stats);

/* Who chose the algorithm of this rank's last call when it was "auto":
 * "tuning" (an A2A_TUNING_FILE entry), "model" (the cost model, with nothing
 * else worth trying), "measured" (the fastest of the model's candidates,
 * timed on the application's own calls), "trial" (a call of that trial:
 * one of the candidates ran), or "first-call" (auto's first call on a
 * communicator runs the MPI library's own, undecided); "" when the call
 * named its algorithm.  A static string.  (Kept out of A2A_Stats so that
 * the struct's size stays as programs were compiled with.) */
const char *A2A_Last_decided_by(void);

#ifdef __cplusplus
}
#endif

#endif /* A2A_A2A_H */
