// `a2a tune`: under mpirun, on the communicator and node layout the
// application will use, times every algorithm and radix at each size (and,
// for alltoallv, each workload shape), and writes the winners as a tuning
// file (select/tuning.hpp) that A2A_TUNING_FILE points the library and the
// shim at.  Timing as in `a2a bench`: algorithms interleaved in a shuffled
// order every iteration, each iteration's time the maximum over ranks, the
// median over iterations compared.  Each winner covers the sizes from the
// geometric midpoint with its lower neighbour to the one with its upper
// (the first from 0, the last without bound); neighbours with the same
// winner merge.  Alltoallv entries are keyed by the global mean block of the
// workload, with its max/mean skew.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "a2a/a2a.hpp"
#include "core/context.hpp"
#include "schedule/hier.hpp"
#include "select/auto.hpp"
#include "core/cost_keys.hpp"
#include "select/cost_model.hpp"
#include "registry/registry.hpp"
#include "select/tuning.hpp"
#include "timing.hpp"
#include "workload/workload.hpp"

namespace {

using a2a::detail::Collective;

// Every algorithm worth timing for this P and layout: the cost model's
// candidates (the registry's rows that fit, at the model's radices) and the
// rows it does not cost.
std::vector<std::string> candidates(Collective coll, int P, const a2a::detail::Topology& topo) {
  namespace d = a2a::detail;
  const int Q = static_cast<int>(topo.ranks[0].size()), N = topo.nodes();
  return d::sweep(coll, d::where_of(topo.ranks), d::model_values(P, Q, N));
}

struct Buffers {
  std::vector<unsigned char> s, r;
  std::vector<int> sc, sd, rc, rd;
  long long mean = 0, max = 0;  // global block bytes (alltoallv)
};

Buffers make_buffers(Collective coll, const a2a::workload::Workload& w, long long m, int rank, int P) {
  Buffers b;
  b.sc.assign(P, static_cast<int>(m));
  b.rc = b.sc;
  if (coll == Collective::alltoallv) {
    const auto sized = a2a::workload::with_size(w, m);
    for (int i = 0; i < P; ++i) {
      b.sc[i] = static_cast<int>(a2a::workload::count(sized, rank, i, P));
      b.rc[i] = static_cast<int>(a2a::workload::count(sized, i, rank, P));
    }
  }
  b.sd.assign(P, 0);
  b.rd.assign(P, 0);
  for (int i = 1; i < P; ++i) {
    b.sd[i] = b.sd[i - 1] + b.sc[i - 1];
    b.rd[i] = b.rd[i - 1] + b.rc[i - 1];
  }
  b.s.assign(static_cast<size_t>(b.sd[P - 1] + b.sc[P - 1]), 1);
  b.r.assign(static_cast<size_t>(b.rd[P - 1] + b.rc[P - 1]), 0);
  long long v[2] = {*std::max_element(b.sc.begin(), b.sc.end()), std::accumulate(b.sc.begin(), b.sc.end(), 0LL)};
  MPI_Allreduce(MPI_IN_PLACE, &v[0], 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &v[1], 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  b.max = v[0];
  b.mean = v[1] / (static_cast<long long>(P) * P);
  return b;
}

int run(Collective coll, const std::string& alg, Buffers& b) {
  const int n = b.sc[0];
  if (coll == Collective::alltoall) {
    if (alg == "native") return MPI_Alltoall(b.s.data(), n, MPI_BYTE, b.r.data(), n, MPI_BYTE, MPI_COMM_WORLD);
    return A2A_Alltoall(b.s.data(), n, MPI_BYTE, b.r.data(), n, MPI_BYTE, MPI_COMM_WORLD, alg.c_str());
  }
  if (alg == "native")
    return MPI_Alltoallv(b.s.data(), b.sc.data(), b.sd.data(), MPI_BYTE, b.r.data(), b.rc.data(), b.rd.data(),
                         MPI_BYTE, MPI_COMM_WORLD);
  return A2A_Alltoallv(b.s.data(), b.sc.data(), b.sd.data(), MPI_BYTE, b.r.data(), b.rc.data(), b.rd.data(), MPI_BYTE,
                       MPI_COMM_WORLD, alg.c_str());
}


// Rank 0's progress bar on stderr, redrawn in place.
void progress(long long done, long long total, const std::string& what) {
  constexpr int width = 30;
  const int filled = static_cast<int>(width * done / std::max(1LL, total));
  std::fprintf(stderr, "\r[%s%s] %3lld%% %-48.48s", std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), 100 * done / std::max(1LL, total), what.c_str());
  if (done == total) std::fprintf(stderr, "\n");
}

// A winner other than native must beat native by this factor: where the
// two measure alike, native costs nothing to choose and never loses.
constexpr double kBeatNative = 0.95;

struct Measured {
  long long key = 0;  // block bytes (alltoall) or global mean block (alltoallv)
  double skew = 1;
  std::string best;   // the winner (native unless beaten by kBeatNative)
  double best_us = 0, native_us = 0;
  std::vector<double> us;  // every candidate's median, in candidates() order
};

// The winner of one size: the fastest, if it beats native enough.
void pick_winner(const std::vector<std::string>& algs, Measured& r) {
  size_t best = 0;  // native
  for (size_t a = 1; a < algs.size(); ++a)
    if (r.us[a] < r.us[best]) best = a;
  if (r.us[best] > kBeatNative * r.native_us) best = 0;
  r.best = algs[best];
  r.best_us = r.us[best];
}

// Winners per size -> entries: ranges between geometric midpoints, merged.
void add_entries(a2a::detail::TuningTable& table, Collective coll, int P, const std::vector<int>& nodes,
                 const std::string& workload, const std::vector<Measured>& ms) {
  constexpr long long kUnbounded = 1LL << 60;
  for (size_t k = 0; k < ms.size(); ++k) {
    const long long lo = k == 0 ? 0 : static_cast<long long>(std::sqrt(double(ms[k - 1].key) * ms[k].key)) + 1;
    const long long hi = k + 1 == ms.size() ? kUnbounded
                                            : static_cast<long long>(std::sqrt(double(ms[k].key) * ms[k + 1].key));
    if (hi < lo) continue;  // two sizes with the same mean
    auto& e = table.entries;
    if (k > 0 && !e.empty() && e.back().algorithm == ms[k].best && e.back().collective == coll &&
        e.back().workload == workload && e.back().max_bytes + 1 == lo) {
      e.back().max_bytes = hi;
      continue;
    }
    e.push_back({coll, P, nodes, lo, hi, ms[k].skew, workload, ms[k].best, ms[k].best_us});
  }
}

}  // namespace

int run_tune(const std::vector<std::string>& raw) {
  CLI::App app{"a2a tune: time every algorithm and radix, write a tuning file for A2A_TUNING_FILE", "a2a tune"};
  std::string range = "16:262144", output = "a2a-tuning.json", collective = "both";
  std::vector<std::string> workloads = {"uniform", "power-law"};
  int iters = 10, warmup = 2, step = 4;
  bool merge = false, quiet = false;
  app.add_option("-m,--message-size", range, "MIN:MAX bytes per destination (alltoallv: the workload's size knob)");
  app.add_option("--step", step, "size factor between measured sizes")->check(CLI::Range(2, 1 << 20));
  app.add_option("-i,--iterations", iters, "timed iterations per size and algorithm")->check(CLI::PositiveNumber);
  app.add_option("-x,--warmup", warmup, "untimed warm-up iterations")->check(CLI::NonNegativeNumber);
  app.add_option("--collective", collective, "alltoall, alltoallv or both")
      ->check(CLI::IsMember({"alltoall", "alltoallv", "both"}));
  app.add_option("--workload", workloads, "alltoallv workload shapes to tune on (repeatable; see a2a bench)");
  app.add_option("-o,--output", output, "tuning file to write");
  app.add_flag("--merge", merge, "keep the output file's entries for other P / layouts / collectives");
  app.add_flag("-q,--quiet", quiet, "no progress bar");
  std::vector<std::string> args(raw.rbegin(), raw.rend());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  long long lo = 16, hi = 262144;
  if (std::sscanf(range.c_str(), "%lld:%lld", &lo, &hi) < 1 || lo < 1 || hi < lo) {
    std::fprintf(stderr, "a2a tune: -m wants MIN:MAX with 1 <= MIN <= MAX\n");
    return 2;
  }
  std::vector<a2a::workload::Workload> shapes;
  for (const auto& text : workloads) {
    a2a::workload::Workload w;
    std::string err;
    if (!a2a::workload::parse(text, w, err)) {
      std::fprintf(stderr, "a2a tune: %s\n", err.c_str());
      return 2;
    }
    shapes.push_back(w);
  }

  MPI_Init(nullptr, nullptr);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  a2a::set_error_check(a2a::ErrorCheck::local);  // time the algorithms, not the agreement
  a2a::detail::CommContext* ctx = nullptr;
  a2a::detail::get_context(MPI_COMM_WORLD, ctx);
  std::vector<int> nodes;
  for (const auto& n : ctx->topology.ranks) nodes.push_back(static_cast<int>(n.size()));

  std::vector<long long> sizes;
  for (long long m = lo; m <= hi; m *= step) sizes.push_back(m);
  struct Job {
    Collective coll;
    std::string workload;
    size_t shape;
  };
  std::vector<Job> jobs;
  if (collective != "alltoallv") jobs.push_back({Collective::alltoall, "", 0});
  if (collective != "alltoall")
    for (size_t w = 0; w < shapes.size(); ++w) jobs.push_back({Collective::alltoallv, workloads[w], w});
  long long total = 0, done = 0;
  for (const auto& j : jobs) total += static_cast<long long>(sizes.size() * candidates(j.coll, P, ctx->topology).size());

  a2a::detail::TuningTable table;
  table.mpi_library = a2a::detail::mpi_library_version();
  a2a::detail::MachineModel model;  // what auto falls back on here, for the record
  std::string model_error;
  a2a::detail::machine_model(*ctx, model, model_error);
  if (rank == 0)
    std::printf("# a2a tune: P=%d, layout %s, %d iterations (+%d warm-up) per algorithm and size\n"
                "# cost model: %s\n",
                P, ctx->topology.describe().c_str(), iters, warmup, a2a::detail::describe_costs(model).c_str());
  // What auto's global-size allreduce costs here (per-iteration max, median).
  double allreduce_s = 0;
  {
    std::vector<double> t(50);
    for (int it = -5; it < 50; ++it) {
      long long v3[3] = {0, rank, rank};
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, v3, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      if (it >= 0) t[it] = MPI_Wtime() - t0;
    }
    MPI_Allreduce(MPI_IN_PLACE, t.data(), 50, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    allreduce_s = a2a::tools::median(t);
  }
  int status = 0;
  std::vector<std::pair<const Job*, std::vector<Measured>>> v_results;
  for (const auto& job : jobs) {
    const bool v = job.coll == Collective::alltoallv;
    const auto algs = candidates(job.coll, P, ctx->topology);
    std::vector<Measured> measured;
    if (rank == 0)
      std::printf("# %s%s%s\n%10s %10s  %-36s %10s %10s %8s\n", v ? "alltoallv, workload " : "alltoall",
                  job.workload.c_str(), "", v ? "mean_bytes" : "bytes", "max_bytes", "best", "best_us", "native_us",
                  "native/best");
    for (long long m : sizes) {
      Buffers b = make_buffers(job.coll, shapes[job.shape], m, rank, P);
      std::vector<std::vector<double>> t;
      size_t failed = 0;
      const auto call = [&](size_t a) { return run(job.coll, algs[a], b); };
      if (a2a::tools::time_rows(algs.size(), warmup, iters, static_cast<unsigned>(m), call, t, failed) != MPI_SUCCESS) {
        // the same arguments fail alike on every rank
        if (rank == 0)
          std::fprintf(stderr, "\na2a tune: %s failed: %s\n", algs[failed].c_str(), a2a::last_error_message().c_str());
        MPI_Finalize();
        return 1;
      }
      for (auto& ta : t) MPI_Allreduce(MPI_IN_PLACE, ta.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      done += static_cast<long long>(algs.size());
      if (rank != 0) continue;
      Measured r;
      r.key = v ? b.mean : m;
      r.skew = v && b.mean > 0 ? static_cast<double>(b.max) / b.mean : 1.0;
      for (const auto& ta : t) r.us.push_back(a2a::tools::median(ta) * 1e6);
      r.native_us = r.us[0];
      pick_winner(algs, r);
      measured.push_back(r);
      if (!quiet) progress(done, total, (v ? job.workload + " " : std::string()) + std::to_string(m) + " B");
      std::printf("%s%10lld %10lld  %-36s %10.2f %10.2f %8.3f\n", quiet ? "" : "\r", r.key, v ? b.max : m,
                  r.best.c_str(), r.best_us, r.native_us, r.native_us / r.best_us);
      std::fflush(stdout);
    }
    if (rank == 0 && !v) add_entries(table, job.coll, P, nodes, job.workload, measured);
    if (rank == 0 && v) v_results.emplace_back(&job, std::move(measured));
  }
  if (rank == 0 && !v_results.empty()) {
    // Alltoallv: winners that differ by size make auto pay an allreduce of
    // the sizes on every call of the communicator (select/auto.hpp).  The
    // alternative is one algorithm for every size, which needs none: the
    // best in geometric mean over every measured size and workload (native
    // unless another beats it by 5 %).  Keep the per-size winners only if,
    // plus that allreduce, they beat it.
    const auto algs = candidates(Collective::alltoallv, P, ctx->topology);
    size_t fixed = 0;
    std::vector<double> log_fixed(algs.size(), 0);
    double log_winners = 0;
    for (const auto& [job, ms] : v_results)
      for (const auto& r : ms) {
        for (size_t a = 0; a < algs.size(); ++a) log_fixed[a] += std::log(r.us[a]);
        log_winners += std::log(r.best_us + allreduce_s * 1e6);
      }
    size_t best = 0;  // algs[0] is native
    for (size_t a = 1; a < algs.size(); ++a)
      if (log_fixed[a] < log_fixed[best]) best = a;
    if (log_fixed[best] < log_fixed[0] + std::log(kBeatNative) * static_cast<double>(v_results.size() * sizes.size()))
      fixed = best;
    const bool per_size = log_winners < log_fixed[fixed];
    const double n = static_cast<double>(std::max<size_t>(1, v_results.size() * sizes.size()));
    std::printf("# alltoallv: %s (per-size winners plus the %.2f us size allreduce over %s for every size: geometric "
                "mean ratio %.3f)\n", per_size ? "per-size winners" : ("one algorithm, " + algs[fixed]).c_str(),
                allreduce_s * 1e6, algs[fixed].c_str(), std::exp((log_winners - log_fixed[fixed]) / n));
    for (auto& [job, ms] : v_results) {
      if (!per_size)
        for (auto& r : ms) r.best = algs[fixed], r.best_us = r.us[fixed];
      add_entries(table, job->coll, P, nodes, job->workload, ms);
    }
  }
  if (rank == 0) {
    if (merge) {  // keep what the file holds for other (collective, P, layout)
      std::ifstream in(output);
      std::stringstream text;
      text << in.rdbuf();
      a2a::detail::TuningTable old;
      std::string err;
      if (in.is_open() && a2a::detail::parse_tuning(text.str(), table.mpi_library, old, err)) {
        for (const auto& e : old.entries) {
          bool replaced = false;
          for (const auto& j : jobs) replaced = replaced || (e.collective == j.coll && e.procs == P && e.nodes == nodes);
          if (!replaced) table.entries.push_back(e);
        }
      } else if (in.is_open()) {
        std::fprintf(stderr, "a2a tune: not merging %s: %s\n", output.c_str(), err.c_str());
      }
    }
    std::ofstream out(output);
    out << a2a::detail::tuning_json(table);
    status = out ? 0 : 1;
    std::printf("# tuning file: %s (%zu entries); use it with A2A_TUNING_FILE=%s\n", output.c_str(),
                table.entries.size(), output.c_str());
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
