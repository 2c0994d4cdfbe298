// `a2a bench --nonblocking`: how much of a nonblocking all-to-all hides
// behind computation, with the conventions of OSU's osu_ialltoall.  Per
// size and row:
//   pure     start + wait, nothing in between (the mean over iterations);
//   compute  a phase as long as the slowest rank's pure time, timed alone
//            (as OSU times its dummy compute);
//   overall  start, the compute phase with a test (A2A_Test, or MPI_Test for
//            native) every --test-interval microseconds of it, wait;
//   overlap  100 * (1 - (overall - compute) / pure), within 0..100 (a
//            compute phase timed alone may run long where ranks share cores).
// Times are means over the timed iterations, averaged over ranks (as OSU
// reports them).  Rows run interleaved, in an order shuffled every
// iteration, the pure pass before the overall one.  native is
// MPI_Ialltoall(v) (PMPI, unless a tool intercepts it); a2a's rows are
// A2A_Ialltoall(v) with their spec.  Under SimGrid's SMPI the compute phase
// is simulated time (the host's flops for it), so overlap is measured at
// any P.
#include "bench_overlap.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "a2a/a2a.h"
#include "bench_case.hpp"
#include "core/context.hpp"
#include "timing.hpp"
#ifdef A2A_SMPI
#include <simgrid/host.h>
#endif

namespace {

using a2a::tools::Case;

struct Row {
  std::string name, spec;  // spec: a2a's; empty for native
  bool library() const { return spec.empty(); }
};

// One operation in flight: the library's request or a2a's.
struct Pending {
  MPI_Request mpi = MPI_REQUEST_NULL;
  A2A_Request a2a = A2A_REQUEST_NULL;
  bool done = false;
};

int start(const Row& row, Case& c, Pending& p) {
  p = Pending{};
  const int n = static_cast<int>(c.m);
  if (row.library())
    return c.v ? MPI_Ialltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(), c.rc.data(),
                                c.rd.data(), MPI_BYTE, MPI_COMM_WORLD, &p.mpi)
               : MPI_Ialltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD, &p.mpi);
  return c.v ? A2A_Ialltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(), c.rc.data(),
                              c.rd.data(), MPI_BYTE, MPI_COMM_WORLD, row.spec.c_str(), &p.a2a)
             : A2A_Ialltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD,
                             row.spec.c_str(), &p.a2a);
}

int test(const Row& row, Pending& p) {
  if (p.done) return MPI_SUCCESS;
  int flag = 0;
  const int rc = row.library() ? MPI_Test(&p.mpi, &flag, MPI_STATUS_IGNORE)
                               : A2A_Test(&p.a2a, &flag, MPI_STATUS_IGNORE);
  p.done = flag != 0;
  return rc;
}

int wait(const Row& row, Pending& p) {
  if (p.done) return MPI_SUCCESS;
  p.done = true;
  return row.library() ? MPI_Wait(&p.mpi, MPI_STATUS_IGNORE) : A2A_Wait(&p.a2a, MPI_STATUS_IGNORE);
}

// `seconds` of computation, testing the operation every `interval` seconds
// of it (never where interval is 0).  Real runs spin on the clock; SMPI
// advances the simulated clock by as many of the host's flops (smpi_execute
// would scale by smpi/host-speed, not the platform's speed: 10 us took
// 0.01 us on theta's 1 Gf hosts).
int compute(double seconds, double interval, const Row& row, Pending& p) {
  int rc = MPI_SUCCESS;
#ifdef A2A_SMPI
  static const double flops_per_second = sg_host_get_speed(sg_host_self());
  for (double done = 0; done < seconds && rc == MPI_SUCCESS;) {
    const double step = interval > 0 ? std::min(interval, seconds - done) : seconds - done;
    smpi_execute_flops(step * flops_per_second);
    done += step;
    if (interval > 0) rc = test(row, p);
  }
#else
  const double t0 = MPI_Wtime();
  double next = t0 + interval;
  for (double now = t0; now - t0 < seconds && rc == MPI_SUCCESS; now = MPI_Wtime())
    if (interval > 0 && now >= next) {
      rc = test(row, p);
      next += interval;
    }
#endif
  return rc;
}

}  // namespace

int run_bench_overlap(const OverlapBenchOptions& o) {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<Row> rows;
  for (const auto& a : o.algs) {
    const std::string spec = a.rfind("i/", 0) == 0 ? a.substr(2) : a;
    rows.push_back(spec == "native" ? Row{"native", ""} : Row{spec, spec});
  }
  const bool validate = o.validate && !a2a::detail::sim_shared_buffers();
  const double interval = o.test_interval_us * 1e-6;
  if (rank == 0) {
    std::printf("# a2a bench --nonblocking %s: P=%d, %d iterations (+%d warm-up); OSU osu_ialltoall's conventions: "
                "pure = start + wait, compute = a phase as long as the slowest rank's pure time, timed alone, "
                "overall = start, compute with a test every %g us, wait; "
                "overlap = 100 (1 - (overall - compute) / pure) within 0..100; "
                "means over iterations, averaged over ranks\n# native = MPI_I%s\n",
                o.v ? "alltoallv" : "alltoall", P, o.iters, o.warmup, o.test_interval_us,
                o.v ? "alltoallv" : "alltoall");
    if (o.v) std::printf("# workload %s; bytes = its size knob\n", o.workload_text.c_str());
    std::printf("%10s  %-28s %11s %11s %11s %9s %6s\n", "bytes", "algorithm", "pure_us", "compute_us", "overall_us",
                "overlap%", "wrong");
  }
  A2A_Comm_prepare(MPI_COMM_WORLD);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::vector<double>> overlaps(rows.size());
  int status = 0;
  for (long long m : o.sizes) {
    Case c = a2a::tools::make_case(o.v, o.workload, m, rank, P);
    std::vector<double> pure(rows.size()), overall(rows.size()), target(rows.size());
    Pending p;
    const auto fail = [&](size_t r, int rc) {
      if (rank == 0) std::fprintf(stderr, "a2a bench --nonblocking: %s failed (MPI error %d)\n", rows[r].name.c_str(), rc);
      return 1;
    };
    // Every row once per iteration, shuffled (the bench's time_rows); the
    // sums over the timed iterations.
    const auto timed = [&](unsigned seed, std::vector<double>& sums, auto&& one) {
      std::vector<std::vector<double>> t;
      size_t failed = 0;
      const int rc = a2a::tools::time_rows(rows.size(), o.warmup, o.iters, seed, one, t, failed);
      if (rc != MPI_SUCCESS) return fail(failed, rc);
      for (size_t r = 0; r < rows.size(); ++r) sums[r] = std::accumulate(t[r].begin(), t[r].end(), 0.0);
      return 0;
    };
    if (timed(static_cast<unsigned>(m), pure, [&](size_t r) {
          const int e = start(rows[r], c, p);
          return e != MPI_SUCCESS ? e : wait(rows[r], p);
        }))
      return 1;
    for (size_t r = 0; r < rows.size(); ++r) target[r] = pure[r] / o.iters;
    MPI_Allreduce(MPI_IN_PLACE, target.data(), static_cast<int>(target.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    std::vector<double> computed(rows.size());  // the compute phase alone, as the clock sees it
    for (size_t r = 0; r < rows.size(); ++r) {
      Pending none{MPI_REQUEST_NULL, A2A_REQUEST_NULL, true};
      const double t0 = MPI_Wtime();
      compute(target[r], 0, rows[r], none);
      computed[r] = MPI_Wtime() - t0;
    }
    if (timed(static_cast<unsigned>(m) + 1, overall, [&](size_t r) {
          int e = start(rows[r], c, p);
          if (e == MPI_SUCCESS) e = compute(target[r], interval, rows[r], p);
          return e != MPI_SUCCESS ? e : wait(rows[r], p);
        }))
      return 1;
    int rc = MPI_SUCCESS;
    std::vector<long long> wrong(rows.size(), 0);
    for (size_t r = 0; validate && r < rows.size(); ++r) {  // one more overlapped call each, checked
      std::fill(c.rbuf.begin(), c.rbuf.end(), 0);
      rc = start(rows[r], c, p);
      if (rc == MPI_SUCCESS) rc = compute(target[r], interval, rows[r], p);
      if (rc == MPI_SUCCESS) rc = wait(rows[r], p);
      if (rc != MPI_SUCCESS) return fail(r, rc);
      wrong[r] = a2a::tools::count_wrong(c);
    }
    MPI_Allreduce(MPI_IN_PLACE, pure.data(), static_cast<int>(pure.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, overall.data(), static_cast<int>(overall.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, computed.data(), static_cast<int>(computed.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, wrong.data(), static_cast<int>(wrong.size()), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank != 0) continue;
    for (size_t r = 0; r < rows.size(); ++r) {
      const double scale = 1e6 / (static_cast<double>(o.iters) * P);  // us, averaged over ranks
      const double pu = pure[r] * scale, ov = overall[r] * scale, co = computed[r] * 1e6 / P;
      const double overlap = pu > 0 ? std::clamp(100.0 * (1.0 - (ov - co) / pu), 0.0, 100.0) : 0.0;
      overlaps[r].push_back(overlap);
      if (wrong[r]) status = 1;
      std::printf("%10lld  %-28s %11.3f %11.3f %11.3f %9.1f %6lld\n", m, rows[r].name.c_str(), pu, co, ov, overlap,
                  wrong[r]);
      out.push_back({{"collective", o.v ? "alltoallv" : "alltoall"},
                     {"workload", o.v ? o.workload_text : ""},
                     {"procs", P},
                     {"bytes", m},
                     {"algorithm", rows[r].name},
                     {"pure_us", pu},
                     {"compute_us", co},
                     {"overall_us", ov},
                     {"overlap_pct", overlap},
                     {"test_interval_us", o.test_interval_us},
                     {"wrong", wrong[r]}});
    }
  }
  if (rank != 0) return 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& v = overlaps[r];
    const double mean = v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    std::printf("# overlap %-28s mean %5.1f%% over the sizes (min %.1f%%)\n", rows[r].name.c_str(), mean,
                v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()));
  }
  std::printf("# wrong: %s\n", status ? "SOME" : "0 OK");
  if (!o.csv.empty()) {
    std::ofstream f(o.csv);
    f << "collective,workload,procs,bytes,algorithm,pure_us,compute_us,overall_us,overlap_pct,test_interval_us,wrong\n";
    for (const auto& j : out)
      f << j["collective"].get<std::string>() << ",\"" << j["workload"].get<std::string>() << "\"," << j["procs"] << ","
        << j["bytes"] << ",\"" << j["algorithm"].get<std::string>() << "\"," << j["pure_us"] << ","
        << j["compute_us"] << "," << j["overall_us"] << "," << j["overlap_pct"] << "," << j["test_interval_us"] << ","
        << j["wrong"] << "\n";
    std::printf("# csv: %s\n", o.csv.c_str());
  }
  if (!o.json.empty()) std::ofstream(o.json) << out.dump(1) << "\n";
  return status;
}
