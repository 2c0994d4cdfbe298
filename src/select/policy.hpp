// auto's default policy in one place: every number it decides by and the
// pure rules that turn the cost model's ranking (cost_model.hpp) into what
// is tried and what runs untried.  The trial's arithmetic is trial.hpp,
// the class's states auto.hpp; docs/auto.md gives the measurement behind
// each number.  No MPI (tests/unit/test_cost_model.cpp, test_trial.cpp).
//
// Two times are told apart without more evidence where one is at most
// kClear of the other: the machine's phases move one round's times by
// 10-30 %.  A factor of kFar is beyond the model's error and the
// machine's noise: a runner-up modelled closer may win on the machine, a
// call that far off its trial, in time or bytes, is in another regime.
//
//   untried   native, unless another is modelled at most kClear of it
//   tried     the pick, native, the runner-up modelled within kFar
//   trial     rounds of turns (ABBA) of kTrialRepeat calls, the last timed; an
//             agreement every kTrialRounds / 2 rounds: a candidate whose every call
//             is kClear behind another's slowest leaves, one left wins; from the
//             second, the slowest rank's medians decide (native unless another is
//             within kTrialMargin) where winner and native are kClear apart, else
//             the two go on alone; at most kTrialRounds rounds of all, as many of two
//   drift     every kSampleEvery-th call timed; a median of kTrialRounds over kFar
//             of the trial's time flags the rank; flags agreed every kFirstCheck
//             calls, doubling to kLastCheck (next_pace); a flag runs the trial again
//   sizes     the class of every alltoallv size is tried again where a call's bytes move
//             kFar out of its trial's, agreed at most 1 / kSizeCheckShare of its time
//             (next_pace); back in a size class it tried, it takes that winner untried
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"
#include "select/cost_model.hpp"
#include "core/collective.hpp"

namespace a2a::detail {

// The trial.
constexpr int kTrialRepeat = 2;
constexpr int kTrialRounds = 4;
constexpr double kTrialMargin = 0.97;
constexpr double kClear = 0.8;
// The model's reach and the decided class's drift.
constexpr double kFar = 1.5;
// The decided class's watch: what it costs.
constexpr long long kSampleEvery = 64;
constexpr long long kFirstCheck = 1024, kLastCheck = 1LL << 16;
constexpr double kSizeCheckShare = 100;

// A class's size: its power of two (0 for 0).  Classes are alltoall's
// block sizes, alltoallv's global mean and largest blocks (auto.hpp).
constexpr long long size_class(long long x) {
  long long c = 1;
  while (c <= x / 2) c *= 2;
  return x > 0 ? c : 0;
}

// What auto runs on the model's ranking, untried: native, unless the
// cheapest other costs at most `margin` of native's time with `extra`
// seconds added (alltoallv: the size allreduce its choice needs).
// `margin` 1: the cheapest, for picks a trial will check.
std::string model_pick(const std::vector<CostedSpec>& ranked, double extra = 0, double margin = kClear);
// What a trial times: the model's pick, native, and the cheapest other
// where it is modelled within kFar of the pick (of native, where
// native is the pick).  Native alone: nothing is worth a call.
std::vector<std::string> trial_candidates(const std::vector<CostedSpec>& ranked, double extra = 0);
// Which of a trial's candidates (specs) are worth calls at the size of
// `ranked`: native, those the ranking lacks, those modelled within
// kFar of native.
std::vector<size_t> worth_trying(const std::vector<std::string>& specs, const std::vector<CostedSpec>& ranked);

// Whether a spec's algorithm sends on a2a's private duplicate (a collective
// MPI_Comm_dup on a communicator's first use of one).
bool needs_duplicate(Collective coll, const std::string& spec);
// A tuning entry's pick, tried against native only under A2A_AUTO_TRIAL=all.
std::vector<std::string> tuned_candidates(const std::string& pick, Config::Trial mode);
// The model's ranking as a trial's candidates (A2A_AUTO_TRIAL=off: its pick
// alone); a runner-up that would make the private duplicate is dropped
// where the pick does not make it (a program making a communicator per
// plan, as FFTW does, would pay one per communicator for a trial turn).
std::vector<std::string> modelled_candidates(Collective coll, const std::vector<CostedSpec>& ranked,
                                             Config::Trial mode);

// Device buffers: cuda-ipc's IPC path at every size against host staging
// of the library's own call (the trial, not the hybrid's ipc-threshold, the
// paper's A100 value, says where staging wins); untried, the hybrid.
std::vector<std::string> device_candidates(Config::Trial mode);

// Alltoallv's choice per call on the global sizes costs an allreduce a
// call.  Linear, spread-out and scattered send the same messages (one per
// non-empty pair, same tag), so ranks may even mix them.
bool same_messages_family(const std::string& spec);
// Whether that choice pays for its allreduce on this layout, by the model
// over blocks of 1 B .. 1 GiB and skews 1, 4 and 64; where not, `single`
// is the best pick for every size (of the model's picks, native and
// `given`, by the geometric mean of each one's time over the best) and
// `runner_up` the best other modelled under kTrialMargin of native
// somewhere (empty where none).
bool sizes_pay(const ModelLayout& layout, const MachineModel& m, const std::vector<std::string>& given,
               std::string& single, std::string& runner_up);
// Untried (A2A_AUTO_TRIAL=off): whether one pick serves every size, the
// picks of the model over that sweep appended to `picks` (the tuning
// file's).  Where winners change with the size, a non-native pick must
// beat native with the size allreduce added; where native still wins some
// sizes, native runs at all of them.
bool untried_single_pick(const ModelLayout& layout, const MachineModel& m, std::vector<std::string>& picks);
// Whether every pick is one algorithm or one of the same-message family.
bool one_family(const std::vector<std::string>& picks);
// The most frequent of the picks.
std::string most_picked(const std::vector<std::string>& picks);
// What the class of every size tries: the pick, native, the runner-up
// (unless it would make the private duplicate that the pick does not).
std::vector<std::string> every_size_candidates(const std::string& pick, const std::string& runner_up);
// The mean block at which its later trials price their candidates: the
// ranks' mean bytes a call moves, sent and received, over 2P.
long long every_size_block(double mean_call_bytes, int P);
// Whether the union of the [lo, hi] ranges covers every mean block size.
bool covers_all(std::vector<std::pair<long long, long long>> ranges);

}  // namespace a2a::detail
