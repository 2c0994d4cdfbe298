// Shared memory: the ranks of one node exchange through memory they share
// instead of messages (the idea of Chen et al.'s GPU all-to-all over CUDA
// IPC, "Performance Study of GPU All-to-All over IPC", on host memory).  A
// segment is made once per group of ranks (kept, and shared by the
// communicators over the group) as an MPI-3 shared window
// (core/shared_window.hpp), one part per rank, each in two halves that
// alternate between exchanges, so a rank writes the next exchange while
// slow peers still read the last.  An exchange: copy the outgoing pieces
// into this rank's half; raise `ready` to the exchange's number; once every
// peer's `ready` is up, copy this rank's pieces out of the peers' halves.
// No second flag: a peer raises `ready` only after it has read everything
// of the exchange before, so seeing every `ready` of one exchange frees the
// half of the exchange before it.  Waiting spins briefly, then yields the
// core (ranks may outnumber cores).  Flags are atomics in the segment: a
// release store of `ready` after the copies in, an acquire load of every
// peer's before the copies out (the C++ memory model, lock-free atomics
// being address-free across processes); MPI_Win_sync, which MPI-3 asks
// for and which cost 6 % of a small call here, orders only the segment's
// set-up.  Layout and pieces:
// schedule/shm.hpp.
// Blocks go whole while P of them fit in a half of at most kShmHalf (1 MiB)
// bytes, else in pieces of half/P bytes, one exchange each, the halves
// alternating so that copying a piece in overlaps peers copying the last
// one out (pipelined; faster than whole-call halves at MiB blocks, the
// pieces staying in cache).  Alltoallv learns the largest block of any rank
// from the first exchange's `largest` words (no allreduce).  The halves are
// made whole on first use (pages are touched only as data needs them), so
// no later call pays for a larger segment.
// Direct blocks: a block of at least `direct` bytes (knob; auto: the
// crossover the machine model measured, where one copy beats two) skips the
// segment.  via=cma: the receiver reads it from the sender's buffer with
// process_vm_readv (Linux CMA; one copy, as the MPI library's single-copy
// path), after which it raises `done`, which the sender waits for before it
// returns (its buffer is the user's again); usable where every rank may
// read every other's memory (probed once per segment: ptrace permission,
// Yama).  via=p2p: the block is a message on a2a's private communicator
// (the library's own single copy, XPMEM or KNEM where it has them).
// Sender and receiver tell direct blocks from the block's size alike.
// K = one exchange per piece (1 below the limit), D = P-1 blocks, each
// copied twice through the segment or once directly: cost 2(P-1)n*copy +
// one flag wait per piece, or (P-1) CMA reads + a second flag wait.  Memory: per
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
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/config.hpp"
#include "core/shared_window.hpp"
#include "schedule/shm.hpp"
#include "core/algorithm.hpp"
#include "both/shm.hpp"
#include "core/cost.hpp"
#include "core/row.hpp"

namespace a2a::detail {

struct ShmState {
  SharedWindow window;  // the node communicator and the segment (core/shared_window.hpp)
  bool usable = false;  // every rank shares memory with every other
  size_t capacity = 0;  // data bytes of each part
  schedule::ShmLayout layout;
  std::vector<char*> part;  // each rank's part, mapped here
  unsigned long long exchange = 0;  // the last exchange this rank took part in
  bool probed = false;  // CMA tried (once, on the first segment)
  bool cma = false;     // every rank may read every other's memory (process_vm_readv)
  // Nonblocking operations take turns on the segment (ShmTurn); turns
  // passed before they came up (an operation ended early) are skipped.
  unsigned long long next_turn = 0, serving = 0;
  std::vector<unsigned long long> passed_early;
};

namespace {

using Word = unsigned long long;

Word load(const char* part, size_t at) { return __atomic_load_n(reinterpret_cast<const Word*>(part + at), __ATOMIC_ACQUIRE); }
void store(char* part, size_t at, Word v) { __atomic_store_n(reinterpret_cast<Word*>(part + at), v, __ATOMIC_RELEASE); }

// Until peer p's word at `at` reaches exchange e: spin, then yield the core.
void wait_word(const ShmState& s, int p, size_t at, Word e, bool oversubscribed) {
  const int spins = oversubscribed ? 16 : 4000;
  for (int i = 0; load(s.part[static_cast<size_t>(p)], at) < e; ++i)
    if (i >= spins) sched_yield();
}

// Until every peer's `ready` reaches exchange e.
void wait_ready(const ShmState& s, int me, Word e, bool oversubscribed) {
  for (int p = 0; p < static_cast<int>(s.part.size()); ++p)
    if (p != me) wait_word(s, p, s.layout.ready, e, oversubscribed);
}

// Whether every peer's word at `at` has reached exchange e (a nonblocking
// operation's poll).
bool all_reached(const ShmState& s, int me, size_t at, Word e) {
  for (int p = 0; p < static_cast<int>(s.part.size()); ++p)
    if (p != me && load(s.part[static_cast<size_t>(p)], at) < e) return false;
  return true;
}

// `bytes` from address `from` of process `pid` to `to` (CMA): MPI_SUCCESS,
// or MPI_ERR_OTHER where the kernel refused or the range was not mapped.
int cma_read(long long pid, char* to, unsigned long long from, size_t bytes) {
#ifdef A2A_SMPI
  (void)pid, (void)to, (void)from, (void)bytes;
  return MPI_ERR_OTHER;
#else
  while (bytes > 0) {
    const size_t n = std::min(bytes, size_t{1} << 30);
    iovec local{to, n}, remote{reinterpret_cast<void*>(from), n};
    const ssize_t got = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return MPI_ERR_OTHER;
    to += got, from += static_cast<unsigned long long>(got), bytes -= static_cast<size_t>(got);
  }
  return MPI_SUCCESS;
#endif
}

// Whether every rank may read every other's memory with CMA (ptrace
// permission: same user, Yama's ptrace_scope, seccomp): each reads every
// peer's `pid` word through the kernel and compares it with the mapping;
// agreed by one allreduce.  Collective over the node, once.
int probe_cma(ShmState& s, int me) {
  int ok = 1;
  for (int p = 0; p < static_cast<int>(s.part.size()); ++p) {
    if (p == me) continue;
    const char* part = s.part[static_cast<size_t>(p)];
    long long seen = 0;
    ok &= cma_read(static_cast<long long>(load(part, s.layout.pid)), reinterpret_cast<char*>(&seen),
                   load(part, s.layout.self) + s.layout.pid, sizeof seen) == MPI_SUCCESS &&
          seen == static_cast<long long>(load(part, s.layout.pid));
  }
  if (const int rc = agree_min(ok, s.window.node())) return rc;
  s.cma = ok == 1;
  s.probed = true;
  return MPI_SUCCESS;
}

// Every page of the segment's data touched now, at its making, not in the
// calls: each process faults each page on its first access to it (on a
// virtual machine with shadow page tables 6-16 us a page), and calls
// reaching a new size met them there.  Populated first (MADV_POPULATE_*,
// Linux 5.14): where the file system behind the window is full (a
// container's 64 MiB /dev/shm) that fails, where a touch would raise
// SIGBUS; then nothing more is touched, and the calls meet the pages as
// before.  This rank's halves written (no exchange has used them), every
// peer's read.  Local: no rank waits on another's outcome.
void touch_segment(const ShmState& s, int me) {
#if defined(MADV_POPULATE_READ) && defined(MADV_POPULATE_WRITE)
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t n = 0; n < s.part.size(); ++n) {
    const size_t p = (static_cast<size_t>(me) + n) % s.part.size();  // this rank's part first
    const auto span = schedule::whole_pages(reinterpret_cast<uintptr_t>(s.part[p] + s.layout.data),
                                            s.layout.total - s.layout.data, page);
    char* first = reinterpret_cast<char*>(span.first);
    if (span.bytes == 0 || madvise(first, span.bytes, p == static_cast<size_t>(me) ? MADV_POPULATE_WRITE
                                                                                  : MADV_POPULATE_READ))
      return;
    for (size_t at = 0; at < span.bytes; at += page)
      if (p == static_cast<size_t>(me)) first[at] = 0;
      else static_cast<void>(*static_cast<volatile const char*>(first + at));
  }
#else
  (void)s, (void)me;
#endif
}

// Makes the segment with halves of `half` data bytes: collective over the node.
int make_segment(ShmState& s, int P, size_t half) {
  s.capacity = half;
  s.layout = schedule::shm_layout(P, s.capacity);
  if (const int rc = s.window.allocate(s.layout.total, s.part)) return rc;
  const int me = s.window.rank();
  char* mine = s.part[static_cast<size_t>(me)];
  store(mine, s.layout.ready, 0);
  store(mine, s.layout.done, 0);
  store(mine, s.layout.pid, static_cast<Word>(getpid()));
  store(mine, s.layout.self, static_cast<Word>(reinterpret_cast<uintptr_t>(mine)));
  s.exchange = 0;
  if (const int rc = s.window.publish()) return rc;  // every part's words are set before anyone reads them
  touch_segment(s, me);
  if (!s.probed) return probe_cma(s, me);
  return MPI_SUCCESS;
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
  out = std::make_shared<ShmState>();
#ifndef A2A_SMPI
  if (const int rc = out->window.split(ctx.user)) return rc;
  out->usable = out->window.size() == ctx.size;
#else
  (void)ctx;
#endif
  return MPI_SUCCESS;
}

// The state on first use on ctx (collective unless kept): the one kept for
// its group where every rank has it, else a new one, kept where every rank
// can keep it.  A group is kept only by every one of its ranks at once (the
// allreduce below) and never dropped before MPI_Finalize, so a rank that
// finds its group kept knows every other rank of it does: no allreduce then
// (a communicator per FFTW plan, over world's ranks, costs no MPI call here).
int state_of(CommContext& ctx, ShmState*& out) {
  if (!ctx.shm_state) {
#ifdef A2A_SMPI
    if (const int rc = make_state(ctx, ctx.shm_state)) return rc;
#else
    std::vector<int> group;  // the key: world ranks in ctx's order (none outside world)
    if (ctx.world_order) {   // detect_topology knew (below MPI_THREAD_MULTIPLE)
      group.resize(static_cast<size_t>(ctx.size));
      std::iota(group.begin(), group.end(), 0);
    } else if (const int rc = world_ranks(ctx.user, ctx.size, group)) {
      return rc;
    }
    if (std::find(group.begin(), group.end(), MPI_UNDEFINED) != group.end()) group.clear();
    std::shared_ptr<ShmState> found;
    int can_keep = 0;
    if (!group.empty() && !threads_multiple()) {
      std::lock_guard<std::mutex> guard(kept().lock);
      for (const auto& [g, state] : kept().groups)
        if (g == group) found = state;
      can_keep = kept().groups.size() < kKeptGroups ? 1 : 0;
    }
    if (found) {
      ctx.shm_state = found;
      out = found.get();
      return MPI_SUCCESS;
    }
    if (const int rc = agree_min(can_keep, ctx.user)) return rc;
    if (const int rc = make_state(ctx, ctx.shm_state)) return rc;
    if (can_keep && ctx.shm_state->usable) {
      std::lock_guard<std::mutex> guard(kept().lock);
      kept().groups.emplace_back(group, ctx.shm_state);
    }
#endif
  }
  out = ctx.shm_state.get();
  return MPI_SUCCESS;
}

// A nonblocking operation's segment: ctx's own, never kept nor shared
// (collective on its first use, inside the operation's start).
int own_state_of(CommContext& ctx, ShmState*& out) {
  if (!ctx.shm_nb_state)
    if (const int rc = make_state(ctx, ctx.shm_nb_state)) return rc;
  out = ctx.shm_nb_state.get();
  return MPI_SUCCESS;
}

using schedule::ShmPiece;

// How this call's direct blocks travel: blocks of at least `from` bytes
// (schedule::shm_direct), read with CMA or sent as messages.
struct Direct {
  long long from = ShmKnobs::kDirectOff;
  bool cma = false;
  bool takes(size_t bytes) const { return schedule::shm_direct(bytes, from); }
};

// The knobs as this segment allows them (the same on every rank: the probe
// is agreed): CMA where asked (or auto) and allowed, else messages.
Direct direct_of(const ShmKnobs& prm, const ShmState& s) {
  Direct d;
  if (prm.direct == ShmKnobs::kDirectAuto) return d;  // unresolved: off
  d.from = prm.direct;
  d.cma = s.cma && prm.via != ShmKnobs::Via::p2p;
  return d;
}

// One exchange through the segment: piece k of every block, published in
// the half of exchange e with `largest` (this rank's largest block through
// the segment, which alltoallv's later pieces depend on).  Peers are out of
// that half, used two exchanges ago: each raised its `ready` of the last
// exchange, which this rank saw, only after it had copied out everything of
// the one before.  The first exchange (k.off 0) also moves the direct
// blocks whole: their addresses published with the pieces and read with
// CMA, after which this rank waits for the readers of its own direct blocks
// (their `done`); or messages posted before and completed after.  A piece
// larger than the receive block is a truncation, reported after the call's
// last exchange (peers still wait for this rank's pieces).  Its steps
// around its waits: run() awaits between them (one coroutine frame a call,
// not one per exchange); made once a call, begin() starts each exchange.
template <class Call>
struct Exchange {
  static constexpr bool varying = std::is_same_v<Call, VarCall>;
  const Call& c;
  ShmState& s;
  const Direct& dir;
  Requests& messages;
  size_t largest;
  int P = c.P(), me = c.rank();
  char* mine = s.part[static_cast<size_t>(me)];
  // the exchange under way
  ShmPiece k{};
  bool first = false;
  Word e = 0;
  int err = MPI_SUCCESS;
  bool messages_too = false;
  bool sends_direct = false;

  void begin(ShmPiece piece) {
    k = piece;
    first = k.off == 0;
    e = s.exchange + 1;
    err = MPI_SUCCESS;
    messages_too = first && !dir.cma && dir.from != ShmKnobs::kDirectOff;
    sends_direct = false;
  }

  void note(int rc) {
    if (rc != MPI_SUCCESS && (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE)) err = rc;
  }
  // Destination d's piece sits at d * slot of the half (a slot per rank:
  // the receiver finds it with no table to read): alltoall's block, or
  // alltoallv's shm_slot of this rank's largest block in the first
  // exchange, k.len in later ones; a direct block's address and bytes go in
  // the table (alltoallv) or the direct words (alltoall).
  size_t slot_of(size_t peer_largest) const {
    return varying && first ? schedule::shm_slot(peer_largest, k.len) : k.len;
  }

  // Messages for the direct blocks posted, the pieces copied in, `ready` raised.
  void copy_in() {
    if (messages_too)
      for (int p = 0; p < P; ++p) {
        if (p == me) continue;
        if (dir.takes(c.recv_bytes(p))) messages.recv(c.recv_block(p), c.recv_bytes(p), p, c.comm());
        if (dir.takes(c.send_bytes(p))) messages.send(c.send_block(p), c.send_bytes(p), p, c.comm(), c.stats);
      }
    const size_t my_slot = slot_of(largest);
    auto* table = reinterpret_cast<long long*>(mine + s.layout.table_at(e));
    char* data = mine + s.layout.data_at(e);
    for (int d = 0; d < P; ++d) {
      if (d == me) continue;
      const size_t block = c.send_bytes(d);
      if (dir.takes(block)) {
        sends_direct = sends_direct || (first && dir.cma);
        if constexpr (varying) {
          if (first && dir.cma) {
            table[2 * d] = static_cast<long long>(reinterpret_cast<uintptr_t>(c.send_block(d)));
            table[2 * d + 1] = static_cast<long long>(block);
          }
        }
        continue;
      }
      if constexpr (varying)  // no direct block: a receiver expecting one sees so (its half's entry is stale)
        if (first && dir.cma) table[2 * d + 1] = 0;
      copy_bytes(data + static_cast<size_t>(d) * my_slot, c.send_block(d) + k.off, ShmPiece{k.off, my_slot}.of(block));
    }
    if constexpr (!varying) {
      if (first && dir.cma) {
        auto* words = reinterpret_cast<Word*>(mine + s.layout.direct_at(e));
        const bool direct = dir.takes(c.bs);
        words[0] = direct ? static_cast<Word>(reinterpret_cast<uintptr_t>(c.send)) : 0;
        words[1] = static_cast<Word>(c.sstride);
        words[2] = direct ? static_cast<Word>(c.bs) : 0;
      }
    }
    __atomic_store_n(reinterpret_cast<Word*>(mine + s.layout.largest_at(e)), static_cast<Word>(largest),
                     __ATOMIC_RELAXED);  // before `ready` (release): receivers size this rank's slots from it
    store(mine, s.layout.ready, e);  // release: the pieces and words above are visible first
  }
  // Every peer's `ready` up (acquire: the peers' pieces are visible after).
  bool peers_ready() const { return all_reached(s, me, s.layout.ready, e); }
  void spin_ready() const { wait_ready(s, me, e, c.ctx.oversubscribed); }

  // The pieces copied out, the direct blocks read, `done` raised.
  void copy_out() {
    for (int i = 1; i < P; ++i) {
      const int p = me + i < P ? me + i : me + i - P;  // from the next peer on: readers spread over the senders
      const char* peer = s.part[static_cast<size_t>(p)];
      const size_t block = c.recv_bytes(p);
      if (!dir.takes(block)) {
        const size_t slot = slot_of(load(peer, s.layout.largest_at(e)));
        copy_bytes(c.recv_block(p) + k.off, peer + s.layout.data_at(e) + static_cast<size_t>(me) * slot,
                   ShmPiece{k.off, slot}.of(block));
        continue;
      }
      if (!first || !dir.cma) continue;  // direct: whole in the first exchange; messages: completed below
      unsigned long long address = 0, bytes = 0;
      if constexpr (varying) {
        const auto* from = reinterpret_cast<const long long*>(peer + s.layout.table_at(e));
        address = static_cast<unsigned long long>(from[2 * me]);
        bytes = static_cast<unsigned long long>(from[2 * me + 1]);
      } else {
        const auto* words = reinterpret_cast<const Word*>(peer + s.layout.direct_at(e));
        address = words[0] + static_cast<unsigned long long>(me) * words[1];
        bytes = words[2];
      }
      if (bytes != block) {  // the two sides size the block differently (erroneous): not read
        note(MPI_ERR_TRUNCATE);
        continue;
      }
      note(cma_read(static_cast<long long>(load(peer, s.layout.pid)), c.recv_block(p), address, block));
    }
    ++s.exchange;
    // Also where the two sides size a block differently, so no sender waits
    // forever (done's line is this rank's alone: no peer polls it otherwise).
    if (first && dir.cma) store(mine, s.layout.done, e);
  }
  // The readers of this rank's direct blocks are through (sends_direct).
  bool readers_done() const {
    for (int d = 0; d < P; ++d)
      if (d != me && dir.takes(c.send_bytes(d)) && load(s.part[static_cast<size_t>(d)], s.layout.done) < e) return false;
    return true;
  }
  void spin_readers() const {
    for (int d = 0; d < P; ++d)
      if (d != me && dir.takes(c.send_bytes(d))) wait_word(s, d, s.layout.done, e, c.ctx.oversubscribed);
  }
};

// The largest block through the segment of any rank in the exchange just
// made (alltoallv).
size_t largest_published(const ShmState& s) {
  size_t m = 0;
  for (const char* part : s.part) m = std::max<size_t>(m, load(part, s.layout.largest_at(s.exchange)));
  return m;
}

template <class Call>
Task<Result> run(const Call& c, ShmKnobs prm, ShmTurn* reserved) {
  constexpr bool varying = std::is_same_v<Call, VarCall>;
  const int P = c.P(), me = c.rank();
  c.copy_self();
  if (P == 1) co_return MPI_SUCCESS;
  ShmTurn own;
  ShmTurn& turn = reserved ? *reserved : own;
  if (!reserved)
    if (const int rc = shm_reserve(c.ctx, prm, own)) co_return rc;
  // The registry's fallback, which the stats name.
  if (!turn.state) co_return Result::fallback();
  ShmState* s = turn.state;
  const Direct dir = direct_of(prm, *s);
  if (turn.holds && s->serving != turn.ticket)
    co_await until([s, t = turn.ticket] { return s->serving == t; }, [] {});  // nonblocking only: never spun
  // Alltoall knows every block's size; alltoallv starts with pieces of the
  // half's share and learns the largest block through the segment from the
  // first exchange.
  const size_t through = varying ? s->capacity : dir.takes(c.send_bytes(0)) ? 0 : c.send_bytes(0);
  ShmPiece k{0, schedule::shm_piece_len(through, P, s->capacity)};
  if (k.len == 0 && through > 0) co_return Result::fallback();  // not a line per rank under A2A_SCRATCH_LIMIT
  size_t largest = 0;
  long long sent = 0;
  for (int d = 0; d < P; ++d)
    if (d != me) {
      const bool direct = dir.takes(c.send_bytes(d));
      if (!direct) largest = std::max(largest, c.send_bytes(d));
      if (!direct || dir.cma) sent += static_cast<long long>(c.send_bytes(d));  // messages count their own
    }
  int err = MPI_SUCCESS;
  size_t exchanges = 0, M = 0;
  Requests messages(0);  // the direct blocks' (the first exchange's), where they are messages
  Exchange<Call> x{c, *s, dir, messages, largest};
  for (bool more = true; more;) {
    x.begin(k);
    x.copy_in();
    co_await until([&x] { return x.peers_ready(); }, [&x] { x.spin_ready(); });
    ++c.stats.waits;
    x.copy_out();
    if (x.sends_direct) {
      co_await until([&x] { return x.readers_done(); }, [&x] { x.spin_readers(); });
      ++c.stats.waits;
    }
    if (x.messages_too) x.note(co_await wait(messages, c.stats));
    if (x.err && !err) err = x.err;
    if (++exchanges == 1) {
      M = varying ? largest_published(*s) : through;  // the same on every rank
      if (M > k.len) {
        k.off = k.len;
        if constexpr (varying) k.len = schedule::shm_piece_len(M, P, s->capacity);  // whole blocks where they fit
      } else {
        k.off = M;
      }
    } else {
      k.off += k.len;
    }
    more = k.off < M;
  }
  turn.release();
  c.stats.rounds += static_cast<long long>(exchanges);
  c.stats.blocks_sent += P - 1;
  c.stats.bytes_sent += sent;
  c.stats.temp_bytes = std::max<long long>(c.stats.temp_bytes, static_cast<long long>(s->layout.total));
  co_return err;
}

}  // namespace

int shm_reserve(CommContext& ctx, const ShmKnobs& prm, ShmTurn& turn) {
  if (ctx.size < 2) return MPI_SUCCESS;
  ShmState* s = nullptr;
  const bool blocking = blocking_now();
  if (const int rc = blocking ? state_of(ctx, s) : own_state_of(ctx, s)) return rc;
  // Several nodes, real or laid out (A2A_NODE_SIZE and the like): no segment.
  if (!s->usable || ctx.topology.nodes() > 1) return MPI_SUCCESS;
  const Direct dir = direct_of(prm, *s);
  if (!dir.cma && dir.from != ShmKnobs::kDirectOff)
    if (const int rc = ctx.open_private()) return rc;  // direct blocks as messages (every rank alike)
  // Whole halves from the first call: no later call pays a re-made segment.
  if (!s->window.allocated())
    if (const int rc = make_segment(*s, ctx.size, schedule::shm_half_limit(config().scratch_limit))) return rc;
  turn.state = s;
  if (!blocking) {  // a blocking call's segment is never a nonblocking one's
    turn.ticket = s->next_turn++;
    turn.holds = true;
  }
  return MPI_SUCCESS;
}

void ShmTurn::release() {
  if (!holds) return;
  holds = false;
  ShmState& s = *state;
  if (ticket != s.serving) {
    s.passed_early.push_back(ticket);
    return;
  }
  ++s.serving;
  for (auto it = s.passed_early.begin(); it != s.passed_early.end();)
    if (*it == s.serving) {
      s.passed_early.erase(it);
      ++s.serving;
      it = s.passed_early.begin();
    } else {
      ++it;
    }
}

int shm_prepare(CommContext& ctx) {
  if (ctx.size < 2 || ctx.topology.nodes() > 1) return MPI_SUCCESS;
  ShmState* s = nullptr;
  if (const int rc = state_of(ctx, s)) return rc;
  if (!s->usable || s->window.allocated()) return MPI_SUCCESS;
  return make_segment(*s, ctx.size, schedule::shm_half_limit(config().scratch_limit));
}

std::vector<std::pair<const char*, size_t>> shm_data_parts(const CommContext& ctx) {
  std::vector<std::pair<const char*, size_t>> out;
  const ShmState* s = ctx.shm_state.get();
  if (s && s->window.allocated())
    for (const char* part : s->part) out.emplace_back(part + s->layout.data, s->layout.total - s->layout.data);
  return out;
}

void shm_forget_kept() {
  std::vector<std::pair<std::vector<int>, std::shared_ptr<ShmState>>> gone;  // freed outside the lock
  {
    std::lock_guard<std::mutex> guard(kept().lock);
    gone.swap(kept().groups);
  }
}

Task<Result> shm(const UniformCall& c, const Params& prm) { return run(c, prm.as<ShmKnobs>(), nullptr); }
Task<Result> shm(const VarCall& c, const Params& prm) { return run(c, prm.as<ShmKnobs>(), nullptr); }

namespace {
template <class Call>
Task<Result> phase(const Call& c, ShmKnobs prm, ShmTurn* reserved) {
  const Result r = co_await run(c, prm, reserved);
  if (r.fell_back()) {
    const std::string name = schedule::name_without_intra_shm(c.stats.algorithm);
    std::snprintf(c.stats.algorithm, sizeof c.stats.algorithm, "%s", name.c_str());
    c.stats.named_from = 0;  // written here: the next call's name is copied afresh
  }
  co_return r;
}
}  // namespace

Task<Result> shm_phase(const UniformCall& c, ShmKnobs prm, ShmTurn* reserved) {
  return phase(c, prm, reserved);
}
Task<Result> shm_phase(const VarCall& c, ShmKnobs prm, ShmTurn* reserved) { return phase(c, prm, reserved); }

namespace {

// Its cost (core/cost.hpp): its rounds on one rank's clock.
ModelCost cost(const ModelCall& c, const Params& prm) {
  const int P = static_cast<int>(c.layout.node_of.size());
  return worst_rank(c, [&](RankClock& clock, int) { shm_round(clock, c.m, all_ranks(P), c.bytes, prm.as<ShmKnobs>()); });
}

}  // namespace

// Its row (core/row.hpp), listed by the registry.
AlgorithmInfo shm_row(Collective coll) {
  static const std::vector<ParamInfo> knobs = {
      {"direct", KnobKind::bytes_auto, "auto",
       "smallest block (bytes; K, M, G) read straight from the sender's buffer instead of through the segment; "
       "auto: the measured crossover; off: never",
       set_knob<&ShmKnobs::direct>, 0, 1LL << 62, {}, true},
      {"via", KnobKind::choice, "auto", "how direct blocks travel: cma (one copy, process_vm_readv), p2p (messages); "
       "auto: the measured cheaper one where CMA is allowed",
       set_knob<&ShmKnobs::via>, 0, 0, {"auto", "cma", "p2p"}, true,
       false}};
  return row_of(coll,
                {.name = "shm",
                 .summary = "one node: blocks copied through a segment the ranks share (MPI-3 shared window), one flag wait; "
                             "large blocks straight from buffer to buffer (CMA or messages)",
                 .params = knobs,
                 .knobs = Params(ShmKnobs{}),
                 .shm_knobs = [](Params& p) { return &p.as<ShmKnobs>(); },
                 .fallback = "spread-out",
                 .needs = kNeedsOneNode,
                 .cost = cost,
                 .private_comm = false},
                shm, shm);
}

}  // namespace a2a::detail
