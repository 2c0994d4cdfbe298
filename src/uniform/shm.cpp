// Shared memory: the ranks of one node exchange through memory they share
// instead of messages (the idea of Chen et al.'s GPU all-to-all over CUDA
// IPC, "Performance Study of GPU All-to-All over IPC", on host memory).  A
// segment is made once per group of ranks (kept, and shared by the
// communicators over the group) with MPI-3's
// MPI_Win_allocate_shared, one part per rank, each in two halves that
// alternate between exchanges, so a rank writes the next exchange while
// slow peers still read the last.  An exchange: copy the outgoing pieces
// into this rank's half; raise `ready` to the exchange's number; once every
// peer's `ready` is up, copy this rank's pieces out of the peers' halves.
// No second flag: a peer raises `ready` only after it has read everything
// of the exchange before, so seeing every `ready` of one exchange frees the
// half of the exchange before it.  Waiting spins briefly, then yields the
// core (ranks may outnumber cores).  Flags are atomics in the segment,
// ordered by MPI_Win_sync as MPI-3's memory model asks.  Layout and pieces:
// schedule/shm.hpp.
// Blocks go whole while P of them fit in a half of at most kShmHalf (1 MiB)
// bytes, else in pieces of half/P bytes, one exchange each, the halves
// alternating so that copying a piece in overlaps peers copying the last
// one out (pipelined; faster than whole-call halves at MiB blocks, the
// pieces staying in cache).  Alltoallv learns the largest block of any rank
// from the first exchange's `largest` words (no allreduce) and grows the
// segment (collectively) towards whole blocks up to the limit.
// K = one exchange per piece (1 below the limit), D = P-1 blocks, each
// copied twice: cost 2(P-1)n*copy + one flag wait per piece.  Memory: per
// rank two halves of at most min(kShmHalf, A2A_SCRATCH_LIMIT) bytes, plus
// 24 bytes and 32 per rank of control; reported in temp_bytes.  Falls back
// to spread-out where not every rank shares memory with every other, where
// the layout has several nodes (real or virtual: a multi-node shm would be
// a two-level algorithm, which tra2:intra=shm and clustered:intra=shm
// are), where A2A_SCRATCH_LIMIT leaves less than a cache line per rank, or
// where shared windows cannot be made (SimGrid SMPI); as the intra=shm
// phase of a node-aware algorithm (shm_phase) its fallback also takes
// intra=shm out of the stats name.  No knobs.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
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

// (Re)makes the segment with halves of at least `need` data bytes: collective
// over the node, after every peer has finished reading the old one.
int make_segment(ShmState& s, int P, size_t need) {
  if (s.win != MPI_WIN_NULL) {
    if (const int rc = MPI_Barrier(s.node)) return rc;  // nobody still reads the old parts
    MPI_Win_unlock_all(s.win);
    if (const int rc = MPI_Win_free(&s.win)) return rc;
  }
  s.capacity = schedule::shm_capacity(need, schedule::shm_half_limit(config().scratch_limit));
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

// Segments kept for the process's life, one per group of ranks (world ranks
// in communicator order) and shared by every communicator over that group:
// libraries duplicate communicators (FFTW one per plan), and making a
// segment costs 1-2 ms at P = 16 here (split, shared window, barriers),
// more than it saves in a plan's calls.  Only below MPI_THREAD_MULTIPLE:
// there every rank meets the calls on those communicators in one order
// (blocking collectives in any other order could deadlock), which the
// exchange numbers rely on.  At most kKeptGroups groups; freed at
// MPI_Finalize.
constexpr size_t kKeptGroups = 16;
struct Kept {
  std::mutex lock;
  std::vector<std::pair<std::vector<int>, std::shared_ptr<ShmState>>> groups;
};
Kept& kept() {
  static Kept* k = new Kept;  // never destroyed: shm_forget_kept() empties it at MPI_Finalize
  return *k;
}


// A new state: the node communicator, and whether it holds every rank.
int make_state(CommContext& ctx, std::shared_ptr<ShmState>& out) {
  out = std::shared_ptr<ShmState>(new ShmState, ShmStateFree{});
#ifndef A2A_SMPI
  if (const int rc = MPI_Comm_split_type(ctx.user, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out->node)) return rc;
  int sharing = 0;
  MPI_Comm_size(out->node, &sharing);
  out->usable = sharing == ctx.size;
#else
  (void)ctx;
#endif
  return MPI_SUCCESS;
}

// The state on first use on ctx (collective): the one kept for its group
// where every rank has it, else a new one, kept where every rank can keep it.
int state_of(CommContext& ctx, ShmState*& out) {
  if (!ctx.shm_state) {
#ifdef A2A_SMPI
    if (const int rc = make_state(ctx, ctx.shm_state)) return rc;
#else
    std::vector<int> group;  // the key: world ranks in ctx's order (none outside world)
    if (const int rc = world_ranks(ctx.user, ctx.size, group)) return rc;
    if (std::find(group.begin(), group.end(), MPI_UNDEFINED) != group.end()) group.clear();
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    std::shared_ptr<ShmState> found;
    int have = 0;  // 2: kept here, 1: can be kept, 0: cannot
    if (!group.empty() && provided < MPI_THREAD_MULTIPLE) {
      std::lock_guard<std::mutex> guard(kept().lock);
      for (const auto& [g, state] : kept().groups)
        if (g == group) found = state;
      have = found ? 2 : kept().groups.size() < kKeptGroups ? 1 : 0;
    }
    int least_most[2] = {have, -have};
    if (const int rc = MPI_Allreduce(MPI_IN_PLACE, least_most, 2, MPI_INT, MPI_MIN, ctx.user)) return rc;
    const bool alike = least_most[0] == -least_most[1];
    if (alike && have == 2) {
      ctx.shm_state = found;
    } else {
      if (const int rc = make_state(ctx, ctx.shm_state)) return rc;
      if (alike && have == 1 && ctx.shm_state->usable) {
        std::lock_guard<std::mutex> guard(kept().lock);
        kept().groups.emplace_back(group, ctx.shm_state);
      }
    }
#endif
  }
  out = ctx.shm_state.get();
  return MPI_SUCCESS;
}

using schedule::ShmPiece;

// Where destination d's piece goes in this rank's half.
void plan_part(const UniformCall& c, ShmState& s, ShmPiece k) {
  s.out_off.resize(static_cast<size_t>(c.P()));
  for (int d = 0; d < c.P(); ++d) s.out_off[static_cast<size_t>(d)] = static_cast<size_t>(d) * k.len;
}
void plan_part(const VarCall& c, ShmState& s, ShmPiece k) {
  schedule::shm_pack_offsets(c.sbytes, c.P(), c.rank(), k, s.out_off);
}

// One exchange through the segment: piece k of every block, published in
// the half of exchange e with `largest` (this rank's largest block, which
// alltoallv's later pieces depend on).  Peers are out of that half, used
// two exchanges ago: each raised its `ready` of the last exchange, which
// this rank saw, only after it had copied out everything of the one before.
// A piece larger than the receive block is a truncation, reported after
// the call's last exchange (peers still wait for this rank's pieces).
template <class Call>
int exchange(const Call& c, ShmState& s, ShmPiece k, size_t largest) {
  constexpr bool varying = std::is_same_v<Call, VarCall>;
  const int P = c.P(), me = c.rank();
  plan_part(c, s, k);
  const Word e = s.exchange + 1;
  char* mine = s.part[static_cast<size_t>(me)];
  auto* table = reinterpret_cast<long long*>(mine + s.layout.table_at(e));
  for (int d = 0; d < P; ++d) {
    if (d == me) continue;
    const size_t at = s.out_off[static_cast<size_t>(d)], bytes = k.of(c.send_bytes(d));
    if constexpr (varying) {  // alltoall's places follow from the piece: no table to read
      table[2 * d] = static_cast<long long>(at);
      table[2 * d + 1] = static_cast<long long>(bytes);
    }
    copy_bytes(mine + s.layout.data_at(e) + at, c.send_block(d) + k.off, bytes);
  }
  __atomic_store_n(reinterpret_cast<Word*>(mine + s.layout.largest_at(e)), static_cast<Word>(largest),
                   __ATOMIC_RELAXED);
  MPI_Win_sync(s.win);
  store(mine, s.layout.ready, e);
  wait_ready(s, me, e, c.ctx.oversubscribed);
  MPI_Win_sync(s.win);
  int err = MPI_SUCCESS;
  for (int p = 0; p < P; ++p) {
    if (p == me) continue;
    const char* peer = s.part[static_cast<size_t>(p)];
    size_t at = static_cast<size_t>(me) * k.len, bytes = k.of(c.recv_bytes(p));
    if constexpr (varying) {
      const auto* from = reinterpret_cast<const long long*>(peer + s.layout.table_at(e));
      at = static_cast<size_t>(from[2 * me]);
      if (static_cast<size_t>(from[2 * me + 1]) > bytes) {
        err = MPI_ERR_TRUNCATE;
        continue;
      }
      bytes = static_cast<size_t>(from[2 * me + 1]);
    }
    copy_bytes(c.recv_block(p) + k.off, peer + s.layout.data_at(e) + at, bytes);
  }
  ++s.exchange;
  return err;
}

// The largest block of any rank in the exchange just made (alltoallv).
size_t largest_published(const ShmState& s) {
  size_t m = 0;
  for (const char* part : s.part) m = std::max<size_t>(m, load(part, s.layout.largest_at(s.exchange)));
  return m;
}

template <class Call>
Result run(const Call& c) {
  constexpr bool varying = std::is_same_v<Call, VarCall>;
  const int P = c.P(), me = c.rank();
  c.copy_self();
  if (P == 1) return MPI_SUCCESS;
  ShmState* s = nullptr;
  if (const int rc = state_of(c.ctx, s)) return rc;
  // Several nodes, real or laid out (A2A_NODE_SIZE and the like): the
  // registry's fallback, which the stats name.
  if (!s->usable || c.ctx.topology.nodes() > 1) return Result::fallback();
  const size_t half = schedule::shm_half_limit(config().scratch_limit);
  // Alltoall knows every block's size; alltoallv starts with pieces the
  // segment holds and learns the largest block from the first exchange.
  ShmPiece k{0, schedule::shm_piece_len(varying ? half : c.send_bytes(0), P, half)};
  if (k.len == 0) return Result::fallback();  // not a line per rank under A2A_SCRATCH_LIMIT
  const size_t want = static_cast<size_t>(P) * k.len;
  if (s->win == MPI_WIN_NULL || (!varying && want > s->capacity))
    if (const int rc = make_segment(*s, P, varying ? static_cast<size_t>(P) * schedule::kShmLine : want)) return rc;
  if (varying) k.len = schedule::shm_piece_len(half, P, s->capacity);
  size_t largest = 0;
  long long sent = 0;
  for (int d = 0; d < P; ++d)
    if (d != me) {
      largest = std::max(largest, c.send_bytes(d));
      sent += static_cast<long long>(c.send_bytes(d));
    }
  int err = exchange(c, *s, k, largest);
  size_t exchanges = 1;
  const size_t M = varying ? largest_published(*s) : c.send_bytes(0);  // the same on every rank
  if (M > k.len) {
    k.off = k.len;
    if constexpr (varying) {  // grow towards pieces of whole blocks, up to the half limit
      const size_t len = schedule::shm_piece_len(M, P, half);
      if (static_cast<size_t>(P) * len > s->capacity)
        if (const int rc = make_segment(*s, P, static_cast<size_t>(P) * len)) return rc;
      k.len = schedule::shm_piece_len(M, P, s->capacity);
    }
    for (; k.off < M; k.off += k.len, ++exchanges)
      if (const int rc = exchange(c, *s, k, largest); rc && !err) err = rc;
  }
  c.stats.rounds += static_cast<long long>(exchanges);
  c.stats.blocks_sent += P - 1;
  c.stats.bytes_sent += sent;
  c.stats.temp_bytes = std::max<long long>(c.stats.temp_bytes, static_cast<long long>(s->layout.total));
  return err;
}

}  // namespace

void shm_forget_kept() {
  std::vector<std::pair<std::vector<int>, std::shared_ptr<ShmState>>> gone;  // freed outside the lock
  {
    std::lock_guard<std::mutex> guard(kept().lock);
    gone.swap(kept().groups);
  }
}

Result shm(const UniformCall& c, const Params&) { return run(c); }
Result shm(const VarCall& c, const Params&) { return run(c); }

namespace {
template <class Call>
Result phase(const Call& c) {
  const Result r = run(c);
  if (r.fell_back()) {
    const std::string name = schedule::name_without_intra_shm(c.stats.algorithm);
    std::snprintf(c.stats.algorithm, sizeof c.stats.algorithm, "%s", name.c_str());
    c.stats.named_from = 0;  // written here: the next call's name is copied afresh
  }
  return r;
}
}  // namespace

Result shm_phase(const UniformCall& c, const Params&) { return phase(c); }
Result shm_phase(const VarCall& c, const Params&) { return phase(c); }

}  // namespace a2a::detail
