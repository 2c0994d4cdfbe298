// auto's trial and drift watch, the arithmetic and the class's phases (no
// MPI; tests/unit/test_trial.cpp).  The model proposes two or three
// candidates (policy.hpp), which take turns on the application's own
// calls, all of which move the real data; every kCheckRounds rounds one
// allreduce tells every rank the same times (the slowest rank's), clear
// losers leave, and the medians decide once they tell the winner from
// native, or the rounds run out.  A decided class's calls are sampled; a
// rank whose samples drift flags it, the ranks agree on the flags, and a
// flag starts the trial again.  STAR-MPI (Faraj, Yuan and Lowenthal, ICS
// 2006) selected collectives at run time this way; the model keeps the
// trial to a few calls.  The numbers are policy.hpp's; why each,
// docs/auto.md.
#pragma once
#include <vector>

#include "select/policy.hpp"

namespace a2a::detail {

// Calls between an every-size class's agreements on moved sizes (each
// also a drift sample): as many as make an allreduce of allreduce_seconds
// cost at most 1 / kSizeCheckShare of calls of call_seconds each, and at
// most kFirstCheck; one for calls of a millisecond.
long long size_check_every(double allreduce_seconds, double call_seconds);
// The pace after an agreement, of drift checks (wanted kLastCheck) and of
// an every-size class's size agreements (size_check_every) alike: toward
// `wanted`, but at most twice the pace before it (`previous`, 0 for none):
// a quiet class's checks space out, and one slow agreement (a descheduled
// rank) does not space the next ones far apart.
constexpr long long next_pace(long long previous, long long wanted) {
  return previous > 0 && wanted > 2 * previous ? 2 * previous : wanted;
}

// A trial agrees after every kCheckRounds rounds (a check), and makes at
// most kTrialRounds rounds of all its candidates and kTrialRounds more of
// a close pair (trial_check).
constexpr int kCheckRounds = kTrialRounds / 2;
constexpr int kMostChecks = 2 * kTrialRounds / kCheckRounds;
// Calls between checks with n candidates in the trial.
constexpr int check_calls(int n) { return n * kCheckRounds * kTrialRepeat; }
// Calls a trial of n candidates takes at most.
constexpr int most_trial_calls(int n) {
  return n > 1 ? kTrialRounds * kTrialRepeat * (n + 2) : check_calls(1);
}
// The candidate of call `call` (0-based) since the last check: rounds of
// a turn of every candidate, each round in the reverse order of the one
// before (ABBA), so that a drift in the application's calls does not fall
// on one candidate.
int trial_turn(int call, int n);
// Whether trial call `call` is timed (the last of its turn).
constexpr bool trial_timed(int call) { return call % kTrialRepeat == kTrialRepeat - 1; }

// The median of a rank's samples (0 for none).
double median_of(std::vector<double> samples);

// A timed trial call: its seconds and the bytes this rank moved in it.
struct TrialSample {
  double seconds, bytes;
};
// The library's linear exchange of `bytes` (sent and received) among P
// ranks on `link`: P - 1 messages of a block each, one after another.  Only
// its shape with the size matters (trial_times).
double exchange_seconds(const LinkCost& link, int P, double bytes);
// Each candidate's median time, its samples taken to the same size `ref`
// (the median bytes of all the samples): where calls vary in size (an
// every-size alltoallv; a closure's frontier grows and shrinks call by
// call) the candidates' timed calls moved different bytes, and raw times
// would rank the sizes, not the candidates.  A sample counts
// seconds * exchange_seconds(ref) / exchange_seconds(bytes); link null
// (no model), or calls of one size: the raw medians.
std::vector<double> trial_times(const std::vector<std::vector<TrialSample>>& samples, const LinkCost* link, int P,
                                double& ref);

// A check's agreement, one allreduce: per candidate the slowest rank's
// median (a call ends when its last rank leaves it), its slowest and its
// fastest timed call over every rank, whether a rank's calls moved
// different bytes (their raw times do not compare), and the ranks' bytes,
// summed (their mean names an every-size class's size).
constexpr int kMostCandidates = 4;  // the model proposes 3
constexpr int kTrialSlots = 3 * kMostCandidates + 2;
struct TrialAgreement {
  double slot[kTrialSlots] = {};
};
// This rank's: its medians (trial_times) and samples of the candidates in
// the trial, and the bytes it moved.
TrialAgreement trial_pack(const std::vector<double>& medians, const std::vector<std::vector<TrialSample>>& samples,
                          double bytes);
// The allreduce's fold: the largest of each (the fastest negated), the sum of the bytes.
void trial_fold(const TrialAgreement& in, TrialAgreement& inout);
// The folded agreement of n candidates.
struct TrialTimes {
  std::vector<double> median, slowest, fastest;  // fastest 0, slowest huge: no sample
  bool varied = false;
  double bytes = 0;
};
TrialTimes trial_unpack(const TrialAgreement& folded, size_t n);

// The winner from the agreed medians: native (at native_at, -1 if not a
// candidate) unless another candidate takes at most `margin` of its time;
// then the fastest.  Times of 0 or less (no sample) never win.
int trial_winner(const std::vector<double>& seconds, int native_at, double margin = kTrialMargin);

// A check's outcome: the winner, or (winner -1) the candidates that stay,
// as indices among the check's.  In order:
//  - a candidate whose fastest call is slower than another's slowest by
//    1 / kClear leaves (every sample, not a median: a lost time slice can
//    only keep a candidate in; not where calls varied in size);
//  - one left wins;
//  - from the second check the medians decide (trial_winner) where the
//    winner and native are kClear apart, or at the last check (check ==
//    kMostChecks); closer, the winner and native (native and the fastest
//    other, where native won) stay alone.
struct CheckEnd {
  int winner = -1;
  std::vector<int> stay;
};
CheckEnd trial_check(const TrialTimes& t, int native_at, int check, double margin = kTrialMargin);

// Where a class stands: in its trial, or decided (sampled, watched for
// drift).
enum class Phase { trying, decided };

// A decided class's agreement: its ranks' flags (times drifted, sizes
// moved) and whether the sizes moved to another size class that has a
// winner kept (an every-size class) lead to keeping the decision, taking
// that winner untried, or a trial again.
enum class EventEnd { keep, take_kept, try_again };
EventEnd event_end(bool drifted, bool moved, bool kept_elsewhere);

// A decided class's drift watch on one rank: the winner's trial time and
// the bytes it moved then, the last samples.
class DriftWatch {
 public:
  void reset(double seconds, double bytes) {
    expected_ = seconds, bytes_ = bytes, n_ = 0, flagged_ = moved_ = false, lo_ = hi_ = -1;
  }
  // The class serves every size: its trial's calls moved lo .. hi bytes
  // (kFar).
  void watch_sizes(double lo, double hi) { lo_ = lo, hi_ = hi; }
  // A timed call of `bytes`: expected to take the trial's time scaled up
  // by its bytes (never down: small calls cost their latency); flags the
  // rank when the median of the last kTrialRounds ratios passes kFar,
  // or, watching sizes, when the call's bytes moved kFar times out
  // of the trial's.
  void sample(double seconds, double bytes);
  bool flagged() const { return flagged_; }
  bool moved() const { return moved_; }  // flagged for the sizes

 private:
  double expected_ = 0, bytes_ = 0, lo_ = -1, hi_ = -1;  // lo_ < 0: sizes not watched
  static_assert(kTrialRounds % 2 == 0, "sample() takes the median of an even count");
  double ratio_[kTrialRounds] = {};
  int n_ = 0;
  bool flagged_ = false, moved_ = false;
};

}  // namespace a2a::detail
