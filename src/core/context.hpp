// Per-communicator state: the private duplicate all library traffic runs on,
// grow-only scratch buffers reused across calls, and cached datatypes.  It is
// cached on the user's communicator as an attribute and freed with it.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/regions.hpp"
#include "core/topology.hpp"
#include "schedule/clustered.hpp"
#include "schedule/schedule.hpp"

namespace a2a::detail {

struct AutoState;
namespace gpu {
struct State;
}
struct ShmState;  // src/both/shm.cpp

// Stats::decided_by of auto's first call on a communicator, which runs
// native without deciding (front/execute.cpp).
inline constexpr const char* kFirstCall = "first-call";

struct Stats {
  long long rounds = 0, messages = 0, blocks_sent = 0, bytes_sent = 0, meta_bytes_sent = 0, temp_bytes = 0;
  long long inter_node_messages = 0, inter_node_bytes = 0;
  long long waits = 0;  // batches of messages waited for (A2A_Stats::waits)
  const char* decided_by = "";   // "tuning", "model" or kFirstCall when auto chose
  const int* node_of = nullptr;  // the communicator's layout, to tell inter-node messages
  int my_node = 0;
  // The prepared call (its serial number) whose name `algorithm` holds, so a
  // repeated call does not copy it again; 0 when written otherwise.
  unsigned long long named_from = 0;
  char algorithm[128] = {};  // the resolved spec, as in A2A_Stats
  void count_message(int dst, size_t bytes) {
    ++messages;
    if (node_of && node_of[dst] != my_node) {
      ++inter_node_messages;
      inter_node_bytes += static_cast<long long>(bytes);
    }
  }
};

// Scratch regions, each grown to the largest request seen and then reused
// across calls.  A call's temp_bytes is the sum over regions of the largest
// size it asked of each (a region asked again within a call reuses it).
// Under SMPI with A2A_SIM_SHARED=1, scratch (and the bench's buffers) come
// from SMPI_SHARED_MALLOC: every simulated rank shares the same pages, so
// thousands of ranks fit in memory; the data are then meaningless (timing
// runs only).  Buffers that carry block sizes must stay private (shareable
// = false), or every rank would read the sizes another rank wrote last.
// Elsewhere plain new[]/delete[].
bool sim_shared_buffers();
char* alloc_buffer(size_t bytes, bool shareable = true);
struct BufferFree {
  bool shared = sim_shared_buffers();  // how the buffer was allocated
  void operator()(char* p) const;
};

// A std::allocator stand-in on alloc_buffer, for the bench's buffers.
template <class T>
struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <class U>
  BufferAllocator(const BufferAllocator<U>&) {}
  T* allocate(size_t n) { return reinterpret_cast<T*>(alloc_buffer(n * sizeof(T))); }
  void deallocate(T* p, size_t) { BufferFree{}(reinterpret_cast<char*>(p)); }
  bool operator==(const BufferAllocator&) const { return true; }
  bool operator!=(const BufferAllocator&) const { return false; }
};

class Scratch {
 public:
  // The front end's packing regions, then work regions handed out by Frame.
  enum Region { kPackedSend, kPackedRecv, kWork0, kWork1, kWork2, kWork3, kWork4, kWork5, kWork6, kWork7, kCount };
  enum class Holds { data, sizes };  // sizes: block sizes travel in it (never shared under SMPI)

  // The work regions one algorithm (or engine) holds while it runs.  An
  // engine it calls on the same context opens its own Frame and is handed
  // regions after its caller's, so nested engines never write into each
  // other's; a Frame gives its regions back when it goes out of scope.  The
  // same algorithm gets the same regions every call, so their buffers are
  // reused.
  class Frame {
   public:
    explicit Frame(Scratch& s) : s_(s), first_(s.next_work_) {}
    ~Frame() { s_.next_work_ = first_; }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;
    // Regions of this frame's own into *out...; false when too few are
    // free (nesting deeper than the work regions: callers return
    // MPI_ERR_INTERN, the same on every rank).
    bool take(std::initializer_list<Region*> out);

   private:
    Scratch& s_;
    int first_;
  };

  void begin_call();
  char* get(Region region, size_t bytes, Stats& stats, Holds holds = Holds::data);
  size_t reserved() const;
  int held_work_regions() const { return next_work_ - kWork0; }

 private:
  std::unique_ptr<char[], BufferFree> buf_[kCount];
  size_t cap_[kCount] = {};
  size_t used_[kCount] = {};  // this call's peak per region
  int next_work_ = kWork0;    // the first work region no open Frame holds
};

// The tags operations' messages carry (cuda-ipc's staged chunks use 2;
// MPI_TAG_UB is at least 32767).
constexpr int kFirstOpTag = 3, kLastOpTag = 32767;

// A nonblocking operation's own scratch, one Scratch per communicator
// context its algorithm runs on (node-aware algorithms run phases on
// sub-communicators), kept with the operation and reused by the next.
struct CommContext;
class OpScratch {
 public:
  Scratch& of(const CommContext& ctx) {
    return !by_ctx_.empty() && by_ctx_.front().first == &ctx ? *by_ctx_.front().second : of_other(ctx);
  }
  void begin_call() {
    for (auto& [ctx, s] : by_ctx_) s->begin_call();
  }

 private:
  Scratch& of_other(const CommContext& ctx);
  std::vector<std::pair<const CommContext*, std::unique_ptr<Scratch>>> by_ctx_;
};

// Derived datatypes cached across calls, keyed by what they were built for
// (algorithm, block bytes, stride), rebuilt only when the key changes.
struct TypeKey {
  const char* algorithm = nullptr;
  size_t bytes = 0;
  MPI_Aint stride = 0;
  bool operator==(const TypeKey& o) const {
    return algorithm == o.algorithm && bytes == o.bytes && stride == o.stride;
  }
};
class TypeCache {
 public:
  ~TypeCache();
  const std::vector<MPI_Datatype>* find(const TypeKey& key) const;
  const std::vector<MPI_Datatype>& store(const TypeKey& key, std::vector<MPI_Datatype> types);

 private:
  void clear();
  TypeKey key_;
  std::vector<MPI_Datatype> types_;
};

struct CommContext {
  // The user's communicator: collectives (the agreement, setup, native)
  // run on it; MPI keeps collectives apart from point-to-point traffic.
  MPI_Comm user = MPI_COMM_NULL;
  // The private duplicate all of a2a's point-to-point traffic runs on, made
  // by open_private() when an algorithm of a2a's first runs (collective: all
  // ranks run the same algorithm), so a communicator that only ever runs
  // native costs no duplicate.
  MPI_Comm comm = MPI_COMM_NULL;
  int open_private() { return comm != MPI_COMM_NULL ? MPI_SUCCESS : make_private(); }
  int make_private();
  int rank = 0, size = 1;
  // Whether this rank prints A2A_VERBOSE=1's lines about the communicator
  // (its rank 0 does).
  bool tells() const;
  Topology topology;              // which ranks share a node
  bool oversubscribed = false;    // some machine runs more of the job's ranks than it has cores
  bool same_tuning = true;        // every rank read the same tuning file (or none)
  // Calls run through execute on it (a repeated native call is not counted,
  // and follows one that was): 1 at the first call, on every rank alike.
  long long calls = 0;
  // The tag of the next operation of a2a's algorithms begun on this
  // communicator (blocking or not, in the same order on every rank):
  // next_op_tag() cycles through kFirstOpTag..kLastOpTag.
  int op_tag_next = kFirstOpTag;
  int next_op_tag() {
    const int t = op_tag_next;
    op_tag_next = t == kLastOpTag ? kFirstOpTag : t + 1;
    return t;
  }
  // Facts about the job learnt once (the layout, the cost model's machine):
  // a communicator of exactly world's ranks teaches them to every world
  // rank at once; one of world ranks only may read them.  Both false under
  // MPI_THREAD_MULTIPLE, where another thread could be learning them.
  bool teaches_world = false, reads_world = false;
  // World's ranks in world's order (MPI_IDENT), not under MPI_THREAD_MULTIPLE:
  // auto's state (decisions, model) is world's, shared (select/auto.cpp).
  bool world_order = false;
  Scratch scratch;
  TypeCache types;
  ~CommContext();

  // Schedules depend only on P and the radix: built once per communicator.
  const std::vector<schedule::Step>& tra_steps(int radix);
  const std::vector<schedule::Step>& linear_steps() {
    if (linear_.empty() && size > 1) linear_ = schedule::linear_steps(size);
    return linear_;
  }
  // This rank's part of Traff's clustered schedule for the layout.
  const std::vector<schedule::PeerStep>& clustered_plan();

  // For node-aware algorithms with equal nodes: the ranks of this rank's node
  // (node_ctx) and the ranks with the same local index on every node
  // (port_ctx), split from the private communicator on first use.
  int node_parts(CommContext*& node_ctx, CommContext*& port_ctx);


  // What auto decided on this communicator (select/auto.hpp).
  std::shared_ptr<AutoState> auto_state;
  // Device buffers' state (src/gpu): node communicator, streams, IPC handle
  // caches, pinned staging; created by the first call on device buffers.
  std::shared_ptr<gpu::State> gpu_state;  // its deleter set by src/gpu
  // The shared-memory exchange's node communicator and segment (shm),
  // made by its first call or shared with communicators over the same group.
  std::shared_ptr<ShmState> shm_state;
  // Nonblocking operations' own segment, never shared with another
  // communicator: their exchanges follow this communicator's start order.
  std::shared_ptr<ShmState> shm_nb_state;

 private:
  std::map<int, std::vector<schedule::Step>> tra_;
  // The last radix asked and its steps (map nodes never move): a repeated
  // call skips the lookup.
  int last_radix_ = 0;
  const std::vector<schedule::Step>* last_steps_ = nullptr;
  std::vector<schedule::Step> linear_;
  std::unique_ptr<CommContext> node_ctx_, port_ctx_;
  std::vector<schedule::PeerStep> clustered_;
};

// Largest scratch one call may ask for before an algorithm falls back to one
// that needs less: A2A_SCRATCH_LIMIT bytes (read once), default 1 GiB.
size_t scratch_limit();

// While alive, the stats count inter-node messages against a
// sub-communicator's layout (node-aware algorithms run phases on the node and
// port communicators), and the sub-communicator's scratch starts a new call.
class SubLayout {
 public:
  SubLayout(Stats& st, CommContext& sub) : st_(st), node_of_(st.node_of), my_node_(st.my_node) {
    st.node_of = sub.topology.node_of.data();
    st.my_node = sub.topology.node_of[sub.rank];
    sub.scratch.begin_call();
  }
  ~SubLayout() {
    st_.node_of = node_of_;
    st_.my_node = my_node_;
  }
  SubLayout(const SubLayout&) = delete;
  SubLayout& operator=(const SubLayout&) = delete;

 private:
  Stats& st_;
  const int* node_of_;
  int my_node_;
};


// An MPI handle's bits: a pointer in Open MPI, an int in MPICH.
template <typename Handle>
uint64_t handle_bits(Handle h) {
  uint64_t v = 0;
  std::memcpy(&v, &h, std::min(sizeof h, sizeof v));
  return v;
}

// True where a2a has not met `user` (no context, no mark) while MPI is
// initialised.  Local, and no MPI call: a2a's own table of handles.
bool unmet(MPI_Comm user);
// Whether a2a holds a context for `user` (a call on it sets nothing up
// collectively).  Local: an attribute lookup.
bool has_context(MPI_Comm user);
// unmet(user), and then marked as met, in one step: this one call may
// bypass a2a (the shim's first call under auto, which would run native) and
// the next makes the context, counting this call.  Local: no MPI call.
bool claim_first_use(MPI_Comm user);
// Takes back a claim whose call does not bypass a2a after all.
void unclaim_first_use(MPI_Comm user);
// `comm` is being freed (the shim's MPI_Comm_free): a mark has no delete
// callback to forget it, and its handle may come back for a new communicator.
void forget_comm(MPI_Comm comm);
// How many communicators a2a had met were freed in this process: a handle
// met before this count moved may name a new communicator now.
unsigned long long comms_freed();
// Returns the context cached on `user` (collective on first use: MPI_Comm_dup).
// Safe from several threads on distinct communicators (MPI_THREAD_MULTIPLE).
int get_context(MPI_Comm user, CommContext*& ctx);

// What core asks of the layers above, registered once by the front end
// (front/capi.cpp) so that core depends on nothing above it: what they
// cached about communicators goes when a context is freed (its handle may
// come back for another) and at MPI_Finalize (nothing prepared before may
// run after); the tuning file's fingerprint, compared across ranks at a
// communicator's first use.
struct ContextHooks {
  void (*context_freed)() = nullptr;
  void (*finalizing)() = nullptr;
  uint64_t (*tuning_fingerprint)() = nullptr;
};
void set_context_hooks(const ContextHooks& hooks);
// Contexts alive in this process: each is freed with its communicator (the
// attribute's delete callback); for tests.
int live_contexts();

// comm's members (P of them) as MPI_COMM_WORLD ranks, in comm's order
// (MPI_UNDEFINED for a process outside world, e.g. spawned); local.
int world_ranks(MPI_Comm comm, int P, std::vector<int>& out);

}  // namespace a2a::detail
