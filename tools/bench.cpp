// `a2a bench`: the algorithms side by side against native, in the OSU /
// nccl-tests style, for A2A_Alltoall (block bytes swept by -m) or, with
// --collective alltoallv, A2A_Alltoallv (per-peer bytes from --workload, its
// size knob swept by -m).
// Per size and algorithm: each iteration's time is the maximum over ranks;
// the table shows the median (and min, max) of those over -i iterations after
// -x warm-up ones (mean_us in the CSV: the mean of them; with -x 0 the
// summary's "every timed call" line prices auto's first calls, its trial
// included).  Algorithms are interleaved within each iteration, in an
// order shuffled every iteration, so that noise on a shared machine and the
// cache state left by the previous row hit them alike; compare ratios, not
// absolutes.
// Bandwidths follow nccl-tests' alltoall, in GB/s (1e9 B/s) from the median
// time: algbw = S / time with S the bytes one rank sends in all (own block
// included), busbw = algbw * (P-1)/P.  Alltoall: S = P*m.  Alltoallv: S is the
// largest total over ranks, so busbw is the rate of the busiest rank's link,
// the one that bounds the time, comparable with a link's peak as in nccl-tests.
// -c checks every received byte once per size and algorithm; the `wrong`
// column counts bad bytes and any makes the exit status 1.
// --sweep-radix runs native and the radix-tunable algorithm (tra for
// alltoall, tuna for alltoallv) at every radix 2..P (above P = 32 a subset:
// powers of two, the radices around sqrt P, and P), plus any -a rows.  Rows
// of tra and tuna carry the radix they ran with in a `radix` column (-1 for
// other rows) for `a2a plot`.
// The "native" row calls MPI_Alltoall(v) directly (not through a2a), so every
// ratio includes what a2a adds; "a2a/native" is A2A_Alltoall(v) with the spec
// "native": the same library call through a2a's whole path, whose ratio is
// the main job's noise floor (tools/verdict.py).  --error-check picks how a2a agrees on
// errors; a spec prefixed "agree/" always runs with agreement, which prices
// the default mode in the same table; "plan/" runs a persistent plan (init
// once per size, A2A_Start per iteration); "i/" the nonblocking call and
// its wait at once (A2A_Ialltoall(v) + A2A_Wait; i/native: MPI_Ialltoall(v)
// + MPI_Wait), what the engine adds to the blocking call.  --nonblocking
// measures overlap instead, as OSU's osu_ialltoall (bench_overlap.cpp).
// --twins adds, for each a2a algorithm that the MPI library also implements,
// the library's own forced to that algorithm (twins.hpp), and prints each
// a2a row's time over its twin's.  -b N times N calls back to back per
// sample (call overheads below the timer's resolution).  The last lines
// summarise the run: auto over native (geometric mean and worst over the
// sizes) and the best a2a row over native.
// Output: the table on stdout, --csv (columns of older versions first, new
// ones appended) and --json (the same rows).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "a2a/a2a.hpp"
#include "bench_case.hpp"
#include "bench_cuda.hpp"
#include "bench_overlap.hpp"
#include "core/context.hpp"
#include "registry/registry.hpp"
#include "timing.hpp"
#include "twins.hpp"
#include "workload/workload.hpp"

namespace {

// liba2a_pmpi.so of this build (beside the program) or of its install (../lib).
std::string shim_beside_this_program() {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& p : {dir / "liba2a_pmpi.so", dir / ".." / "lib" / "liba2a_pmpi.so"})
    if (std::filesystem::exists(p, ec)) return p.string();
  return "liba2a_pmpi.so";  // the loader's search path
}


using a2a::tools::Case;
using a2a::tools::count_wrong;
using a2a::tools::make_case;

std::vector<long long> sizes_between(const std::string& range) {
  long long lo = 1, hi = 1 << 20;
  const auto colon = range.find(':');
  lo = std::stoll(range.substr(0, colon));
  if (colon != std::string::npos) hi = std::stoll(range.substr(colon + 1));
  std::vector<long long> out;
  for (long long s = std::max(1LL, lo); s <= hi; s *= 2) out.push_back(s);
  return out;
}

constexpr const char* kAgree = "agree/";
constexpr const char* kA2A = "a2a/";  // a2a/native: A2A_Alltoall(v) with "native", where "native" alone is MPI

constexpr const char* kPlan = "plan/";
constexpr const char* kNonblocking = "i/";
constexpr const char* kTwin = "twin:";

bool is_twin(const std::string& alg) { return alg.rfind(kTwin, 0) == 0; }

// A row as run: its kind and a2a's spec, parsed once, so that a timed call
// pays nothing for its name (nor for an error-check switch but where the
// rows' modes differ).
struct Row {
  enum class Kind { library, twin, a2a, plan, nonblocking_library, nonblocking } kind = Kind::library;
  std::string name, spec;
  a2a::ErrorCheck mode = a2a::ErrorCheck::local;
  MPI_Comm comm = MPI_COMM_WORLD;  // a twin's
};

Row parse_row(const std::string& alg, a2a::ErrorCheck mode, const a2a::tools::Twins& twins) {
  Row r;
  r.name = alg;
  if (is_twin(alg)) {  // the library's own, forced (twins.hpp)
    r.kind = Row::Kind::twin;
    r.comm = twins.find(alg)->comm;
    return r;
  }
  const bool agree = alg.rfind(kAgree, 0) == 0;
  r.mode = agree ? a2a::ErrorCheck::agree : mode;
  r.spec = alg.substr(agree ? 6 : alg.rfind(kA2A, 0) == 0 ? 4 : 0);
  if (alg == "native") {
    r.kind = Row::Kind::library;
  } else if (alg.rfind(kPlan, 0) == 0) {
    r.kind = Row::Kind::plan;
    r.spec = alg.substr(5);
  } else if (alg.rfind(kNonblocking, 0) == 0) {
    r.spec = alg.substr(2);
    r.kind = r.spec == "native" ? Row::Kind::nonblocking_library : Row::Kind::nonblocking;
  } else {
    r.kind = Row::Kind::a2a;
  }
  return r;
}

void use_mode(a2a::ErrorCheck mode) {
  static int set = -1;
  if (set != static_cast<int>(mode)) a2a::set_error_check(mode);
  set = static_cast<int>(mode);
}

int run(const Row& row, Case& c) {
  const int n = static_cast<int>(c.m);
  const char* spec = row.spec.c_str();
  switch (row.kind) {
    case Row::Kind::library:
    case Row::Kind::twin:
      if (!c.v) return MPI_Alltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, row.comm);
      return MPI_Alltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(), c.rc.data(),
                           c.rd.data(), MPI_BYTE, row.comm);
    case Row::Kind::nonblocking_library: {
      MPI_Request req;
      const int rc = c.v ? MPI_Ialltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(),
                                          c.rc.data(), c.rd.data(), MPI_BYTE, MPI_COMM_WORLD, &req)
                         : MPI_Ialltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD, &req);
      return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    default:
      break;
  }
  use_mode(row.mode);
  if (row.kind == Row::Kind::plan) {  // a persistent plan, made on first use for this size
    A2A_Plan& plan = c.plans[row.name];
    if (!plan) {
      const int rc = c.v ? A2A_Alltoallv_init(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(),
                                              c.rc.data(), c.rd.data(), MPI_BYTE, MPI_COMM_WORLD, spec, &plan)
                         : A2A_Alltoall_init(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD,
                                             spec, &plan);
      if (rc != MPI_SUCCESS) return rc;
    }
    return A2A_Start(plan);
  }
  if (row.kind == Row::Kind::nonblocking) {
    A2A_Request req = A2A_REQUEST_NULL;
    const int rc = c.v ? A2A_Ialltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(), c.rc.data(),
                                        c.rd.data(), MPI_BYTE, MPI_COMM_WORLD, spec, &req)
                       : A2A_Ialltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD, spec,
                                       &req);
    return rc != MPI_SUCCESS ? rc : A2A_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (!c.v) return A2A_Alltoall(c.sbuf.data(), n, MPI_BYTE, c.rbuf.data(), n, MPI_BYTE, MPI_COMM_WORLD, spec);
  return A2A_Alltoallv(c.sbuf.data(), c.sc.data(), c.sd.data(), MPI_BYTE, c.rbuf.data(), c.rc.data(), c.rd.data(),
                       MPI_BYTE, MPI_COMM_WORLD, spec);
}

// Every host row of the registry (choice knobs at every choice, radix knobs
// at 2 and auto; alltoallv's tuna at every radix up to P = 16, then a few),
// then auto in both error modes.
std::vector<std::string> default_algorithms(bool v, int P) {
  namespace d = a2a::detail;
  d::SweepValues values{{"2", "auto"}, {}, {}, {}};
  if (v) {
    values.radix.clear();
    for (int r = 2; r <= P; ++r)
      if (P <= 16 || r <= 4 || r == P / 2 || r == P || r * r == P) values.radix.push_back(std::to_string(r));
    values.radix.push_back("auto");
  }
  const auto coll = v ? d::Collective::alltoallv : d::Collective::alltoall;
  std::vector<std::string> algs, seen;  // one row per algorithm as it runs (radix auto may be a radix listed)
  for (const auto& spec : d::sweep(coll, d::kAnyHostLayout, values)) {
    d::Resolved r;
    std::string error;
    const std::string ran = d::resolve(coll, spec, P, 0, r, error) == MPI_SUCCESS ? r.canonical : spec;
    if (std::find(seen.begin(), seen.end(), ran) != seen.end()) continue;
    seen.push_back(ran);
    algs.push_back(spec);
  }
  algs.insert(algs.end(), {"auto", "agree/auto"});
  return algs;
}

// --sweep-radix: native and tra (alltoall) or tuna (alltoallv) at every radix
// 2..P; above P = 32 only powers of two, the radices around sqrt P (where
// the TRA paper finds the optimum) and P, to keep the run short.
std::vector<std::string> sweep_algorithms(bool v, int P) {
  namespace d = a2a::detail;
  int root = 1;
  while ((root + 1) * (root + 1) <= P) ++root;  // floor(sqrt P)
  std::vector<int> radices;
  for (int r = 2; r <= P; ++r)
    if (P <= 32 || (r & (r - 1)) == 0 || (r >= root - 1 && r <= root + 2) || r == P) radices.push_back(r);
  const auto coll = v ? d::Collective::alltoallv : d::Collective::alltoall;
  auto algs = d::sweep(*d::find_algorithm(coll, v ? "tuna" : "tra"), {d::radix_values(radices), {}, {}, d::kSweptPorts});
  algs.insert(algs.begin(), "native");
  return algs;
}

// The radix a tra or tuna row ran with (from the resolved spec, so auto and
// radices above P count as what ran); -1 for other algorithms.
int radix_of(const std::string& ran) {
  if (ran.rfind("tra:", 0) != 0 && ran.rfind("tuna:", 0) != 0) return -1;
  const auto at = ran.find("radix=");
  return at == std::string::npos ? -1 : std::atoi(ran.c_str() + at + 6);
}

// Geometric mean and worst (largest) of ratios, with the size of the worst.
struct RatioSummary {
  double log_sum = 0, worst = 0;
  long long worst_at = 0;
  int n = 0;
  void add(double r, long long m) {
    if (!(r > 0)) return;
    log_sum += std::log(r);
    if (r > worst) worst = r, worst_at = m;
    ++n;
  }
  double gm() const { return n ? std::exp(log_sum / n) : 0; }
};

// What ran: the resolved spec, with the requested one where they differ in
// kind (auto's choice, or a fallback: "shm (spread-out)", an intra=shm
// phase run point to point: "tra2:intra=shm (tra2:radix-intra=2,...)").
std::string shown(const std::string& asked, const std::string& ran) {
  const auto has_intra_shm = [](const std::string& s) { return s.find("intra=shm") != std::string::npos; };
  if (asked.find("auto") != std::string::npos || (has_intra_shm(asked) && !has_intra_shm(ran)))
    return asked + " (" + ran + ")";
  std::string spec = asked, prefix;
  for (const char* p : {kPlan, kAgree, kA2A, kNonblocking})
    if (asked.rfind(p, 0) == 0) prefix = p, spec = asked.substr(std::string(p).size());
  const auto base = [](const std::string& s) { return s.substr(0, s.find(':')); };
  if (base(spec) != base(ran) && !(base(spec) == "native" && ran.rfind("MPI_", 0) == 0))
    return asked + " (" + ran + ")";
  return prefix + ran;
}

}  // namespace

int run_bench(const std::vector<std::string>& raw) {
  CLI::App app{"a2a bench: time algorithms against native MPI (run under mpirun)", "a2a bench"};
  std::string range = "16:65536", csv = "a2a-bench.csv", json;
  int iters = 50, warmup = 5, batch = 1;
  bool validate = false, sweep_radix = false, without_native = false, twins_wanted = false;
  std::vector<std::string> algs;
  std::string collective = "alltoall", workload_text = "uniform";
  std::string check = a2a::error_check() == a2a::ErrorCheck::agree ? "agree" : "local";
  app.add_option("--collective", collective, "alltoall or alltoallv")->check(CLI::IsMember({"alltoall", "alltoallv"}));
  app.add_option("--workload", workload_text,
                 "alltoallv counts: uniform, normal, power-law, sparse, fft-n1, fft-n2 [:key=value,...]; "
                 "-m sweeps its size (uniform/power-law/sparse max, normal mean)");
  app.add_option("-m,--message-size", range, "MIN:MAX bytes per destination (alltoallv: workload size), doubling");
  app.add_option("-i,--iterations", iters, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("-x,--warmup", warmup, "untimed warm-up iterations")->check(CLI::NonNegativeNumber);
  app.add_flag("-c,--validate", validate, "check every received byte once per size and algorithm");
  app.add_option("-b,--batch", batch, "calls timed back to back per sample (their mean counts)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--twins", twins_wanted,
               "each a2a algorithm the MPI library also implements against the library's own, forced through "
               "MPI_T (Open MPI coll/tuned, MPICH CVARs); ratios a2a/twin at the end");
  app.add_option("-a,--algorithm", algs, "algorithm specs to compare (repeatable); native is always included");
  app.add_flag("--sweep-radix", sweep_radix,
               "native and tra (alltoall) or tuna (alltoallv) at every radix 2..P (a subset above P = 32), "
               "plus any -a rows");
  app.add_flag("--without-native", without_native,
               "leave the native row out (vs_native is then -1): for simulations where native is slow to "
               "simulate and timed in a run of its own");
  app.add_option("--error-check", check, "a2a's error agreement for the rows (agree or local)")
      ->check(CLI::IsMember({"agree", "local"}));
  bool nonblocking = false;
  double test_interval = 10;
  app.add_flag("--nonblocking", nonblocking,
               "overlap, as OSU's osu_ialltoall: per row and size the pure time (start + wait), a compute phase "
               "as long, the overall time with a test every --test-interval us of it, and overlap %");
  app.add_option("--test-interval", test_interval,
                 "--nonblocking: microseconds of compute between tests (A2A_Test; MPI_Test for native); 0: none")
      ->check(CLI::NonNegativeNumber);
  std::string shim;
  app.add_option("--shim", shim,
                 "--nonblocking: also the PMPI shim's MPI_Ialltoall(v) (tested with MPI_Test) and its blocking "
                 "call, running A2A_ALLTOALL(V); the shim's library (default: liba2a_pmpi.so beside this program, "
                 "or in ../lib)")
      ->expected(0, 1);
  std::string device = "host";
  app.add_option("--device", device,
                 "host, or cuda: device buffers (cuda-ipc's paths, host-staged MPI, the one-kernel floor; "
                 "-m defaults to 16:64M); fake-cuda: the cuda bench's path on host memory (checks the bench "
                 "without a GPU)")
      ->check(CLI::IsMember({"host", "cuda", "fake-cuda"}));
  app.add_option("--csv", csv, "CSV output file");
  app.add_option("--json", json, "also write JSON here");
  std::vector<std::string> args(raw.rbegin(), raw.rend());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const auto mode = check == "agree" ? a2a::ErrorCheck::agree : a2a::ErrorCheck::local;
  const bool v = collective == "alltoallv";
  a2a::workload::Workload workload;
  std::string werr;
  if (!a2a::workload::parse(workload_text, workload, werr)) {
    std::fprintf(stderr, "%s\n", werr.c_str());
    return 2;
  }

  if (device == "cuda" || device == "fake-cuda") {
    CudaBenchOptions o;
    o.fake = device == "fake-cuda";
    o.v = v;
    o.workload_text = workload_text;
    o.workload = workload;
    const auto sizes = sizes_between(app.count("-m") ? range : "16:67108864");
    o.min_bytes = sizes.empty() ? 1 : sizes.front();
    o.max_bytes = sizes.empty() ? 0 : sizes.back();
    o.iters = iters;
    o.warmup = warmup;
    o.validate = validate;
    o.algs = algs;
    o.csv = csv;
    o.json = json;
    MPI_Init(nullptr, nullptr);
    const int status = run_bench_cuda(o);
    MPI_Finalize();
    return status;
  }
  if (twins_wanted) a2a::tools::Twins::before_init();
  MPI_Init(nullptr, nullptr);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  a2a::tools::Twins twins;
  if (twins_wanted) {
    std::string why;
    if (twins.setup(v, why) != MPI_SUCCESS) {
      if (rank == 0) std::fprintf(stderr, "a2a bench --twins: %s\n", why.c_str());
      twins.finish();
      MPI_Finalize();
      return 2;
    }
    std::vector<std::string> rows = {"native"};
    for (const auto& t : twins.rows()) {
      for (const auto& a : t.a2a)
        if (std::find(rows.begin(), rows.end(), a) == rows.end()) rows.push_back(a);
      rows.push_back(t.label);
    }
    for (const auto& a : algs)
      if (std::find(rows.begin(), rows.end(), a) == rows.end()) rows.push_back(a);
    algs = rows;
  }
  if (a2a::detail::sim_shared_buffers()) {  // SMPI timing runs: every rank's buffers are the same pages
    if (rank == 0) std::printf("# A2A_SIM_SHARED: buffers shared by all simulated ranks; data not validated\n");
    validate = false;
  }
  if (sweep_radix) {
    auto sweep = sweep_algorithms(v, P);
    for (const auto& a : algs)
      if (std::find(sweep.begin(), sweep.end(), a) == sweep.end()) sweep.push_back(a);
    algs = sweep;
  }
  if (algs.empty()) algs = default_algorithms(v, P);
  if (without_native) algs.erase(std::remove(algs.begin(), algs.end(), "native"), algs.end());
  else if (std::find(algs.begin(), algs.end(), "native") == algs.end()) algs.insert(algs.begin(), "native");
  if (nonblocking) {
    OverlapBenchOptions o;
    o.v = v;
    o.workload_text = workload_text;
    o.workload = workload;
    o.sizes = sizes_between(range);
    o.iters = iters;
    o.warmup = warmup;
    o.test_interval_us = test_interval;
    o.validate = validate;
    o.algs = algs;
    o.csv = csv;
    o.json = json;
    if (app.count("--shim")) o.shim = shim.empty() ? shim_beside_this_program() : shim;
    const int status = run_bench_overlap(o);
    MPI_Finalize();
    return status;
  }
  if (algs.empty()) {
    std::fprintf(stderr, "a2a bench: nothing to run\n");
    twins.finish();
  MPI_Finalize();
    return 2;
  }
  nlohmann::json rows = nlohmann::json::array();
  RatioSummary auto_vs_native, best_vs_native, auto_all_calls, auto_paired;
  std::map<std::string, RatioSummary> twin_ratios;
  std::map<std::string, RatioSummary> nonblocking_ratios;  // i/X over X, where both rows run
  long long wrong_total = 0;
  int status = 0;
  if (rank == 0) {
    std::printf("# a2a bench %s: P=%d, %d iterations (+%d warm-up)%s, time = median over iterations of the max over "
                "ranks\n# native = MPI_%s called directly; a2a rows with error check '%s', agree/ rows with 'agree'\n",
                collective.c_str(), P, iters, warmup,
                batch > 1 ? (" of " + std::to_string(batch) + " calls each").c_str() : "",
                v ? "Alltoallv" : "Alltoall", check.c_str());
    if (twins_wanted)
      std::printf("# twin: rows = MPI_%s forced to one of its own algorithms (MPI_T), on a communicator of its own\n",
                  v ? "Alltoallv" : "Alltoall");
    if (v) std::printf("# workload %s; bytes = its size knob\n", workload_text.c_str());
    std::printf("# algbw = S / median time, busbw = algbw * (P-1)/P, in GB/s; S = bytes a rank sends (%s)\n",
                v ? "the largest over ranks" : "P * bytes");
  }
  // As the PMPI shim does in MPI_Init: world's layout learnt and the machine
  // measured before the first timed call (collective).
  A2A_Comm_prepare(MPI_COMM_WORLD);
  const std::string nodes = a2a::layout(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("# layout: %s\n", nodes.c_str());
    std::printf("%10s  %-34s %11s %11s %11s %9s %9s %9s %11s %6s\n", "bytes", "algorithm", "median_us", "min_us",
                "max_us", "vs_native", "algbw", "busbw", "inter_msgs", "wrong");
  }
  std::vector<Row> parsed;
  for (const auto& alg : algs) parsed.push_back(parse_row(alg, mode, twins));
  for (long long m : sizes_between(range)) {
    Case c = make_case(v, workload, m, rank, P);
    // S of the bandwidths: this rank's send total, the largest over ranks.
    long long rank_bytes = static_cast<long long>(c.sbuf.size());
    MPI_Allreduce(MPI_IN_PLACE, &rank_bytes, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    std::vector<std::vector<double>> t;
    std::vector<std::string> ran(algs.size());
    size_t failed = 0;
    // What ran and the inter-node message count summed over ranks (-1:
    // hidden, native), read after every call (the last one stays).
    std::vector<long long> wrong(algs.size(), 0), inter(algs.size(), 0);
    const auto note_stats = [&](size_t a) {
      const bool mpi = algs[a] == "native" || algs[a] == "i/native" || is_twin(algs[a]);
      A2A_Stats st;
      A2A_Last_stats(&st);
      inter[a] = mpi ? -1 : st.inter_node_messages;
      ran[a] = algs[a] == "native"     ? (v ? "MPI_Alltoallv" : "MPI_Alltoall")
               : algs[a] == "i/native" ? (v ? "MPI_Ialltoallv" : "MPI_Ialltoall")
               : mpi                   ? algs[a]
                                       : st.algorithm;
    };
    const auto call = [&](size_t a) { return run(parsed[a], c); };
    const auto before = [&](size_t a) { return is_twin(algs[a]) ? twins.enter(*twins.find(algs[a])) : 0; };
    const auto after = [&](size_t a) {
      note_stats(a);
      return is_twin(algs[a]) ? twins.leave(*twins.find(algs[a])) : 0;
    };
    const int rc =
        a2a::tools::time_rows(algs.size(), warmup, iters, static_cast<unsigned>(m), call, t, failed, batch, before, after);
    if (rc != MPI_SUCCESS) {
      if (rank == 0) std::fprintf(stderr, "a2a bench: %s failed: %s\n", algs[failed].c_str(), a2a::last_error_message().c_str());
      twins.finish();
      MPI_Finalize();
      return 1;
    }
    // -c: one more call per algorithm, untimed, into a zeroed buffer (an
    // extra call rather than checking a timed one: the rows share buffers).
    for (size_t a = 0; validate && a < algs.size(); ++a) {
      std::fill(c.rbuf.begin(), c.rbuf.end(), 0);
      before(a);
      run(parsed[a], c);
      after(a);
      wrong[a] = count_wrong(c);
    }
    MPI_Allreduce(MPI_IN_PLACE, wrong.data(), static_cast<int>(wrong.size()), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, inter.data(), static_cast<int>(inter.size()), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (size_t a = 0; a < algs.size(); ++a)
      MPI_Allreduce(MPI_IN_PLACE, t[a].data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank != 0) continue;
    const auto native_row = std::find(algs.begin(), algs.end(), "native") - algs.begin();
    const double native = native_row < static_cast<long>(algs.size()) ? a2a::tools::median(t[native_row]) : -1.0;
    // Each iteration's time over native's in the same iteration (shuffled
    // order, back to back), the median: phases of the machine longer than an
    // iteration move both alike.
    const auto paired = [&](size_t a) {
      if (native <= 0) return -1.0;
      std::vector<double> r(t[a].size());
      for (size_t i = 0; i < r.size(); ++i) r[i] = t[a][i] / t[native_row][i];
      return a2a::tools::median(r);
    };
    for (size_t a = 0; a < algs.size(); ++a) {
      const double med = a2a::tools::median(t[a]) * 1e6;
      const double lo = *std::min_element(t[a].begin(), t[a].end()) * 1e6;
      const double hi = *std::max_element(t[a].begin(), t[a].end()) * 1e6;
      const double ratio = native > 0 ? a2a::tools::median(t[a]) / native : -1.0;
      const double mean = a2a::tools::mean(t[a]) * 1e6;
      wrong_total += wrong[a];
      const long long inter_msgs = inter[a] < 0 ? -1 : inter[a];
      const double algbw = static_cast<double>(rank_bytes) / (med * 1e-6) / 1e9;
      const double busbw = algbw * (P - 1) / P;
      std::printf("%10lld  %-34s %11.3f %11.3f %11.3f %9.3f %9.4f %9.4f %11lld %6lld\n", m,
                  shown(algs[a], ran[a]).c_str(), med, lo, hi, ratio, algbw, busbw, inter_msgs, wrong[a]);
      rows.push_back({{"collective", collective}, {"workload", v ? workload_text : ""}, {"procs", P}, {"bytes", m}, {"algorithm", algs[a]}, {"resolved", ran[a]}, {"median_us", med},
                      {"min_us", lo}, {"max_us", hi}, {"ratio_to_native", ratio}, {"inter_node_messages", inter_msgs}, {"wrong", wrong[a]},
                      {"algbw_GBps", algbw}, {"busbw_GBps", busbw}, {"radix", radix_of(ran[a])}, {"mean_us", mean},
                      {"paired_to_native", paired(a)}});
    }
    // The run's summary: auto and the best a2a row over native, a2a over its twins.
    double best_a2a = -1;
    for (size_t a = 0; a < algs.size(); ++a) {
      const double med = a2a::tools::median(t[a]);
      if (algs[a] != "native" && algs[a] != "i/native" && !is_twin(algs[a]) && (best_a2a < 0 || med < best_a2a)) best_a2a = med;
      if (algs[a] == "auto" && native > 0) {
        auto_vs_native.add(med / native, m);
        auto_all_calls.add(a2a::tools::mean(t[a]) / a2a::tools::mean(t[native_row]), m);
        auto_paired.add(paired(a), m);
      }
      if (algs[a].rfind("i/", 0) == 0) {  // the nonblocking call and its wait over the blocking call
        const size_t blocking = static_cast<size_t>(std::find(algs.begin(), algs.end(), algs[a].substr(2)) - algs.begin());
        double base = blocking < algs.size() ? a2a::tools::median(t[blocking]) : -1.0;
        if (algs[a] == "i/native") base = native;
        if (base > 0) nonblocking_ratios[algs[a]].add(med / base, m);
      }
      if (is_twin(algs[a]))
        for (const auto& spec : twins.find(algs[a])->a2a) {
          const auto mine = std::find(algs.begin(), algs.end(), spec) - algs.begin();
          twin_ratios[spec + " / " + algs[a]].add(a2a::tools::median(t[mine]) / med, m);
        }
    }
    if (native > 0 && best_a2a > 0) best_vs_native.add(best_a2a / native, m);
  }
  if (rank == 0) {
    std::ofstream out(csv);
    out << "collective,workload,procs,bytes,algorithm,resolved,median_us,min_us,max_us,ratio_to_native,"
           "inter_node_messages,wrong,algbw_GBps,busbw_GBps,radix,mean_us,paired_to_native\n";
    for (const auto& r : rows)
      out << r["collective"].get<std::string>() << ",\"" << r["workload"].get<std::string>() << "\"," << r["procs"] << ',' << r["bytes"] << ",\"" << r["algorithm"].get<std::string>() << "\",\""
          << r["resolved"].get<std::string>() << "\"," << r["median_us"] << ',' << r["min_us"] << ',' << r["max_us"]
          << ',' << r["ratio_to_native"] << ',' << r["inter_node_messages"] << ',' << r["wrong"] << ','
          << r["algbw_GBps"] << ',' << r["busbw_GBps"] << ',' << r["radix"] << ',' << r["mean_us"] << ','
          << r["paired_to_native"] << '\n';
    bool written = static_cast<bool>(out.flush());
    if (!json.empty()) {
      std::ofstream js(json);
      written = static_cast<bool>(js << rows.dump(2) << '\n') && written;
    }
    for (const auto& tw : twins.rows())
      for (const auto& spec : tw.a2a) {
        const RatioSummary& r = twin_ratios[spec + " / " + tw.label];
        std::printf("# twin: %-16s / %-34s geometric mean %.3f, worst %.3f (at %lld B)\n", spec.c_str(),
                    tw.label.c_str(), r.gm(), r.worst, r.worst_at);
      }
    for (const auto& [row, r] : nonblocking_ratios)
      std::printf("# nonblocking: %s / %s geometric mean %.3f, worst %.3f (at %lld B)\n", row.c_str(),
                  row == "i/native" ? "native" : row.substr(2).c_str(), r.gm(), r.worst, r.worst_at);
    if (auto_vs_native.n)
      std::printf("# summary: auto/native geometric mean %.3f, worst %.3f (at %lld B)\n", auto_vs_native.gm(),
                  auto_vs_native.worst, auto_vs_native.worst_at);
    if (auto_paired.n)
      std::printf("# summary: auto/native paired (median of each iteration's ratio): geometric mean %.3f, worst %.3f "
                  "(at %lld B)\n",
                  auto_paired.gm(), auto_paired.worst, auto_paired.worst_at);
    if (auto_all_calls.n)  // with -x 0: the first calls, auto's trial included
      std::printf("# summary: auto/native over the mean of every timed call: geometric mean %.3f, worst %.3f (at %lld "
                  "B)\n",
                  auto_all_calls.gm(), auto_all_calls.worst, auto_all_calls.worst_at);
    if (best_vs_native.n)
      std::printf("# summary: best a2a/native geometric mean %.3f, worst %.3f (at %lld B)\n", best_vs_native.gm(),
                  best_vs_native.worst, best_vs_native.worst_at);
    std::printf("# wrong: %lld %s\n# csv: %s\n", wrong_total, wrong_total ? "FAILED" : "OK", csv.c_str());
    if (!written) std::fprintf(stderr, "a2a bench: cannot write %s%s%s\n", csv.c_str(), json.empty() ? "" : " or ", json.c_str());
    status = wrong_total || !written ? 1 : 0;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  twins.finish();
  MPI_Finalize();
  return status;
}
