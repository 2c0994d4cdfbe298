#include "select/trial.hpp"

#include <algorithm>
#include <cmath>

namespace a2a::detail {

int trial_turn(int call, int n) {
  const int turn = call / kTrialRepeat, round = turn / n, at = turn % n;
  return round % 2 ? n - 1 - at : at;
}

double median_of(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t m = samples.size() / 2;
  return samples.size() % 2 ? samples[m] : (samples[m - 1] + samples[m]) / 2;
}

double exchange_seconds(const LinkCost& link, int P, double bytes) {
  const int peers = std::max(1, P - 1);
  const long long block = std::max(1LL, std::llround(bytes / (2.0 * peers)));
  return peers * link_seconds(link, block);
}

std::vector<double> trial_times(const std::vector<std::vector<TrialSample>>& samples, const LinkCost* link, int P,
                                double& ref) {
  std::vector<double> all;
  for (const auto& c : samples)
    for (const TrialSample& x : c) all.push_back(x.bytes);
  ref = median_of(all);
  const double at_ref = link ? exchange_seconds(*link, P, ref) : 0;
  std::vector<double> times;
  for (const auto& c : samples) {
    std::vector<double> scaled;
    for (const TrialSample& x : c) {
      const double at = link && x.bytes != ref ? exchange_seconds(*link, P, x.bytes) : 0;
      scaled.push_back(at > 0 && at_ref > 0 ? x.seconds * at_ref / at : x.seconds);
    }
    times.push_back(median_of(std::move(scaled)));
  }
  return times;
}

namespace {
constexpr int kVaried = kTrialSlots - 2, kBytes = kTrialSlots - 1;
constexpr double kNoSample = 1e30;
}  // namespace

TrialAgreement trial_pack(const std::vector<double>& medians, const std::vector<std::vector<TrialSample>>& samples,
                          double bytes) {
  TrialAgreement a;
  const double first = samples.empty() || samples[0].empty() ? 0 : samples[0][0].bytes;
  static const std::vector<TrialSample> none;
  for (size_t i = 0; i < std::max(medians.size(), samples.size()) && i < kMostCandidates; ++i) {
    const std::vector<TrialSample>& mine = i < samples.size() ? samples[i] : none;
    double lo = kNoSample, hi = mine.empty() ? kNoSample : 0;
    for (const TrialSample& x : mine) {
      lo = std::min(lo, x.seconds), hi = std::max(hi, x.seconds);
      if (x.bytes != first) a.slot[kVaried] = 1;
    }
    a.slot[3 * i] = i < medians.size() ? medians[i] : 0;
    a.slot[3 * i + 1] = hi;
    a.slot[3 * i + 2] = mine.empty() ? 0 : -lo;  // none: a fastest of 0 never leaves
  }
  a.slot[kBytes] = bytes;
  return a;
}

void trial_fold(const TrialAgreement& in, TrialAgreement& inout) {
  for (int i = 0; i < kBytes; ++i) inout.slot[i] = std::max(inout.slot[i], in.slot[i]);
  inout.slot[kBytes] += in.slot[kBytes];
}

TrialTimes trial_unpack(const TrialAgreement& folded, size_t n) {
  TrialTimes t;
  for (size_t i = 0; i < n; ++i) {
    const bool slot = i < kMostCandidates;
    t.median.push_back(slot ? folded.slot[3 * i] : 0);
    t.slowest.push_back(slot ? folded.slot[3 * i + 1] : kNoSample);
    t.fastest.push_back(slot ? -folded.slot[3 * i + 2] : 0);
  }
  t.varied = folded.slot[kVaried] > 0;
  t.bytes = folded.slot[kBytes];
  return t;
}

namespace {
// The fastest candidate but native with a time (above 0), or -1.
int fastest_other(const std::vector<double>& seconds, int native_at) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(seconds.size()); ++i)
    if (i != native_at && seconds[i] > 0 && (best < 0 || seconds[i] < seconds[best])) best = i;
  return best;
}

// Whether every call of i, on every rank, beat every call of j by 1 / kClear.
bool clearly_beats(const TrialTimes& t, size_t i, size_t j) {
  return t.slowest[i] > 0 && t.slowest[i] < kNoSample && t.slowest[i] <= kClear * t.fastest[j];
}
}  // namespace

int trial_winner(const std::vector<double>& seconds, int native_at, double margin) {
  const int best = fastest_other(seconds, native_at);
  if (native_at < 0 || seconds[native_at] <= 0) return best;
  if (best >= 0 && seconds[best] <= margin * seconds[native_at]) return best;
  return native_at;
}

CheckEnd trial_check(const TrialTimes& t, int native_at, int check, double margin) {
  const size_t n = t.median.size();
  CheckEnd end;
  for (size_t j = 0; j < n; ++j) {
    bool beaten = false;
    for (size_t i = 0; i < n && !t.varied; ++i) beaten = beaten || (i != j && clearly_beats(t, i, j));
    if (!beaten) end.stay.push_back(static_cast<int>(j));
  }
  if (end.stay.size() == 1) return {end.stay[0], {}};
  if (check < 2) return end;
  std::vector<double> in;  // the medians of those that stay
  int native = -1;
  for (int i : end.stay) {
    if (i == native_at) native = static_cast<int>(in.size());
    in.push_back(t.median[static_cast<size_t>(i)]);
  }
  int w = trial_winner(in, native, margin);
  if (w < 0) w = native >= 0 ? native : 0;
  // The other of the close pair: native, or where native won the fastest other.
  const int other = native < 0 ? -1 : w != native ? native : fastest_other(in, native);
  const bool apart = other < 0 || !(in[static_cast<size_t>(native)] > 0) || (w != native ? in[static_cast<size_t>(w)] <= kClear * in[static_cast<size_t>(other)]
                                               : kClear * in[static_cast<size_t>(other)] >= in[static_cast<size_t>(w)]);
  if (apart || check >= kMostChecks) return {end.stay[static_cast<size_t>(w)], {}};
  end.stay = {end.stay[static_cast<size_t>(w)], end.stay[static_cast<size_t>(other)]};
  return end;
}

void DriftWatch::sample(double seconds, double bytes) {
  if (expected_ <= 0) return;
  if (lo_ >= 0 && (bytes > kFar * hi_ || bytes * kFar < lo_)) moved_ = flagged_ = true;
  const double scale = bytes_ > 0 && bytes > bytes_ ? bytes / bytes_ : 1.0;
  ratio_[n_++ % kTrialRounds] = seconds / (expected_ * scale);
  if (n_ < kTrialRounds) return;
  double r[kTrialRounds];
  std::copy(ratio_, ratio_ + kTrialRounds, r);
  std::sort(r, r + kTrialRounds);
  flagged_ = flagged_ || (r[kTrialRounds / 2 - 1] + r[kTrialRounds / 2]) / 2 > kFar;
}

long long size_check_every(double allreduce_seconds, double call_seconds) {
  if (!(call_seconds > 0) || !(allreduce_seconds >= 0)) return kFirstCheck;
  const double calls = kSizeCheckShare * allreduce_seconds / call_seconds;
  if (calls >= static_cast<double>(kFirstCheck)) return kFirstCheck;
  return std::max(1LL, static_cast<long long>(std::ceil(calls)));
}

EventEnd event_end(bool drifted, bool moved, bool kept_elsewhere) {
  if (!drifted && !moved) return EventEnd::keep;
  return moved && kept_elsewhere ? EventEnd::take_kept : EventEnd::try_again;
}

}  // namespace a2a::detail
