#include "select/policy.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "registry/registry.hpp"

namespace a2a::detail {
std::string model_pick(const std::vector<CostedSpec>& ranked, double extra, double margin) {
  const CostedSpec& native = *find_costed(ranked, "native");
  for (const auto& c : ranked)
    if (c.spec != "native") return c.seconds + extra <= margin * native.seconds ? c.spec : "native";
  return "native";
}

std::vector<std::string> trial_candidates(const std::vector<CostedSpec>& ranked, double extra) {
  const std::string pick = model_pick(ranked, extra);
  const double native = find_costed(ranked, "native")->seconds;
  std::vector<std::string> out = {pick};
  if (pick != "native") out.push_back("native");
  const double bar = kFar * (pick == "native" ? native : find_costed(ranked, pick)->seconds);
  for (const auto& c : ranked)  // cheapest first: the runner-up
    if (c.spec != "native" && c.spec != pick) {
      if (c.seconds + extra <= bar) out.push_back(c.spec);
      break;
    }
  return out;
}

std::vector<size_t> worth_trying(const std::vector<std::string>& specs, const std::vector<CostedSpec>& ranked) {
  const CostedSpec* native = find_costed(ranked, "native");
  std::vector<size_t> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const CostedSpec* it = find_costed(ranked, specs[i]);
    if (specs[i] == "native" || !it || !native || it->seconds <= kFar * native->seconds) out.push_back(i);
  }
  return out;
}

bool needs_duplicate(Collective coll, const std::string& spec) {
  const AlgorithmInfo* info = find_algorithm(coll, spec.substr(0, spec.find(':')));
  return info && (info->uniform || info->varying) && info->private_comm;
}

std::vector<std::string> tuned_candidates(const std::string& pick, Config::Trial mode) {
  if (mode != Config::Trial::all || pick == "native") return {pick};
  return {pick, "native"};
}

std::vector<std::string> modelled_candidates(Collective coll, const std::vector<CostedSpec>& ranked,
                                             Config::Trial mode) {
  if (mode == Config::Trial::off) return {model_pick(ranked)};
  std::vector<std::string> specs = trial_candidates(ranked);
  if (specs.size() == 3 && needs_duplicate(coll, specs[2]) && !needs_duplicate(coll, specs[0])) specs.pop_back();
  return specs;
}

std::vector<std::string> device_candidates(Config::Trial mode) {
  if (mode == Config::Trial::off) return {"cuda-ipc"};
  return {"cuda-ipc:ipc-threshold=0", "native"};
}

bool same_messages_family(const std::string& spec) {
  return spec == "linear" || spec == "spread-out" || spec.rfind("scattered", 0) == 0;
}

bool one_family(const std::vector<std::string>& picks) {
  return std::all_of(picks.begin(), picks.end(), [&](const std::string& p) { return p == picks[0]; }) ||
         std::all_of(picks.begin(), picks.end(), same_messages_family);
}

std::string most_picked(const std::vector<std::string>& picks) {
  std::map<std::string, int> votes;
  std::string best;
  for (const auto& p : picks)
    if (++votes[p] > votes[best]) best = p;
  return best;
}

// Per point, each candidate's time over the point's best; the per-call
// choice scores the best plus the allreduce, a single pick for every size
// its own time (the geometric mean over the points); the per-call choice
// must win by 5 %.
bool sizes_pay(const ModelLayout& layout, const MachineModel& m, const std::vector<std::string>& given,
               std::string& single, std::string& runner_up) {
  const double allreduce = model_allreduce(layout, m);
  std::map<std::string, double> log_ratio;  // candidate -> sum of log(time / best)
  std::vector<std::map<std::string, double>> points;
  std::vector<double> best;
  double per_call = 0;
  for (long long mean = 1; mean <= (1LL << 30); mean *= 4)
    for (long long skew : {1, 4, 64}) {
      const auto ranked = model_alltoallv(layout, mean, mean * skew, m);
      std::map<std::string, double> t;
      for (const auto& c : ranked) t[c.spec] = c.seconds;
      const double b = ranked.front().seconds;  // cheapest first
      log_ratio[model_pick(ranked, 0, 1.0)];    // a candidate
      points.push_back(std::move(t));
      best.push_back(b);
      per_call += std::log((b + allreduce) / b);
    }
  log_ratio["native"];
  for (const auto& g : given) log_ratio[g];
  for (auto& [spec, sum] : log_ratio)
    for (size_t i = 0; i < points.size(); ++i) {
      const auto it = points[i].find(spec);
      sum += it == points[i].end() ? 1e9 : std::log(it->second / best[i]);
    }
  const auto winner = std::min_element(log_ratio.begin(), log_ratio.end(),
                                       [](auto& x, auto& y) { return x.second < y.second; });
  single = winner->first;
  // The runner-up: of the others modelled faster than native somewhere
  // (kTrialMargin), the best over all the sizes, however far (each trial
  // tries it only where it is worth calls at the trial's sizes: worth_trying).
  const auto beats_native_somewhere = [&](const std::string& spec) {
    for (const auto& t : points) {
      const auto it = t.find(spec), native = t.find("native");
      if (it != t.end() && native != t.end() && it->second < kTrialMargin * native->second) return true;
    }
    return false;
  };
  runner_up.clear();
  double next = 0;
  for (const auto& [spec, sum] : log_ratio)
    if (spec != single && spec != "native" && (runner_up.empty() || sum < next) && beats_native_somewhere(spec))
      runner_up = spec, next = sum;
  return per_call < winner->second + static_cast<double>(points.size()) * std::log(0.95);
}

bool untried_single_pick(const ModelLayout& layout, const MachineModel& m, std::vector<std::string>& picks) {
  const std::vector<std::string> given = picks;
  const auto sweep_sizes = [&](double extra) {
    picks = given;
    bool same = one_family(picks);
    for (long long mean = 1; same && mean <= (1LL << 30); mean *= 2)
      for (long long skew : {1, 4, 64}) {
        picks.push_back(model_pick(model_alltoallv(layout, mean, mean * skew, m), extra));
        if (!(same = one_family(picks))) break;
      }
    return same;
  };
  if (sweep_sizes(0)) return true;
  if (sweep_sizes(model_allreduce(layout, m))) return true;
  if (std::find(picks.begin(), picks.end(), "native") == picks.end()) return false;
  picks.assign(1, "native");
  return true;
}

std::vector<std::string> every_size_candidates(const std::string& pick, const std::string& runner_up) {
  std::vector<std::string> specs = {pick};
  if (pick != "native") specs.push_back("native");
  if (!runner_up.empty() && runner_up != pick &&
      !(needs_duplicate(Collective::alltoallv, runner_up) && !needs_duplicate(Collective::alltoallv, pick)))
    specs.push_back(runner_up);
  return specs;
}

long long every_size_block(double mean_call_bytes, int P) {
  return std::max(1LL, std::llround(mean_call_bytes / (2.0 * P)));
}

bool covers_all(std::vector<std::pair<long long, long long>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  long long next = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > next) return false;
    next = std::max(next, hi + 1);
  }
  return next > (1LL << 50);
}

}  // namespace a2a::detail
