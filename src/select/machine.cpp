#include "select/machine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/config.hpp"
#include "core/context.hpp"
#include "select/measure.hpp"
#include "select/registry.hpp"

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
  // Every figure, rank 0's, to every rank (MachineCosts is doubles only).
  MachineCosts& costs = m;
  static_assert(std::is_trivially_copyable_v<MachineCosts> && sizeof(MachineCosts) % sizeof(double) == 0);
  return MPI_Bcast(&costs, static_cast<int>(sizeof costs / sizeof(double)), MPI_DOUBLE, 0, comm);
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

}  // namespace

int machine_model(CommContext& ctx, MachineModel& out, std::string& error) {
  MachineState& a = machine_state(ctx);
  if (!a.ready) {
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
      if (ctx.tells())
        std::fprintf(stderr, "a2a auto: P=%d, machine measured in %.2f ms: %s\n", ctx.size,
                     (MPI_Wtime() - t0) * 1e3, describe_costs(m).c_str());
    }
    apply_cost_keys(m, env, given);
    a.model = m;
    a.ready = true;
  }
  out = a.model;
  return MPI_SUCCESS;
}

int resolve_machine_knobs(CommContext& ctx, Resolved& r, std::string& error) {
  if (!r.machine_knobs) return MPI_SUCCESS;
  MachineState& a = machine_state(ctx);
  // shm runs among the communicator's ranks; an intra=shm phase among the node's.
  const bool whole = std::string(r.info->name) == "shm";
  const int Q = whole ? ctx.size : static_cast<int>(ctx.topology.ranks[ctx.topology.node_of[ctx.rank]].size());
  auto it = a.shm_direct.find(Q);
  if (it == a.shm_direct.end()) {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    it = a.shm_direct.emplace(Q, shm_direct_choice(m, Q)).first;
    if (ctx.tells()) {
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

namespace {

constexpr const char* kCostKeys[] = {"alpha_intra", "beta_intra", "alpha_inter", "beta_inter", "overhead", "copy",
                                     "persistent",  "flag",       "round",       "flag_round", "shm_copy", "cma"};
constexpr int kCostKeyCount = sizeof kCostKeys / sizeof kCostKeys[0];

// The scalar fields of the keys before shm_copy, in kCostKeys' order.
using Field = double& (*)(MachineCosts&);
constexpr Field kFields[] = {
    [](MachineCosts& m) -> double& { return m.intra.alpha; }, [](MachineCosts& m) -> double& { return m.intra.beta; },
    [](MachineCosts& m) -> double& { return m.inter.alpha; }, [](MachineCosts& m) -> double& { return m.inter.beta; },
    [](MachineCosts& m) -> double& { return m.overhead; },    [](MachineCosts& m) -> double& { return m.copy; },
    [](MachineCosts& m) -> double& { return m.persistent; },  [](MachineCosts& m) -> double& { return m.flag; },
    [](MachineCosts& m) -> double& { return m.round; },       [](MachineCosts& m) -> double& { return m.flag_round; }};
constexpr int kScalarKeys = sizeof kFields / sizeof kFields[0];

// Key k's value into m (shm_copy and cma: per byte at every measured size).
void set_cost(MachineCosts& m, int k, double v) {
  if (k < kScalarKeys) {
    kFields[k](m) = v;
    return;
  }
  double* curve = k == kScalarKeys ? m.seg : m.cma;
  for (int i = 0; i < kShmCopySizes; ++i) curve[i] = v * static_cast<double>(kShmCopyBytes[i]);
}

}  // namespace

std::string describe_costs(const MachineCosts& m) {
  MachineCosts c = m;
  std::string out;
  char v[64];
  for (int k = 0; k < kScalarKeys; ++k) {
    std::snprintf(v, sizeof v, "%s%s=%.3g", k ? "," : "", kCostKeys[k], kFields[k](c));
    out += v;
  }
  const auto curve = [&](const char* name, const double* t, const long long* bytes, int n) {
    out += name;
    for (int i = 0; i < n; ++i) {
      std::snprintf(v, sizeof v, " %lldK:%.3g", bytes[i] / 1024, t[i] * 1e6);
      out += v;
    }
    out += " us";
  };
  curve("; intra messages", c.intra.at, kLinkBytes, kLinkSizes);
  curve("; inter messages", c.inter.at, kLinkBytes, kLinkSizes);
  curve("; shm segment", c.seg, kShmCopyBytes, kShmCopySizes);
  curve("; cma", c.cma, kShmCopyBytes, kShmCopySizes);
  return out;
}

void apply_cost_keys(MachineCosts& m, const MachineCosts& given, unsigned keys) {
  MachineCosts g = given;
  for (int k = 0; k < kCostKeyCount; ++k) {
    if (!(keys & (1u << k))) continue;
    if (k < 4) {  // alpha_intra, beta_intra, alpha_inter, beta_inter: the link's measured curve goes
      LinkCost& link = k < 2 ? m.intra : m.inter;
      std::fill(std::begin(link.at), std::end(link.at), 0.0);
    }
    if (k < kScalarKeys) kFields[k](m) = kFields[k](g);
    else if (k == kScalarKeys) std::copy(std::begin(g.seg), std::end(g.seg), m.seg);
    else std::copy(std::begin(g.cma), std::end(g.cma), m.cma);
  }
}

bool parse_cost_model(const std::string& text, MachineModel& m, unsigned& given, std::string& error) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int k = 0;
    while (k < kCostKeyCount && key != kCostKeys[k]) ++k;
    char* stop = nullptr;
    const double v = value.empty() ? -1 : std::strtod(value.c_str(), &stop);
    if (k == kCostKeyCount || value.empty() || *stop != '\0' || !(v >= 0) || v > 1) {
      error = "a2a: A2A_COST_MODEL: expected key=seconds pairs with keys alpha_intra, beta_intra, alpha_inter, "
              "beta_inter, overhead, copy, persistent, flag, round, flag_round, shm_copy, cma (0 <= value <= 1), "
              "got '" + item + "'";
      return false;
    }
    set_cost(m, k, v);
    given |= 1u << k;
  }
  return true;
}

}  // namespace a2a::detail
