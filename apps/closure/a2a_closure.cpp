// a2a-closure: the transitive closure of a directed graph by semi-naive
// evaluation, the relational fixed point the TuNA paper's path-finding
// application runs:  T = E;  delta = E;  repeat  delta = (delta o E) - T,
// T += delta  until delta is empty everywhere.
// Edges (b, c) live on owner(b), path tuples (a, c) on owner(c), so a delta
// tuple (a, b) meets the edges leaving b on the same rank.  Each iteration
// joins locally, sends every new tuple (a, c) to owner(c) with one
// alltoallv (its counts first, with one alltoall of one int per peer),
// deduplicates against T there, and agrees on the global delta size with
// an allreduce.  `--alltoall SPEC` and `--alltoallv SPEC` choose the two
// collectives (`native`: MPI's own).  Prints iterations, tuples, total time
// and all-to-all time (maxima over ranks); --check (default) compares the
// result with a sequential closure.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../common/exchange.hpp"
#include "closure.hpp"

namespace {

using apps::closure::Edge;

struct EdgeHash {
  size_t operator()(const Edge& e) const {
    return std::hash<long long>()(e.first * 1000003LL) ^ std::hash<long long>()(e.second);
  }
};

struct Result {
  apps::RunResult run;
  long long iterations = 0, tuples = 0;
  std::vector<Edge> gathered;  // on rank 0 with --check
};

Result closure(const std::vector<Edge>& edges, const std::string& a_spec, const std::string& v_spec, bool gather) {
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Datatype tuple;
  MPI_Type_contiguous(2, MPI_LONG_LONG, &tuple);
  MPI_Type_commit(&tuple);
  apps::Exchange ex(a_spec, v_spec);
  Result res;

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  std::unordered_map<long long, std::vector<long long>> out_edges;  // b -> c, owner(b) == me
  std::unordered_set<Edge, EdgeHash> T;                             // (a, c), owner(c) == me
  std::vector<Edge> delta;
  for (const auto& e : edges) {
    if (apps::closure::owner(e.first, P) == me) out_edges[e.first].push_back(e.second);
    if (apps::closure::owner(e.second, P) == me && T.insert(e).second) delta.push_back(e);
  }
  std::vector<std::vector<Edge>> outbox(P);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  std::vector<Edge> sbuf, rbuf;
  int failed = 0;
  for (;;) {
    ++res.iterations;
    for (auto& box : outbox) box.clear();
    for (const auto& [a, b] : delta) {
      const auto it = out_edges.find(b);
      if (it == out_edges.end()) continue;
      for (long long c : it->second) outbox[apps::closure::owner(c, P)].emplace_back(a, c);
    }
    sbuf.clear();
    for (int d = 0; d < P; ++d) {
      sc[d] = static_cast<int>(outbox[d].size());
      sd[d] = static_cast<int>(sbuf.size());
      sbuf.insert(sbuf.end(), outbox[d].begin(), outbox[d].end());
    }
    failed |= ex.alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS;
    long long total = 0;
    for (int s = 0; s < P; ++s) {
      rd[s] = static_cast<int>(total);
      total += rc[s];
    }
    rbuf.resize(total);
    failed |= ex.alltoallv(sbuf.data(), sc.data(), sd.data(), tuple, rbuf.data(), rc.data(), rd.data(), tuple,
                           MPI_COMM_WORLD) != MPI_SUCCESS;
    delta.clear();
    for (const auto& e : rbuf)
      if (T.insert(e).second) delta.push_back(e);
    long long fresh[2] = {static_cast<long long>(delta.size()), failed};
    MPI_Allreduce(MPI_IN_PLACE, fresh, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (fresh[0] == 0 || fresh[1]) {
      failed = static_cast<int>(fresh[1]);
      break;
    }
  }
  double total_s = MPI_Wtime() - t0, a2a_s = ex.seconds;
  MPI_Allreduce(MPI_IN_PLACE, &total_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &a2a_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  res.tuples = static_cast<long long>(T.size());
  MPI_Allreduce(MPI_IN_PLACE, &res.tuples, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  res.run.total = total_s;
  res.run.exchange = a2a_s;
  res.run.ran = ex.ran_alltoallv;
  res.run.ok = !failed;
  if (gather) {  // every tuple to rank 0
    std::vector<Edge> mine(T.begin(), T.end());
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(P), displs(P);
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int sum = 0;
    for (int s = 0; s < P; ++s) {
      displs[s] = sum;
      sum += counts[s];
    }
    if (me == 0) res.gathered.resize(sum);
    MPI_Gatherv(mine.data(), n, tuple, res.gathered.data(), counts.data(), displs.data(), tuple, 0, MPI_COMM_WORLD);
    std::sort(res.gathered.begin(), res.gathered.end());
  }
  MPI_Type_free(&tuple);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a2a-closure: transitive closure of a graph, tuples shuffled with a2a (run under mpirun)"};
  std::string graph, a_spec = "auto", v_spec = "auto";
  bool check = true;
  std::vector<std::string> compare;
  int repeat = 5;
  app.add_option("graph", graph, "edge list: one 'src dst' pair of vertex ids per line")->required();
  app.add_option("--alltoall", a_spec, "spec for the per-iteration count exchange (native = MPI_Alltoall)");
  app.add_option("--alltoallv", v_spec, "spec for the tuple shuffle (native = MPI_Alltoallv)");
  app.add_flag("--check,!--no-check", check, "compare the result with a sequential closure (default on)");
  app.add_option("--compare", compare, "alltoallv specs to run in turn (repeatable; native is added): a table");
  app.add_option("--repeat", repeat, "runs per spec with --compare")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<Edge> edges;
  std::string error;
  if (!apps::closure::read_edges(graph, edges, error)) {  // every rank reads the same file, so all fail alike
    if (rank == 0) std::fprintf(stderr, "a2a-closure: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  const Result r = closure(edges, a_spec, compare.empty() ? v_spec : compare[0], check);
  int ok = r.run.ok;
  if (rank == 0) {
    std::printf("a2a-closure: %s, %zu edges, %d ranks, alltoallv '%s' ran %s\n", graph.c_str(), edges.size(), P,
                compare.empty() ? v_spec.c_str() : compare[0].c_str(), r.run.ran.c_str());
    std::printf("iterations %lld, tuples %lld, total %.6f s, all-to-all %.6f s\n", r.iterations, r.tuples, r.run.total,
                r.run.exchange);
    if (check) {
      const bool same = r.gathered == apps::closure::sequential_closure(edges);
      std::printf("check: %s\n", same ? "equals the sequential closure" : "DIFFERS from the sequential closure");
      ok = ok && same;
    }
    if (!r.run.ok) std::fprintf(stderr, "a2a-closure: a collective failed: %s\n", a2a::last_error_message().c_str());
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (ok && !compare.empty())
    ok = apps::compare(compare, repeat, [&](const std::string& spec) { return closure(edges, a_spec, spec, false).run; });
  MPI_Finalize();
  return ok ? 0 : 1;
}
