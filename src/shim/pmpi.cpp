// The PMPI drop-in library, liba2a_pmpi.so: C and Fortran applications run
// unchanged with
//   mpirun -x LD_PRELOAD=/path/liba2a_pmpi.so -x A2A_ALLTOALL=tra ./app
// (or linked before the MPI library).  MPI_Alltoall and MPI_Alltoallv run
// the algorithm of A2A_ALLTOALL / A2A_ALLTOALLV (default auto) with MPI's
// own error semantics: argument checks stay local (a2a's default), and an
// error goes to the communicator's error handler.
// A2A_VERBOSE=1 prints what it served per communicator at MPI_Finalize.  What
// a2a does not serve, intercommunicators, goes to the MPI library's PMPI
// call.  The library's own collectives are reached through PMPI, so "native"
// never recurses into the shim.
#include <mpi.h>

#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "a2a/interpose.hpp"
#include "first_call.hpp"

namespace {

// A2A_VERBOSE=1: per communicator, what the shim served, printed at
// MPI_Finalize by world rank 0 (its own view of each communicator); what
// auto ran carries who decided, e.g. "spread-out[tuning]" or "tra:radix=2[model]".
struct Served {
  long long calls = 0, bytes = 0;
  double seconds = 0;
  std::map<std::string, long long> algorithms;
};
std::mutex served_lock;
std::map<MPI_Comm, Served>& served() {
  static std::map<MPI_Comm, Served> s;
  return s;
}
bool verbose() { return a2a::interpose::verbose(); }

template <class F>
int served_call(MPI_Comm comm, F&& call) {
  if (!verbose()) return call();
  const double t0 = PMPI_Wtime();
  const int rc = call();
  const double dt = PMPI_Wtime() - t0;
  if (rc == MPI_ERR_COMM) return rc;  // not served: an intercommunicator, or no communicator
  A2A_Stats st;
  A2A_Last_stats(&st);
  std::lock_guard<std::mutex> guard(served_lock);
  Served& s = served()[comm];
  ++s.calls;
  s.bytes += st.bytes_sent > 0 ? st.bytes_sent : 0;
  s.seconds += dt;
  const std::string by = A2A_Last_decided_by();
  ++s.algorithms[by.empty() ? std::string(st.algorithm) : std::string(st.algorithm) + "[" + by + "]"];
  return rc;
}

bool inter(MPI_Comm comm) {
  int flag = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &flag) == MPI_SUCCESS && flag;
}

int report(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS && comm != MPI_COMM_NULL) MPI_Comm_call_errhandler(comm, rc);
  return rc;
}

// A communicator's first call under auto goes to the library untouched
// (a2a would run native on it anyway, after its set-up: 5-10 us on cold
// code); its errors are the library's, as without the shim.  The
// communicators of this thread's last few calls have been met: a few
// compares spare the common call the asking, also where a program
// alternates communicators (FFTW's forward and backward plans).  A freed
// communicator's handle may come back for a new one: the ring starts over
// once a2a saw one freed.
// initial-exec: the ring is read from the thread pointer, no call to the
// loader (a preloaded or linked shim has static TLS; 88 bytes).
constexpr int kMetRing = 8;
struct MetRing {
  MPI_Comm comms[kMetRing];
  int next;
  unsigned long long freed;
};
thread_local MetRing met_ring __attribute__((tls_model("initial-exec")));
bool met(MPI_Comm comm) {
  MetRing& r = met_ring;
  if (const unsigned long long freed = a2a::interpose::forgotten(); freed != r.freed) {
    for (MPI_Comm& c : r.comms) c = MPI_COMM_NULL;
    r.freed = freed;
  }
  for (MPI_Comm c : r.comms)
    if (c == comm) return true;
  r.comms[r.next] = comm;
  r.next = (r.next + 1) % kMetRing;
  return false;
}

}  // namespace

// a2a refuses intercommunicators with MPI_ERR_COMM before any
// communication; only then is the communicator asked, so the common call
// pays nothing for the check.
extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  if (!met(comm) && a2a::shim::first_alltoall_to_library(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    return served_call(comm, [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
  const int rc = served_call(comm, [&] {
    return A2A_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
  if (rc == MPI_ERR_COMM && inter(comm))
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return report(comm, rc);
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  if (!met(comm) && a2a::shim::first_alltoallv_to_library(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                              recvtype, comm))
    return served_call(comm, [&] {
      return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    });
  const int rc = served_call(comm, [&] {
    return A2A_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                         nullptr);
  });
  if (rc == MPI_ERR_COMM && inter(comm))
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return report(comm, rc);
}

// A communicator whose first call went to the library carries no a2a
// attribute: a2a forgets it here, before its handle can name another.
extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (comm) a2a::interpose::forget(*comm);
  return PMPI_Comm_free(comm);
}

extern "C" int MPI_Comm_disconnect(MPI_Comm* comm) {
  if (comm) a2a::interpose::forget(*comm);
  return PMPI_Comm_disconnect(comm);
}

namespace {
void prepare_world() {
  A2A_Comm_prepare(MPI_COMM_WORLD);  // an error here resurfaces at the first call
  a2a::shim::warm_first_call();
}
}  // namespace

// a2a's one-time set-up (world's layout, cold code, lazy symbol binding)
// happens here, not inside the application's first all-to-all; the MPI
// library's own all-to-all is not run, so it stays as cold as without the shim.
extern "C" int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) prepare_world();
  return rc;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) prepare_world();
  return rc;
}

extern "C" int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {  // a refused tuning file is worth a line even when not verbose
    const std::string tuning = a2a::tuning_status();
    if (verbose() || tuning.find(" ignored: ") != std::string::npos)
      std::fprintf(stderr, "a2a shim: %s\n", tuning.c_str());
  }
  if (verbose() && rank == 0) {
    std::lock_guard<std::mutex> guard(served_lock);
    for (const auto& [comm, s] : served()) {
      // One write per line: stderr is unbuffered, and the launcher forwards
      // every write as it comes, so pieces would interleave with the
      // application's own output.
      char head[160];
      std::snprintf(head, sizeof head, "a2a shim: communicator %s: %lld calls, %lld bytes sent by rank 0, %.6f s;",
                    comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "(derived)", s.calls, s.bytes, s.seconds);
      std::string line = head;
      for (const auto& [alg, n] : s.algorithms) line += " " + alg + " x" + std::to_string(n);
      line += '\n';
      std::fputs(line.c_str(), stderr);
    }
  }
  return PMPI_Finalize();
}

// Fortran: the MPI library's Fortran bindings call PMPI_ directly, so the
// shim provides them too (mpif.h / `use mpi` under every name mangling, and
// `use mpi_f08`, whose Open MPI entry points take the same arguments).  The
// Fortran MPI_IN_PLACE and MPI_BOTTOM are addresses of the MPI library's
// own sentinels, looked up once by name (Open MPI and MPICH).

namespace {

const void* fortran_sentinel(const char* const* names) {
  for (const char* const* n = names; *n; ++n)
    if (const void* p = dlsym(RTLD_DEFAULT, *n)) return p;
  return nullptr;
}

// MPICH keeps the addresses of its Fortran sentinels (inside a common block,
// known once MPI_Init has run) in pointer variables; its mpi_f08 passes the
// address of MPIR_F08_MPI_IN_PLACE itself.
const void* pointed_to(const char* name) {
  const void* var = dlsym(RTLD_DEFAULT, name);
  return var ? *static_cast<void* const*>(var) : nullptr;
}

const void* fortran_buffer(const void* buf) {
  static const char* const in_place_names[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE",
                                               "mpi_fortran_in_place__", "mpifcmb5_", "MPIFCMB5", nullptr};
  static const char* const bottom_names[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM",
                                             "mpi_fortran_bottom__", "mpifcmb4_", "MPIFCMB4", nullptr};
  static const char* const f08_in_place[] = {"MPIR_F08_MPI_IN_PLACE", nullptr};
  static const void* const in_place = fortran_sentinel(in_place_names);
  static const void* const bottom = fortran_sentinel(bottom_names);
  static const void* const mpich_in_place = pointed_to("MPIR_F_MPI_IN_PLACE");
  static const void* const mpich_bottom = pointed_to("MPIR_F_MPI_BOTTOM");
  static const void* const mpich_f08_in_place = fortran_sentinel(f08_in_place);
  if (!buf) return buf;
  if (buf == in_place || buf == mpich_in_place || buf == mpich_f08_in_place) return MPI_IN_PLACE;
  if (buf == bottom || buf == mpich_bottom) return MPI_BOTTOM;
  return buf;
}

void fortran_alltoall(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc,
                      const MPI_Fint* rt, const MPI_Fint* comm, MPI_Fint* ierr) {
  const int rc_ = MPI_Alltoall(fortran_buffer(sb), *sc, MPI_Type_f2c(*st), const_cast<void*>(fortran_buffer(rb)), *rc,
                               MPI_Type_f2c(*rt), MPI_Comm_f2c(*comm));
  if (ierr) *ierr = rc_;
}

void fortran_alltoallv(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,
                       const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,
                       MPI_Fint* ierr) {
  static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER counts are read as C int");
  const int rc_ = MPI_Alltoallv(fortran_buffer(sb), reinterpret_cast<const int*>(sc), reinterpret_cast<const int*>(sd),
                                MPI_Type_f2c(*st), const_cast<void*>(fortran_buffer(rb)),
                                reinterpret_cast<const int*>(rc), reinterpret_cast<const int*>(rd), MPI_Type_f2c(*rt),
                                MPI_Comm_f2c(*comm));
  if (ierr) *ierr = rc_;
}

}  // namespace

#define A2A_FORTRAN_ALLTOALL(name)                                                                        \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc, \
                       const MPI_Fint* rt, const MPI_Fint* comm, MPI_Fint* ierr) {                          \
    fortran_alltoall(sb, sc, st, rb, rc, rt, comm, ierr);                                                   \
  }
#define A2A_FORTRAN_ALLTOALLV(name)                                                                          \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,   \
                       const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,       \
                       MPI_Fint* ierr) {                                                                       \
    fortran_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);                                             \
  }

A2A_FORTRAN_ALLTOALL(mpi_alltoall)
A2A_FORTRAN_ALLTOALL(mpi_alltoall_)
A2A_FORTRAN_ALLTOALL(mpi_alltoall__)
A2A_FORTRAN_ALLTOALL(MPI_ALLTOALL)
A2A_FORTRAN_ALLTOALL(mpi_alltoall_f08)
A2A_FORTRAN_ALLTOALL(mpi_alltoall_f08_)
A2A_FORTRAN_ALLTOALLV(mpi_alltoallv)
A2A_FORTRAN_ALLTOALLV(mpi_alltoallv_)
A2A_FORTRAN_ALLTOALLV(mpi_alltoallv__)
A2A_FORTRAN_ALLTOALLV(MPI_ALLTOALLV)
A2A_FORTRAN_ALLTOALLV(mpi_alltoallv_f08)
A2A_FORTRAN_ALLTOALLV(mpi_alltoallv_f08_)
