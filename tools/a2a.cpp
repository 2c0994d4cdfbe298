// The `a2a` command: list the algorithms, print the TRA model, benchmark.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hier/topology.hpp"
#include "schedule/clustered.hpp"
#include "schedule/schedule.hpp"
#include "select/registry.hpp"

int run_bench(const std::vector<std::string>& args_for_bench);  // bench.cpp
bool measure_alpha_beta(double& alpha, double& beta);              // model_measure.cpp

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
    r = s::ceil_sqrt(P);
  } else {
    char* end = nullptr;
    r = std::strtoll(radix_text.c_str(), &end, 10);
    if (*end != '\0') r = 0;
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

// The padded-vs-two-phase model of Fan et al. (Bruck non-uniform paper,
// section 3.3) for radix-2 Bruck with largest block N bytes, blocks of mean
// N/2: padded    T1 = alpha log P + beta log P (P+1)/2 N
//      two-phase T2 = 2 alpha log P + 4 beta log P (P+1)/2 + beta log P (P+1)/2 N/2
// so padded wins when (N - 8)(P + 1) beta < 4 alpha.
int model_alltoallv(long long P, long long N, double alpha, double beta) {
  namespace s = a2a::detail::schedule;
  if (P < 1 || N < 0) {
    std::fprintf(stderr, "a2a model: need --procs >= 1 and --max-block >= 0\n");
    return 2;
  }
  const long long K = s::tra_rounds_closed(P, 2), D = s::tra_blocks_closed(P, 2);
  const double logP = static_cast<double>(s::digit_count(P, 2)), half = (static_cast<double>(P) + 1) / 2;
  const double padded = alpha * logP + beta * logP * half * static_cast<double>(N);
  const double two_phase = 2 * alpha * logP + 4 * beta * logP * half + beta * logP * half * static_cast<double>(N) / 2;
  const bool padded_wins = (static_cast<double>(N) - 8) * (static_cast<double>(P) + 1) * beta < 4 * alpha;
  std::printf("P=%lld max-block N=%lld bytes, alpha=%.3g s, beta=%.3g s/byte\n", P, N, alpha, beta);
  std::printf("radix-2 Bruck: K=%lld rounds, D=%lld blocks\n", K, D);
  std::printf("padded-bruck:    data %lld bytes (D*N), metadata 8 bytes (one allreduce)\n", D * N);
  std::printf("two-phase-bruck: metadata %lld bytes (8 per block; the paper's model counts 4: %lld)\n", 8 * D, 4 * D);
  std::printf("model: padded %.3g s, two-phase %.3g s\n", padded, two_phase);
  std::printf("(N - 8)(P + 1) beta = %.3g %s 4 alpha = %.3g: %s wins\n",
              (static_cast<double>(N) - 8) * (static_cast<double>(P) + 1) * beta, padded_wins ? "<" : ">=", 4 * alpha,
              padded_wins ? "padded-bruck" : "two-phase-bruck");
  return 0;
}

// Traff's clustered schedule for the given node sizes, step by step.
int model_clustered(const std::string& sizes_text) {
  namespace s = a2a::detail::schedule;
  std::vector<long long> ids;
  std::string source, error;
  long long P = 0;  // the sum of the sizes
  for (size_t pos = 0; pos < sizes_text.size();) {
    P += std::atoll(sizes_text.c_str() + pos);
    const size_t comma = sizes_text.find(',', pos);
    pos = comma == std::string::npos ? sizes_text.size() : comma + 1;
  }
  a2a::detail::node_ids_from(nullptr, sizes_text.c_str(), nullptr, static_cast<int>(P), ids, source, error);
  if (!error.empty() || ids.empty()) {
    std::fprintf(stderr, "a2a model: %s\n", error.empty() ? "need --node-sizes" : error.c_str());
    return 2;
  }
  const auto topo = a2a::detail::group_by_key(ids, source);
  const auto phases = s::clustered_schedule(topo.ranks);
  std::printf("clustered: P=%lld, %s\n", P, topo.describe().c_str());
  for (size_t ph = 0; ph < phases.size(); ++ph) {
    std::printf("phase %zu: local indices %d..%d\n", ph + 1, phases[ph].done, phases[ph].current - 1);
    for (size_t i = 0; i < phases[ph].rounds.size(); ++i) {
      std::printf("  round %zu:", i + 1);
      for (const auto& pair : phases[ph].rounds[i]) {
        std::printf(" [");
        for (size_t k = 0; k < pair.size(); ++k)
          std::printf("%s%d%s%d", k ? " " : "", pair[k].u, pair[k].u == pair[k].v ? "=" : pair[k].one_way ? ">" : "<>",
                      pair[k].v);
        std::printf("]");
      }
      std::printf("\n");
    }
  }
  std::printf("steps: %lld (per round the longest node pair; local copies u=u not counted)\n",
              s::clustered_steps(phases));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a2a: configurable all-to-all collectives for MPI"};
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "print every algorithm with its parameters and defaults");
  auto* mdl = app.add_subcommand("model", "TRA rounds K and blocks D: closed forms against the schedule");
  long long procs = 0;
  std::string radix = "auto";
  std::string alg = "tra", node_sizes;
  mdl->add_option("--procs,-p", procs, "number of processes P");
  mdl->add_option("--alg", alg, "tra (default) or clustered")->check(CLI::IsMember({"tra", "clustered"}));
  mdl->add_option("--node-sizes", node_sizes, "clustered: ranks per node, e.g. 1,2,3");
  mdl->add_option("--radix,-r", radix, "radix r (2..P, or auto)");
  std::string collective = "alltoall";
  long long max_block = 0;
  double alpha = 2e-6, beta = 1e-10;
  bool measure = false;
  mdl->add_option("--collective", collective, "alltoall (TRA K and D) or alltoallv (padded vs two-phase)")
      ->check(CLI::IsMember({"alltoall", "alltoallv"}));
  mdl->add_option("--max-block,-n", max_block, "alltoallv: the largest block N in bytes");
  mdl->add_option("--alpha", alpha, "alltoallv: latency per message in seconds (default 2e-6)");
  mdl->add_option("--beta", beta, "alltoallv: seconds per byte (default 1e-10)");
  mdl->add_flag("--measure", measure, "alltoallv: measure alpha and beta by ping-pong (run under mpirun -np 2)");
  auto* bench = app.add_subcommand("bench", "benchmark the algorithms against native (run under mpirun)");
  bench->prefix_command();  // bench parses its own options
  CLI11_PARSE(app, argc, argv);
  if (*list) {
    list_algorithms();
    return 0;
  }
  if (*mdl) {
    if (alg == "clustered") return model_clustered(node_sizes);
    if (collective == "alltoall") return model(procs, radix);
    if (measure && !measure_alpha_beta(alpha, beta)) return 0;  // ranks other than 0 print nothing
    return model_alltoallv(procs, max_block, alpha, beta);
  }
  return run_bench(bench->remaining());
}
