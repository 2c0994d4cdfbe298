#include "core/context.hpp"

#include "core/config.hpp"
#include "core/handle_set.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

namespace a2a::detail {

void Scratch::begin_call() {
  for (size_t& u : used_) u = 0;
}

bool sim_shared_buffers() {
#ifdef A2A_SMPI
  return config().sim_shared;
#else
  return false;
#endif
}

char* alloc_buffer(size_t bytes, bool shareable) {
#ifdef A2A_SMPI
  if (shareable && sim_shared_buffers()) return static_cast<char*>(SMPI_SHARED_MALLOC(bytes > 0 ? bytes : 1));
#else
  (void)shareable;  // nothing is shared outside SMPI
#endif
  return new char[bytes];
}

void BufferFree::operator()(char* p) const {
#ifdef A2A_SMPI
  if (shared) {
    SMPI_SHARED_FREE(p);
    return;
  }
#endif
  delete[] p;
}

char* Scratch::get(Region region, size_t bytes, Stats& stats, Holds holds) {
  if (bytes > used_[region]) {
    stats.temp_bytes += static_cast<long long>(bytes - used_[region]);
    used_[region] = bytes;
  }
  const bool share = holds == Holds::data && sim_shared_buffers();
  if (bytes > cap_[region] || (buf_[region] && buf_[region].get_deleter().shared != share)) {
    cap_[region] = std::max(bytes, cap_[region]);
    buf_[region] = std::unique_ptr<char[], BufferFree>(alloc_buffer(cap_[region], share), BufferFree{share});
  }
  return buf_[region].get();
}

bool Scratch::Frame::take(std::initializer_list<Region*> out) {
  if (s_.next_work_ + static_cast<int>(out.size()) > kCount) return false;
  for (Region* r : out) *r = static_cast<Region>(s_.next_work_++);
  return true;
}

size_t Scratch::reserved() const {
  size_t total = 0;
  for (size_t c : cap_) total += c;
  return total;
}

size_t scratch_limit() { return config().scratch_limit; }

TypeCache::~TypeCache() { clear(); }

void TypeCache::clear() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (auto& t : types_) MPI_Type_free(&t);
  types_.clear();
  key_ = TypeKey{};
}

const std::vector<MPI_Datatype>* TypeCache::find(const TypeKey& key) const {
  return key == key_ && key.algorithm ? &types_ : nullptr;
}

const std::vector<MPI_Datatype>& TypeCache::store(const TypeKey& key, std::vector<MPI_Datatype> types) {
  clear();
  key_ = key;
  types_ = std::move(types);
  return types_;
}

bool CommContext::tells() const { return config().verbose && rank == 0; }

int CommContext::make_private() {
  const int rc = MPI_Comm_dup(user, &comm);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

CommContext::~CommContext() {
  gpu_state.reset();  // it holds a communicator split from comm
  shm_state.reset();  // likewise
  shm_nb_state.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

const std::vector<schedule::Step>& CommContext::tra_steps(int radix) {
  if (radix == last_radix_) return *last_steps_;
  auto it = tra_.find(radix);
  if (it == tra_.end()) it = tra_.emplace(radix, schedule::tra_steps(size, radix)).first;
  last_radix_ = radix;
  last_steps_ = &it->second;
  return it->second;
}

const std::vector<schedule::PeerStep>& CommContext::clustered_plan() {
  if (clustered_.empty()) clustered_ = schedule::clustered_plan(topology.ranks, rank);
  return clustered_;
}

int CommContext::node_parts(CommContext*& node_ctx, CommContext*& port_ctx) {
  if (!node_ctx_) {
    const int node = topology.node_of[rank];
    const auto& mine = topology.ranks[node];
    const int local = static_cast<int>(std::find(mine.begin(), mine.end(), rank) - mine.begin());
    auto make = [this](MPI_Comm parent, int color, int key, int nodes_in_it, std::unique_ptr<CommContext>& out) -> int {
      auto c = std::make_unique<CommContext>();
      c->oversubscribed = oversubscribed;  // a phase's waits yield as the whole call's do
      const int rc = MPI_Comm_split(parent, color, key, &c->comm);
      if (rc != MPI_SUCCESS) return rc;
      c->user = c->comm;
      MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
      MPI_Comm_rank(c->comm, &c->rank);
      MPI_Comm_size(c->comm, &c->size);
      // Inside a node every peer is local; across ports every peer is remote.
      std::vector<long long> keys(c->size);
      for (int r = 0; r < c->size; ++r) keys[r] = nodes_in_it == 1 ? 0 : r;
      c->topology = group_by_key(keys, nodes_in_it == 1 ? "one node" : "one rank per node");
      out = std::move(c);
      return MPI_SUCCESS;
    };
    if (const int rc = open_private()) return rc;
    if (const int rc = make(comm, node, local, 1, node_ctx_)) return rc;
    if (const int rc = make(comm, local, node, topology.nodes(), port_ctx_)) return rc;
  }
  node_ctx = node_ctx_.get();
  port_ctx = port_ctx_.get();
  return MPI_SUCCESS;
}

namespace {
int keyval = MPI_KEYVAL_INVALID;
std::mutex keyval_lock;                // threads may meet a2a for the first time together
std::atomic<int> contexts_alive{0};
ContextHooks hooks;  // constant-initialized: set at the front end's static initialization

// More ranks on this machine than it has cores: its ranks are time-sliced.
// The job's ranks here (the launcher's count, where it says) or this
// communicator's, against the cores online.  Never under SMPI, whose
// simulated ranks each have a simulated core.
bool oversubscribed(long long ranks_sharing_memory) {
#ifdef A2A_SMPI
  (void)ranks_sharing_memory;
  return false;
#else
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);  // reads sysfs: once
  return cores > 0 && ranks_sharing_memory > cores;
#endif
}

// The job's ranks on this machine, as the launcher says (Open MPI, MPICH's
// Hydra); 0 when it does not.
long long launcher_local_ranks() {
#ifdef A2A_SMPI
  return 0;
#else
  return config().launcher_local_ranks;
#endif
}

// What the first use of a communicator congruent with MPI_COMM_WORLD
// learnt, per world rank, so that later communicators (FFTW and others make
// one per plan) learn their layout with no communication: every world rank
// learnt it at that same collective, so all take the same path.  Not under
// MPI_THREAD_MULTIPLE, where another thread could be learning it meanwhile.
struct WorldInfo {
  std::mutex lock;
  bool known = false;
  std::vector<long long> per_rank;  // 3 per world rank: node key, oversubscribed, tuning fingerprint
};
WorldInfo& world_info() {
  static WorldInfo w;
  return w;
}

void finish_topology(CommContext& ctx, const std::vector<long long>& all, long long my_print, const std::string& source,
                     const std::string& error) {
  std::vector<long long> keys(ctx.size);
  ctx.oversubscribed = false;
  ctx.same_tuning = true;
  for (int r = 0; r < ctx.size; ++r) {
    keys[r] = all[3 * r];
    ctx.oversubscribed = ctx.oversubscribed || all[3 * r + 1];
    ctx.same_tuning = ctx.same_tuning && all[3 * r + 2] == my_print;
  }
  ctx.topology = group_by_key(keys, source);
  ctx.topology.error = error;
}

// What a communicator's first use learns, in one allgather over it (plus
// the shared-memory split) unless WorldInfo or the launcher already say:
// the layout, from the environment overrides (they describe world ranks) or
// from shared memory, as one key per rank (the node id, or the world rank
// of the node's first member); whether any rank's machine is
// oversubscribed; whether every rank read the same tuning file.
int detect_topology(CommContext& ctx) {
  int world_size = 1, world_rank = 0, threads = MPI_THREAD_SINGLE;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Query_thread(&threads);
  struct EnvLayout {  // parsed once: the world's size does not change
    std::vector<long long> ids;
    std::string source, error;
    bool overridden = false;
  };
  static const EnvLayout env = [world_size] {
    EnvLayout e;
    e.overridden = node_ids_from_env(world_size, e.ids, e.source, e.error);
    if (!e.overridden || !e.error.empty()) e.source = "shared memory";
    return e;
  }();
  const std::vector<long long>& ids = env.ids;
  const std::string &source = env.source, &error = env.error;
  const bool overridden = env.overridden;
  const uint64_t print = hooks.tuning_fingerprint ? hooks.tuning_fingerprint() : 0;
  const long long my_print = static_cast<long long>(print >> 1);
  std::vector<int> in_world;
  if (const int rc = world_ranks(ctx.user, ctx.size, in_world)) return rc;
  const bool single = threads != MPI_THREAD_MULTIPLE;
  const bool all_in_world = std::none_of(in_world.begin(), in_world.end(), [](int w) { return w == MPI_UNDEFINED; });
  // World's members (ranks of a group are distinct), and in world's order.
  const bool whole_world = all_in_world && ctx.size == world_size;
  bool world_order = whole_world;
  for (int r = 0; world_order && r < ctx.size; ++r) world_order = in_world[r] == r;
  ctx.reads_world = single && all_in_world;
  ctx.teaches_world = single && whole_world;
  ctx.world_order = single && world_order;
  std::vector<long long> all(3 * static_cast<size_t>(ctx.size));
  WorldInfo& w = world_info();
  if (ctx.reads_world) {
    std::lock_guard<std::mutex> guard(w.lock);
    if (w.known) {
      for (int r = 0; r < ctx.size; ++r)
        for (int k = 0; k < 3; ++k) all[3 * r + k] = w.per_rank[3 * static_cast<size_t>(in_world[r]) + k];
      finish_topology(ctx, all, my_print, source, error);
      return MPI_SUCCESS;
    }
  }
  // The whole job on this machine (the launcher says so, the same on every
  // rank) and no tuning file to compare: every rank knows the answer
  // without asking the others (one node, unless the environment lays out
  // virtual ones).
  const long long local = launcher_local_ranks();
  if (all_in_world && local == world_size && !config().tuning_file) {
    for (int r = 0; r < ctx.size; ++r) {
      all[3 * r] = overridden && error.empty() ? ids[in_world[r]] : 0;
      all[3 * r + 1] = oversubscribed(local) ? 1 : 0;
      all[3 * r + 2] = my_print;
    }
    finish_topology(ctx, all, my_print, source, error);
    return MPI_SUCCESS;
  }
  MPI_Comm shm;
  int rc = MPI_Comm_split_type(ctx.user, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
  if (rc != MPI_SUCCESS) return rc;
  int sharing = 1;
  MPI_Comm_size(shm, &sharing);
  std::vector<int> leader;  // the node's first rank, as a world rank: the node's key
  rc = world_ranks(shm, 1, leader);
  MPI_Comm_free(&shm);
  if (rc != MPI_SUCCESS) return rc;
  long long me[3] = {overridden && error.empty() ? ids[world_rank] : leader[0],
                     oversubscribed(std::max<long long>(sharing, launcher_local_ranks())) ? 1 : 0, my_print};
  rc = MPI_Allgather(me, 3, MPI_LONG_LONG, all.data(), 3, MPI_LONG_LONG, ctx.user);
  if (rc != MPI_SUCCESS) return rc;
  finish_topology(ctx, all, my_print, source, error);
  if (ctx.teaches_world) {  // the same members, in any order
    std::lock_guard<std::mutex> guard(w.lock);
    w.per_rank.assign(3 * static_cast<size_t>(world_size), 0);
    for (int r = 0; r < ctx.size; ++r)
      for (int k = 0; k < 3; ++k) w.per_rank[3 * static_cast<size_t>(in_world[r]) + k] = all[3 * r + k];
    w.known = true;
  }
  return MPI_SUCCESS;
}

// The communicators a2a has met, by handle: those with a context and those
// whose first call the shim let through (claim_first_use).  Asked without an
// MPI call: the shim's test runs on memory the application's work between
// calls has evicted, where each MPI call a2a adds costs about a microsecond.
// A marked communicator has no attribute, so no delete callback: the shim
// forgets it at MPI_Comm_free (forget_comm).
std::mutex met_lock;
HandleSet& met_handles() {
  static auto* handles = new HandleSet;  // never destroyed: callbacks may run at exit
  return *handles;
}
bool met_erase(MPI_Comm comm) {
  std::lock_guard<std::mutex> guard(met_lock);
  return met_handles().erase(handle_bits(comm));
}
bool met_insert(MPI_Comm comm) {
  std::lock_guard<std::mutex> guard(met_lock);
  return met_handles().insert(handle_bits(comm));
}

std::atomic<unsigned long long> freed{0};
std::atomic<bool> mpi_live{false};  // between a2a's first use and MPI_Finalize

int delete_context(MPI_Comm comm, int, void* value, void*) {
  met_erase(comm);
  freed.fetch_add(1, std::memory_order_relaxed);
  delete static_cast<CommContext*>(value);
  --contexts_alive;
  if (hooks.context_freed) hooks.context_freed();
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first: nothing prepared
// before it may run after.
int on_finalize(MPI_Comm, int, void*, void*) {
  mpi_live = false;
  if (hooks.finalizing) hooks.finalizing();
  return MPI_SUCCESS;
}
}  // namespace

int live_contexts() { return contexts_alive.load(); }

void set_context_hooks(const ContextHooks& h) { hooks = h; }

int world_ranks(MPI_Comm comm, int P, std::vector<int>& out) {
  // World's ranks in world's order (a duplicate of world, as libraries make
  // one per plan): one local compare instead of the groups' translation.
  int world_size = 0, same = MPI_UNEQUAL;
  if (MPI_Comm_size(MPI_COMM_WORLD, &world_size) == MPI_SUCCESS && P == world_size &&
      MPI_Comm_compare(comm, MPI_COMM_WORLD, &same) == MPI_SUCCESS && (same == MPI_IDENT || same == MPI_CONGRUENT)) {
    out.resize(static_cast<size_t>(P));
    std::iota(out.begin(), out.end(), 0);
    return MPI_SUCCESS;
  }
  std::vector<int> mine(static_cast<size_t>(P));
  out.assign(static_cast<size_t>(P), MPI_UNDEFINED);
  for (int r = 0; r < P; ++r) mine[static_cast<size_t>(r)] = r;
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int rc = MPI_Group_translate_ranks(group, P, mine.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return rc;
}

namespace {
int make_keyval() {
  std::lock_guard<std::mutex> guard(keyval_lock);
  if (keyval != MPI_KEYVAL_INVALID) return MPI_SUCCESS;
  int self_keyval = MPI_KEYVAL_INVALID;
  int rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &self_keyval, nullptr);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, nullptr);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &keyval, nullptr);
  if (rc == MPI_SUCCESS) mpi_live = true;
  return rc;
}
}  // namespace

bool unmet(MPI_Comm user) {
  if (!mpi_live.load(std::memory_order_relaxed) || user == MPI_COMM_NULL) return false;
  std::lock_guard<std::mutex> guard(met_lock);
  return !met_handles().contains(handle_bits(user));
}

bool has_context(MPI_Comm user) {
  if (!mpi_live.load(std::memory_order_relaxed) || user == MPI_COMM_NULL) return false;
  int found = 0;
  void* value = nullptr;
  return MPI_Comm_get_attr(user, keyval, &value, &found) == MPI_SUCCESS && found;
}

bool claim_first_use(MPI_Comm user) {
  return mpi_live.load(std::memory_order_relaxed) && user != MPI_COMM_NULL && met_insert(user);
}

void unclaim_first_use(MPI_Comm user) { met_erase(user); }

void forget_comm(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL && met_erase(comm)) freed.fetch_add(1, std::memory_order_relaxed);
}

unsigned long long comms_freed() { return freed.load(std::memory_order_relaxed); }

int get_context(MPI_Comm user, CommContext*& ctx) {
  if (const int rc = make_keyval()) return rc;
  int found = 0;
  void* value = nullptr;
  int rc = MPI_Comm_get_attr(user, keyval, &value, &found);
  if (rc != MPI_SUCCESS) return rc;
  if (found) {
    ctx = static_cast<CommContext*>(value);
    return MPI_SUCCESS;
  }
  auto fresh = std::make_unique<CommContext>();
  fresh->calls = unmet(user) ? 0 : 1;  // 1: the call claim_first_use let through
  fresh->user = user;
  MPI_Comm_rank(user, &fresh->rank);
  MPI_Comm_size(user, &fresh->size);
  rc = detect_topology(*fresh);
  if (rc != MPI_SUCCESS) return rc;
  if (fresh->tells())  // opt-in diagnostics on stderr
    std::fprintf(stderr, "a2a: communicator of %d ranks, %s\n", fresh->size, fresh->topology.describe().c_str());
  rc = MPI_Comm_set_attr(user, keyval, fresh.get());
  if (rc != MPI_SUCCESS) return rc;
  met_insert(user);
  ctx = fresh.release();
  ++contexts_alive;
  return MPI_SUCCESS;
}

Scratch& OpScratch::of_other(const CommContext& ctx) {
  for (auto& [c, s] : by_ctx_)
    if (c == &ctx) return *s;
  by_ctx_.emplace_back(&ctx, std::make_unique<Scratch>());
  return *by_ctx_.back().second;
}

}  // namespace a2a::detail
