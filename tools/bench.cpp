// `a2a bench`: the algorithms side by side against native, OSU style.
// Per size and algorithm: each iteration's time is the maximum over ranks;
// the table shows the median (and min, max) of those over -i iterations after
// -x warm-up ones.  Algorithms are interleaved within each iteration, in an
// order shuffled every iteration, so that noise on a shared machine and the
// cache state left by the previous row hit them alike; compare ratios, not
// absolutes.
// The "native" row calls MPI_Alltoall directly (not through a2a), so every
// ratio includes what a2a adds.  --error-check picks how a2a agrees on
// errors; a spec prefixed "agree/" always runs with agreement, which prices
// the default mode in the same table.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "a2a/a2a.hpp"

namespace {

unsigned char expected(int src, int dst, long long j) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + j * 7 + 1);
}

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

int run(const std::string& alg, const unsigned char* s, unsigned char* r, long long m, a2a::ErrorCheck mode) {
  const int n = static_cast<int>(m);
  if (alg == "native") return MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
  const bool agree = alg.rfind(kAgree, 0) == 0;
  a2a::set_error_check(agree ? a2a::ErrorCheck::agree : mode);
  return A2A_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, alg.c_str() + (agree ? 6 : 0));
}

// What ran: the resolved spec, with the requested one where they differ in kind.
std::string shown(const std::string& asked, const std::string& ran) {
  if (asked.find("auto") != std::string::npos) return asked + " (" + ran + ")";
  return asked.rfind(kAgree, 0) == 0 ? kAgree + ran : ran;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int run_bench(const std::vector<std::string>& raw) {
  CLI::App app{"a2a bench"};
  std::string range = "16:65536", csv = "a2a-bench.csv", json;
  int iters = 50, warmup = 5;
  bool validate = false;
  std::vector<std::string> algs = {"native", "linear", "spread-out", "scattered", "pairwise",
                                   "bruck-basic", "bruck-basic:dt=1", "bruck-modified", "bruck-modified:dt=1",
                                   "bruck-zero-copy", "bruck-zero-copy:dt=1", "bruck-zero-rotation",
                                   "tra:radix=2", "tra:radix=auto", "auto", "agree/auto"};
  std::string check = a2a::error_check() == a2a::ErrorCheck::agree ? "agree" : "local";
  app.add_option("-m,--message-size", range, "MIN:MAX block bytes per destination, doubling");
  app.add_option("-i,--iterations", iters, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("-x,--warmup", warmup, "untimed warm-up iterations")->check(CLI::NonNegativeNumber);
  app.add_flag("-c,--validate", validate, "check every received byte once per size and algorithm");
  app.add_option("-a,--algorithm", algs, "algorithm specs to compare (repeatable); native is always included");
  app.add_option("--error-check", check, "a2a's error agreement for the rows (agree or local)")
      ->check(CLI::IsMember({"agree", "local"}));
  app.add_option("--csv", csv, "CSV output file");
  app.add_option("--json", json, "also write JSON here");
  std::vector<std::string> args(raw.rbegin(), raw.rend());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (std::find(algs.begin(), algs.end(), "native") == algs.end()) algs.insert(algs.begin(), "native");
  const auto mode = check == "agree" ? a2a::ErrorCheck::agree : a2a::ErrorCheck::local;

  MPI_Init(nullptr, nullptr);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  nlohmann::json rows = nlohmann::json::array();
  long long wrong_total = 0;
  int status = 0;
  if (rank == 0) {
    std::printf("# a2a bench: P=%d, %d iterations (+%d warm-up), time = median over iterations of the max over ranks\n"
                "# native = MPI_Alltoall called directly; a2a rows with error check '%s', agree/ rows with 'agree'\n",
                P, iters, warmup, check.c_str());
    std::printf("%10s  %-34s %11s %11s %11s %9s %6s\n", "bytes", "algorithm", "median_us", "min_us", "max_us",
                "vs_native", "wrong");
  }
  for (long long m : sizes_between(range)) {
    const size_t total = static_cast<size_t>(m) * P;
    std::vector<unsigned char> sbuf(total), rbuf(total);
    for (int d = 0; d < P; ++d)
      for (long long j = 0; j < m; ++j) sbuf[d * m + j] = expected(rank, d, j);
    std::vector<std::vector<double>> t(algs.size(), std::vector<double>(iters));
    std::vector<std::string> ran(algs.size());
    std::vector<size_t> order(algs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::mt19937 shuffler(static_cast<unsigned>(m));
    for (int it = -warmup; it < iters; ++it) {
      // A fresh order every iteration (the same on every rank: same seed), so no
      // row always follows the same one.
      std::shuffle(order.begin(), order.end(), shuffler);
      for (size_t a : order) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        const int rc = run(algs[a], sbuf.data(), rbuf.data(), m, mode);
        const double dt = MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS) {
          if (rank == 0) std::fprintf(stderr, "a2a bench: %s failed: %s\n", algs[a].c_str(), a2a::last_error_message().c_str());
          MPI_Finalize();
          return 1;
        }
        if (it >= 0) t[a][it] = dt;
        A2A_Stats st;
        A2A_Last_stats(&st);
        ran[a] = algs[a] == "native" ? "MPI_Alltoall" : st.algorithm;
      }
    }
    std::vector<long long> wrong(algs.size(), 0);
    if (validate) {
      for (size_t a = 0; a < algs.size(); ++a) {
        std::fill(rbuf.begin(), rbuf.end(), 0);
        run(algs[a], sbuf.data(), rbuf.data(), m, mode);
        for (int s = 0; s < P; ++s)
          for (long long j = 0; j < m; ++j) wrong[a] += rbuf[s * m + j] != expected(s, rank, j);
      }
      MPI_Allreduce(MPI_IN_PLACE, wrong.data(), static_cast<int>(wrong.size()), MPI_LONG_LONG, MPI_SUM,
                    MPI_COMM_WORLD);
    }
    for (size_t a = 0; a < algs.size(); ++a)
      MPI_Allreduce(MPI_IN_PLACE, t[a].data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank != 0) continue;
    const double native = median(t[0]);
    for (size_t a = 0; a < algs.size(); ++a) {
      const double med = median(t[a]) * 1e6;
      const double lo = *std::min_element(t[a].begin(), t[a].end()) * 1e6;
      const double hi = *std::max_element(t[a].begin(), t[a].end()) * 1e6;
      const double ratio = median(t[a]) / native;
      wrong_total += wrong[a];
      std::printf("%10lld  %-34s %11.2f %11.2f %11.2f %9.3f %6lld\n", m, shown(algs[a], ran[a]).c_str(), med, lo, hi,
                  ratio, wrong[a]);
      rows.push_back({{"procs", P}, {"bytes", m}, {"algorithm", algs[a]}, {"resolved", ran[a]}, {"median_us", med},
                      {"min_us", lo}, {"max_us", hi}, {"ratio_to_native", ratio}, {"wrong", wrong[a]}});
    }
  }
  if (rank == 0) {
    std::ofstream out(csv);
    out << "procs,bytes,algorithm,resolved,median_us,min_us,max_us,ratio_to_native,wrong\n";
    for (const auto& r : rows)
      out << r["procs"] << ',' << r["bytes"] << ",\"" << r["algorithm"].get<std::string>() << "\",\""
          << r["resolved"].get<std::string>() << "\"," << r["median_us"] << ',' << r["min_us"] << ',' << r["max_us"]
          << ',' << r["ratio_to_native"] << ',' << r["wrong"] << '\n';
    if (!json.empty()) std::ofstream(json) << rows.dump(2) << '\n';
    std::printf("# wrong: %lld %s\n# csv: %s\n", wrong_total, wrong_total ? "FAILED" : "OK", csv.c_str());
    status = wrong_total ? 1 : 0;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
