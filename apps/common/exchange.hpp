// What both applications share: the all-to-all they run, chosen by spec
// ("native" calls MPI_Alltoall(v) directly, anything else goes through a2a),
// the time spent inside it, and `--compare`: every spec run in turn, a
// number of times, interleaved, and a table of medians with ratios to native.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"

namespace apps {

class Exchange {
 public:
  Exchange(std::string alltoall_spec, std::string alltoallv_spec)
      : a_(std::move(alltoall_spec)), v_(std::move(alltoallv_spec)) {}

  int alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm) {
    const double t0 = MPI_Wtime();
    const int code = a_ == "native" ? MPI_Alltoall(s, sc, st, r, rc, rt, comm)
                                    : A2A_Alltoall(s, sc, st, r, rc, rt, comm, a_.c_str());
    note(a_, "MPI_Alltoall", t0, ran_alltoall);
    return code;
  }
  int alltoallv(const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r, const int rc[],
                const int rd[], MPI_Datatype rt, MPI_Comm comm) {
    const double t0 = MPI_Wtime();
    const int code = v_ == "native" ? MPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, comm)
                                    : A2A_Alltoallv(s, sc, sd, st, r, rc, rd, rt, comm, v_.c_str());
    note(v_, "MPI_Alltoallv", t0, ran_alltoallv);
    return code;
  }
  // Nonblocking (a2a-fft --overlap): started here, advanced by test(),
  // completed by wait(); the time inside those calls counts (what the
  // computation in between did not hide).
  struct Request {
    MPI_Request mpi = MPI_REQUEST_NULL;
    A2A_Request a2a = A2A_REQUEST_NULL;
  };
  int ialltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm,
                Request& req) {
    const double t0 = MPI_Wtime();
    const int code = a_ == "native" ? MPI_Ialltoall(s, sc, st, r, rc, rt, comm, &req.mpi)
                                    : A2A_Ialltoall(s, sc, st, r, rc, rt, comm, a_.c_str(), &req.a2a);
    seconds += MPI_Wtime() - t0;
    return code;
  }
  int ialltoallv(const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r, const int rc[],
                 const int rd[], MPI_Datatype rt, MPI_Comm comm, Request& req) {
    const double t0 = MPI_Wtime();
    const int code = v_ == "native" ? MPI_Ialltoallv(s, sc, sd, st, r, rc, rd, rt, comm, &req.mpi)
                                    : A2A_Ialltoallv(s, sc, sd, st, r, rc, rd, rt, comm, v_.c_str(), &req.a2a);
    seconds += MPI_Wtime() - t0;
    return code;
  }
  int test(Request& req) {
    const double t0 = MPI_Wtime();
    int flag = 0;
    const int code = req.mpi != MPI_REQUEST_NULL ? MPI_Test(&req.mpi, &flag, MPI_STATUS_IGNORE)
                                                 : A2A_Test(&req.a2a, &flag, MPI_STATUS_IGNORE);
    seconds += MPI_Wtime() - t0;
    return code;
  }
  // Completes req, naming what ran for the collective (`v`: alltoallv).
  int wait(Request& req, bool v) {
    const double t0 = MPI_Wtime();
    const bool library = req.mpi != MPI_REQUEST_NULL || (v ? v_ : a_) == "native";
    const int code = library ? MPI_Wait(&req.mpi, MPI_STATUS_IGNORE) : A2A_Wait(&req.a2a, MPI_STATUS_IGNORE);
    note(v ? v_ : a_, v ? "MPI_Ialltoallv" : "MPI_Ialltoall", t0, v ? ran_alltoallv : ran_alltoall);
    return code;
  }
  double seconds = 0;  // inside the collectives, this rank
  // What ran, per collective, as "A2A_Alltoall: tra:radix=3" (last call).
  std::string ran_alltoall, ran_alltoallv;

 private:
  void note(const std::string& spec, const char* native_name, double t0, std::string& ran) {
    seconds += MPI_Wtime() - t0;
    std::string name = native_name;
    if (spec != "native") {
      A2A_Stats st;
      A2A_Last_stats(&st);
      name = st.algorithm;
    }
    ran = name;
  }
  std::string a_, v_;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One timed run of an application with a spec: total and all-to-all seconds
// (each the maximum over ranks), what ran, and whether it verified.
struct RunResult {
  double total = 0, exchange = 0;
  std::string ran;
  bool ok = true;
};

// Runs every spec `repeat` times, interleaved (spec order rotated each
// round), and prints per spec the median total and all-to-all time and
// their ratios to native's (native is added first if missing).  Returns
// false when any run failed to verify.
inline bool compare(std::vector<std::string> specs, int repeat, const std::function<RunResult(const std::string&)>& run) {
  if (std::find(specs.begin(), specs.end(), "native") == specs.end()) specs.insert(specs.begin(), "native");
  std::vector<std::vector<double>> total(specs.size()), exch(specs.size());
  std::vector<std::string> ran(specs.size());
  bool ok = true;
  for (int k = 0; k < repeat; ++k)
    for (size_t i = 0; i < specs.size(); ++i) {
      const size_t s = (i + k) % specs.size();
      const RunResult r = run(specs[s]);
      total[s].push_back(r.total);
      exch[s].push_back(r.exchange);
      ran[s] = r.ran;
      ok = ok && r.ok;
    }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    const double nt = median(total[0]), ne = median(exch[0]);
    std::printf("%-26s %-44s %11s %11s %9s %9s\n", "spec", "ran", "total_s", "alltoall_s", "total/nat", "a2a/nat");
    for (size_t s = 0; s < specs.size(); ++s)
      std::printf("%-26s %-44s %11.6f %11.6f %9.3f %9.3f\n", specs[s].c_str(), ran[s].c_str(), median(total[s]),
                  median(exch[s]), median(total[s]) / nt, median(exch[s]) / ne);
    std::printf("# medians of %d runs per spec, interleaved; times are the maximum over ranks\n", repeat);
  }
  return ok;
}

}  // namespace apps
