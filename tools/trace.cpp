// `a2a trace`: one call of an algorithm as a SimGrid time-independent trace
// (src/schedule/trace.hpp), every rank's actions in one file, interleaved
// action by action so that SMPI's replay keeps few lines queued per rank.
// Each rank: init, barrier, the call, finalize; scripts/sim-replay.sh times
// the call from the replay's log.  No MPI: it runs on the host build.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "schedule/schedule.hpp"
#include "schedule/trace.hpp"
#include "registry/registry.hpp"
#include "registry/spec.hpp"
#include "workload/workload.hpp"

namespace {

namespace s = a2a::detail::schedule;

// A spec's integer knob; `fallback` where it is absent or auto, 0 where it is no positive number.
int knob(const a2a::Spec& spec, const char* key, int fallback) {
  const auto it = spec.params.find(key);
  if (it == spec.params.end() || it->second == "auto") return fallback;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  return *end == '\0' && v > 0 && v <= 1 << 30 ? static_cast<int>(v) : 0;
}

// The knobs each writer reads: its algorithm's in the registry, but intra; any other key would be
// silently ignored, so it is refused.  intra=shm is refused too: under SMPI a2a has no shared window
// and runs that phase point to point (uniform/shm.cpp), which is what the spec without it writes.
bool known_keys(const a2a::Spec& spec, bool v, std::string& bad) {
  namespace d = a2a::detail;
  const d::AlgorithmInfo* info = d::find_algorithm(v ? d::Collective::alltoallv : d::Collective::alltoall, spec.name);
  for (const auto& [key, value] : spec.params) {
    const bool read = info && key != "intra" && std::any_of(info->params.begin(), info->params.end(),
                                                            [&key](const d::ParamInfo& p) { return key == p.key; });
    if (!read) {
      bad = key + "=" + value;
      return false;
    }
  }
  return true;
}

// A ports knob: absent or "all" is 0 (every exchange of a digit), else a
// positive number; -1 where it is neither.
int ports_knob(const a2a::Spec& spec, const char* key) {
  const auto it = spec.params.find(key);
  return it == spec.params.end() || it->second == "all" ? 0 : knob(spec, key, 0) > 0 ? knob(spec, key, 0) : -1;
}

}  // namespace

// Every rank's trace of one call of spec_text on P ranks in nodes of Q
// consecutive ranks; 0, or 2 with the reason on stderr.
int build_traces(int P, int Q, long long bytes, const std::string& spec_text, bool v, const std::string& workload_text,
                 std::vector<s::Trace>& traces, s::BlockBytes& block) {
  const std::string collective = v ? "alltoallv" : "alltoall";
  a2a::Spec spec;
  a2a::workload::Workload w;
  std::string err;
  if (!a2a::split_spec(spec_text, spec, err) || !a2a::workload::parse(workload_text, w, err) || P % Q != 0) {
    std::fprintf(stderr, "a2a trace: %s\n", err.empty() ? "P must be a multiple of the node size" : err.c_str());
    return 2;
  }
  if (std::string bad; !known_keys(spec, v, bad)) {
    std::fprintf(stderr, "a2a trace: %s: no such knob in the %s trace writer%s\n", bad.c_str(), spec.name.c_str(),
                 bad.rfind("intra=", 0) == 0 ? " (under SMPI a2a runs the intra-node phase point to point: leave it out)"
                                             : "");
    return 2;
  }
  const auto sized = a2a::workload::with_size(w, bytes);
  block = [sized, v, P, bytes](int src, int dst) { return v ? a2a::workload::count(sized, src, dst, P) : bytes; };
  const int N = P / Q;
  for (const char* key : {"radix", "radix-intra", "radix-inter", "block"})
    if (knob(spec, key, 1) == 0) {
      std::fprintf(stderr, "a2a trace: %s=%s is no positive number\n", key, spec.params.at(key).c_str());
      return 2;
    }
  for (const char* key : {"ports", "ports-intra", "ports-inter"})
    if (ports_knob(spec, key) < 0) {
      std::fprintf(stderr, "a2a trace: %s=%s is neither all nor a positive number\n", key, spec.params.at(key).c_str());
      return 2;
    }
  const int ports = ports_knob(spec, "ports");
  traces.assign(P, {});
  if (spec.name == "native") {
    for (int p = 0; p < P; ++p) traces[p] = v ? s::trace_native_alltoallv(P, block, p) : s::trace_native_alltoall(bytes);
  } else if (spec.name == "tra" && !v) {
    const int r = knob(spec, "radix", static_cast<int>(s::ceil_sqrt(P)));
    for (int p = 0; p < P; ++p) traces[p] = s::trace_tra(P, r, bytes, p, ports);
  } else if (spec.name == "tra2" && !v) {
    const int r1 = knob(spec, "radix-intra", static_cast<int>(s::ceil_sqrt(Q))), r2 = knob(spec, "radix-inter", N);
    for (int p = 0; p < P; ++p)
      traces[p] = s::trace_tra2(P, Q, r1, r2, bytes, p, ports_knob(spec, "ports-intra"), ports_knob(spec, "ports-inter"));
  } else if (spec.name == "tuna-hier" && v) {
    const auto variant = spec.params.count("variant") ? spec.params.at("variant") : "coalesced";
    const int r = knob(spec, "radix", static_cast<int>(s::ceil_sqrt(Q))), batch = knob(spec, "block", 32);
    for (int n = 0; n < N; ++n) {
      auto node = s::trace_tuna_hier(P, Q, r, batch, variant == "staggered", block, n, ports);
      for (int q = 0; q < Q; ++q) traces[n * Q + q] = std::move(node[q]);
    }
  } else if ((spec.name == "tuna" || spec.name == "two-phase-bruck") && v) {
    traces = s::trace_tuna(P, Q, spec.name == "tuna" ? knob(spec, "radix", static_cast<int>(s::ceil_sqrt(P))) : 2, block,
                           ports);
  } else if (spec.name == "padded-bruck" && v) {
    traces = s::trace_padded_bruck(P, Q, block);
  } else {
    std::fprintf(stderr, "a2a trace: no trace writer for %s %s\n", collective.c_str(), spec.name.c_str());
    return 2;
  }
  return 0;
}

int run_trace(const std::vector<std::string>& args) {
  CLI::App app{"a2a trace: one call as a SimGrid SMPI time-independent trace (replay with smpirun -replay)"};
  int P = 0, Q = 0;
  long long bytes = 16;
  std::string spec_text, collective = "alltoall", workload_text = "uniform", out;
  app.add_option("-p,--procs", P, "ranks P")->required()->check(CLI::PositiveNumber);
  app.add_option("--node-size", Q, "ranks per node Q, consecutive (default P: one node)");
  app.add_option("-a,--algorithm", spec_text,
                 "alltoall: native, tra[:radix=R,ports=B], tra2[:radix-intra=,radix-inter=,ports-intra=,ports-inter=]; "
                 "alltoallv: native, tuna-hier[:variant=,radix=,block=,ports=], tuna[:radix=R,ports=B], two-phase-bruck, "
                 "padded-bruck")
      ->required();
  app.add_option("-m,--bytes", bytes, "bytes per block (alltoallv: the workload's size)");
  app.add_option("--collective", collective, "alltoall or alltoallv")->check(CLI::IsMember({"alltoall", "alltoallv"}));
  app.add_option("--workload", workload_text, "alltoallv's block sizes, as a2a bench's --workload");
  app.add_option("-o,--output", out, "the trace file")->required();
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (Q <= 0) Q = P;
  std::vector<s::Trace> traces;
  s::BlockBytes block;
  if (const int rc = build_traces(P, Q, bytes, spec_text, collective == "alltoallv", workload_text, traces, block))
    return rc;
  std::ofstream f(out);
  for (int p = 0; p < P; ++p) f << p << " init\n";
  for (int p = 0; p < P; ++p) f << p << " barrier\n";
  size_t longest = 0;
  long long messages = 0, data = 0, inter = 0;
  for (int p = 0; p < P; ++p) {
    longest = std::max(longest, traces[p].size());
    const auto t = s::trace_totals(traces[p], p, Q);
    messages += t.messages, data += t.bytes, inter += t.inter_messages;
  }
  for (size_t k = 0; k < longest; ++k)
    for (int p = 0; p < P; ++p)
      if (k < traces[p].size()) f << s::trace_line(p, traces[p][k], P, block) << '\n';
  for (int p = 0; p < P; ++p) f << p << " finalize\n";
  if (!f) {
    std::fprintf(stderr, "a2a trace: cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("# trace %s: P=%d Q=%d %s %s S=%lld: %zu actions per rank at most, %lld data messages (%lld between "
              "nodes), %lld bytes\n",
              out.c_str(), P, Q, collective.c_str(), spec_text.c_str(), bytes, longest, messages, inter, data);
  return 0;
}
