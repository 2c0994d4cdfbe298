#include "select/auto.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/context.hpp"
#include "select/measure.hpp"

namespace a2a::detail {
namespace {

// A2A_COST_MODEL, parsed once per process.
bool env_model(MachineModel& m, unsigned& given, std::string& error) {
  static MachineModel parsed;
  static unsigned keys = 0;
  static std::string err;
  static const bool ok = [] {
    const std::string& v = config().cost_model;
    return v.empty() || parse_cost_model(v, parsed, keys, err);
  }();
  m = parsed;
  given = keys;
  error = err;
  return ok;
}

// The class of a size: its power of two (0 for 0).
long long size_class(long long x) {
  long long c = 1;
  while (c <= x / 2) c *= 2;
  return x > 0 ? c : 0;
}

std::string bytes_label(long long b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024 && b % 1024 == 0) b /= 1024, ++u;
  return std::to_string(b) + " " + unit[u];
}

// The machine's measured parameters, learnt once per job on a communicator
// of all its ranks and read by the later ones (CommContext::teaches_world,
// reads_world): a program making a communicator per plan measures once.
struct JobMachine {
  std::mutex lock;
  bool known = false;
  MachineCosts measured;
};
JobMachine& job_state() {
  static JobMachine j;
  return j;
}
bool job_machine(MachineModel& m) {
  JobMachine& j = job_state();
  std::lock_guard<std::mutex> guard(j.lock);
  if (!j.known) return false;
  static_cast<MachineCosts&>(m) = j.measured;
  return true;
}
void remember_job_machine(const MachineModel& m) {
  JobMachine& j = job_state();
  std::lock_guard<std::mutex> guard(j.lock);
  j.measured = m;
  j.known = true;
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

// Rank 0's measurement of the machine, broadcast (collective over comm, a
// communicator of ctx's ranks that carries nothing else).
int measure_machine_on(CommContext& ctx, MPI_Comm comm, MachineModel& m) {
  const auto& ranks = ctx.topology.ranks;
  const int intra_peer = ranks[ctx.topology.node_of[0]].size() > 1 ? ranks[ctx.topology.node_of[0]][1] : -1;
  const int inter_peer = ranks.size() > 1 ? ranks[1][0] : -1;
  double o_intra = 0, o_inter = 0, p_intra = 0, p_inter = 0;
  const bool open_mpi = m.library == Library::open_mpi;
  if (intra_peer >= 0 && (ctx.rank == 0 || ctx.rank == intra_peer))
    measure_link(comm, ctx.rank, intra_peer, open_mpi, ctx.oversubscribed, m.intra, o_intra, p_intra);
  if (inter_peer >= 0 && (ctx.rank == 0 || ctx.rank == inter_peer))
    measure_link(comm, ctx.rank, inter_peer, open_mpi, ctx.oversubscribed, m.inter, o_inter, p_inter);
  if (intra_peer < 0) m.intra = m.inter, o_intra = o_inter, p_intra = p_inter;
  if (inter_peer < 0) m.inter = m.intra, o_inter = o_intra, p_inter = p_intra;
  m.overhead = std::max(o_intra, o_inter);
  m.persistent = std::max(p_intra, p_inter);
  m.copy = ctx.rank == 0 ? measure_copy() : 0;
  const NodeCosts node = measure_node(comm, ctx.oversubscribed);
  m.flag = node.flag;
  m.flag_round = node.flag_round;
  std::copy(std::begin(node.seg), std::end(node.seg), m.seg);
  std::copy(std::begin(node.cma), std::end(node.cma), m.cma);
  m.round = measure_round(comm, ctx.oversubscribed);
  std::vector<double> v = {m.intra.alpha, m.intra.beta, m.inter.alpha, m.inter.beta, m.overhead,
                           m.copy,        m.persistent, m.flag,        m.round,      m.flag_round};
  for (double* curve : {m.seg, m.cma}) v.insert(v.end(), curve, curve + kShmCopySizes);
  for (double* curve : {m.intra.at, m.inter.at}) v.insert(v.end(), curve, curve + kLinkSizes);
  if (const int rc = MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, 0, comm)) return rc;
  m.intra.alpha = v[0], m.intra.beta = v[1], m.inter.alpha = v[2], m.inter.beta = v[3];
  m.overhead = v[4], m.copy = v[5], m.persistent = v[6], m.flag = v[7], m.round = v[8], m.flag_round = v[9];
  auto at = v.begin() + 10;
  for (double* curve : {m.seg, m.cma}) {
    std::copy_n(at, kShmCopySizes, curve);
    at += kShmCopySizes;
  }
  for (double* curve : {m.intra.at, m.inter.at}) {
    std::copy_n(at, kLinkSizes, curve);
    at += kLinkSizes;
  }
  return MPI_SUCCESS;
}

// The same on a2a's private communicator, or on a duplicate of its own
// where ctx has none yet (A2A_Comm_prepare makes none).
int measure_machine(CommContext& ctx, MachineModel& m) {
  MPI_Comm comm = ctx.comm;
  if (comm == MPI_COMM_NULL)
    if (const int rc = MPI_Comm_dup(ctx.user, &comm)) return rc;
  const int rc = measure_machine_on(ctx, comm, m);
  if (comm != ctx.comm) MPI_Comm_free(&comm);
  return rc;
}

// Prints a class's trial and its outcome (A2A_VERBOSE=1, the communicator's
// rank 0), e.g. "a2a auto: P=2, alltoall 1 KiB: trial 1: shm 0.552 us,
// native 1.120 us -> shm (measured)".
void tell_trial(const CommContext& ctx, const ClassState& c, const std::vector<double>& t, int winner,
                const char* outcome) {
  if (!config().verbose || ctx.rank != 0) return;
  std::string line = "a2a auto: P=" + std::to_string(ctx.size) + ", " + c.label + ": trial " +
                     std::to_string(c.trials + 1) + (c.confirming ? " (confirming):" : ":");
  for (size_t i = 0; i < c.candidates.size(); ++i) {
    char us[32];
    std::snprintf(us, sizeof us, " %.3f us", t[i] * 1e6);
    line += (i ? ", " : " ") + c.candidates[i].resolved.canonical + us;
  }
  line += " -> " + c.candidates[static_cast<size_t>(winner)].resolved.canonical + " " + outcome;
  std::fprintf(stderr, "%s\n", line.c_str());
}

void start_watch(ClassState& c) {
  c.since = 0;
  // One candidate: nothing to watch, unless its sizes may move to where others are worth a trial.
  const bool watch = c.candidates.size() > 1 || c.every_candidates.size() > 1;
  c.next_event = watch ? c.event_every() : (1LL << 62);
  c.next_check = c.check_every;
}

// An every-size class's agreements on its sizes (each a drift sample too),
// paced by the agreed time of its calls and of its agreements (as measured
// at the last one; the model's before the first).
void pace_size_checks(CommContext& ctx, ClassState& c, double call_seconds) {
  AutoState& a = auto_state(ctx);
  c.call_seconds = call_seconds;
  const double agreement = c.agreement_seconds > 0 ? c.agreement_seconds
                           : a.model_ready        ? model_allreduce(a.layout, a.model)
                                                  : -1;
  c.size_check = paced_size_check(c.size_check, size_check_every(agreement, call_seconds));
}

// An every-size class's trial at `bytes` (the ranks' mean of call_bytes):
// its first trial's candidates that the model finds worth calls there.
void narrow_to_size(CommContext& ctx, ClassState& c, double bytes) {
  const AutoState& a = auto_state(ctx);
  if (c.every_candidates.empty() || !a.model_ready) return;
  const long long block = every_size_block(bytes, ctx.size);
  std::vector<std::string> specs;
  for (const AutoDecision& d : c.every_candidates) specs.push_back(d.spec);
  const std::vector<size_t> kept = worth_trying(specs, model_alltoallv(a.layout, block, block, a.model));
  c.candidates.clear();
  c.native_at = -1;
  for (size_t i : kept) {
    if (specs[i] == "native") c.native_at = static_cast<int>(c.candidates.size());
    c.candidates.push_back(c.every_candidates[i]);
  }
  c.samples.assign(c.candidates.size(), {});
  if (kept.size() < specs.size() && config().verbose && ctx.rank == 0) {
    std::string left_out;
    for (size_t i = 0; i < specs.size(); ++i)
      if (std::find(kept.begin(), kept.end(), i) == kept.end()) left_out += " " + specs[i];
    std::fprintf(stderr, "a2a auto: P=%d, %s: at blocks of %s, left out (modelled over %.1fx native):%s\n", ctx.size,
                 c.label.c_str(), bytes_label(block).c_str(), kTrialClose, left_out.c_str());
  }
}

// An every-size class takes the winner k of a size class: its time and
// bytes for the drift watch, its sizes for moves, its agreed time for the
// agreements' pace.
void take_winner(CommContext& ctx, ClassState& c, const ClassState::Kept& k) {
  c.decision = k.decision;
  c.drift.reset(k.seconds, k.bytes);
  c.drift.watch_sizes(k.lo, k.hi);
  pace_size_checks(ctx, c, k.agreed);
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
  c->trial = c->candidates.size() > 1;
  c->samples.assign(c->candidates.size(), {});
  if (!c->trial) start_watch(*c);
  out = std::move(c);
  return MPI_SUCCESS;
}

// What a tuning entry's pick is tried with: nothing, unless A2A_AUTO_TRIAL=all.
std::vector<std::string> tuned_candidates(const std::string& pick) {
  if (config().trial != Config::Trial::all || pick == "native") return {pick};
  return {pick, "native"};
}

// Whether a spec's algorithm sends on a2a's private duplicate (made on a
// communicator's first use of one: a collective MPI_Comm_dup, tens of
// microseconds, paid again on every communicator a program makes).
bool needs_duplicate(Collective coll, const std::string& spec) {
  const AlgorithmInfo* info = find_algorithm(coll, spec.substr(0, spec.find(':')));
  return info && (info->uniform || info->varying) && info->private_comm;
}

// What the model's ranking is tried with (A2A_AUTO_TRIAL=off: its pick
// alone).  A runner-up that would make the private duplicate is tried only
// where the pick makes it anyway: a program making a communicator per plan
// (FFTW) would pay a duplicate per communicator for a trial turn.
std::vector<std::string> modelled_candidates(Collective coll, const std::vector<CostedSpec>& ranked) {
  if (config().trial == Config::Trial::off) return {model_pick(ranked)};
  std::vector<std::string> specs = trial_candidates(ranked);
  if (specs.size() == 3 && needs_duplicate(coll, specs[2]) && !needs_duplicate(coll, specs[0])) specs.pop_back();
  return specs;
}

// Does the union of the key's entries cover every mean block size?
bool covers_all(std::vector<std::pair<long long, long long>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  long long next = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > next) return false;
    next = std::max(next, hi + 1);
  }
  return next > (1LL << 50);
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

namespace {
// sizes_pay priced by rank 0 and broadcast (collective over ctx.user): the
// same answer on every rank as each pricing it, at the same wall time, but
// a simulator that runs every rank on one host (SMPI) prices it once, not
// P times (302 ms a rank at P = 4096).
int root_sizes_pay(CommContext& ctx, const ModelLayout& layout, const MachineModel& m,
                   const std::vector<std::string>& given, std::string& single, std::string& runner_up, bool& pays) {
  if (ctx.size == 1) {
    pays = sizes_pay(layout, m, given, single, runner_up);
    return MPI_SUCCESS;
  }
  constexpr size_t kSpec = 256;  // a spec's text, at most (registry specs are under 100 characters)
  char out[2 * kSpec + 1] = {};
  if (ctx.rank == 0) {
    out[0] = sizes_pay(layout, m, given, single, runner_up) ? 1 : 0;
    single.copy(out + 1, kSpec - 1);
    runner_up.copy(out + 1 + kSpec, kSpec - 1);
  }
  if (const int rc = MPI_Bcast(out, sizeof out, MPI_CHAR, 0, ctx.user)) return rc;
  pays = out[0] != 0;
  single = out + 1;
  runner_up = out + 1 + kSpec;
  return MPI_SUCCESS;
}
}  // namespace

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

int machine_model(CommContext& ctx, MachineModel& out, std::string& error) {
  AutoState& a = auto_state(ctx);
  if (!a.model_ready) {
    MachineModel env;
    unsigned given = 0;
    if (!env_model(env, given, error)) return MPI_ERR_ARG;
    MachineModel m;
    static const Library library = [] {
      char version[MPI_MAX_LIBRARY_VERSION_STRING];
      int len = 0;
      MPI_Get_library_version(version, &len);
      return library_from_version(std::string(version, static_cast<size_t>(len)));
    }();
    m.library = library;
    m.oversubscribed = ctx.oversubscribed;
    // Time-sliced machines are measured too: their rounds cost what the
    // rounds measured with every rank taking part cost.
    if (!whole_model(given) && ctx.size > 1 && !(ctx.reads_world && job_machine(m))) {
      const double t0 = MPI_Wtime();
      if (const int rc = measure_machine(ctx, m)) return rc;
      if (ctx.teaches_world) remember_job_machine(m);
      if (config().verbose && ctx.rank == 0)
        std::fprintf(stderr, "a2a auto: P=%d, machine measured in %.2f ms: %s\n", ctx.size,
                     (MPI_Wtime() - t0) * 1e3, describe_costs(m).c_str());
    }
    apply_cost_keys(m, env, given);
    a.model = m;
    a.model_ready = true;
  }
  out = a.model;
  return MPI_SUCCESS;
}

int resolve_machine_knobs(CommContext& ctx, Resolved& r, std::string& error) {
  if (!r.machine_knobs) return MPI_SUCCESS;
  AutoState& a = auto_state(ctx);
  // shm runs among the communicator's ranks; an intra=shm phase among the node's.
  const bool whole = std::string(r.info->name) == "shm";
  const int Q = whole ? ctx.size : static_cast<int>(ctx.topology.ranks[ctx.topology.node_of[ctx.rank]].size());
  auto it = a.shm_direct.find(Q);
  if (it == a.shm_direct.end()) {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    it = a.shm_direct.emplace(Q, shm_direct_choice(m, Q)).first;
    if (config().verbose && ctx.rank == 0) {
      if (it->second.from == Params::kShmDirectOff)
        std::fprintf(stderr, "a2a auto: P=%d, shm among %d ranks: every block through the segment\n", ctx.size, Q);
      else
        std::fprintf(stderr, "a2a auto: P=%d, shm among %d ranks: blocks from %lld bytes %s\n", ctx.size, Q,
                     it->second.from, it->second.cma ? "read with CMA" : "as messages");
    }
  }
  const ShmDirect d = it->second;
  if (r.params.shm_direct == Params::kShmDirectAuto) r.params.shm_direct = d.from;
  if (r.params.shm_via == Params::ShmVia::automatic) r.params.shm_via = d.cma ? Params::ShmVia::cma : Params::ShmVia::p2p;
  r.machine_knobs = false;
  return MPI_SUCCESS;
}

bool same_messages_family(const std::string& spec) {
  return spec == "linear" || spec == "spread-out" || spec.rfind("scattered", 0) == 0;
}

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
    // Sizes are not needed when every possible pick is one algorithm, or
    // one of the linear family (whose messages match, so ranks may mix them).
    const auto fixed = [&picks] {
      return std::all_of(picks.begin(), picks.end(), [&](const std::string& p) { return p == picks[0]; }) ||
             std::all_of(picks.begin(), picks.end(), same_messages_family);
    };
    bool safe = fixed();
    if (safe && !tuned && config().trial != Config::Trial::off) {
      MachineModel m;
      if (const int rc = machine_model(ctx, m, error)) return rc;
      std::string pick;
      bool pays = false;
      if (const int rc = root_sizes_pay(ctx, a.layout, m, picks, pick, runner_up, pays)) {
        error = "a2a: auto could not share its pricing of alltoallv";
        return rc;
      }
      safe = !pays;
      if (safe) picks.push_back(pick);
    } else if (safe && !tuned) {
      MachineModel m;
      if (const int rc = machine_model(ctx, m, error)) return rc;
      // Untried (A2A_AUTO_TRIAL=off): the model's pick for blocks of 1 B ..
      // 1 GiB, skews 1, 4 and 64, `extra` added to every non-native
      // candidate; false where they differ.
      const std::vector<std::string> given = picks;
      const auto sweep_sizes = [&](double extra) {
        picks = given;
        bool same = fixed();
        for (long long mean = 1; same && mean <= (1LL << 30); mean *= 2)
          for (long long skew : {1, 4, 64}) {
            picks.push_back(model_pick(model_alltoallv(a.layout, mean, mean * skew, m), extra));
            if (!(same = fixed())) break;
          }
        return same;
      };
      // One pick at every size needs no sizes, so no allreduce: costed
      // without it.  Winners that change with the size need the size
      // allreduce on every call: then a non-native pick must beat native
      // with it added, and where native wins some sizes it runs at all of
      // them (the allreduce costs more than it wins there: 2.2x native at
      // P = 2, 16 B).
      safe = sweep_sizes(0);
      if (!safe) {
        safe = sweep_sizes(model_allreduce(a.layout, m));
        if (!safe && std::find(picks.begin(), picks.end(), "native") != picks.end()) {
          picks.assign(1, "native");
          safe = true;
        }
      }
    }
    if (safe && !picks.empty()) {
      std::map<std::string, int> votes;
      std::string best;
      for (const auto& p : picks)
        if (++votes[p] > votes[best]) best = p;
      std::vector<std::string> specs = {best};
      if (tuned) specs = tuned_candidates(best);
      else if (config().trial != Config::Trial::off) specs = every_size_candidates(best, runner_up);
      if (const int rc = make_class(ctx, Collective::alltoallv, 0, specs, tuned ? kByTuning : kByModel,
                                    "alltoallv (every size)", a.v_fixed, error))
        return rc;
      a.v_fixed->every_size = true;
      if (!tuned) a.v_fixed->every_candidates = a.v_fixed->candidates;
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
  const auto key = std::make_tuple(static_cast<int>(coll), size_class(mean), size_class(max_bytes));
  if (auto it = a.classes.find(key); it != a.classes.end()) {
    out = it->second;
    return MPI_SUCCESS;
  }
  // Priced at the class's own sizes, not the first call's: a class priced
  // ahead (price_alltoall_classes, as far as each rank's millisecond goes)
  // and one opened by a call must hold the same candidates on every rank.
  mean = std::get<1>(key);
  max_bytes = std::get<2>(key);
  std::vector<std::string> specs;
  const char* source = kByModel;
  if (const TuningEntry* e = a.table ? find_entry(*a.table, coll, a.nodes, mean, max_bytes) : nullptr) {
    specs = tuned_candidates(e->algorithm);
    source = kByTuning;
  } else {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    specs = modelled_candidates(coll, coll == Collective::alltoall ? model_alltoall(a.layout, mean, m)
                                                                   : model_alltoallv(a.layout, mean, max_bytes, m));
  }
  std::string label = coll == Collective::alltoall
                          ? "alltoall " + bytes_label(std::get<1>(key))
                          : "alltoallv mean " + bytes_label(std::get<1>(key)) + ", largest " + bytes_label(std::get<2>(key));
  std::shared_ptr<ClassState> c;
  if (const int rc = make_class(ctx, coll, mean, specs, source, std::move(label), c, error)) return rc;
  if (a.classes.size() >= 1024) a.classes.clear();  // held calls keep theirs alive
  out = a.classes.emplace(key, std::move(c)).first->second;
  return MPI_SUCCESS;
}

void price_alltoall_classes(CommContext& ctx, double seconds) {
  MachineModel m;
  std::string error;
  if (machine_model(ctx, m, error) != MPI_SUCCESS) return;  // measured already, or nothing priced
  // The process's own clock, not MPI_Wtime: under SMPI that is simulated
  // time, which pricing never advances, so every simulated rank priced all
  // 24 classes in turn on the one host.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::shared_ptr<ClassState> c;
  for (long long bytes = 1; bytes <= (8LL << 20) && std::chrono::steady_clock::now() < until; bytes *= 2)
    if (auto_class(ctx, Collective::alltoall, bytes, bytes, c, error) != MPI_SUCCESS) return;
}

int auto_device_class(CommContext& ctx, Collective coll, long long max_bytes, std::shared_ptr<ClassState>& out,
                      std::string& error) {
  AutoState& a = auto_state(ctx);
  constexpr int kDevice = 16;  // device classes' keys apart from host classes'
  const auto key = std::make_tuple(static_cast<int>(coll) + kDevice, size_class(max_bytes), 0LL);
  if (auto it = a.classes.find(key); it != a.classes.end()) {
    out = it->second;
    return MPI_SUCCESS;
  }
  std::string label = std::string(coll == Collective::alltoall ? "alltoall " : "alltoallv largest ") +
                      bytes_label(std::get<1>(key)) + " on device buffers";
  // Tried, cuda-ipc takes its IPC path at every size: the trial, not the
  // hybrid's ipc-threshold (the paper's A100 value), says where staging wins.
  std::vector<std::string> specs = {"cuda-ipc"};
  if (config().trial != Config::Trial::off) specs = {"cuda-ipc:ipc-threshold=0", "native"};
  std::shared_ptr<ClassState> c;
  if (const int rc = make_class(ctx, coll, max_bytes, specs, kByModel, std::move(label), c, error)) return rc;
  if (a.classes.size() >= 1024) a.classes.clear();
  out = a.classes.emplace(key, std::move(c)).first->second;
  return MPI_SUCCESS;
}

namespace {
void fold_trial(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const TrialAgreement*>(in);
  auto* b = static_cast<TrialAgreement*>(inout);
  for (int i = 0; i < *len; ++i) trial_fold(a[i], b[i]);
}

// The trial's agreement as one element of kTrialSlots doubles (the fold
// sees it whole) and its fold, made once.
struct TrialReduction {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
const TrialReduction& trial_reduction() {
  static_assert(sizeof(TrialAgreement) == kTrialSlots * sizeof(double));
  static const TrialReduction r = [] {
    TrialReduction made;
    MPI_Type_contiguous(kTrialSlots, MPI_DOUBLE, &made.type);
    MPI_Type_commit(&made.type);
    MPI_Op_create(&fold_trial, 1, &made.op);
    return made;
  }();
  return r;
}

// One allreduce of a trial's agreement (the early check's or the end's).
int agree_trial(CommContext& ctx, TrialAgreement& a, std::string& error) {
  const TrialReduction& reduction = trial_reduction();
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, &a, 1, reduction.type, reduction.op, ctx.user)) {
    error = "a2a: auto's trial could not agree on its times";
    return rc;
  }
  return MPI_SUCCESS;
}
}  // namespace

const AutoDecision& trial_candidate(const ClassState& c) {
  return c.candidates[static_cast<size_t>(trial_turn(c.call, static_cast<int>(c.candidates.size())))];
}

int trial_record(CommContext& ctx, ClassState& c, double seconds, double bytes, std::string& error) {
  const int n = static_cast<int>(c.candidates.size());
  if (c.call == 0 || bytes < c.trial_lo) c.trial_lo = bytes;
  if (c.call == 0 || bytes > c.trial_hi) c.trial_hi = bytes;
  if (trial_timed(c.call)) {
    const size_t turn = static_cast<size_t>(trial_turn(c.call, n));
    c.samples[turn].push_back({seconds, bytes});
  }
  int early = -1;  // a clear winner after kEarlyRounds rounds (not in a confirmation)
  if (++c.call == early_calls(n) && !c.confirming && n > 1 && n <= kEarlyMost) {
    TrialAgreement seen = early_pack(c.samples);
    if (const int rc = agree_trial(ctx, seen, error)) return rc;
    if ((early = early_winner(seen, c.samples.size())) < 0) return MPI_SUCCESS;
  } else if (c.call < trial_calls(n)) {
    return MPI_SUCCESS;
  }
  const AutoState& as = auto_state(ctx);
  const LinkCost* link = !as.model_ready ? nullptr : as.layout.ranks.size() > 1 ? &as.model.inter : &as.model.intra;
  double ref = 0;  // the bytes the times are at
  const std::vector<double> mine = trial_times(c.samples, link, ctx.size, ref);  // this rank's medians
  TrialAgreement agreed = trial_pack(mine, c.trial_hi);  // its mean: the size an every-size class keeps the winner for
  if (const int rc = agree_trial(ctx, agreed, error)) return rc;
  const std::vector<double> t = trial_agreed_times(agreed, mine.size());
  const long long tried_size = size_class(std::llround(trial_bytes(agreed) / ctx.size));
  int win = early >= 0 ? early : trial_winner(t, c.native_at, c.margin);
  if (win < 0) win = c.native_at >= 0 ? c.native_at : 0;
  // Agreed times: every rank alike.
  if (const int ch = c.confirming || early >= 0 ? -1 : confirmation_challenger(t, win, c.native_at); ch >= 0) {
    tell_trial(ctx, c, t, win, ch == win ? "(to confirm against native)" : "(to confirm against the runner-up)");
    c.all_candidates = c.candidates;
    c.all_native_at = c.native_at;
    c.candidates = {c.all_candidates[static_cast<size_t>(ch)], c.all_candidates[static_cast<size_t>(c.native_at)]};
    c.samples = confirmation_start(c.samples, ch, c.all_native_at);
    c.native_at = 1;
    c.confirming = true;
    c.call = 0;
    return MPI_SUCCESS;
  }
  c.decision = c.candidates[static_cast<size_t>(win)];
  c.decision.source = kByMeasurement;
  const size_t w = static_cast<size_t>(win);
  if (c.every_size) {  // from agreed values: every rank agrees at the same calls
    take_winner(ctx, c, c.by_size[tried_size] = {c.decision, mine[w], ref, c.trial_lo, c.trial_hi, t[w]});
    c.taken = tried_size;
  } else
    c.drift.reset(mine[w], ref);
  tell_trial(ctx, c, t, win, early >= 0 ? "(measured, clear early)" : "(measured)");
  ++c.trials;
  if (c.confirming) {  // the full list again, for a trial after drift
    c.candidates = std::move(c.all_candidates);
    c.native_at = c.all_native_at;
    c.samples.assign(c.candidates.size(), {});
    c.confirming = false;
  }
  if (c.every_size && config().verbose && ctx.rank == 0)
    std::fprintf(stderr, "a2a auto: P=%d, %s: sizes agreed every %lld calls\n", ctx.size, c.label.c_str(), c.size_check);
  c.trial = false;
  c.call = 0;
  for (auto& s : c.samples) s.clear();
  ++c.generation;
  start_watch(c);
  return MPI_SUCCESS;
}

int class_event(CommContext& ctx, ClassState& c, double seconds, double bytes, double forced_seconds,
                std::string& error) {
  if (seconds >= 0) c.drift.sample(seconds * config().test_slowdown, bytes);
  c.next_event = c.since + c.event_every();
  const bool drift_due = c.since >= c.next_check;
  if (!drift_due && c.size_check == 0) return MPI_SUCCESS;  // an every-size class agrees at every event
  // Ranks whose times drifted (counted when the drift check is due: an
  // every-size class agrees on its sizes far more often), whose sizes
  // moved, their bytes now, and how long their last agreement took (summed).
  double agreed[4] = {drift_due && c.drift.flagged() && !c.drift.moved() ? 1.0 : 0.0, c.drift.moved() ? 1.0 : 0.0,
                      bytes, c.last_agreement};
  const double t0 = MPI_Wtime();
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, agreed, 4, MPI_DOUBLE, MPI_SUM, ctx.user)) {
    error = "a2a: auto's drift check could not agree";
    return rc;
  }
  c.last_agreement = MPI_Wtime() - t0 + forced_seconds;
  if (c.size_check > 0 && agreed[3] > 0) {  // paced by what agreements cost (agreed: every rank alike)
    c.agreement_seconds = agreed[3] / ctx.size;
    pace_size_checks(ctx, c, c.call_seconds);
    c.next_event = c.since + c.event_every();
  }
  if (drift_due) {
    c.check_every = std::min(2 * c.check_every, kLastCheck);
    c.next_check = c.since + c.check_every;
  }
  const int flagged = (agreed[0] > 0 ? 1 : 0) | (agreed[1] > 0 ? 2 : 0);  // 1: times drifted, 2: sizes moved
  if (!flagged) return MPI_SUCCESS;
  if (flagged & 2) {  // to a size class tried before: its winner, untried (a drift then was of the old sizes)
    const long long now = size_class(std::llround(agreed[2] / ctx.size));
    if (const auto it = c.by_size.find(now); it != c.by_size.end() && now != c.taken) {
      take_winner(ctx, c, it->second);
      c.taken = now;
      ++c.generation;
      start_watch(c);
      if (config().verbose && ctx.rank == 0)
        std::fprintf(stderr, "a2a auto: P=%d, %s: calls moved to %s: %s, its winner there (measured)\n", ctx.size,
                     c.label.c_str(), bytes_label(now).c_str(), c.decision.resolved.canonical.c_str());
      return MPI_SUCCESS;
    }
  }
  if (config().verbose && ctx.rank == 0)
    std::fprintf(stderr, "a2a auto: P=%d, %s: %s%s%.1fx %s: trial again\n", ctx.size, c.label.c_str(),
                 c.decision.resolved.canonical.c_str(), flagged & 1 ? " runs over " : "'s calls moved ",
                 flagged & 1 ? kDrift : kSizesMoved, flagged & 1 ? "its trial time" : "from its trial's bytes");
  if (c.every_size) narrow_to_size(ctx, c, agreed[2] / ctx.size);
  c.trial = true;
  c.call = 0;
  ++c.generation;
  c.next_event = 0;
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
