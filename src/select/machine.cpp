#include "select/machine.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <type_traits>

#include "core/config.hpp"
#include "core/context.hpp"
#include "core/cost_keys.hpp"
#include "select/measure.hpp"
#include "registry/registry.hpp"

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
  // Each part is measured with the ranks it leaves out asleep in wait_quietly.
  if (intra_peer >= 0 && (ctx.rank == 0 || ctx.rank == intra_peer))
    measure_link(comm, ctx.rank, intra_peer, open_mpi, ctx.oversubscribed, m.intra, o_intra, p_intra);
  wait_quietly(comm);
  if (inter_peer >= 0 && (ctx.rank == 0 || ctx.rank == inter_peer))
    measure_link(comm, ctx.rank, inter_peer, open_mpi, ctx.oversubscribed, m.inter, o_inter, p_inter);
  wait_quietly(comm);
  if (intra_peer < 0) m.intra = m.inter, o_intra = o_inter, p_intra = p_inter;
  if (inter_peer < 0) m.inter = m.intra, o_inter = o_intra, p_inter = p_intra;
  m.overhead = std::max(o_intra, o_inter);
  m.persistent = std::max(p_intra, p_inter);
  m.copy = ctx.rank == 0 ? measure_copy() : 0;
  const NodeCosts node = measure_node(comm, ctx.oversubscribed);
  wait_quietly(comm);  // the other nodes' ranks, while rank 0's node measures
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
  // Among the node's ranks: an intra=shm phase's, and shm's, which runs on one node (kNeedsOneNode).
  const int Q = static_cast<int>(ctx.topology.ranks[ctx.topology.node_of[ctx.rank]].size());
  auto it = a.shm_direct.find(Q);
  if (it == a.shm_direct.end()) {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    it = a.shm_direct.emplace(Q, shm_direct_choice(m, Q)).first;
    if (ctx.tells()) {
      if (it->second.from == ShmKnobs::kDirectOff)
        std::fprintf(stderr, "a2a auto: P=%d, shm among %d ranks: every block through the segment\n", ctx.size, Q);
      else
        std::fprintf(stderr, "a2a auto: P=%d, shm among %d ranks: blocks from %lld bytes %s\n", ctx.size, Q,
                     it->second.from, it->second.cma ? "read with CMA" : "as messages");
    }
  }
  const ShmDirect d = it->second;
  ShmKnobs& k = *r.info->shm_knobs(r.params);
  if (k.direct == ShmKnobs::kDirectAuto) k.direct = d.from;
  if (k.via == ShmKnobs::Via::automatic) k.via = d.cma ? ShmKnobs::Via::cma : ShmKnobs::Via::p2p;
  r.machine_knobs = false;
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
