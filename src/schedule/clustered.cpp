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

std::vector<PeerStep> clustered_plan(const std::vector<std::vector<int>>& ranks_of_node, int rank) {
  int mine = -1, local = -1;
  for (int n = 0; mine < 0 && n < static_cast<int>(ranks_of_node.size()); ++n) {
    const auto& r = ranks_of_node[n];
    if (const auto it = std::find(r.begin(), r.end(), rank); it != r.end())
      mine = n, local = static_cast<int>(it - r.begin());
  }
  std::vector<int> active(ranks_of_node.size());
  std::iota(active.begin(), active.end(), 0);
  auto size = [&](int node) { return static_cast<int>(ranks_of_node[node].size()); };
  std::stable_sort(active.begin(), active.end(), [&](int a, int b) { return size(a) < size(b); });
  std::vector<PeerStep> plan;
  int done = 0;
  while (mine >= 0) {
    const auto at = std::find(active.begin(), active.end(), mine);
    if (at == active.end()) break;  // retired: every step of this rank is behind
    const int current = size(active.front());
    const int k = static_cast<int>(active.size()), j = static_cast<int>(at - active.begin());
    const bool sender = done <= local && local < current;
    for (int i = 0; i < k; ++i) {
      // 1-factor i pairs position j with (i - j) mod k; the smaller one is U.
      const int partner = ((i - j) % k + k) % k;
      const auto& U = ranks_of_node[active[std::min(j, partner)]];
      const auto& V = ranks_of_node[active[std::max(j, partner)]];
      if (partner == j) {  // within the node, one way: U[l] sends to all of V in turn
        for (int l = done; l < current; ++l)
          if (l != local) plan.push_back({U[l], false, true});
          else
            for (int v : V) plan.push_back({v, true, v == rank});
      } else if (j < partner) {
        if (sender)
          for (int v : V) plan.push_back({v, true, true});
      } else {
        for (int l = done; l < current; ++l) plan.push_back({U[l], true, true});
      }
    }
    done = current;
    active.erase(std::remove_if(active.begin(), active.end(), [&](int node) { return size(node) == done; }),
                 active.end());
  }
  return plan;
}

}  // namespace a2a::detail::schedule
