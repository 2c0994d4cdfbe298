// The `a2a` command: list the algorithms, print the TRA model, benchmark, plot.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/topology.hpp"
#include "schedule/clustered.hpp"
#include "schedule/schedule.hpp"
#include "schedule/trace.hpp"
#include "core/cost_keys.hpp"
#include "select/cost_model.hpp"
#include "select/policy.hpp"
#include "registry/registry.hpp"

int run_bench(const std::vector<std::string>& args_for_bench);  // bench.cpp
int run_tune(const std::vector<std::string>& args_for_tune);    // tune.cpp
int run_trace(const std::vector<std::string>& args_for_trace);  // trace.cpp
int build_traces(int P, int Q, long long bytes, const std::string& spec_text, bool v, const std::string& workload_text,
                 std::vector<a2a::detail::schedule::Trace>& traces,
                 a2a::detail::schedule::BlockBytes& block);  // trace.cpp
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
      for (const auto& p : a.params) std::printf("  %22s   %s=%s  %s\n", "", p.key, p.fallback.c_str(), p.help);
    }
  }
  std::printf("auto: the A2A_TUNING_FILE entry for (collective, P, node layout, block size) when one matches,\n"
              "      else the cheapest candidate of the alpha-beta cost model (`a2a model --rank`)\n");
}

int model(long long P, const std::string& radix_text, const std::string& ports_text) {
  namespace s = a2a::detail::schedule;
  long long r = 0;
  if (radix_text == "auto") {
    r = s::ceil_sqrt(P);
  } else {
    char* end = nullptr;
    r = std::strtoll(radix_text.c_str(), &end, 10);
    if (*end != '\0') r = 0;
  }
  long long b = 0;  // all
  if (ports_text != "all") {
    char* end = nullptr;
    b = std::strtoll(ports_text.c_str(), &end, 10);
    if (*end != '\0' || b < 1) b = -1;
  }
  if (P < 1 || r < 2 || b < 0) {
    std::fprintf(stderr, "a2a model: need --procs >= 1, --radix >= 2 and --ports >= 1 or all\n");
    return 2;
  }
  const long long used = std::max(2LL, std::min(r, P));
  const auto steps = s::tra_steps(static_cast<int>(P), static_cast<int>(used));
  const long long K = s::tra_rounds_closed(P, used), D = s::tra_blocks_closed(P, used);
  const long long Ks = s::count_rounds(steps), Ds = s::count_blocks(steps);
  const long long W = s::tra_waits_closed(P, used, b);
  long long Ws = 0;  // the schedule's batches
  for (size_t first = 0; first < steps.size(); first = s::batch_end(steps, first, static_cast<int>(b))) ++Ws;
  const bool agree = K == Ks && D == Ds && W == Ws;
  std::printf("P=%lld radix=%lld w=%d ports=%s\n", P, used, s::digit_count(P, used),
              b == 0 || b >= used - 1 ? "all" : std::to_string(b).c_str());
  std::printf("closed form: K=%lld D=%lld waits=%lld\n", K, D, W);
  std::printf("schedule:    K=%lld D=%lld waits=%lld\n", Ks, Ds, Ws);
  std::printf("%s\n", agree ? "agree" : "DISAGREE");
  return agree ? 0 : 1;
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

// --node-sizes read as A2A_NODE_SIZES is (core/topology.hpp): nodes of
// consecutive ranks; no nodes, the reason on stderr, where it names none.
a2a::detail::Topology layout_of_sizes(const std::string& sizes_text) {
  long long P = 0;  // the sum of the sizes
  for (size_t pos = 0; pos < sizes_text.size();) {
    P += std::atoll(sizes_text.c_str() + pos);
    const size_t comma = sizes_text.find(',', pos);
    pos = comma == std::string::npos ? sizes_text.size() : comma + 1;
  }
  std::vector<long long> ids;
  std::string source, error;
  a2a::detail::node_ids_from(nullptr, sizes_text.c_str(), nullptr, static_cast<int>(P), ids, source, error);
  if (!error.empty() || ids.empty()) {
    std::fprintf(stderr, "a2a model: %s\n", error.empty() ? "need --node-sizes, e.g. 2,2,2,2" : error.c_str());
    return {};
  }
  return a2a::detail::group_by_key(ids, source);
}

// Traff's clustered schedule for the given node sizes, step by step.
int model_clustered(const std::string& sizes_text) {
  namespace s = a2a::detail::schedule;
  const auto topo = layout_of_sizes(sizes_text);
  if (topo.nodes() == 0) return 2;
  const long long P = static_cast<long long>(topo.node_of.size());
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

// `a2a model --inter-node SPEC`: the data messages SPEC's schedule sends
// between nodes, summed over the ranks (what a2a bench's inter_msgs and
// A2A_Stats's inter_node_messages count): clustered from its plan on any
// node sizes, the others from their traces (schedule/trace.hpp) on equal
// nodes of consecutive ranks.
int model_inter_node(const std::string& sizes_text, const std::string& spec_text, bool v, long long bytes) {
  namespace s = a2a::detail::schedule;
  const auto topo = layout_of_sizes(sizes_text);
  if (topo.nodes() == 0) return 2;
  const int P = static_cast<int>(topo.node_of.size());
  const auto& node_of = topo.node_of;
  const int Q = static_cast<int>(topo.ranks[0].size());  // the first node's size (the traces take equal nodes)
  long long inter = 0;
  if (spec_text.rfind("clustered", 0) == 0) {
    for (int r = 0; r < P; ++r)
      for (const auto& step : s::clustered_plan(topo.ranks, r)) inter += step.send && node_of[step.peer] != node_of[r];
  } else {
    const auto unequal = [&](const std::vector<int>& node) { return static_cast<int>(node.size()) != Q; };
    if (std::any_of(topo.ranks.begin(), topo.ranks.end(), unequal)) {
      std::fprintf(stderr, "a2a model --inter-node: %s's schedule is modelled on equal nodes only\n", spec_text.c_str());
      return 2;
    }
    std::vector<s::Trace> traces;
    s::BlockBytes block;
    if (const int rc = build_traces(P, Q, bytes, spec_text, v, "uniform", traces, block)) return rc;
    for (int r = 0; r < P; ++r) inter += s::trace_totals(traces[r], r, Q).inter_messages;
  }
  std::printf("inter-node messages: %lld (%s, P=%d, nodes %s)\n", inter, spec_text.c_str(), P, sizes_text.c_str());
  return 0;
}

// `a2a model --rank`: auto's cost model for a P, layout and size, every
// candidate with its modelled time, cheapest first.
int model_rank(int P, const std::string& node_sizes, const std::string& collective, long long bytes,
               long long max_block, const std::string& cost_text, const std::string& library) {
  a2a::detail::MachineModel m;
  m.library = a2a::detail::library_from_version(library == "ompi" ? "Open MPI" : library == "mpich" ? "MPICH" : "");
  unsigned given = 0;
  std::string err;
  if (!a2a::detail::parse_cost_model(cost_text, m, given, err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  std::vector<int> sizes;
  std::stringstream in(node_sizes.empty() ? std::to_string(P) : node_sizes);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::atoi(item.c_str()));
  a2a::detail::ModelLayout layout;
  for (int q : sizes) {
    if (q < 1) return std::fprintf(stderr, "a2a model: node sizes must be positive\n"), 2;
    layout.ranks.emplace_back();
    for (int k = 0; k < q; ++k) {
      layout.ranks.back().push_back(static_cast<int>(layout.node_of.size()));
      layout.node_of.push_back(static_cast<int>(layout.ranks.size()) - 1);
    }
  }
  if (P > 0 && static_cast<int>(layout.node_of.size()) != P)
    return std::fprintf(stderr, "a2a model: node sizes add up to %zu, not P = %d\n", layout.node_of.size(), P), 2;
  const auto ranked = collective == "alltoall"
                          ? a2a::detail::model_alltoall(layout, bytes, m)
                          : a2a::detail::model_alltoallv(layout, bytes, std::max(bytes, max_block), m);
  std::printf("# %s, P=%zu, nodes %s, %lld-byte blocks; model %s\n", collective.c_str(), layout.node_of.size(),
              node_sizes.empty() ? std::to_string(P).c_str() : node_sizes.c_str(), bytes, cost_text.c_str());
  for (const auto& c : ranked) std::printf("%12.2f us  %s\n", c.seconds * 1e6, c.spec.c_str());
  std::printf("auto without a trial runs: %s\n", a2a::detail::model_pick(ranked).c_str());
  std::string tried;
  for (const auto& spec : a2a::detail::trial_candidates(ranked)) tried += (tried.empty() ? "" : ", ") + spec;
  std::printf("auto's trial times: %s\n", tried.c_str());
  return 0;
}

// `a2a plot`: runs the matplotlib script installed with the tool (found
// beside the binary first, so an installed tree may move; then the install
// prefix, then the source tree for a build directory) with Debian's python3
// if present, since a python3 earlier on PATH may lack matplotlib.
int run_plot(const std::vector<std::string>& args) {
  char buf[4096];
  const ssize_t len = readlink("/proc/self/exe", buf, sizeof buf);
  const std::string exe = len > 0 ? std::string(buf, static_cast<size_t>(len)) : "";
  const std::string exe_dir = exe.substr(0, exe.rfind('/'));
  std::string script;
  for (const std::string& candidate :
       {exe_dir + "/" A2A_PLOT_SCRIPT_FROM_BINDIR, std::string(A2A_PLOT_SCRIPT_INSTALLED),
        std::string(A2A_PLOT_SCRIPT_SOURCE)})
    if (access(candidate.c_str(), R_OK) == 0) {
      script = candidate;
      break;
    }
  if (script.empty()) {
    std::fprintf(stderr, "a2a plot: a2a_plot.py not found (looked in %s)\n", A2A_PLOT_SCRIPT_INSTALLED);
    return 2;
  }
  const char* python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  std::vector<char*> argv = {const_cast<char*>(python), const_cast<char*>(script.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(python, argv.data());
  std::fprintf(stderr, "a2a plot: cannot run %s: %s\n", python, std::strerror(errno));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a2a: configurable all-to-all collectives for MPI"};
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "print every algorithm with its parameters and defaults");
  std::string sweep_of;
  list->add_option("--sweep", sweep_of, "print instead the specs the tests sweep (every host algorithm at every "
                                        "knob choice, radix 3), one per line")
      ->check(CLI::IsMember({"alltoall", "alltoallv"}));
  auto* mdl = app.add_subcommand("model", "TRA rounds K, blocks D and waits: closed forms against the schedule");
  long long procs = 0;
  std::string radix = "auto";
  std::string alg = "tra", node_sizes;
  mdl->add_option("--procs,-p", procs, "number of processes P");
  mdl->add_option("--alg", alg, "tra (default) or clustered")->check(CLI::IsMember({"tra", "clustered"}));
  mdl->add_option("--node-sizes", node_sizes, "clustered, --inter-node, --rank: ranks per node, e.g. 1,2,3");
  std::string inter_node;
  mdl->add_option("--inter-node", inter_node,
                  "the data messages this spec's schedule sends between nodes (--node-sizes), summed over ranks: "
                  "a2a bench's inter_msgs (tra, tra2, tuna-hier, tuna on equal nodes; clustered on any)");
  mdl->add_option("--radix,-r", radix, "radix r (2..P, or auto)");
  std::string ports = "all";
  mdl->add_option("--ports", ports, "exchanges of one digit in flight together: 1..r-1 or all (waits)");
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
  bool rank_model = false;
  long long bytes = 8;
  std::string cost_text =
      "alpha_intra=2e-6,beta_intra=1e-10,alpha_inter=5e-6,beta_inter=2e-10,overhead=1e-6,copy=1e-10";
  mdl->add_flag("--rank", rank_model, "auto's cost model: every candidate, cheapest first (--procs, --node-sizes, "
                                      "--collective, --bytes, --max-block, --cost-model)");
  mdl->add_option("--bytes", bytes, "--rank: block bytes (alltoallv: the mean block)");
  mdl->add_option("--cost-model", cost_text, "--rank: parameters, as in A2A_COST_MODEL");
  std::string library = "ompi";
  mdl->add_option("--library", library, "--rank: the MPI library whose own choice native is costed as")
      ->check(CLI::IsMember({"ompi", "mpich", "other"}));
  auto* bench = app.add_subcommand("bench", "benchmark the algorithms against native (run under mpirun)");
  bench->prefix_command();  // bench parses its own options, --help included
  bench->set_help_flag();
  auto* tune = app.add_subcommand("tune", "time every algorithm and radix, write a tuning file (run under mpirun)");
  tune->prefix_command();  // tune parses its own options, --help included
  tune->set_help_flag();
  auto* trace = app.add_subcommand("trace", "one call as a SimGrid time-independent trace (a2a trace --help)");
  trace->prefix_command();  // trace parses its own options, --help included
  trace->set_help_flag();
  auto* plot = app.add_subcommand("plot", "PNG figures from `a2a bench` CSV/JSON (a2a plot --help)");
  plot->prefix_command();  // the python script parses its own options, --help included
  plot->set_help_flag();
  CLI11_PARSE(app, argc, argv);
  if (*list) {
    namespace d = a2a::detail;
    if (!sweep_of.empty()) {
      const auto coll = sweep_of == "alltoall" ? d::Collective::alltoall : d::Collective::alltoallv;
      for (const auto& spec : d::sweep(coll, d::kAnyHostLayout, {{"3"}, {}, {}, d::kSweptPorts})) std::printf("%s\n", spec.c_str());
      return 0;
    }
    list_algorithms();
    return 0;
  }
  if (*mdl) {
    if (rank_model)
      return model_rank(static_cast<int>(procs), node_sizes, collective, bytes, max_block, cost_text, library);
    if (!inter_node.empty()) return model_inter_node(node_sizes, inter_node, collective == "alltoallv", bytes);
    if (alg == "clustered") return model_clustered(node_sizes);
    if (collective == "alltoall") return model(procs, radix, ports);
    if (measure && !measure_alpha_beta(alpha, beta)) return 0;  // ranks other than 0 print nothing
    return model_alltoallv(procs, max_block, alpha, beta);
  }
  if (*plot) return run_plot(plot->remaining());
  if (*tune) return run_tune(tune->remaining());
  if (*trace) return run_trace(trace->remaining());
  return run_bench(bench->remaining());
}
