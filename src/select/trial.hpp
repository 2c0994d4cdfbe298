// auto's trial, the arithmetic (no MPI; tests/unit/test_trial.cpp): the
// model proposes two or three candidates (trial_candidates in
// cost_model.hpp), which take turns on the application's own calls, all of
// which move the real data; each turn is kTrialRepeat calls of one
// candidate, of which each rank times the last; after kTrialRounds rounds
// one allreduce of every rank's median per candidate (the slowest rank's)
// tells every rank the same times, and auto keeps the winner.  Afterwards
// every kSampleEvery-th call of the class is timed; a rank whose recent
// samples run kDrift times slower than the winner did in its trial raises
// a flag, which the ranks agree on (one allreduce) every `check_every`
// calls, starting at kFirstCheck and doubling after each check that finds
// nothing, up to kLastCheck; a raised flag runs the trial again, so that a
// pick that turns slow is dropped.  STAR-MPI (Faraj, Yuan and
// Lowenthal, ICS 2006) selected collectives at run time this way; the model
// keeps the trial to a few calls.
#pragma once
#include <vector>

#include "select/cost_model.hpp"

namespace a2a::detail {

// Calls per turn, of which only the last is timed: it follows a call of
// the same candidate, as calls of a decided class do.  A call after
// another candidate's inherits that one's exit skew between the ranks and
// its cache state (shm's flags let ranks leave together; at 16 B at P = 2
// timing every call made shm look 0.7 of the library when back-to-back
// calls ran 0.93-1.10 of it); a candidate's very first call also sets up
// (segments, duplicates).
constexpr int kTrialRepeat = 2;
constexpr int kTrialRounds = 4;  // rounds of one turn per candidate
// A candidate other than native wins only at most this fraction of
// native's time: where they tie, the library's own runs.
constexpr double kTrialMargin = 0.97;
// A close round is confirmed by a second round of native and the other
// candidate alone before its winner is kept: a winner other than native
// within this fraction of native's time, or native where another took
// less than native's time over it.  The machine's phases move a single
// round's times by 10-30 %, and a wrong pick costs every call after
// (a2a-fft at P = 2 once kept shm at 1.5x native from one round; at P = 2
// one round kept native for 0.42 us alltoallv calls where shm took 0.90
// of the library and native through a2a 1.14).  A clear round is kept.
constexpr double kConfirmAbove = 0.8;
constexpr long long kSampleEvery = 64;
constexpr long long kFirstCheck = 1024, kLastCheck = 1LL << 16;
constexpr double kDrift = 1.5;
constexpr int kDriftSamples = 4;
// The class of every alltoallv size (auto_without_sizes) is tried at the
// sizes of the calls its trial takes: a timed call moving this many times
// more bytes than the largest of them, or fewer than the smallest, flags
// the rank, and the ranks agree on that flag every size_check_every calls.
// The class keeps each trial's winner by the size class of the ranks' mean
// bytes, so sizes that move to a class it has tried take that winner
// without a trial, and sizes that move to a new one are tried there: a
// factor this small follows a sweep of doubling sizes (one factor of 8
// kept `shm` at P = 4 from 512 KiB, where it won, through 4 MiB, where it
// ran 1.3x the library), while calls that vary within the trial's range
// (MoE-like routing) stay put.
constexpr double kSizesMoved = 1.5;
// That agreement (one allreduce, and the preparation of its call, which
// cannot be the hot call, where counts change every call) costs at most
// 1 / kSizeCheckShare of the class's time.
constexpr double kSizeCheckShare = 100;
// Calls between agreements on moved sizes (each also a drift sample): as
// many as make an allreduce of allreduce_seconds cost at most
// 1 / kSizeCheckShare of calls of call_seconds each, and at most
// kFirstCheck; one for calls of a millisecond.
long long size_check_every(double allreduce_seconds, double call_seconds);
// The pace after an agreement: `wanted` (size_check_every), but at most
// twice the pace before it (`previous`, 0 for none).  One agreement that
// waited on a descheduled rank or on the calls' exit skew once took 80 us
// for 9 us calls at P = 2 and paced the next 896 calls apart, over three
// sizes of a doubling sweep: `shm`, kept from 512 KiB, ran 1.6x the
// library at 2 MiB before the sizes' move was seen.  A cost that persists
// still reaches its pace in a few agreements.
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
// taking the slowest rank's: a call ends when its last rank leaves it.
// The ranks' mean, used before, let an algorithm whose lightly loaded
// ranks leave early look faster than its calls were (P = 4, power-law at
// 4 MiB: shm 0.85 of native by the mean, 1.06 by the slowest rank's
// median, 1.27 in a2a bench).  Each call's slowest rank (the bench's
// statistic) was tried: on time-sliced ranks a call's maximum takes any
// rank's lost time slice, and at P = 4 small calls kept native where shm
// took 0.54-0.73 of it; a rank's median drops its own.  One buffer: the
// candidates' medians, then (in its last slot) the rank's bytes, which
// are summed (their mean names an every-size class's size).
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

// A clear trial ends early: after kEarlyRounds rounds one allreduce tells
// every rank each candidate's slowest and fastest timed call over all
// ranks, and where one candidate's slowest is kEarlyClear times faster
// than every other's fastest, it wins without the other rounds.  A trial's
// calls of a clear loser are most of what its first calls cost: at P = 2
// without single copy, shm's 1.6-2x at 2-8 MiB made the first 100 calls
// there 1.15-1.33 of the library's.  Every sample, not a median: a call
// that lost its time slice only keeps a trial from ending early.
constexpr int kEarlyRounds = 2;
constexpr double kEarlyClear = 1.25;
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
// The candidate that meets native again in a confirmation (kConfirmAbove)
// before the round's winner `win` is kept: win where it is not native and
// close; where native won, the fastest other where close; else -1.
int confirmation_challenger(const std::vector<double>& seconds, int win, int native_at);
// The confirmation's samples to start from: the round's of `win` (the
// challenger) and of native, in that order (its candidates'), taken out
// of `samples`.  The confirmation decides on both rounds' (8 per rank; on
// its own 4, ties of 0.4 us calls at P = 2 went to native where shm took
// 0.87-0.99 of the library, which native through a2a's alltoallv took
// 1.11-1.16 of).
std::vector<std::vector<TrialSample>> confirmation_start(std::vector<std::vector<TrialSample>>& samples, int win,
                                                        int native_at);

// A decided class's drift watch on one rank: the winner's trial time and
// the bytes it moved then, the last samples.
class DriftWatch {
 public:
  void reset(double seconds, double bytes) {
    expected_ = seconds, bytes_ = bytes, n_ = 0, flagged_ = moved_ = false, lo_ = hi_ = -1;
  }
  // The class serves every size: its trial's calls moved lo .. hi bytes
  // (kSizesMoved).
  void watch_sizes(double lo, double hi) { lo_ = lo, hi_ = hi; }
  // A timed call of `bytes`: expected to take the trial's time scaled up
  // by its bytes (never down: small calls cost their latency); flags the
  // rank when the median of the last kDriftSamples ratios passes kDrift,
  // or, watching sizes, when the call's bytes moved kSizesMoved times out
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
