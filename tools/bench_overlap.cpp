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
// A2A_Ialltoall(v) with their spec.  --shim adds the PMPI shim's own
// MPI_Ialltoall(v) (tested with MPI_Test, which only the library's progress
// hook lets advance a2a's operation) and its blocking MPI_Alltoall(v) (its
// overall time is the call, then the compute phase), both running
// A2A_ALLTOALL(V)'s algorithm, and ends with the shim's nonblocking call
// over its blocking one and the overlap of each against the library's.  Under SimGrid's SMPI the compute phase
// is simulated time (the host's flops for it), so overlap is measured at
// any P.
#include "bench_overlap.hpp"

#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "bench_case.hpp"
#include "core/context.hpp"
#include "timing.hpp"
#ifdef A2A_SMPI
#include <simgrid/host.h>
#endif

namespace {

using a2a::tools::Case;

// The shim's entry points, from its own library (dlopen: this process's
// MPI_ symbols stay the library's).
struct Shim {
  decltype(&MPI_Ialltoall) ialltoall = nullptr;
  decltype(&MPI_Ialltoallv) ialltoallv = nullptr;
  decltype(&MPI_Alltoall) alltoall = nullptr;
  decltype(&MPI_Alltoallv) alltoallv = nullptr;
};
Shim shim;

bool load_shim(const std::string& path, std::string& why) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = dlerror();
    return false;
  }
  const auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr;
  };
  if (find(shim.ialltoall, "MPI_Ialltoall") && find(shim.ialltoallv, "MPI_Ialltoallv") &&
      find(shim.alltoall, "MPI_Alltoall") && find(shim.alltoallv, "MPI_Alltoallv"))
    return true;
  why = path + " has no MPI_Ialltoall(v)/MPI_Alltoall(v)";
  return false;
}

struct Row {
  enum class Via { a2a, library, shim, shim_blocking } via = Via::a2a;
  std::string name, spec;  // spec: a2a's
  bool mpi_request() const { return via == Via::library || via == Via::shim; }
};

// One operation in flight: an MPI request or a2a's.
struct Pending {
  MPI_Request mpi = MPI_REQUEST_NULL;
  A2A_Request a2a = A2A_REQUEST_NULL;
  bool done = false;
};

int start(const Row& row, Case& c, Pending& p) {
  p = Pending{};
  const int n = static_cast<int>(c.m);
  void* sb = c.sbuf.data();
  void* rb = c.rbuf.data();
  switch (row.via) {
    case Row::Via::library:
      return c.v ? MPI_Ialltoallv(sb, c.sc.data(), c.sd.data(), MPI_BYTE, rb, c.rc.data(), c.rd.data(), MPI_BYTE,
                                  MPI_COMM_WORLD, &p.mpi)
                 : MPI_Ialltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD, &p.mpi);
    case Row::Via::shim:
      return c.v ? shim.ialltoallv(sb, c.sc.data(), c.sd.data(), MPI_BYTE, rb, c.rc.data(), c.rd.data(), MPI_BYTE,
                                   MPI_COMM_WORLD, &p.mpi)
                 : shim.ialltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD, &p.mpi);
    case Row::Via::shim_blocking:
      p.done = true;
      return c.v ? shim.alltoallv(sb, c.sc.data(), c.sd.data(), MPI_BYTE, rb, c.rc.data(), c.rd.data(), MPI_BYTE,
                                  MPI_COMM_WORLD)
                 : shim.alltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD);
    case Row::Via::a2a:
      break;
  }
  return c.v ? A2A_Ialltoallv(sb, c.sc.data(), c.sd.data(), MPI_BYTE, rb, c.rc.data(), c.rd.data(), MPI_BYTE,
                              MPI_COMM_WORLD, row.spec.c_str(), &p.a2a)
             : A2A_Ialltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD, row.spec.c_str(), &p.a2a);
}

int test(const Row& row, Pending& p) {
  if (p.done) return MPI_SUCCESS;
  int flag = 0;
  const int rc = row.mpi_request() ? MPI_Test(&p.mpi, &flag, MPI_STATUS_IGNORE)
                                   : A2A_Test(&p.a2a, &flag, MPI_STATUS_IGNORE);
  p.done = flag != 0;
  return rc;
}

int wait(const Row& row, Pending& p) {
  if (p.done) return MPI_SUCCESS;
  p.done = true;
  return row.mpi_request() ? MPI_Wait(&p.mpi, MPI_STATUS_IGNORE) : A2A_Wait(&p.a2a, MPI_STATUS_IGNORE);
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

// The shim's nonblocking call over its blocking one (pure times; geometric
// mean over the sizes, and the worst), and its overlap against the
// library's own.
void shim_verdict(const std::vector<Row>& rows, const std::vector<std::vector<double>>& pures,
                  const std::vector<std::vector<double>>& overlaps, const std::vector<long long>& sizes, bool v) {
  const auto find = [&](Row::Via via) {
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r].via == via) return static_cast<int>(r);
    return -1;
  };
  const int nb = find(Row::Via::shim), blocking = find(Row::Via::shim_blocking), library = find(Row::Via::library);
  double log_sum = 0, worst = 0;
  long long worst_at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double ratio = pures[nb][i] / pures[blocking][i];
    log_sum += std::log(ratio);
    if (ratio > worst) worst = ratio, worst_at = sizes[i];
  }
  const double n = static_cast<double>(sizes.size());
  std::printf("# shim: MPI_I%s + MPI_Wait over its blocking call: geometric mean %.3f over %zu sizes (worst %.3f at "
              "%lld B)\n",
              v ? "alltoallv" : "alltoall", std::exp(log_sum / n), sizes.size(), worst, worst_at);
  const auto mean = [&](int r) { return std::accumulate(overlaps[r].begin(), overlaps[r].end(), 0.0) / n; };
  if (library >= 0)
    std::printf("# shim: overlap mean %.1f%%, the library's own %.1f%%\n", mean(nb), mean(library));
}

}  // namespace

int run_bench_overlap(const OverlapBenchOptions& o) {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<Row> rows;
  for (const auto& a : o.algs) {
    const std::string spec = a.rfind("i/", 0) == 0 ? a.substr(2) : a;
    rows.push_back(spec == "native" ? Row{Row::Via::library, "native", ""} : Row{Row::Via::a2a, spec, spec});
  }
  const char* shim_env = o.v ? "A2A_ALLTOALLV" : "A2A_ALLTOALL";
  const std::string shim_spec = std::getenv(shim_env) ? std::getenv(shim_env) : "auto";
  if (!o.shim.empty()) {
    std::string why;
    if (!load_shim(o.shim, why)) {
      if (rank == 0) std::fprintf(stderr, "a2a bench --shim: %s\n", why.c_str());
      return 2;
    }
    rows.push_back({Row::Via::shim, "shim:" + shim_spec, ""});
    rows.push_back({Row::Via::shim_blocking, "shim-blocking:" + shim_spec, ""});
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
    if (!o.shim.empty())
      std::printf("# shim: %s, its calls running %s=%s; progress: %s\n", o.shim.c_str(), shim_env,
                  shim_spec.c_str(), a2a::progress_mode().c_str());
    std::printf("%10s  %-28s %11s %11s %11s %9s %6s\n", "bytes", "algorithm", "pure_us", "compute_us", "overall_us",
                "overlap%", "wrong");
  }
  A2A_Comm_prepare(MPI_COMM_WORLD);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::vector<double>> overlaps(rows.size()), pures(rows.size());
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
      pures[r].push_back(pu);
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
  if (!o.shim.empty()) shim_verdict(rows, pures, overlaps, o.sizes, o.v);
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
