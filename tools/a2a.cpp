// The `a2a` command: list the algorithms, print the TRA model, benchmark.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "schedule/schedule.hpp"
#include "select/registry.hpp"

int run_bench(const std::vector<std::string>& args_for_bench);  // bench.cpp

namespace {

void list_algorithms() {
  using a2a::detail::Collective;
  for (auto coll : {Collective::alltoall, Collective::alltoallv}) {
    std::printf("%s (A2A_%s):\n", coll == Collective::alltoall ? "A2A_Alltoall" : "A2A_Alltoallv",
                coll == Collective::alltoall ? "ALLTOALL" : "ALLTOALLV");
    std::printf("  %-22s %s\n", "auto", "picks per call; rule below");
    for (const auto& a : a2a::detail::algorithms()) {
      if (a.collective != coll) continue;
      std::printf("  %-22s %s\n", a.name, a.summary);
      for (const auto& p : a.params) std::printf("  %22s   %s=%s  %s\n", "", p.key, p.fallback, p.help);
    }
  }
  std::printf("auto rule: alltoall -> tra:radix=auto when P >= 64 and block <= 256 bytes, else spread-out;"
              " alltoallv -> native\n");
}

int model(long long P, const std::string& radix_text) {
  namespace s = a2a::detail::schedule;
  long long r = 0;
  if (radix_text == "auto") {
    for (r = 1; r * r < P; ++r) {}
  } else {
    r = std::stoll(radix_text);
  }
  if (P < 1 || r < 2) {
    std::fprintf(stderr, "a2a model: need --procs >= 1 and --radix >= 2\n");
    return 2;
  }
  const long long used = std::max(2LL, std::min(r, P));
  const auto steps = s::tra_steps(static_cast<int>(P), static_cast<int>(used));
  const long long K = s::tra_rounds_closed(P, used), D = s::tra_blocks_closed(P, used);
  const long long Ks = s::count_rounds(steps), Ds = s::count_blocks(steps);
  std::printf("P=%lld radix=%lld w=%d\n", P, used, s::digit_count(P, used));
  std::printf("closed form: K=%lld D=%lld\n", K, D);
  std::printf("schedule:    K=%lld D=%lld\n", Ks, Ds);
  std::printf("%s\n", K == Ks && D == Ds ? "agree" : "DISAGREE");
  return K == Ks && D == Ds ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a2a: configurable all-to-all collectives for MPI"};
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "print every algorithm with its parameters and defaults");
  auto* mdl = app.add_subcommand("model", "TRA rounds K and blocks D: closed forms against the schedule");
  long long procs = 0;
  std::string radix = "auto";
  mdl->add_option("--procs,-p", procs, "number of processes P")->required();
  mdl->add_option("--radix,-r", radix, "radix r (2..P, or auto)");
  auto* bench = app.add_subcommand("bench", "benchmark the algorithms against native (run under mpirun)");
  bench->prefix_command();  // bench parses its own options
  CLI11_PARSE(app, argc, argv);
  if (*list) {
    list_algorithms();
    return 0;
  }
  if (*mdl) return model(procs, radix);
  return run_bench(bench->remaining());
}
