#include "select/measure.hpp"

#include <sched.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace a2a::detail {
namespace {

constexpr int kTag = 77;

// Where ranks outnumber cores every wait may cost a scheduling slice: the
// loops run fewer times (the same on every rank: the flag is agreed), so
// the measurement stays within milliseconds.
thread_local bool light = false;
int times(int full, int when_light) { return light ? when_light : full; }

double median(std::vector<double> t) {
  std::nth_element(t.begin(), t.begin() + static_cast<long>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

// Median of half round trips of `bytes` between rank 0 and `peer`.
double half_round_trip(MPI_Comm comm, int rank, int peer, std::vector<char>& buf, int bytes, int reps) {
  std::vector<double> t;
  for (int it = -2; it < reps; ++it) {
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_BYTE, peer, kTag, comm);
      MPI_Recv(buf.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, kTag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_BYTE, 0, kTag, comm);
    }
    if (it >= 0) t.push_back((MPI_Wtime() - t0) / 2);
  }
  return median(t);
}

// Extra time per message when `burst` small ones are posted together,
// beyond one round trip (median of a few bursts).
double burst_overhead(MPI_Comm comm, int rank, int peer, std::vector<char>& buf, double rtt) {
  constexpr int burst = 16;
  const int reps = times(3, 1);
  std::vector<MPI_Request> req(burst);
  std::vector<double> t;
  for (int it = -1; it < reps; ++it) {
    const double t0 = MPI_Wtime();
    for (int k = 0; k < burst; ++k)
      if (rank == 0) MPI_Isend(buf.data() + 8 * k, 8, MPI_BYTE, peer, kTag, comm, &req[k]);
      else MPI_Irecv(buf.data() + 8 * k, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
    MPI_Waitall(burst, req.data(), MPI_STATUSES_IGNORE);
    if (rank == 0) MPI_Recv(buf.data(), 1, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    else MPI_Send(buf.data(), 1, MPI_BYTE, 0, kTag, comm);
    if (it >= 0) t.push_back(MPI_Wtime() - t0);
  }
  return std::max(0.0, (median(t) - rtt) / (burst - 1));
}

// Extra time per message when a burst is sent with persistent requests
// made, started and freed for it (Open MPI's basic linear algorithms do
// this on every call) instead of plain ones (median of a few bursts).
double persistent_overhead(MPI_Comm comm, int rank, int peer, std::vector<char>& buf) {
  constexpr int burst = 16;
  const int reps = times(3, 1);
  std::vector<MPI_Request> req(burst);
  std::vector<double> gain;
  for (int it = -1; it < reps; ++it) {
    double t[2];
    for (int persistent = 0; persistent < 2; ++persistent) {
      char sync = 0;  // the pair starts together
      MPI_Sendrecv_replace(&sync, 1, MPI_BYTE, rank == 0 ? peer : 0, kTag, rank == 0 ? peer : 0, kTag, comm,
                           MPI_STATUS_IGNORE);
      const double t0 = MPI_Wtime();
      for (int k = 0; k < burst; ++k) {
        char* p = buf.data() + 8 * k;
        if (persistent)
          rank == 0 ? MPI_Send_init(p, 8, MPI_BYTE, peer, kTag, comm, &req[k])
                    : MPI_Recv_init(p, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
        else
          rank == 0 ? MPI_Isend(p, 8, MPI_BYTE, peer, kTag, comm, &req[k])
                    : MPI_Irecv(p, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
      }
      if (persistent) MPI_Startall(burst, req.data());
      MPI_Waitall(burst, req.data(), MPI_STATUSES_IGNORE);
      if (persistent)
        for (auto& r : req) MPI_Request_free(&r);
      t[persistent] = MPI_Wtime() - t0;
    }
    if (it >= 0) gain.push_back((t[1] - t[0]) / burst);
  }
  return std::max(0.0, median(gain));
}

#ifndef A2A_SMPI
using Word = long long;
Word load(const char* at) { return __atomic_load_n(reinterpret_cast<const Word*>(at), __ATOMIC_ACQUIRE); }
void store(char* at, Word v) { __atomic_store_n(reinterpret_cast<Word*>(at), v, __ATOMIC_RELEASE); }
// Spins before a wait yields the core: few where ranks outnumber cores.
thread_local int spins = 4000;
void wait_for(const char* at, Word v) {
  for (int i = 0; load(at) < v; ++i)
    if (i >= spins) sched_yield();
}

// The words of a part of the measuring window.
constexpr size_t kPing = 0, kPong = 8, kRound = 16, kPid = 24, kSource = 32, kNext = 40, kHeader = 64;

// Half round trips of a flag between node ranks 0 and 1 (median of batches:
// one descheduled moment spoils a batch, not the measure).
double flag_ping_pong(int me, char* mine, const char* theirs) {
  const int kBatches = times(7, 3), kTrips = times(50, 10);
  std::vector<double> batch;
  Word i = 0;
  for (int b = -1; b < kBatches; ++b) {  // batch -1 warms up
    const double t0 = MPI_Wtime();
    for (int k = 0; k < kTrips; ++k) {
      ++i;
      if (me == 0) store(mine + kPing, i);
      wait_for(theirs + kPing, i);
      if (me != 0) store(mine + kPing, i);
    }
    if (b >= 0) batch.push_back((MPI_Wtime() - t0) / (2.0 * kTrips));
  }
  return median(batch);
}

// One round in which every node rank raises its word and waits for all the
// others' (shm's wait, with every rank taking part).
double flag_rounds(const std::vector<char*>& part, int me) {
  // Where ranks are time-sliced this is what every round costs: measured in
  // full there too.
  const int kBatches = 5, kRounds = times(16, 8);
  std::vector<double> batch;
  Word i = 0;
  for (int b = -1; b < kBatches; ++b) {
    const double t0 = MPI_Wtime();
    for (int k = 0; k < kRounds; ++k) {
      store(part[static_cast<size_t>(me)] + kRound, ++i);
      for (const char* p : part) wait_for(p + kRound, i);
    }
    if (b >= 0) batch.push_back((MPI_Wtime() - t0) / kRounds);
  }
  return median(batch);
}
#endif

}  // namespace

void measure_link(MPI_Comm comm, int rank, int peer, bool open_mpi, bool oversubscribed, LinkCost& link,
                  double& overhead, double& persistent) {
  light = oversubscribed;
  constexpr int last = kLinkSizes - 1;
  std::vector<char> buf(static_cast<size_t>(kLinkBytes[last]));
  link.alpha = half_round_trip(comm, rank, peer, buf, 8, times(10, 3));
  for (int i = 0; i < kLinkSizes; ++i)
    link.at[i] =
        std::max(link.alpha, half_round_trip(comm, rank, peer, buf, static_cast<int>(kLinkBytes[i]), times(3, 1)));
  const double span = static_cast<double>(kLinkBytes[last] - kLinkBytes[last - 1]);
  link.beta = std::max(0.0, link.at[last] - link.at[last - 1]) / span;
  if (link.beta == 0) link.beta = std::max(0.0, link.at[last] - link.alpha) / static_cast<double>(kLinkBytes[last]);
  overhead = burst_overhead(comm, rank, peer, buf, 2 * link.alpha);
  persistent = open_mpi ? persistent_overhead(comm, rank, peer, buf) : 0;  // only Open MPI's are costed
}

double measure_copy() {
  constexpr size_t bytes = 1 << 16;
  std::vector<char> a(bytes, 1), b(bytes);
  std::vector<double> t;
  for (int it = -1; it < 3; ++it) {
    const double t0 = MPI_Wtime();
    std::memcpy(b.data(), a.data(), bytes);
    volatile char sink = b[(bytes / 2 + static_cast<size_t>(it)) % bytes];  // keeps the copy
    (void)sink;
    if (it >= 0) t.push_back(MPI_Wtime() - t0);
  }
  return median(t) / bytes;
}

double measure_round(MPI_Comm comm, bool oversubscribed) {
  light = oversubscribed;
  int rank = 0, P = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (P < 2) return 0;
  const int kBatches = 5, kRounds = 8;  // the round's cost where ranks are time-sliced: in full there too
  std::vector<double> batch;
  char out[8] = {}, in[8];
  for (int b = -1; b < kBatches; ++b) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < kRounds; ++k)
      MPI_Sendrecv(out, 8, MPI_BYTE, (rank + 1) % P, kTag, in, 8, MPI_BYTE, (rank + P - 1) % P, kTag, comm,
                   MPI_STATUS_IGNORE);
    double t = (MPI_Wtime() - t0) / kRounds;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (b >= 0) batch.push_back(t);
  }
  return median(batch);
}

NodeCosts measure_node(MPI_Comm comm, bool oversubscribed) {
  NodeCosts c;
#ifdef A2A_SMPI
  (void)comm, (void)oversubscribed;
  return c;
#else
  spins = oversubscribed ? 16 : 4000;  // as shm waits
  light = oversubscribed;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return c;
  int Q = 1, me = 0, first = rank;
  MPI_Comm_size(node, &Q);
  MPI_Comm_rank(node, &me);
  MPI_Bcast(&first, 1, MPI_INT, 0, node);  // rank 0's node measures; the others leave
  const size_t largest = static_cast<size_t>(kShmCopyBytes[kShmCopySizes - 1]);
  MPI_Win win = MPI_WIN_NULL;
  char* mine = nullptr;
  if (first == 0 && Q >= 2 &&
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + (me == 0 ? largest : 0)), 1, MPI_INFO_NULL, node,
                              &mine, &win) == MPI_SUCCESS) {
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    std::vector<char*> part(static_cast<size_t>(Q));
    for (int q = 0; q < Q; ++q) {
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(win, q, &size, &unit, &part[static_cast<size_t>(q)]);
    }
    std::vector<char> source(me == 0 ? largest : 0, 1), sink(me == 1 ? largest : 0);
    for (size_t w : {kPing, kPong, kRound, kNext}) store(mine + w, 0);
    store(mine + kPid, static_cast<Word>(getpid()));
    store(mine + kSource, static_cast<Word>(reinterpret_cast<uintptr_t>(source.data())));
    MPI_Win_sync(win);
    MPI_Barrier(node);
    const char* zero = part[0];
    if (me < 2) c.flag = flag_ping_pong(me, mine, part[me == 0 ? 1 : 0]);
    MPI_Barrier(node);
    c.flag_round = flag_rounds(part, me);
    // shm's copies: rank 0 writes a block into its part, rank 1 copies it out
    // (the time of the two copies and two flags, less the flags), then rank 1
    // reads the block from rank 0's memory with CMA; the two alternate, so
    // a change in the machine's pace falls on both.
    double cma[kShmCopySizes] = {};
    const auto pid = me == 1 ? static_cast<pid_t>(load(zero + kPid)) : 0;
    const auto from = me == 1 ? static_cast<uintptr_t>(load(zero + kSource)) : 0;
    bool cma_ok = true;
    Word trip = 0;
    for (int s = 0; s < kShmCopySizes && me < 2; ++s) {
      const size_t n = static_cast<size_t>(kShmCopyBytes[s]);
      std::vector<double> seg, read;
      for (int it = -1; it < times(3, 2); ++it) {
        if (me == 0) wait_for(part[1] + kNext, trip);  // rank 1's read of the last trip is over
        const double t0 = MPI_Wtime();
        ++trip;
        if (me == 0) {
          std::memcpy(mine + kHeader, source.data(), n);
          store(mine + kPing, trip);
          wait_for(part[1] + kPong, trip);
        } else {
          wait_for(zero + kPing, trip);
          std::memcpy(sink.data(), zero + kHeader, n);
          store(mine + kPong, trip);
        }
        if (it >= 0) {  // less the two flags, where they are not most of it (time-sliced waits)
          const double t = MPI_Wtime() - t0;
          seg.push_back(std::max(t - 2 * c.flag, t / 4));
        }
        if (me == 1 && cma_ok) {  // rank 0 is past its wait: its source stays until the barrier below
          iovec local{sink.data(), n}, remote{reinterpret_cast<void*>(from), n};
          const double t1 = MPI_Wtime();
          cma_ok = process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
          if (it >= 0) read.push_back(MPI_Wtime() - t1);
        }
        if (me == 1) store(mine + kNext, trip);
      }
      c.seg[s] = median(seg);
      if (me == 1 && cma_ok) cma[s] = median(read);
    }
    if (!cma_ok) std::fill(cma, cma + kShmCopySizes, 0.0);  // 0: not allowed
    MPI_Barrier(node);  // rank 0's source stays until the reads are done
    if (me == 1) MPI_Send(cma, kShmCopySizes, MPI_DOUBLE, 0, kTag, node);
    if (me == 0) MPI_Recv(c.cma, kShmCopySizes, MPI_DOUBLE, 1, kTag, node, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
  MPI_Comm_free(&node);
  return c;
#endif
}

void wait_quietly(MPI_Comm comm) {
#ifdef A2A_SMPI
  MPI_Barrier(comm);  // simulated ranks have a core each
#else
  MPI_Request r = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(comm, &r) != MPI_SUCCESS) return;
  // Naps from 10 us doubling to 1 ms: a short wait ends soon after its
  // peers arrive, and a long one leaves its core idle long enough for the
  // kernel to move a measuring rank there (constant short naps kept two
  // measuring ranks on one core, each message costing a time slice).
  timespec nap{0, 10000};
  for (int done = 0; MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;) {
    nanosleep(&nap, nullptr);
    nap.tv_nsec = std::min(2 * nap.tv_nsec, 1000000L);
  }
#endif
}

}  // namespace a2a::detail
