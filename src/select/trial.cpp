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

TrialAgreement trial_pack(const std::vector<double>& medians, double bytes) {
  TrialAgreement a;
  for (size_t i = 0; i < medians.size() && i < kTrialSlots - 1; ++i) a.slot[i] = medians[i];
  a.slot[kTrialSlots - 1] = bytes;
  return a;
}

void trial_fold(const TrialAgreement& in, TrialAgreement& inout) {
  for (int i = 0; i < kTrialSlots - 1; ++i) inout.slot[i] = std::max(inout.slot[i], in.slot[i]);
  inout.slot[kTrialSlots - 1] += in.slot[kTrialSlots - 1];
}

std::vector<double> trial_agreed_times(const TrialAgreement& folded, size_t n) {
  std::vector<double> times;
  for (size_t i = 0; i < n; ++i) times.push_back(i < kTrialSlots - 1 ? folded.slot[i] : 0);
  return times;
}

double trial_bytes(const TrialAgreement& folded) { return folded.slot[kTrialSlots - 1]; }

namespace {
constexpr int kVaried = 2 * kEarlyMost;  // early_pack's flag slot
static_assert(kVaried < kTrialSlots - 1, "the bytes' slot stays last");
constexpr double kNoSample = 1e30;
}  // namespace

TrialAgreement early_pack(const std::vector<std::vector<TrialSample>>& samples) {
  TrialAgreement a;
  const double bytes = samples.empty() || samples[0].empty() ? 0 : samples[0][0].bytes;
  for (size_t i = 0; i < samples.size() && i < kEarlyMost; ++i) {
    double lo = kNoSample, hi = samples[i].empty() ? kNoSample : 0;
    for (const TrialSample& x : samples[i]) {
      lo = std::min(lo, x.seconds), hi = std::max(hi, x.seconds);
      if (x.bytes != bytes) a.slot[kVaried] = 1;
    }
    a.slot[2 * i] = hi;
    a.slot[2 * i + 1] = samples[i].empty() ? 0 : -lo;  // none: a fastest of 0 keeps it from ending early
  }
  return a;
}

int early_winner(const TrialAgreement& folded, size_t n) {
  if (n < 2 || n > kEarlyMost || folded.slot[kVaried] > 0) return -1;
  size_t w = 0;
  for (size_t i = 1; i < n; ++i)
    if (folded.slot[2 * i] < folded.slot[2 * w]) w = i;
  const double slowest = folded.slot[2 * w];
  if (!(slowest > 0) || slowest >= kNoSample) return -1;
  for (size_t j = 0; j < n; ++j)
    if (j != w && kClear * -folded.slot[2 * j + 1] < slowest) return -1;
  return static_cast<int>(w);
}

namespace {
// The fastest candidate but native with a time (above 0), or -1.
int fastest_other(const std::vector<double>& seconds, int native_at) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(seconds.size()); ++i)
    if (i != native_at && seconds[i] > 0 && (best < 0 || seconds[i] < seconds[best])) best = i;
  return best;
}
}  // namespace

int trial_winner(const std::vector<double>& seconds, int native_at, double margin) {
  const int best = fastest_other(seconds, native_at);
  if (native_at < 0 || seconds[native_at] <= 0) return best;
  if (best >= 0 && seconds[best] <= margin * seconds[native_at]) return best;
  return native_at;
}

int confirmation_challenger(const std::vector<double>& seconds, int win, int native_at) {
  if (native_at < 0 || win < 0) return -1;
  const double native = seconds[static_cast<size_t>(native_at)];
  if (!(native > 0)) return -1;
  if (win != native_at) return seconds[static_cast<size_t>(win)] > kClear * native ? win : -1;
  const int best = fastest_other(seconds, native_at);
  return best >= 0 && kClear * seconds[best] < native ? best : -1;
}

std::vector<std::vector<TrialSample>> confirmation_start(std::vector<std::vector<TrialSample>>& samples, int win,
                                                        int native_at) {
  std::vector<std::vector<TrialSample>> kept;
  kept.push_back(std::move(samples[static_cast<size_t>(win)]));
  kept.push_back(std::move(samples[static_cast<size_t>(native_at)]));
  return kept;
}

void DriftWatch::sample(double seconds, double bytes) {
  if (expected_ <= 0) return;
  if (lo_ >= 0 && (bytes > kDrift * hi_ || bytes * kDrift < lo_)) moved_ = flagged_ = true;
  const double scale = bytes_ > 0 && bytes > bytes_ ? bytes / bytes_ : 1.0;
  ratio_[n_++ % kDriftSamples] = seconds / (expected_ * scale);
  if (n_ < kDriftSamples) return;
  double r[kDriftSamples];
  std::copy(ratio_, ratio_ + kDriftSamples, r);
  std::sort(r, r + kDriftSamples);
  flagged_ = flagged_ || (r[kDriftSamples / 2 - 1] + r[kDriftSamples / 2]) / 2 > kDrift;
}

long long size_check_every(double allreduce_seconds, double call_seconds) {
  if (!(call_seconds > 0) || !(allreduce_seconds >= 0)) return kFirstCheck;
  const double calls = kSizeCheckShare * allreduce_seconds / call_seconds;
  if (calls >= static_cast<double>(kFirstCheck)) return kFirstCheck;
  return std::max(1LL, static_cast<long long>(std::ceil(calls)));
}

TrialDue trial_due(int calls_made, int n, Phase phase) {
  if (calls_made == early_calls(n) && phase == Phase::trying && n > 1 && n <= kEarlyMost) return TrialDue::early;
  return calls_made < trial_calls(n) ? TrialDue::more : TrialDue::round;
}

RoundEnd round_end(Phase phase, const std::vector<double>& agreed, int native_at, double margin, int early) {
  int win = early >= 0 ? early : trial_winner(agreed, native_at, margin);
  if (win < 0) win = native_at >= 0 ? native_at : 0;
  const int ch = phase == Phase::confirming || early >= 0 ? -1 : confirmation_challenger(agreed, win, native_at);
  return ch >= 0 ? RoundEnd{Phase::confirming, win, ch} : RoundEnd{Phase::decided, win, -1};
}

EventEnd event_end(bool drifted, bool moved, bool kept_elsewhere) {
  if (!drifted && !moved) return EventEnd::keep;
  return moved && kept_elsewhere ? EventEnd::take_kept : EventEnd::try_again;
}

}  // namespace a2a::detail
