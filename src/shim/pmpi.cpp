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
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "a2a/interpose.hpp"
#include "first_call.hpp"
#include "requests.hpp"
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_Alltoall(v)_init, where Open MPI has its pcollreq extension
#endif

namespace {

using a2a::shim::Kind;

// A2A_VERBOSE=1: per communicator, what the shim served, printed at
// MPI_Finalize by world rank 0 (its own view of each communicator): the
// calls a2a ran, with who decided, e.g. "spread-out[tuning]" or
// "tra:radix=2[model]", per collective and kind; the calls passed to the
// library, and why.
struct Served {
  long long calls = 0, bytes = 0;
  double seconds = 0;
  std::map<std::string, long long> algorithms;
  long long by_a2a[2][3] = {};                    // [alltoallv][Kind]
  std::map<std::string, long long> to_library;  // "alltoall nonblocking (why)"
};
std::mutex served_lock;
std::map<MPI_Comm, Served>& served() {
  static std::map<MPI_Comm, Served> s;
  return s;
}
bool verbose() { return a2a::interpose::verbose(); }
const char* const kKindName[] = {"blocking", "nonblocking", "persistent"};

// The thread's last a2a call (or completed operation), in comm's summary.
void count_last(Served& s, double seconds) {
  A2A_Stats st;
  A2A_Last_stats(&st);
  ++s.calls;
  s.bytes += st.bytes_sent > 0 ? st.bytes_sent : 0;
  s.seconds += seconds;
  const std::string by = A2A_Last_decided_by();
  ++s.algorithms[by.empty() ? std::string(st.algorithm) : std::string(st.algorithm) + "[" + by + "]"];
}

// A call the library ran, e.g. "alltoall nonblocking (no progress hook)".
std::string library_key(bool alltoallv, Kind kind, const char* why) {
  return std::string(alltoallv ? "alltoallv " : "alltoall ") + kKindName[int(kind)] + " (" + why + ")";
}

void to_library(MPI_Comm comm, bool alltoallv, Kind kind, const char* why) {
  if (!verbose()) return;
  std::lock_guard<std::mutex> guard(served_lock);
  ++served()[comm].to_library[library_key(alltoallv, kind, why)];
}

// A blocking call, by a2a (library_why null) or by the library.
template <class F>
int served_call(MPI_Comm comm, bool alltoallv, const char* library_why, F&& call) {
  if (!verbose()) return call();
  const double t0 = PMPI_Wtime();
  const int rc = call();
  const double dt = PMPI_Wtime() - t0;
  if (rc == MPI_ERR_COMM) return rc;  // not served: an intercommunicator, or no communicator
  std::lock_guard<std::mutex> guard(served_lock);
  Served& s = served()[comm];
  count_last(s, dt);
  if (library_why)
    ++s.to_library[library_key(alltoallv, Kind::blocking, library_why)];
  else
    ++s.by_a2a[alltoallv][int(Kind::blocking)];
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

// A thread's last few communicators of some kind, found with a few
// compares, also where a program alternates communicators (FFTW's forward
// and backward plans).  A freed communicator's handle may come back for a
// new one: a ring starts over once a2a saw one freed.
// initial-exec: read from the thread pointer, no call to the loader (a
// preloaded or linked shim has static TLS; 88 bytes a ring).
constexpr int kRing = 8;
struct CommRing {
  MPI_Comm comms[kRing];
  int next;
  unsigned long long freed;
  bool has(MPI_Comm comm) {
    if (const unsigned long long now = a2a::interpose::forgotten(); now != freed) {
      for (MPI_Comm& c : comms) c = MPI_COMM_NULL;
      freed = now;
    }
    for (MPI_Comm c : comms)
      if (c == comm) return true;
    return false;
  }
  void add(MPI_Comm comm) {
    comms[next] = comm;
    next = (next + 1) % kRing;
  }
};

// A communicator's first call under auto goes to the library untouched
// (a2a would run native on it anyway, after its set-up: 5-10 us on cold
// code); its errors are the library's, as without the shim.  The
// communicators of this thread's last few calls have been met.
thread_local CommRing met_ring __attribute__((tls_model("initial-exec")));
bool met(MPI_Comm comm) {
  if (met_ring.has(comm)) return true;
  met_ring.add(comm);
  return false;
}

}  // namespace

// a2a refuses intercommunicators with MPI_ERR_COMM before any
// communication; only then is the communicator asked, so the common call
// pays nothing for the check.
extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  if (!met(comm) && a2a::shim::first_alltoall_to_library(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    return served_call(comm, false, "first call under auto",
                       [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
  const int rc = served_call(comm, false, nullptr, [&] {
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
    return served_call(comm, true, "first call under auto", [&] {
      return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    });
  const int rc = served_call(comm, true, nullptr, [&] {
    return A2A_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                         nullptr);
  });
  if (rc == MPI_ERR_COMM && inter(comm))
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return report(comm, rc);
}

namespace a2a::shim {
void count_served(MPI_Comm comm, bool alltoallv, Kind kind) {
  if (!verbose()) return;
  std::lock_guard<std::mutex> guard(served_lock);
  ++served()[comm].by_a2a[alltoallv][int(kind)];
}
void count_algorithm(MPI_Comm comm) {
  std::lock_guard<std::mutex> guard(served_lock);
  count_last(served()[comm], 0);
}
}  // namespace a2a::shim

namespace {
// Why a nonblocking or persistent call goes to the library; null where a2a
// serves it: a progress hook advances a2a's operations inside the
// program's MPI calls, and the communicator is set up (its first a2a call
// is collective and blocking, which a start must not be).
// The communicators this thread found set up (a2a's own lookup follows in
// its call: the ring spares the second).
thread_local CommRing set_up_ring __attribute__((tls_model("initial-exec")));
const char* library_reason(MPI_Comm comm) {
  a2a::shim::reap();
  if (!a2a::interpose::strong_progress()) return "no progress hook";
  if (set_up_ring.has(comm)) return nullptr;
  if (a2a::interpose::set_up(comm)) {
    set_up_ring.add(comm);
    return nullptr;
  }
  return inter(comm) ? "intercommunicator" : "communicator not yet set up by a blocking call";
}
}  // namespace

// Nonblocking: a2a's operation behind a generalized request that the
// library's own waits and tests complete (requests.hpp).
extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (const char* why = library_reason(comm)) {
    to_library(comm, false, Kind::nonblocking, why);
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  A2A_Request op = A2A_REQUEST_NULL;
  const int rc = A2A_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, &op);
  if (rc != MPI_SUCCESS) return report(comm, rc);
  return report(comm, a2a::shim::hand_out(op, comm, false, request));
}

extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  if (const char* why = library_reason(comm)) {
    to_library(comm, true, Kind::nonblocking, why);
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  }
  A2A_Request op = A2A_REQUEST_NULL;
  const int rc = A2A_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                nullptr, &op);
  if (rc != MPI_SUCCESS) return report(comm, rc);
  return report(comm, a2a::shim::hand_out(op, comm, true, request));
}

// Persistent: a2a's plan behind a persistent request that MPI_Start and
// MPI_Startall (below) start and the library's waits complete.
namespace {
template <class A2AInit, class LibraryInit>
int persistent_init(MPI_Comm comm, bool alltoallv, MPI_Request* request, A2AInit a2a_init, LibraryInit library_init) {
  const char* why = library_reason(comm);
  if (!why && !a2a::shim::requests_open()) why = "MPI_Init not seen by the shim";
  if (why) {
    to_library(comm, alltoallv, Kind::persistent, why);
    return library_init();
  }
  A2A_Plan plan = nullptr;
  if (const int rc = a2a_init(&plan)) return report(comm, rc);
  return report(comm, a2a::shim::hand_out_plan(plan, comm, alltoallv, request));
}
}  // namespace

#define A2A_PERSISTENT_ALLTOALL(name, library)                                                                   \
  extern "C" int name(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm, \
                      MPI_Info info, MPI_Request* request) {                                                     \
    return persistent_init(                                                                                      \
        comm, false, request, [&](A2A_Plan* p) { return A2A_Alltoall_init(sb, sc, st, rb, rc, rt, comm, nullptr, p); }, \
        [&] { return library(sb, sc, st, rb, rc, rt, comm, info, request); });                                   \
  }
#define A2A_PERSISTENT_ALLTOALLV(name, library)                                                                  \
  extern "C" int name(const void* sb, const int sc[], const int sd[], MPI_Datatype st, void* rb, const int rc[], \
                      const int rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* request) {     \
    return persistent_init(                                                                                      \
        comm, true, request,                                                                                     \
        [&](A2A_Plan* p) { return A2A_Alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, nullptr, p); },        \
        [&] { return library(sb, sc, sd, st, rb, rc, rd, rt, comm, info, request); });                           \
  }
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
A2A_PERSISTENT_ALLTOALL(MPIX_Alltoall_init, PMPIX_Alltoall_init)
A2A_PERSISTENT_ALLTOALLV(MPIX_Alltoallv_init, PMPIX_Alltoallv_init)
#endif
#if MPI_VERSION >= 4
A2A_PERSISTENT_ALLTOALL(MPI_Alltoall_init, PMPI_Alltoall_init)
A2A_PERSISTENT_ALLTOALLV(MPI_Alltoallv_init, PMPI_Alltoallv_init)
#endif
// The library's own, for Fortran's persistent calls passed to it.
#if MPI_VERSION >= 4
#define A2A_PERSISTENT_CALLS 1
namespace {
constexpr auto library_alltoall_init = PMPI_Alltoall_init;
constexpr auto library_alltoallv_init = PMPI_Alltoallv_init;
}  // namespace
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define A2A_PERSISTENT_CALLS 1
namespace {
constexpr auto library_alltoall_init = PMPIX_Alltoall_init;
constexpr auto library_alltoallv_init = PMPIX_Alltoallv_init;
}  // namespace
#endif

// Every persistent request passes here: one load where the shim made none.
extern "C" int MPI_Start(MPI_Request* request) {
  if (request && a2a::shim::is_plan(*request)) return a2a::shim::start_plan(request);
  return PMPI_Start(request);
}

extern "C" int MPI_Startall(int count, MPI_Request requests[]) {
  bool ours = false;
  for (int i = 0; i < count && !ours; ++i) ours = a2a::shim::is_plan(requests[i]);
  if (!ours) return PMPI_Startall(count, requests);
  for (int i = 0; i < count; ++i)
    if (const int rc = a2a::shim::is_plan(requests[i]) ? a2a::shim::start_plan(&requests[i]) : PMPI_Start(&requests[i]))
      return rc;
  return MPI_SUCCESS;
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  if (request && a2a::shim::is_plan(*request)) return a2a::shim::free_plan(request);
  return PMPI_Request_free(request);
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
// Once, whichever init came first (a Fortran binding may call the C one).
void prepare_world() {
  static bool prepared = false;
  if (prepared) return;
  prepared = true;
  A2A_Comm_prepare(MPI_COMM_WORLD);  // an error here resurfaces at the first call
  a2a::shim::warm_first_call();
  // The progress mechanism found (A2A_VERBOSE prints which); where there is
  // one, the persistent requests' communicator (collective: here or never).
  if (a2a::interpose::strong_progress()) a2a::shim::open_requests();
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

namespace {
// Before the library's finalize (C or Fortran): the summary, the shim's
// requests' communicator freed.  Once.
void finish() {
  static bool finished = false;
  if (finished) return;
  finished = true;
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
      const char* name = comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "(derived)";
      char head[160];
      std::snprintf(head, sizeof head, "a2a shim: communicator %s: %lld calls, %lld bytes sent by rank 0, %.6f s;", name,
                    s.calls, s.bytes, s.seconds);
      std::string line = head;
      for (const auto& [alg, n] : s.algorithms) line += " " + alg + " x" + std::to_string(n);
      line += '\n';
      std::fputs(line.c_str(), stderr);
      // e.g. "a2a shim: communicator MPI_COMM_WORLD: a2a ran alltoall 1 blocking, 3 nonblocking,
      // 100 persistent; ...; the library ran alltoall blocking (first call under auto) x1"
      line = std::string("a2a shim: communicator ") + name + ": a2a ran";
      for (int v = 0; v < 2; ++v) {
        line += v ? "; alltoallv" : " alltoall";
        for (int k = 0; k < 3; ++k) line += std::string(k ? ", " : " ") + std::to_string(s.by_a2a[v][k]) + " " + kKindName[k];
      }
      if (!s.to_library.empty()) {
        line += "; the library ran";
        for (const auto& [what, n] : s.to_library) line += " " + what + " x" + std::to_string(n);
      }
      line += '\n';
      std::fputs(line.c_str(), stderr);
    }
  }
  a2a::shim::finalize_requests();
}
}  // namespace

extern "C" int MPI_Finalize(void) {
  finish();
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

void fortran_ialltoall(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc,
                       const MPI_Fint* rt, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc_ = MPI_Ialltoall(fortran_buffer(sb), *sc, MPI_Type_f2c(*st), const_cast<void*>(fortran_buffer(rb)), *rc,
                                MPI_Type_f2c(*rt), MPI_Comm_f2c(*comm), &r);
  if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(r);
  if (ierr) *ierr = rc_;
}

void fortran_ialltoallv(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,
                        const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,
                        MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc_ = MPI_Ialltoallv(fortran_buffer(sb), reinterpret_cast<const int*>(sc), reinterpret_cast<const int*>(sd),
                                 MPI_Type_f2c(*st), const_cast<void*>(fortran_buffer(rb)),
                                 reinterpret_cast<const int*>(rc), reinterpret_cast<const int*>(rd), MPI_Type_f2c(*rt),
                                 MPI_Comm_f2c(*comm), &r);
  if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(r);
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

// Every Fortran name of one entry point: mpif.h / `use mpi` under each
// mangling, and Open MPI's `use mpi_f08` names.
#define A2A_FORTRAN_NAMES(macro, lower, upper) \
  macro(lower) macro(lower##_) macro(lower##__) macro(upper) macro(lower##_f08) macro(lower##_f08_)

A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALL, mpi_alltoall, MPI_ALLTOALL)
A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALLV, mpi_alltoallv, MPI_ALLTOALLV)

// MPI_IALLTOALL(V): served as the C calls are (the library's own waits
// complete the request).
#define A2A_FORTRAN_IALLTOALL(name)                                                                        \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc,  \
                       const MPI_Fint* rt, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {        \
    fortran_ialltoall(sb, sc, st, rb, rc, rt, comm, request, ierr);                                          \
  }
#define A2A_FORTRAN_IALLTOALLV(name)                                                                          \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,    \
                       const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,        \
                       MPI_Fint* request, MPI_Fint* ierr) {                                                     \
    fortran_ialltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, request, ierr);                                    \
  }

A2A_FORTRAN_NAMES(A2A_FORTRAN_IALLTOALL, mpi_ialltoall, MPI_IALLTOALL)
A2A_FORTRAN_NAMES(A2A_FORTRAN_IALLTOALLV, mpi_ialltoallv, MPI_IALLTOALLV)

// MPI_INIT(_THREAD) and MPI_FINALIZE: the library's own Fortran binding
// (found next in the lookup order, so that its Fortran set-up runs:
// MPICH's sentinels), after or before what the C calls add.
namespace {
// (A Fortran 2008 ierror is optional: a null pointer where left out.)
template <class Init, class... A>
void fortran_init(Init next, MPI_Fint* ierr, A... args) {
  MPI_Fint rc = MPI_ERR_OTHER;
  if (next) next(args..., &rc);
  if (rc == MPI_SUCCESS) prepare_world();
  if (ierr) *ierr = rc;
}
using FortranInit = void (*)(MPI_Fint*);
using FortranInitThread = void (*)(const MPI_Fint*, MPI_Fint*, MPI_Fint*);
}  // namespace
#define A2A_FORTRAN_INIT(name)                                                              \
  extern "C" void name(MPI_Fint* ierr) {                                                      \
    static const auto next = reinterpret_cast<FortranInit>(dlsym(RTLD_NEXT, #name));        \
    fortran_init(next, ierr);                                                                 \
  }
#define A2A_FORTRAN_INIT_THREAD(name)                                                        \
  extern "C" void name(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {       \
    static const auto next = reinterpret_cast<FortranInitThread>(dlsym(RTLD_NEXT, #name));  \
    fortran_init(next, ierr, required, provided);                                           \
  }
A2A_FORTRAN_NAMES(A2A_FORTRAN_INIT, mpi_init, MPI_INIT)
A2A_FORTRAN_NAMES(A2A_FORTRAN_INIT_THREAD, mpi_init_thread, MPI_INIT_THREAD)
#define A2A_FORTRAN_FINALIZE(name)                                                     \
  extern "C" void name(MPI_Fint* ierr) {                                                 \
    static const auto next = reinterpret_cast<FortranInit>(dlsym(RTLD_NEXT, #name));    \
    finish();                                                                            \
    MPI_Fint rc = MPI_ERR_OTHER;                                                         \
    if (next) next(&rc);                                                                 \
    if (ierr) *ierr = rc;                                                                \
  }
A2A_FORTRAN_NAMES(A2A_FORTRAN_FINALIZE, mpi_finalize, MPI_FINALIZE)

// The persistent calls (MPI-4's MPI_ALLTOALL(V)_INIT, Open MPI's MPIX_
// ones) and the calls that start and free their requests.
#ifdef A2A_PERSISTENT_CALLS
namespace {
void fortran_alltoall_init(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc,
                           const MPI_Fint* rt, const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* request,
                           MPI_Fint* ierr) {
  MPI_Request r = MPI_REQUEST_NULL;
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const int rc_ = persistent_init(
      c, false, &r,
      [&](A2A_Plan* p) {
        return A2A_Alltoall_init(fortran_buffer(sb), *sc, MPI_Type_f2c(*st), const_cast<void*>(fortran_buffer(rb)),
                                 *rc, MPI_Type_f2c(*rt), c, nullptr, p);
      },
      [&] { return library_alltoall_init(fortran_buffer(sb), *sc, MPI_Type_f2c(*st),
                                         const_cast<void*>(fortran_buffer(rb)), *rc, MPI_Type_f2c(*rt), c,
                                         MPI_Info_f2c(*info), &r); });
  if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(r);
  if (ierr) *ierr = rc_;
}

void fortran_alltoallv_init(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,
                            const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,
                            const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request r = MPI_REQUEST_NULL;
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const auto* isc = reinterpret_cast<const int*>(sc);
  const auto* isd = reinterpret_cast<const int*>(sd);
  const auto* irc = reinterpret_cast<const int*>(rc);
  const auto* ird = reinterpret_cast<const int*>(rd);
  const int rc_ = persistent_init(
      c, true, &r,
      [&](A2A_Plan* p) {
        return A2A_Alltoallv_init(fortran_buffer(sb), isc, isd, MPI_Type_f2c(*st),
                                  const_cast<void*>(fortran_buffer(rb)), irc, ird, MPI_Type_f2c(*rt), c, nullptr, p);
      },
      [&] { return library_alltoallv_init(fortran_buffer(sb), isc, isd, MPI_Type_f2c(*st),
                                          const_cast<void*>(fortran_buffer(rb)), irc, ird, MPI_Type_f2c(*rt), c,
                                          MPI_Info_f2c(*info), &r); });
  if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(r);
  if (ierr) *ierr = rc_;
}
}  // namespace

#define A2A_FORTRAN_ALLTOALL_INIT(name)                                                                        \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* st, void* rb, const MPI_Fint* rc,      \
                       const MPI_Fint* rt, const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* request,       \
                       MPI_Fint* ierr) {                                                                         \
    fortran_alltoall_init(sb, sc, st, rb, rc, rt, comm, info, request, ierr);                                    \
  }
#define A2A_FORTRAN_ALLTOALLV_INIT(name)                                                                        \
  extern "C" void name(const void* sb, const MPI_Fint* sc, const MPI_Fint* sd, const MPI_Fint* st, void* rb,      \
                       const MPI_Fint* rc, const MPI_Fint* rd, const MPI_Fint* rt, const MPI_Fint* comm,          \
                       const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr) {                                 \
    fortran_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, request, ierr);                            \
  }
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALL_INIT, mpix_alltoall_init, MPIX_ALLTOALL_INIT)
A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALLV_INIT, mpix_alltoallv_init, MPIX_ALLTOALLV_INIT)
#endif
#if MPI_VERSION >= 4
A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALL_INIT, mpi_alltoall_init, MPI_ALLTOALL_INIT)
A2A_FORTRAN_NAMES(A2A_FORTRAN_ALLTOALLV_INIT, mpi_alltoallv_init, MPI_ALLTOALLV_INIT)
#endif

#define A2A_FORTRAN_START(name)                                        \
  extern "C" void name(MPI_Fint* request, MPI_Fint* ierr) {              \
    MPI_Request r = MPI_Request_f2c(*request);                           \
    const int rc = MPI_Start(&r);                                        \
    if (ierr) *ierr = rc;                                                \
  }
#define A2A_FORTRAN_STARTALL(name)                                                      \
  extern "C" void name(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierr) {        \
    std::vector<MPI_Request> r(*count);                                                  \
    for (int i = 0; i < *count; ++i) r[i] = MPI_Request_f2c(requests[i]);                \
    const int rc = MPI_Startall(*count, r.data());                                       \
    if (ierr) *ierr = rc;                                                                \
  }
#define A2A_FORTRAN_REQUEST_FREE(name)                          \
  extern "C" void name(MPI_Fint* request, MPI_Fint* ierr) {       \
    MPI_Request r = MPI_Request_f2c(*request);                    \
    const int rc = MPI_Request_free(&r);                          \
    if (rc == MPI_SUCCESS) *request = MPI_Request_c2f(r);         \
    if (ierr) *ierr = rc;                                         \
  }
A2A_FORTRAN_NAMES(A2A_FORTRAN_START, mpi_start, MPI_START)
A2A_FORTRAN_NAMES(A2A_FORTRAN_STARTALL, mpi_startall, MPI_STARTALL)
A2A_FORTRAN_NAMES(A2A_FORTRAN_REQUEST_FREE, mpi_request_free, MPI_REQUEST_FREE)
