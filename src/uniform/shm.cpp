// Shared memory: the ranks of one node exchange through memory they share
// instead of messages (the idea of Chen et al.'s GPU all-to-all over CUDA
// IPC, "Performance Study of GPU All-to-All over IPC", on host memory).  A
// segment is made once per communicator with MPI-3's
// MPI_Win_allocate_shared, one part per rank, each in two halves that
// alternate between calls, so a rank writes the next call while slow peers
// still read the last.  A call: copy the outgoing blocks into this rank's
// half; raise `ready` to the exchange's number; once every peer's `ready`
// is up, copy this rank's blocks out of the peers' halves.  No second flag:
// a peer raises `ready` only after it has read everything of the exchange
// before, so seeing every `ready` of one exchange frees the half of the
// exchange before it.  Waiting spins briefly, then yields the core (ranks may
// outnumber cores).  Flags are atomics in the segment, ordered by
// MPI_Win_sync as MPI-3's memory model asks.  Layout: schedule/shm.hpp.
// K = 1 (one synchronisation, no message), D = P-1 blocks, each copied
// twice: cost 2(P-1)n*copy + one flag wait.  Memory: per rank two halves
// of P*n bytes (alltoall) or of the largest rank's outgoing bytes
// (alltoallv), rounded up to a power of two, re-made (collectively) when a
// call needs more, plus 24 bytes and 32 per rank of control; reported in
// temp_bytes.  Alltoallv learns the largest part from the parts' `need`
// words (no allreduce).  Falls back to spread-out where not every rank
// shares memory with every other (several nodes), where a part would pass
// A2A_SCRATCH_LIMIT, or where shared windows cannot be made (SimGrid SMPI).
// No knobs.
#include <sched.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/config.hpp"
#include "schedule/shm.hpp"
#include "uniform/uniform.hpp"

namespace a2a::detail {

struct ShmState {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
  bool usable = false;  // every rank shares memory with every other
  size_t capacity = 0;  // data bytes of each part
  schedule::ShmLayout layout;
  std::vector<char*> part;  // each rank's part, mapped here
  unsigned long long exchange = 0;  // the last exchange this rank took part in
  std::vector<size_t> out_off;
};

void ShmStateFree::operator()(ShmState* s) const {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    if (s->win != MPI_WIN_NULL) {
      MPI_Win_unlock_all(s->win);
      MPI_Win_free(&s->win);
    }
    if (s->node != MPI_COMM_NULL) MPI_Comm_free(&s->node);
  }
  delete s;
}

namespace {

using Word = unsigned long long;

Word load(const char* part, size_t at) { return __atomic_load_n(reinterpret_cast<const Word*>(part + at), __ATOMIC_ACQUIRE); }
void store(char* part, size_t at, Word v) { __atomic_store_n(reinterpret_cast<Word*>(part + at), v, __ATOMIC_RELEASE); }

// Until every peer's `ready` reaches exchange e: spin, then yield the core.
void wait_ready(const ShmState& s, int me, Word e, bool oversubscribed) {
  const int spins = oversubscribed ? 16 : 4000;
  for (int p = 0; p < static_cast<int>(s.part.size()); ++p) {
    if (p == me) continue;
    for (int i = 0; load(s.part[static_cast<size_t>(p)], s.layout.ready) < e; ++i)
      if (i >= spins) sched_yield();
  }
}

// (Re)makes the segment with parts of at least `need` data bytes: collective
// over the node, after every peer has finished reading the old one.
int make_segment(ShmState& s, int P, size_t need) {
  if (s.win != MPI_WIN_NULL) {
    if (const int rc = MPI_Barrier(s.node)) return rc;  // nobody still reads the old parts
    MPI_Win_unlock_all(s.win);
    if (const int rc = MPI_Win_free(&s.win)) return rc;
  }
  s.capacity = schedule::shm_capacity(need, config().scratch_limit);
  s.layout = schedule::shm_layout(P, s.capacity);
  char* mine = nullptr;
  int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(s.layout.total), 1, MPI_INFO_NULL, s.node, &mine, &s.win);
  if (rc != MPI_SUCCESS) return rc;
  if ((rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s.win))) return rc;
  s.part.assign(static_cast<size_t>(P), nullptr);
  for (int p = 0; p < P; ++p) {
    MPI_Aint size = 0;
    int unit = 0;
    if ((rc = MPI_Win_shared_query(s.win, p, &size, &unit, &s.part[static_cast<size_t>(p)]))) return rc;
  }
  store(mine, s.layout.ready, 0);
  s.exchange = 0;
  MPI_Win_sync(s.win);
  return MPI_Barrier(s.node);  // every part's words are zero before anyone reads them
}

// The state on first use (collective): the node communicator, and whether
// it holds every rank.
int state_of(CommContext& ctx, ShmState*& out) {
  if (!ctx.shm_state) {
    auto s = std::unique_ptr<ShmState, ShmStateFree>(new ShmState);
#ifndef A2A_SMPI
    if (const int rc = MPI_Comm_split_type(ctx.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s->node)) return rc;
    int sharing = 0;
    MPI_Comm_size(s->node, &sharing);
    s->usable = sharing == ctx.size;
#endif
    ctx.shm_state = std::move(s);
  }
  out = ctx.shm_state.get();
  return MPI_SUCCESS;
}

// This rank's outgoing bytes and where destination d's block goes in its part.
size_t plan_part(const UniformCall& c, ShmState& s) {
  s.out_off.resize(static_cast<size_t>(c.P()));
  for (int d = 0; d < c.P(); ++d) s.out_off[static_cast<size_t>(d)] = static_cast<size_t>(d) * c.bs;
  return static_cast<size_t>(c.P()) * c.bs;
}
size_t plan_part(const VarCall& c, ShmState& s) {
  return schedule::shm_pack_offsets(c.sbytes, c.P(), c.rank(), s.out_off);
}

template <class Call>
Result run(const Call& c) {
  constexpr bool varying = std::is_same_v<Call, VarCall>;
  const int P = c.P(), me = c.rank();
  c.copy_self();
  if (P == 1) return MPI_SUCCESS;
  ShmState* s = nullptr;
  if (const int rc = state_of(c.ctx, s)) return rc;
  if (!s->usable) return Result::fallback();
  const bool busy = c.ctx.oversubscribed;
  const size_t need = plan_part(c, *s);  // alltoall: the same on every rank
  if (!varying && need > config().scratch_limit) return Result::fallback();
  // The first segment is the same size everywhere (alltoallv parts grow
  // below, once every rank's need is known to all).
  if (s->win == MPI_WIN_NULL || (!varying && need > s->capacity))
    if (const int rc = make_segment(*s, P, varying ? 0 : need)) return rc;
  // Publishes this rank's need, and its blocks when they fit, in the half
  // of exchange e.  Peers are out of that half, used two exchanges ago:
  // each raised its `ready` of the last exchange, which this rank saw, only
  // after it had copied out everything of the one before.
  auto publish = [&] {
    const Word e = s->exchange + 1;
    char* mine = s->part[static_cast<size_t>(me)];
    if (need <= s->capacity) {
      auto* table = reinterpret_cast<long long*>(mine + s->layout.table_at(e));
      for (int d = 0; d < P; ++d) {
        if (d == me) continue;
        const size_t at = s->out_off[static_cast<size_t>(d)];
        table[2 * d] = static_cast<long long>(at);
        table[2 * d + 1] = static_cast<long long>(c.send_bytes(d));
        copy_bytes(mine + s->layout.data_at(e) + at, c.send_block(d), c.send_bytes(d));
      }
    }
    __atomic_store_n(reinterpret_cast<Word*>(mine + s->layout.need_at(e)), static_cast<Word>(need), __ATOMIC_RELAXED);
    MPI_Win_sync(s->win);
    store(mine, s->layout.ready, e);
    wait_ready(*s, me, e, busy);
    MPI_Win_sync(s->win);
  };
  publish();
  if (varying) {  // every part's need is known now, the same to every rank
    size_t largest = 0;
    for (int p = 0; p < P; ++p)
      largest = std::max<size_t>(largest, load(s->part[static_cast<size_t>(p)], s->layout.need_at(s->exchange + 1)));
    if (largest > s->capacity) {  // a part did not fit: a larger segment for all, and publish again
      if (largest > config().scratch_limit) {
        ++s->exchange;
        return Result::fallback();
      }
      if (const int rc = make_segment(*s, P, largest)) return rc;
      publish();
    }
  }
  int err = MPI_SUCCESS;
  const Word e = s->exchange + 1;
  for (int p = 0; p < P; ++p) {
    if (p == me) continue;
    const char* peer = s->part[static_cast<size_t>(p)];
    const auto* table = reinterpret_cast<const long long*>(peer + s->layout.table_at(e));
    const size_t bytes = static_cast<size_t>(table[2 * me + 1]);
    if (bytes > c.recv_bytes(p))
      err = MPI_ERR_TRUNCATE;
    else
      copy_bytes(c.recv_block(p), peer + s->layout.data_at(e) + table[2 * me], bytes);
  }
  ++s->exchange;
  c.count_round(static_cast<size_t>(P - 1));
  c.stats.bytes_sent += static_cast<long long>(need - (varying ? 0 : c.send_bytes(me)));
  c.stats.temp_bytes = std::max<long long>(c.stats.temp_bytes, static_cast<long long>(s->layout.total));
  return err;
}

}  // namespace

Result shm(const UniformCall& c, const Params&) { return run(c); }
Result shm(const VarCall& c, const Params&) { return run(c); }

}  // namespace a2a::detail
