#include "select/auto.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/config.hpp"
#include "core/context.hpp"
#include "select/agreement.hpp"

namespace a2a::detail {
namespace {

std::string bytes_label(long long b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024 && b % 1024 == 0) b /= 1024, ++u;
  return std::to_string(b) + " " + unit[u];
}

// Communicators of world's ranks in world's order decide alike, so they
// share world's state: a program making one per plan (FFTW) decides and
// models once.
AutoState& auto_state(CommContext& ctx) {
  if (!ctx.auto_state) {
    static const std::shared_ptr<AutoState> world = std::make_shared<AutoState>();
    ctx.auto_state = ctx.world_order ? world : std::make_shared<AutoState>();
  }
  return *ctx.auto_state;
}

// Prints a trial's check and its outcome (A2A_VERBOSE=1, the
// communicator's rank 0), e.g. "a2a auto: P=2, alltoall 1 KiB: trial 1,
// check 2: shm 0.552 us, native 1.120 us -> shm (measured)".
void tell_check(const CommContext& ctx, const ClassState& c, const std::vector<double>& t, const CheckEnd& end) {
  if (!ctx.tells()) return;
  std::string line = "a2a auto: P=" + std::to_string(ctx.size) + ", " + c.label + ": trial " +
                     std::to_string(c.trials + 1) + ", check " + std::to_string(c.trial.check) + ":";
  for (size_t i = 0; i < c.trial.in.size(); ++i) {
    char us[32];
    std::snprintf(us, sizeof us, " %.3f us", t[i] * 1e6);
    line += (i ? ", " : " ") + c.candidates[static_cast<size_t>(c.trial.in[i])].resolved.canonical + us;
  }
  const auto name = [&](int i) { return c.candidates[static_cast<size_t>(c.trial.in[static_cast<size_t>(i)])].resolved.canonical; };
  if (end.winner >= 0) {
    line += " -> " + name(end.winner) + " (measured)";
  } else {
    line += " -> on with";
    for (size_t i = 0; i < end.stay.size(); ++i) line += (i ? ", " : " ") + name(end.stay[i]);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

// A trial starts with every candidate.
void start_trial(ClassState& c) {
  c.phase = Phase::trying;
  c.trial.in.clear();
  for (size_t i = 0; i < c.candidates.size(); ++i) c.trial.in.push_back(static_cast<int>(i));
  c.trial.samples.assign(c.candidates.size(), {});
  c.trial.check = c.trial.call = 0;
}

void start_watch(ClassState& c) {
  c.since = 0;
  // One candidate: nothing to watch, unless its sizes may move to where others are worth a trial.
  const bool watch = c.candidates.size() > 1 || (c.sizes && c.sizes->candidates.size() > 1);
  c.next_event = watch ? c.event_every() : (1LL << 62);
  c.next_check = c.check_every;
}

// An every-size class's agreements on its sizes (each a drift sample too),
// paced by the agreed time of its calls and of its agreements (as measured
// at the last one; the model's before the first).
void pace_size_checks(CommContext& ctx, ClassSizes& sz, double call_seconds) {
  AutoState& a = auto_state(ctx);
  sz.call_seconds = call_seconds;
  const double agreement = sz.agreement_seconds > 0 ? sz.agreement_seconds
                           : a.machine.ready       ? model_allreduce(a.layout, a.machine.model)
                                                  : -1;
  sz.every = next_pace(sz.every, size_check_every(agreement, call_seconds));
}

// An every-size class's trial at `bytes` (the ranks' mean of call_bytes):
// its first trial's candidates that the model finds worth calls there.
void narrow_to_size(CommContext& ctx, ClassState& c, double bytes) {
  const AutoState& a = auto_state(ctx);
  if (c.sizes->candidates.empty() || !a.machine.ready) return;
  const long long block = every_size_block(bytes, ctx.size);
  std::vector<std::string> specs;
  for (const AutoDecision& d : c.sizes->candidates) specs.push_back(d.spec);
  const std::vector<size_t> kept = worth_trying(specs, model_alltoallv(a.layout, block, block, a.machine.model));
  c.candidates.clear();
  c.native_at = -1;
  for (size_t i : kept) {
    if (specs[i] == "native") c.native_at = static_cast<int>(c.candidates.size());
    c.candidates.push_back(c.sizes->candidates[i]);
  }
  if (kept.size() < specs.size() && ctx.tells()) {
    std::string left_out;
    for (size_t i = 0; i < specs.size(); ++i)
      if (std::find(kept.begin(), kept.end(), i) == kept.end()) left_out += " " + specs[i];
    std::fprintf(stderr, "a2a auto: P=%d, %s: at blocks of %s, left out (modelled over %.1fx native):%s\n", ctx.size,
                 c.label.c_str(), bytes_label(block).c_str(), kFar, left_out.c_str());
  }
}

// An every-size class takes the winner k of a size class: its time and
// bytes for the drift watch, its sizes for moves, its agreed time for the
// agreements' pace.
void take_winner(CommContext& ctx, ClassState& c, const KeptWinner& k) {
  c.decision = k.decision;
  c.drift.reset(k.seconds, k.bytes);
  c.drift.watch_sizes(k.lo, k.hi);
  pace_size_checks(ctx, *c.sizes, k.agreed);
}

// A class of the given candidates (specs; the first the pick), decided at
// once where there is one, else in trial.  Collective where a knob needs
// the model measured.
int make_class(CommContext& ctx, Collective coll, long long bytes, const std::vector<std::string>& specs,
               const char* source, std::string label, std::shared_ptr<ClassState>& out, std::string& error) {
  auto c = std::make_shared<ClassState>();
  c->label = std::move(label);
  for (const std::string& spec : specs) {
    AutoDecision d;
    if (const int rc = resolve(coll, spec, ctx.size, bytes, d.resolved, error)) return rc;
    if (const int rc = resolve_machine_knobs(ctx, d.resolved, error)) return rc;
    d.source = source;
    d.spec = spec;
    if (spec == "native") c->native_at = static_cast<int>(c->candidates.size());
    c->candidates.push_back(std::move(d));
  }
  c->decision = c->candidates[0];
  if (c->candidates.size() > 1) start_trial(*c);
  else start_watch(*c);
  out = std::move(c);
  return MPI_SUCCESS;
}

using ClassKey = std::tuple<int, long long, long long>;
// The class kept under key, if any, into out.
bool known_class(AutoState& a, const ClassKey& key, std::shared_ptr<ClassState>& out) {
  const auto it = a.classes.find(key);
  if (it != a.classes.end()) out = it->second;
  return it != a.classes.end();
}
void keep_class(AutoState& a, const ClassKey& key, std::shared_ptr<ClassState> c, std::shared_ptr<ClassState>& out) {
  if (a.classes.size() >= 1024) a.classes.clear();  // held calls keep theirs alive
  out = a.classes.emplace(key, std::move(c)).first->second;
}

void check_tuning(CommContext& ctx, AutoState& a) {
  if (a.tuning_checked) return;  // the same file on every rank (compared at the context's setup), or none
  const TuningTable* table = process_tuning(nullptr, nullptr);
  a.table = ctx.same_tuning ? table : nullptr;
  for (const auto& node : ctx.topology.ranks) a.nodes.push_back(static_cast<int>(node.size()));
  a.layout = {ctx.topology.node_of, ctx.topology.ranks};
  a.tuning_checked = true;
}

}  // namespace

int auto_without_sizes(CommContext& ctx, std::shared_ptr<ClassState>& out, std::string& error) {
  AutoState& a = auto_state(ctx);
  if (!a.v_fixed_known) {
    check_tuning(ctx, a);
    std::vector<std::string> picks;
    std::string runner_up;  // the model's, tried too where close
    std::vector<std::pair<long long, long long>> ranges;
    if (a.table)
      for (const auto& e : a.table->entries)
        if (e.collective == Collective::alltoallv && e.nodes == a.nodes) {
          picks.push_back(e.algorithm);
          ranges.emplace_back(e.min_bytes, e.max_bytes);
        }
    const bool tuned = covers_all(ranges);
    const bool tried = config().trial != Config::Trial::off;
    bool safe = one_family(picks);
    if (safe && !tuned) {
      MachineModel m;
      if (const int rc = machine_model(ctx, m, error)) return rc;
      if (tried) {
        std::string pick;
        bool pays = false;
        if (const int rc = root_sizes_pay(ctx.user, a.layout, m, picks, pick, runner_up, pays)) {
          error = "a2a: auto could not share its pricing of alltoallv";
          return rc;
        }
        safe = !pays;
        if (safe) picks.push_back(pick);
      } else {
        safe = untried_single_pick(a.layout, m, picks);
      }
    }
    if (safe && !picks.empty()) {
      const std::string best = most_picked(picks);
      const std::vector<std::string> specs = tuned   ? tuned_candidates(best, config().trial)
                                             : tried ? every_size_candidates(best, runner_up)
                                                     : std::vector<std::string>{best};
      if (const int rc = make_class(ctx, Collective::alltoallv, 0, specs, tuned ? kByTuning : kByModel,
                                    "alltoallv (every size)", a.v_fixed, error))
        return rc;
      a.v_fixed->sizes.emplace();
      if (!tuned) a.v_fixed->sizes->candidates = a.v_fixed->candidates;
    }
    a.v_fixed_known = 1;
  }
  out = a.v_fixed;
  return MPI_SUCCESS;
}

int auto_class(CommContext& ctx, Collective coll, long long mean, long long max_bytes,
               std::shared_ptr<ClassState>& out, std::string& error) {
  AutoState& a = auto_state(ctx);
  check_tuning(ctx, a);
  if (coll == Collective::alltoall) max_bytes = mean;
  const ClassKey key = {static_cast<int>(coll), size_class(mean), size_class(max_bytes)};
  if (known_class(a, key, out)) return MPI_SUCCESS;
  // Priced at the class's own sizes, not the first call's: a class priced
  // ahead (price_alltoall_classes, as far as each rank's millisecond goes)
  // and one opened by a call must hold the same candidates on every rank.
  mean = std::get<1>(key);
  max_bytes = std::get<2>(key);
  std::vector<std::string> specs;
  const char* source = kByModel;
  if (const TuningEntry* e = a.table ? find_entry(*a.table, coll, a.nodes, mean, max_bytes) : nullptr) {
    specs = tuned_candidates(e->algorithm, config().trial);
    source = kByTuning;
  } else {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    specs = modelled_candidates(coll,
                                coll == Collective::alltoall ? model_alltoall(a.layout, mean, m)
                                                             : model_alltoallv(a.layout, mean, max_bytes, m),
                                config().trial);
  }
  std::string label = coll == Collective::alltoall
                          ? "alltoall " + bytes_label(std::get<1>(key))
                          : "alltoallv mean " + bytes_label(std::get<1>(key)) + ", largest " + bytes_label(std::get<2>(key));
  std::shared_ptr<ClassState> c;
  if (const int rc = make_class(ctx, coll, mean, specs, source, std::move(label), c, error)) return rc;
  keep_class(a, key, std::move(c), out);
  return MPI_SUCCESS;
}

int auto_device_class(CommContext& ctx, Collective coll, long long max_bytes, std::shared_ptr<ClassState>& out,
                      std::string& error) {
  AutoState& a = auto_state(ctx);
  constexpr int kDevice = 16;  // device classes' keys apart from host classes'
  const ClassKey key = {static_cast<int>(coll) + kDevice, size_class(max_bytes), 0LL};
  if (known_class(a, key, out)) return MPI_SUCCESS;
  std::string label = std::string(coll == Collective::alltoall ? "alltoall " : "alltoallv largest ") +
                      bytes_label(std::get<1>(key)) + " on device buffers";
  std::shared_ptr<ClassState> c;
  if (const int rc = make_class(ctx, coll, max_bytes, device_candidates(config().trial), kByModel, std::move(label),
                                c, error))
    return rc;
  keep_class(a, key, std::move(c), out);
  return MPI_SUCCESS;
}

const AutoDecision& trial_candidate(const ClassState& c) {
  const int turn = trial_turn(c.trial.call, static_cast<int>(c.trial.in.size()));
  return c.candidates[static_cast<size_t>(c.trial.in[static_cast<size_t>(turn)])];
}

namespace {
// Candidate w (an index) becomes the decision (seconds, ref: this rank's
// median and the bytes it is at; agreed: the agreed median; tried_size:
// the ranks' size class).
void decide(CommContext& ctx, ClassState& c, size_t w, double seconds, double ref, double agreed,
            long long tried_size) {
  c.decision = c.candidates[w];
  c.decision.source = kByMeasurement;
  if (c.sizes) {  // from agreed values: every rank agrees at the same calls
    take_winner(ctx, c, c.sizes->kept[tried_size] = {c.decision, seconds, ref, c.trial.lo, c.trial.hi, agreed});
    c.sizes->taken = tried_size;
    if (ctx.tells())
      std::fprintf(stderr, "a2a auto: P=%d, %s: sizes agreed every %lld calls\n", ctx.size, c.label.c_str(),
                   c.sizes->every);
  } else {
    c.drift.reset(seconds, ref);
  }
  ++c.trials;
  c.phase = Phase::decided;
  c.trial.samples.assign(c.candidates.size(), {});
  ++c.generation;
  start_watch(c);
}

// A trial again, after drift or moved sizes.
void try_again(CommContext& ctx, ClassState& c, double bytes) {
  if (c.sizes) narrow_to_size(ctx, c, bytes);
  start_trial(c);
  ++c.generation;
  c.next_event = 0;
}
}  // namespace

int trial_record(CommContext& ctx, ClassState& c, double seconds, double bytes, std::string& error) {
  ClassState::Trial& tr = c.trial;
  const int n = static_cast<int>(tr.in.size());
  const bool first = tr.check == 0 && tr.call == 0;
  if (first || bytes < tr.lo) tr.lo = bytes;
  if (first || bytes > tr.hi) tr.hi = bytes;
  if (trial_timed(tr.call))
    tr.samples[static_cast<size_t>(tr.in[static_cast<size_t>(trial_turn(tr.call, n))])].push_back({seconds, bytes});
  if (++tr.call < check_calls(n)) return MPI_SUCCESS;
  const AutoState& as = auto_state(ctx);
  const MachineModel& model = as.machine.model;
  const LinkCost* link = !as.machine.ready ? nullptr : as.layout.ranks.size() > 1 ? &model.inter : &model.intra;
  std::vector<std::vector<TrialSample>> in;  // the samples of those in the trial, in its order
  int native = -1;
  for (int i : tr.in) {
    if (i == c.native_at) native = static_cast<int>(in.size());
    in.push_back(tr.samples[static_cast<size_t>(i)]);
  }
  double ref = 0;  // the bytes the times are at
  const std::vector<double> mine = trial_times(in, link, ctx.size, ref);  // this rank's medians
  TrialAgreement agreed = trial_pack(mine, in, tr.hi);  // its mean: the size an every-size class keeps the winner for
  if (const int rc = agree_trial(ctx.user, agreed, error)) return rc;
  const TrialTimes t = trial_unpack(agreed, in.size());  // every rank alike from here
  ++tr.check;
  const CheckEnd end = trial_check(t, native, tr.check, c.margin);
  if (end.winner >= 0 || end.stay.size() < in.size() || tr.check >= 2) tell_check(ctx, c, t.median, end);
  tr.call = 0;
  if (end.winner < 0) {
    std::vector<int> stay;
    for (int i : end.stay) stay.push_back(tr.in[static_cast<size_t>(i)]);
    tr.in = std::move(stay);
    return MPI_SUCCESS;
  }
  const auto w = static_cast<size_t>(end.winner);
  decide(ctx, c, static_cast<size_t>(tr.in[w]), mine[w], ref, t.median[w],
         size_class(std::llround(t.bytes / ctx.size)));
  return MPI_SUCCESS;
}

int class_event(CommContext& ctx, ClassState& c, double seconds, double bytes, double forced_seconds,
                std::string& error) {
  if (seconds >= 0) c.drift.sample(seconds * config().test_slowdown, bytes);
  c.next_event = c.since + c.event_every();
  const bool drift_due = c.since >= c.next_check;
  ClassSizes* sz = c.sizes ? &*c.sizes : nullptr;
  const bool sizes_due = sz && sz->every > 0;  // a class of every size agrees at every event once paced
  if (!drift_due && !sizes_due) return MPI_SUCCESS;
  // Ranks whose times drifted (counted when the drift check is due: a
  // class of every size agrees on its sizes far more often), whose sizes
  // moved, their bytes now, and how long their last agreement took (summed).
  double took = 0;  // this rank's agreement's seconds (a class of every size keeps them for its pace)
  double& last = sz ? sz->last_agreement : took;
  double agreed[4] = {drift_due && c.drift.flagged() && !c.drift.moved() ? 1.0 : 0.0, c.drift.moved() ? 1.0 : 0.0,
                      bytes, last};
  if (const int rc = agree_event(ctx.user, agreed, last, error)) return rc;
  last += forced_seconds;
  if (sizes_due && agreed[3] > 0) {  // paced by what agreements cost (agreed: every rank alike)
    sz->agreement_seconds = agreed[3] / ctx.size;
    pace_size_checks(ctx, *sz, sz->call_seconds);
    c.next_event = c.since + c.event_every();
  }
  if (drift_due) {
    c.check_every = next_pace(c.check_every, kLastCheck);
    c.next_check = c.since + c.check_every;
  }
  const bool drifted = agreed[0] > 0, moved = agreed[1] > 0 && sz;
  const long long now = size_class(std::llround(agreed[2] / ctx.size));
  const KeptWinner* kept = nullptr;  // a winner of the size class the calls moved to, if not the one it runs
  if (moved)
    if (const auto it = sz->kept.find(now); it != sz->kept.end() && now != sz->taken) kept = &it->second;
  switch (event_end(drifted, moved, kept)) {
    case EventEnd::keep:
      return MPI_SUCCESS;
    case EventEnd::take_kept:  // tried there before: its winner, untried (a drift then was of the old sizes)
      take_winner(ctx, c, *kept);
      sz->taken = now;
      ++c.generation;
      start_watch(c);
      if (ctx.tells())
        std::fprintf(stderr, "a2a auto: P=%d, %s: calls moved to %s: %s, its winner there (measured)\n", ctx.size,
                     c.label.c_str(), bytes_label(now).c_str(), c.decision.resolved.canonical.c_str());
      return MPI_SUCCESS;
    case EventEnd::try_again:
      if (ctx.tells())
        std::fprintf(stderr, "a2a auto: P=%d, %s: %s%s%.1fx %s: trial again\n", ctx.size, c.label.c_str(),
                     c.decision.resolved.canonical.c_str(), drifted ? " runs over " : "'s calls moved ", kFar,
                     drifted ? "its trial time" : "from its trial's bytes");
      try_again(ctx, c, agreed[2] / ctx.size);
      return MPI_SUCCESS;
  }
  return MPI_SUCCESS;
}

MachineState& machine_state(CommContext& ctx) { return auto_state(ctx).machine; }

}  // namespace a2a::detail
