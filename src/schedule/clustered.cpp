#include "schedule/clustered.hpp"

#include <algorithm>
#include <numeric>

namespace a2a::detail::schedule {

std::vector<ClusteredPhase> clustered_schedule(const std::vector<std::vector<int>>& ranks_of_node) {
  std::vector<int> active(ranks_of_node.size());
  std::iota(active.begin(), active.end(), 0);
  auto size = [&](int node) { return static_cast<int>(ranks_of_node[node].size()); };
  std::stable_sort(active.begin(), active.end(), [&](int a, int b) { return size(a) < size(b); });
  std::vector<ClusteredPhase> phases;
  int done = 0;
  while (!active.empty()) {
    const int current = size(active.front());
    const int k = static_cast<int>(active.size());
    ClusteredPhase phase{done, current, {}};
    for (int i = 0; i < k; ++i) {
      std::vector<std::vector<ClusteredStep>> round;
      for (int j = 0; j < k; ++j) {
        const int jj = ((i - j) % k + k) % k;
        if (j > jj) continue;  // each pair once, the smaller node first
        const auto& U = ranks_of_node[active[j]];
        const auto& V = ranks_of_node[active[jj]];
        std::vector<ClusteredStep> steps;
        for (int l = done; l < current; ++l)
          for (int v : V) steps.push_back({U[l], v, j == jj});
        round.push_back(std::move(steps));
      }
      phase.rounds.push_back(std::move(round));
    }
    phases.push_back(std::move(phase));
    done = current;
    active.erase(std::remove_if(active.begin(), active.end(), [&](int node) { return size(node) == done; }),
                 active.end());
  }
  return phases;
}

long long clustered_steps(const std::vector<ClusteredPhase>& phases) {
  long long total = 0;
  for (const auto& phase : phases)
    for (const auto& round : phase.rounds) {
      long long longest = 0;
      for (const auto& pair : round)
        longest = std::max<long long>(longest, std::count_if(pair.begin(), pair.end(),
                                                             [](const ClusteredStep& s) { return s.u != s.v; }));
      total += longest;
    }
  return total;
}

std::vector<PeerStep> clustered_plan(const std::vector<ClusteredPhase>& phases, int rank) {
  std::vector<PeerStep> plan;
  for (const auto& phase : phases)
    for (const auto& round : phase.rounds)
      for (const auto& pair : round)
        for (const auto& s : pair) {
          if (s.u == rank && s.v == rank) plan.push_back({rank, true, true});  // local copy
          else if (s.u == rank) plan.push_back({s.v, true, !s.one_way});
          else if (s.v == rank) plan.push_back({s.u, !s.one_way, true});
        }
  return plan;
}

}  // namespace a2a::detail::schedule
