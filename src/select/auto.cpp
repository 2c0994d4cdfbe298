#include "select/auto.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/context.hpp"

namespace a2a::detail {
namespace {

constexpr int kTag = 77;

// Median of half round trips of `bytes` between rank 0 and `peer`.
double half_round_trip(MPI_Comm comm, int rank, int peer, std::vector<char>& buf, int bytes, int reps) {
  std::vector<double> t;
  for (int it = -2; it < reps; ++it) {
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_BYTE, peer, kTag, comm);
      MPI_Recv(buf.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, kTag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_BYTE, 0, kTag, comm);
    }
    if (it >= 0) t.push_back((MPI_Wtime() - t0) / 2);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// Extra time per message when `burst` small ones are posted together,
// beyond one round trip (median of a few bursts).
double burst_overhead(MPI_Comm comm, int rank, int peer, std::vector<char>& buf, double rtt) {
  constexpr int burst = 16, reps = 3;
  std::vector<MPI_Request> req(burst);
  std::vector<double> t;
  for (int it = -1; it < reps; ++it) {
    const double t0 = MPI_Wtime();
    for (int k = 0; k < burst; ++k)
      if (rank == 0) MPI_Isend(buf.data() + 8 * k, 8, MPI_BYTE, peer, kTag, comm, &req[k]);
      else MPI_Irecv(buf.data() + 8 * k, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
    MPI_Waitall(burst, req.data(), MPI_STATUSES_IGNORE);
    if (rank == 0) MPI_Recv(buf.data(), 1, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    else MPI_Send(buf.data(), 1, MPI_BYTE, 0, kTag, comm);
    if (it >= 0) t.push_back(MPI_Wtime() - t0);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return std::max(0.0, (t[t.size() / 2] - rtt) / (burst - 1));
}

// Extra time per message when a burst is sent with persistent requests
// made, started and freed for it (Open MPI's basic linear algorithms do
// this on every call) instead of plain ones (median of a few bursts).
double persistent_overhead(MPI_Comm comm, int rank, int peer, std::vector<char>& buf) {
  constexpr int burst = 16, reps = 3;
  std::vector<MPI_Request> req(burst);
  std::vector<double> gain;
  for (int it = -1; it < reps; ++it) {
    double t[2];
    for (int persistent = 0; persistent < 2; ++persistent) {
      char sync = 0;  // the pair starts together
      MPI_Sendrecv_replace(&sync, 1, MPI_BYTE, rank == 0 ? peer : 0, kTag, rank == 0 ? peer : 0, kTag, comm,
                           MPI_STATUS_IGNORE);
      const double t0 = MPI_Wtime();
      for (int k = 0; k < burst; ++k) {
        char* p = buf.data() + 8 * k;
        if (persistent)
          rank == 0 ? MPI_Send_init(p, 8, MPI_BYTE, peer, kTag, comm, &req[k])
                    : MPI_Recv_init(p, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
        else
          rank == 0 ? MPI_Isend(p, 8, MPI_BYTE, peer, kTag, comm, &req[k])
                    : MPI_Irecv(p, 8, MPI_BYTE, 0, kTag, comm, &req[k]);
      }
      if (persistent) MPI_Startall(burst, req.data());
      MPI_Waitall(burst, req.data(), MPI_STATUSES_IGNORE);
      if (persistent)
        for (auto& r : req) MPI_Request_free(&r);
      t[persistent] = MPI_Wtime() - t0;
    }
    if (it >= 0) gain.push_back((t[1] - t[0]) / burst);
  }
  std::nth_element(gain.begin(), gain.begin() + gain.size() / 2, gain.end());
  return std::max(0.0, gain[gain.size() / 2]);
}

// alpha, beta, overhead and the persistent-request overhead of the link
// between rank 0 and `peer`.
// The measurement is kept short (well under a millisecond on a node): a
// program's first auto call pays it.
void measure_link(MPI_Comm comm, int rank, int peer, bool open_mpi, LinkCost& link, double& overhead,
                  double& persistent) {
  constexpr int big = 1 << 16;
  std::vector<char> buf(big);
  link.alpha = half_round_trip(comm, rank, peer, buf, 8, 10);
  link.beta = std::max(0.0, half_round_trip(comm, rank, peer, buf, big, 3) - link.alpha) / big;
  overhead = burst_overhead(comm, rank, peer, buf, 2 * link.alpha);
  persistent = open_mpi ? persistent_overhead(comm, rank, peer, buf) : 0;  // only Open MPI's are costed
}

// Half the round trip of a flag between rank 0 and `peer` through a shared
// window (collective over comm: the pair's window); 0 where the two share
// no memory or have no window (SimGrid SMPI).
double measure_flag(MPI_Comm comm, int rank, int peer) {
#ifdef A2A_SMPI
  (void)comm, (void)rank, (void)peer;
  return 0;
#else
  MPI_Comm pair = MPI_COMM_NULL, node = MPI_COMM_NULL;
  const bool in = rank == 0 || rank == peer;
  if (MPI_Comm_split(comm, in ? 0 : MPI_UNDEFINED, rank, &pair) != MPI_SUCCESS || pair == MPI_COMM_NULL) return 0;
  double half = 0;
  int sharing = 0;
  if (MPI_Comm_split_type(pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS)
    MPI_Comm_size(node, &sharing);
  MPI_Win win = MPI_WIN_NULL;
  char* mine = nullptr;
  if (sharing == 2 && MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, node, &mine, &win) == MPI_SUCCESS) {
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Aint size = 0;
    int unit = 0;
    char* theirs = nullptr;
    MPI_Win_shared_query(win, rank == 0 ? 1 : 0, &size, &unit, &theirs);
    auto* out = reinterpret_cast<long long*>(mine);
    auto* in_word = reinterpret_cast<long long*>(theirs);
    __atomic_store_n(out, 0LL, __ATOMIC_RELEASE);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    // The median of batches: one descheduled moment spoils a batch, not the
    // measure.
    constexpr int kBatches = 9, kTrips = 100;
    std::vector<double> batch;
    long long i = 0;
    for (int b = -1; b < kBatches; ++b) {  // batch -1 warms up
      const double t0 = MPI_Wtime();
      for (int k = 0; k < kTrips; ++k) {
        ++i;
        if (rank == 0) __atomic_store_n(out, i, __ATOMIC_RELEASE);  // ping
        while (__atomic_load_n(in_word, __ATOMIC_ACQUIRE) < i) {
        }
        if (rank != 0) __atomic_store_n(out, i, __ATOMIC_RELEASE);  // pong
      }
      if (b >= 0) batch.push_back((MPI_Wtime() - t0) / (2.0 * kTrips));
    }
    std::nth_element(batch.begin(), batch.begin() + kBatches / 2, batch.end());
    half = batch[kBatches / 2];
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  MPI_Comm_free(&pair);
  return half;
#endif
}

double measure_copy() {
  constexpr size_t bytes = 1 << 16;
  std::vector<char> a(bytes, 1), b(bytes);
  std::vector<double> t;
  for (int it = -1; it < 3; ++it) {
    const double t0 = MPI_Wtime();
    std::memcpy(b.data(), a.data(), bytes);
    volatile char sink = b[(bytes / 2 + it) % bytes];  // keeps the copy
    (void)sink;
    if (it >= 0) t.push_back(MPI_Wtime() - t0);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2] / bytes;
}

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

// Keeps the top three significant bits: alltoallv decisions are memoised per
// bucket, so varying block sizes do not grow the memo without bound.
long long bucket(long long x) {
  int bits = 0;
  for (long long y = x; y > 7; y >>= 1) ++bits;
  return (x >> bits) << bits;
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

}  // namespace

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
    // Oversubscribed, the rule (one-round algorithms only) needs no
    // parameters: the library's persistent requests count as costlier,
    // anything else as equal.
    const bool measure = given != kAllCostKeys && ctx.size > 1 && !m.oversubscribed;
    if (!measure) m.persistent = 1e-7;
    if (measure && !(ctx.reads_world && job_machine(m))) {
      if (const int rc = ctx.open_private()) return rc;
      const auto& ranks = ctx.topology.ranks;
      const int intra_peer = ranks[ctx.topology.node_of[0]].size() > 1 ? ranks[ctx.topology.node_of[0]][1] : -1;
      const int inter_peer = ranks.size() > 1 ? ranks[1][0] : -1;
      double o_intra = 0, o_inter = 0, p_intra = 0, p_inter = 0;
      if (intra_peer >= 0 && (ctx.rank == 0 || ctx.rank == intra_peer))
        measure_link(ctx.comm, ctx.rank, intra_peer, m.library == Library::open_mpi, m.intra, o_intra, p_intra);
      if (inter_peer >= 0 && (ctx.rank == 0 || ctx.rank == inter_peer))
        measure_link(ctx.comm, ctx.rank, inter_peer, m.library == Library::open_mpi, m.inter, o_inter, p_inter);
      if (intra_peer < 0) m.intra = m.inter, o_intra = o_inter, p_intra = p_inter;
      if (inter_peer < 0) m.inter = m.intra, o_inter = o_intra, p_inter = p_intra;
      m.overhead = std::max(o_intra, o_inter);
      m.persistent = std::max(p_intra, p_inter);
      m.copy = ctx.rank == 0 ? measure_copy() : 0;
      m.flag = intra_peer >= 0 ? measure_flag(ctx.comm, ctx.rank, intra_peer) : 0;
      double v[8] = {m.intra.alpha, m.intra.beta, m.inter.alpha, m.inter.beta,
                     m.overhead,    m.copy,       m.persistent,  m.flag};
      if (const int rc = MPI_Bcast(v, 8, MPI_DOUBLE, 0, ctx.comm)) return rc;
      m.intra = {v[0], v[1]};
      m.inter = {v[2], v[3]};
      m.overhead = v[4];
      m.copy = v[5];
      m.persistent = v[6];
      m.flag = v[7];
      if (ctx.teaches_world) remember_job_machine(m);
    }
    double* mine[] = {&m.intra.alpha, &m.intra.beta, &m.inter.alpha, &m.inter.beta, &m.overhead, &m.copy,
                      &m.persistent,   &m.flag};
    const double theirs[] = {env.intra.alpha, env.intra.beta, env.inter.alpha, env.inter.beta,
                             env.overhead,    env.copy,       env.persistent,  env.flag};
    for (int k = 0; k < 8; ++k)
      if (given & (1u << k)) *mine[k] = theirs[k];
    a.model = m;
    a.model_ready = true;
  }
  out = a.model;
  return MPI_SUCCESS;
}

bool same_messages_family(const std::string& spec) {
  return spec == "linear" || spec == "spread-out" || spec.rfind("scattered", 0) == 0;
}

namespace {

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

}  // namespace

int auto_without_sizes(CommContext& ctx, const AutoDecision*& out, std::string& error) {
  AutoState& a = auto_state(ctx);
  if (!a.v_fixed_known) {
    const AutoDecision* probe = nullptr;  // agrees on the tuning file (collective once)
    if (const int rc = resolve_auto(ctx, Collective::alltoallv, 0, 0, probe, error)) return rc;
    std::vector<std::string> picks;
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
    if (safe && !tuned) {
      MachineModel m;
      if (const int rc = machine_model(ctx, m, error)) return rc;
      // The model's pick for blocks of 1 B .. 1 GiB, skews 1, 4 and 64,
      // `extra` added to every non-native candidate; false where they differ.
      const std::vector<std::string> given = picks;
      const auto sweep_sizes = [&](double extra) {
        picks = given;
        bool same = fixed();
        for (long long mean = 1; same && mean <= (1LL << 30); mean *= 2)
          for (long long skew : {1, 4, 64}) {
            picks.push_back(model_pick(model_alltoallv(a.layout, mean, mean * skew, m), m.oversubscribed, extra));
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
      auto d = std::make_unique<AutoDecision>();
      if (const int rc = resolve(Collective::alltoallv, best, ctx.size, 0, d->resolved, error)) return rc;
      d->source = tuned ? "tuning" : "model";
      a.v_fixed = std::move(d);
    }
    a.v_fixed_known = 1;
  }
  out = a.v_fixed.get();
  return MPI_SUCCESS;
}

int resolve_auto(CommContext& ctx, Collective coll, long long mean, long long max_bytes, const AutoDecision*& out,
                 std::string& error) {
  AutoState& a = auto_state(ctx);
  if (!a.tuning_checked) {  // the same file on every rank (compared at the context's setup), or none
    const TuningTable* table = process_tuning(nullptr, nullptr);
    a.table = ctx.same_tuning ? table : nullptr;
    for (const auto& node : ctx.topology.ranks) a.nodes.push_back(static_cast<int>(node.size()));
    a.layout = {ctx.topology.node_of, ctx.topology.ranks};
    a.tuning_checked = true;
  }
  if (coll == Collective::alltoallv) mean = bucket(mean), max_bytes = bucket(max_bytes);
  else max_bytes = mean;
  const auto key = std::make_tuple(static_cast<int>(coll), mean, max_bytes);
  if (auto it = a.memo.find(key); it != a.memo.end()) {
    out = &it->second;
    return MPI_SUCCESS;
  }
  AutoDecision d;
  std::string spec;
  if (const TuningEntry* e = a.table ? find_entry(*a.table, coll, a.nodes, mean, max_bytes) : nullptr) {
    spec = e->algorithm;
    d.source = "tuning";
  } else {
    MachineModel m;
    if (const int rc = machine_model(ctx, m, error)) return rc;
    spec = model_pick(coll == Collective::alltoall ? model_alltoall(a.layout, mean, m)
                                                   : model_alltoallv(a.layout, mean, max_bytes, m),
                      m.oversubscribed);
    d.source = "model";
  }
  if (const int rc = resolve(coll, spec, ctx.size, mean, d.resolved, error)) return rc;
  if (a.memo.size() >= 1024) a.memo.clear();
  out = &a.memo.emplace(key, std::move(d)).first->second;
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
