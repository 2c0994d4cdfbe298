// What "auto" runs on a communicator.  Calls fall into classes: alltoall by
// its block size, alltoallv by its global mean and largest block (powers of
// two), or, where no size can change the choice, one class for every
// alltoallv (auto_without_sizes).  A class starts from the tuning file's
// entry when one matches (A2A_TUNING_FILE, see tuning.hpp), otherwise from
// the cost model (cost_model.hpp) with the machine's measured costs
// (measure.hpp), which proposes two or three candidates; the trial then
// times them on the application's own calls and keeps the fastest
// (trial.hpp), watched afterwards for drift.  Classes are kept per
// communicator; communicators of world's ranks in world's order share
// world's (CommContext::world_order).
//
// Every rank must decide alike, so everything a class reads is the same on
// every rank: P, the layout, the call's global block sizes (alltoall: the
// block size; alltoallv: the global mean and maximum from one allreduce),
// the tuning file (its fingerprint is compared across the communicator
// once, where the launcher does not say that the whole job is on one
// machine; a mismatch disables it there), the model (rank 0's measurement,
// broadcast) and the trial's times (reduced); and every rank meets the
// same calls of a class in the same order, so its counters agree.  The
// measurement, unless A2A_COST_MODEL gives every value, takes a few
// milliseconds at most, collective on the communicator that decides first;
// made on one of all the job's ranks, it serves every later communicator
// of world ranks.  auto's first call on a communicator decides nothing
// (front/execute.cpp).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "select/machine.hpp"
#include "select/policy.hpp"
#include "select/trial.hpp"
#include "select/tuning.hpp"

namespace a2a::detail {

struct CommContext;

// A2A_Last_decided_by() of auto's calls.
inline constexpr const char* kByTuning = "tuning";
inline constexpr const char* kByModel = "model";
inline constexpr const char* kByMeasurement = "measured";
inline constexpr const char* kByTrial = "trial";  // a call of a trial (its candidate ran)

struct AutoDecision {
  Resolved resolved;  // machine knobs resolved
  std::string spec;   // as the model names it (worth_trying)
  const char* source = "";
};

// The class of every alltoallv size (auto_without_sizes) also agrees on
// its calls' sizes, and keeps each trial's winner by the size class of
// the ranks' mean bytes, taken again where calls move back there.
struct KeptWinner {
  AutoDecision decision;
  double seconds = 0, bytes = 0, lo = 0, hi = 0;  // this rank's: the winner's trial time and bytes, the range
  double agreed = 0;                              // the agreed trial time (the agreements' pace)
};
struct ClassSizes {
  long long every = 0;  // calls between its agreements (size_check_every, next_pace); 0 before the first trial ends
  // The agreed time of the decision's calls and of an agreement (the
  // ranks' mean), and this rank's last agreement's (with the
  // preparation its call was forced into).
  double call_seconds = 0, agreement_seconds = 0, last_agreement = 0;
  std::map<long long, KeptWinner> kept;
  // The size class whose winner it runs: calls that move out of that
  // winner's sizes but not out of its class are tried anew, not handed
  // the same winner again (docs/auto.md).
  long long taken = -1;
  // Chosen by the model: the candidates of its first trial, of which
  // each later trial tries those worth calls at its sizes.
  std::vector<AutoDecision> candidates;
};

// One class of calls on a communicator family: its candidates, its phase
// (trial.hpp) with the trial's turns or the decision and its drift watch,
// and, for the class of every alltoallv size, its sizes.  The front end
// runs `decision` once decided, and enters class_call (execute.cpp) while
// it is trying, whenever `since` reaches `next_event`, or where
// `generation` moved.
struct ClassState {
  std::string label;                     // e.g. "alltoall 4 KiB", for A2A_VERBOSE
  std::vector<AutoDecision> candidates;  // the model's (or tuning file's) pick first; native among them
  int native_at = -1;                    // native's index in candidates, -1 if it is not one
  double margin = kTrialMargin;          // trial_winner's: another candidate beats native at this ratio
  Phase phase = Phase::decided;
  bool trying() const { return phase != Phase::decided; }
  AutoDecision decision;              // valid once decided
  unsigned long long generation = 1;  // moves whenever decision changes or a trial starts
  int trials = 0;                     // trials run (the first and any after drift)

  // Phase trying: the candidates still in, in turn order (indices), the
  // checks so far, the calls since the last, this rank's timed calls per
  // candidate and the fewest and most bytes its trial calls moved.
  struct Trial {
    std::vector<int> in;
    int check = 0, call = 0;
    std::vector<std::vector<TrialSample>> samples;
    double lo = -1, hi = -1;
  } trial;

  // Phase decided: calls since, the next call to time (an event), the next
  // drift check and the pace of those checks (next_pace).
  long long since = 0, next_event = 0, next_check = 0, check_every = kFirstCheck;
  DriftWatch drift;

  // The class of every alltoallv size (auto_without_sizes) alone: its sizes.
  std::optional<ClassSizes> sizes;  // empty: a class of one size class

  // Calls between events, each a sample (of every size: each an agreement too).
  long long event_every() const { return sizes && sizes->every > 0 ? sizes->every : kSampleEvery; }
};

struct AutoState {
  bool prepared = false;               // tuning agreed and model measured
  int v_fixed_known = 0;               // alltoallv: 1 once v_fixed is decided
  std::shared_ptr<ClassState> v_fixed;  // alltoallv without sizes (see below), or null
  bool tuning_checked = false;
  const TuningTable* table = nullptr;  // agreed on this communicator
  std::vector<int> nodes;              // ranks per node
  MachineState machine;
  ModelLayout layout;
  std::map<std::tuple<int, long long, long long>, std::shared_ptr<ClassState>> classes;
};

// Alltoallv needs the global mean and maximum block (an allreduce) only when
// auto's choice could depend on them.  When every algorithm the
// communicator's tuning entries and the cost model (over block sizes 1 B ..
// 1 GiB and skews 1, 4, 64, each non-native pick paying that allreduce) can
// pick is one and the same (native, typically), or one of linear,
// spread-out and scattered (which send the same messages: one per non-empty
// pair, same tag, same pieces, all in flight or in MPICH's batches, so ranks
// could even mix them), auto runs it (the most frequent) for every call on
// this communicator, in one class, tried against native (and a close
// runner-up: sizes_pay) on the first calls: the same on every rank, with
// no allreduce.  Sets `out` to that
// class, or to null when the sizes are needed.  Collective on the
// communicator's first auto call.
int auto_without_sizes(CommContext& ctx, std::shared_ptr<ClassState>& out, std::string& error);

// The class of a call with these global sizes (made on its first call:
// collective where the model needs measuring).
int auto_class(CommContext& ctx, Collective coll, long long mean_bytes, long long max_bytes,
               std::shared_ptr<ClassState>& out, std::string& error);

// auto on device buffers: one class per collective and size class of the
// largest block (agreed), cuda-ipc's IPC path against host staging of the
// library's own call ("native" on pinned mirrors), tried on the
// application's calls as host classes are (A2A_AUTO_TRIAL=off: cuda-ipc's
// hybrid alone).  No model ranks them: which wins turns on whether the
// processes sharing a GPU are time-sliced (without an MPS daemon host
// staging wins at 32-256 KiB, with one cuda-ipc everywhere: docs/gpu.md),
// which nothing a2a measures up front shows.
int auto_device_class(CommContext& ctx, Collective coll, long long max_bytes, std::shared_ptr<ClassState>& out,
                      std::string& error);

// The candidate trial call c.call runs (c.trying()).
const AutoDecision& trial_candidate(const ClassState& c);
// Records this rank's time of the trial call just made (of `bytes` moved
// by this rank); after the last, one allreduce over ctx.user and the
// winner is the decision (collective then, on every rank at the same call).
int trial_record(CommContext& ctx, ClassState& c, double seconds, double bytes, std::string& error);
// A call of a decided class at its event (c.since reached c.next_event):
// `seconds` its time (< 0: not timed), `forced_seconds` what the call
// spent off the hot path because of the event (its preparation); at the
// agreement the ranks' drift flags are reduced, and any raised starts the
// trial again (collective then).
int class_event(CommContext& ctx, ClassState& c, double seconds, double bytes, double forced_seconds,
                std::string& error);


}  // namespace a2a::detail
