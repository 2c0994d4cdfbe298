// auto's trial and drift watch, the arithmetic and the class's phases (no
// MPI; tests/unit/test_trial.cpp).  The model proposes two or three
// candidates (policy.hpp), which take turns on the application's own
// calls, all of which move the real data; after the rounds one allreduce
// of every rank's median per candidate (the slowest rank's) tells every
// rank the same times, and the class keeps the winner, confirming a close
// one first.  A decided class's calls are sampled; a rank whose samples
// drift flags it, the ranks agree on the flags, and a flag starts the
// trial again.  STAR-MPI (Faraj, Yuan and Lowenthal, ICS 2006) selected
// collectives at run time this way; the model keeps the trial to a few
// calls.  The numbers are policy.hpp's; why each, docs/auto.md.
#pragma once
#include <vector>

#include "select/policy.hpp"

namespace a2a::detail {

// Calls between an every-size class's agreements on moved sizes (each
// also a drift sample): as many as make an allreduce of allreduce_seconds
// cost at most 1 / kSizeCheckShare of calls of call_seconds each, and at
// most kFirstCheck; one for calls of a millisecond.
long long size_check_every(double allreduce_seconds, double call_seconds);
// The pace after an agreement: `wanted` (size_check_every), but at most
// twice the pace before it (`previous`, 0 for none): one slow agreement
// (a descheduled rank) does not space the next ones far apart.
constexpr long long paced_size_check(long long previous, long long wanted) {
  return previous > 0 && wanted > 2 * previous ? 2 * previous : wanted;
}

// Calls a round of n candidates takes.
constexpr int trial_calls(int n) { return n * kTrialRounds * kTrialRepeat; }
// Calls a trial of n candidates takes at most: its round and a confirmation.
constexpr int most_trial_calls(int n) { return trial_calls(n) + (n > 1 ? trial_calls(2) : 0); }
// The candidate of trial call `call` (0-based): rounds of a turn of every
// candidate, each round in the reverse order of the one before (ABBA), so
// that a drift in the application's calls does not fall on one candidate.
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

// The ranks agree on the times by one allreduce of every rank's medians,
// taking the slowest rank's (a call ends when its last rank leaves it);
// one buffer holds the medians and, in its last slot, the rank's bytes,
// which are summed (their mean names an every-size class's size).
constexpr int kTrialSlots = 8;  // candidates at most kTrialSlots - 1 (the model proposes 3)
struct TrialAgreement {
  double slot[kTrialSlots] = {};
};
TrialAgreement trial_pack(const std::vector<double>& medians, double bytes);
// The allreduce's fold: the slowest rank's median, the sum of the bytes.
void trial_fold(const TrialAgreement& in, TrialAgreement& inout);
// The n candidates' agreed times.
std::vector<double> trial_agreed_times(const TrialAgreement& folded, size_t n);
double trial_bytes(const TrialAgreement& folded);

// A clear trial ends early (kEarlyRounds, kClear): one allreduce of
// each candidate's slowest and fastest timed call over all ranks.
constexpr int kEarlyMost = 3;  // candidates an early check covers (two slots each)
constexpr int early_calls(int n) { return n * kEarlyRounds * kTrialRepeat; }
// A rank's samples so far (at most kEarlyMost candidates): each one's
// slowest and, negated, fastest, whether the calls' bytes varied (their
// times are then not comparable raw), folded by trial_fold.
TrialAgreement early_pack(const std::vector<std::vector<TrialSample>>& samples);
// The clear winner from the folded samples of n candidates, or -1.
int early_winner(const TrialAgreement& folded, size_t n);

// The winner from the agreed times (seconds per candidate,
// trial_agreed_times): native (at native_at, -1 if not a candidate) unless
// another candidate takes at most `margin` of its time; then the fastest.
// Times of 0 or less (no sample) never win.
int trial_winner(const std::vector<double>& seconds, int native_at, double margin = kTrialMargin);
// The candidate that meets native again in a confirmation (kClear)
// before the round's winner `win` is kept: win where it is not native and
// close; where native won, the fastest other where close; else -1.
int confirmation_challenger(const std::vector<double>& seconds, int win, int native_at);
// The confirmation's samples to start from: the round's of `win` (the
// challenger) and of native, in that order (its candidates'), taken out
// of `samples`: both rounds' samples decide.
std::vector<std::vector<TrialSample>> confirmation_start(std::vector<std::vector<TrialSample>>& samples, int win,
                                                        int native_at);

// Where a class stands: trying its candidates, confirming a close round
// (its winner against native, or native against the runner-up), or
// decided (sampled, watched for drift).
enum class Phase { trying, confirming, decided };

// What a trial call's end asks for: more calls, the early check's
// agreement, or the round's.
enum class TrialDue { more, early, round };
TrialDue trial_due(int calls_made, int n, Phase phase);

// A round's end, from its agreed times: decided on `winner`, or
// confirming with `challenger` (its index among the round's candidates)
// against native.  `early`: the early check's winner, or -1.
struct RoundEnd {
  Phase next;
  int winner, challenger;
};
RoundEnd round_end(Phase phase, const std::vector<double>& agreed, int native_at, double margin, int early);

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
  // (kDrift).
  void watch_sizes(double lo, double hi) { lo_ = lo, hi_ = hi; }
  // A timed call of `bytes`: expected to take the trial's time scaled up
  // by its bytes (never down: small calls cost their latency); flags the
  // rank when the median of the last kDriftSamples ratios passes kDrift,
  // or, watching sizes, when the call's bytes moved kDrift times out
  // of the trial's.
  void sample(double seconds, double bytes);
  bool flagged() const { return flagged_; }
  bool moved() const { return moved_; }  // flagged for the sizes

 private:
  double expected_ = 0, bytes_ = 0, lo_ = -1, hi_ = -1;  // lo_ < 0: sizes not watched
  double ratio_[kDriftSamples] = {};
  int n_ = 0;
  bool flagged_ = false, moved_ = false;
};

}  // namespace a2a::detail
