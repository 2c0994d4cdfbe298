// Point-to-point helpers on the private communicator.  Byte counts are 64-bit;
// a message above max_message_bytes() travels as several ordered pieces with
// the same tag, so no MPI count ever overflows int.  Empty messages are not
// sent at all: both sides know the size, so both skip them.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "core/context.hpp"
#include "core/datatype.hpp"
#include "core/engine.hpp"

namespace a2a::detail {

constexpr size_t kMaxMessageBytes = size_t{1} << 30;
// kMaxMessageBytes, or A2A_MAX_MESSAGE_BYTES (must be the same on every rank) so tests can exercise the splitting with
// small messages.
size_t max_message_bytes();
// The private communicator carries only library traffic; each operation's
// messages carry its own tag (op_tag(), core/engine.hpp), so that
// operations in flight on one communicator never match each other's.

// Requests in flight: up to the inline capacity without touching the heap
// (a call's hot path allocates nothing at the sizes where that would
// show), more in a vector.  The logic, over the store its derived class
// holds (InlineRequests): an awaiter that holds one is made in its
// coroutine's frame at each co_await, at a cost that grows with its size.
class RequestSet {
 public:
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;
  void recv(void* buf, size_t bytes, int src, MPI_Comm comm) {
    if (bytes > max_message_bytes()) return recv_pieces(static_cast<char*>(buf), bytes, src, comm);
    if (bytes > 0) note(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, src, op_tag(), comm, next()));
  }
  void send(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats) {
    stats.bytes_sent += static_cast<long long>(bytes);
    if (bytes > max_message_bytes()) return post_sends(static_cast<const char*>(buf), bytes, dst, comm, &stats);
    if (bytes == 0) return;
    note(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dst, op_tag(), comm, next()));
    stats.count_message(dst, bytes);
  }
  // Metadata (block sizes): counted in meta_bytes_sent, not as data.
  void send_meta(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats);
  // Derived-datatype message of one element (block lists built by the caller).
  void recv_typed(void* buf, MPI_Datatype type, int src, MPI_Comm comm);
  void send_typed(const void* buf, MPI_Datatype type, size_t payload, int dst, MPI_Comm comm, Stats& stats);
  // A request slot for any other nonblocking call (a nested collective),
  // its return code passed to note().
  MPI_Request* add() {
    MPI_Request* r = next();
    *r = MPI_REQUEST_NULL;
    return r;
  }
  void note(int rc) { if (rc != MPI_SUCCESS && err_ == MPI_SUCCESS) err_ = rc; }
  int wait_all();  // first MPI error seen, or MPI_SUCCESS (also result())
  bool test_all();  // true once every request completed (then result() as wait_all's)
  int result() const { return result_; }
  bool posted() const { return n_ != 0 || !more_.empty(); }

 protected:
  RequestSet(MPI_Request* store, size_t capacity, size_t expected) : inline_(store), capacity_(capacity) {
    if (expected > capacity) more_.reserve(expected);
  }
  ~RequestSet() = default;

 private:
  void post_sends(const char* p, size_t bytes, int dst, MPI_Comm comm, Stats* stats);
  void recv_pieces(char* p, size_t bytes, int src, MPI_Comm comm);
  MPI_Request* next() { return more_.empty() && n_ < capacity_ ? &inline_[n_++] : spill(); }
  MPI_Request* spill();
  MPI_Request* inline_;
  size_t capacity_;
  size_t n_ = 0;                   // requests in inline_ (when more_ is empty)
  std::vector<MPI_Request> more_;  // all of them, once they outgrow inline_
  int err_ = MPI_SUCCESS;
  int result_ = MPI_SUCCESS;
  void finish();
};
template <size_t N>
class InlineRequests : public RequestSet {
 public:
  explicit InlineRequests(size_t expected = 2) : RequestSet(store_, N, expected) {}

 private:
  MPI_Request store_[N];
};
// An algorithm's round: up to 64 without the heap.
using Requests = InlineRequests<64>;
// Requests in a store the caller owns (scratch sized for its widest batch),
// so a batch of any size posts without the heap.
class StoredRequests : public RequestSet {
 public:
  StoredRequests(MPI_Request* store, size_t capacity) : RequestSet(store, capacity, 0) {}
};

// co_await wait(reqs): every request posted on reqs completes (its first
// error, or MPI_SUCCESS).
// Nonblocking, a round just posted is not tested: the progress step that
// resumes the operation tests it (progress_step), and a wait waits it out;
// a test here cost every start a poll of the library's progress engine
// (590 instructions at P = 2, callgrind) that rarely found it done.
struct WaitRequests {
  RequestSet& r;
  bool await_ready() {
    if (blocking_now()) {
      r.wait_all();
      return true;
    }
    return !r.posted() && r.test_all();
  }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    OpState* op = current_op();
    op->resume = h;
    op->requests = &r;
  }
  int await_resume() const { return r.result(); }
};
inline WaitRequests wait(RequestSet& r) { return WaitRequests{r}; }
// The same, an algorithm's batch: counted in the call's stats (waits)
// where it posted any message.
inline WaitRequests wait(RequestSet& r, Stats& stats) {
  stats.waits += r.posted();
  return WaitRequests{r};
}

// One blocking exchange: send `sbytes` to dst while receiving `rbytes` from
// src, the receive posted first.  Not MPI_Sendrecv: SMPI's posts its send
// first and its receive only after the send's overhead, which cost every
// round of a simulated TRA 0.05 us (sim/repro/smpi_round_order.c); Open MPI's and
// MPICH's post the receive first, as this does, at the same cost here.
int exchange(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src, MPI_Comm comm,
             Stats& stats);

// co_await exchanged(...): exchange() where the operation blocks, else the
// two messages posted and awaited.
struct Exchanged {
  const void* sbuf;
  size_t sbytes;
  int dst;
  void* rbuf;
  size_t rbytes;
  int src;
  MPI_Comm comm;
  Stats& stats;
  // Two inline (a message in pieces spills), made only where the
  // operation does not block: the awaiter is made at every co_await, and
  // with an algorithm's 64 it cost a blocking exchange 60 instructions more.
  std::optional<InlineRequests<2>> r;
  int rc = MPI_SUCCESS;
  bool await_ready() {
    stats.waits += sbytes > 0 || rbytes > 0;
    if (blocking_now()) {
      rc = exchange(sbuf, sbytes, dst, rbuf, rbytes, src, comm, stats);
      return true;
    }
    r.emplace(2);
    r->recv(rbuf, rbytes, src, comm);
    r->send(sbuf, sbytes, dst, comm, stats);
    if (r->posted() || !r->test_all()) return false;  // untested, as WaitRequests
    rc = r->result();
    return true;
  }
  void await_suspend(std::coroutine_handle<> h) noexcept { WaitRequests{*r}.await_suspend(h); }
  int await_resume() const { return rc != MPI_SUCCESS || !r ? rc : r->result(); }
};
inline Exchanged exchanged(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src,
                           MPI_Comm comm, Stats& stats) {
  return Exchanged{sbuf, sbytes, dst, rbuf, rbytes, src, comm, stats, std::nullopt};
}

// co_await exchange_replace(...): the blocks of `buf` that `type` selects
// (`bytes` of data) go to dst and are replaced by src's; counted as one
// message and one wait.  Blocking, MPI_Sendrecv_replace; nonblocking, and
// in the simulated build, the blocks are received into a packed copy and
// unpacked into place once the send has left (SMPI 3.32's
// MPI_Sendrecv_replace overruns its own buffer with sparse derived types).
Task<int> exchange_replace(void* buf, MPI_Datatype type, size_t bytes, int dst, int src, MPI_Comm comm,
                           Stats& stats);

// Collectives nested in an algorithm (the largest block, tuna-hier's size
// exchange): the MPI library's own where the operation blocks; messages
// with the operation's tag where it does not, since operations in flight
// on one communicator may reach their nested collectives in different
// orders on different ranks, which the library's collectives forbid.
// The maximum of `v` over comm (nonblocking: dissemination, ceil(log2 P)
// rounds; max is idempotent, so overlapping ranges do no harm).
Task<int> allreduce_max(long long& v, MPI_Comm comm);
// Alltoall of `n` long longs per rank over comm (nonblocking: Bruck along
// `bruck`, tra_steps(P, 2) of comm: its context's, computed once).
Task<int> alltoall_ll(const long long* send, long long* recv, int n, MPI_Comm comm,
                      const std::vector<schedule::Step>& bruck);

// Alltoall of one `bytes`-byte block per rank over comm, block i of send to
// rank i (any size: one datatype of `bytes` bytes; stats are the caller's).
// Blocking, the MPI library's alltoall; nonblocking, spread-out: every
// receive and send posted at once, this rank's own block copied.
Task<int> alltoall_blocks(const char* send, char* recv, size_t bytes, MPI_Comm comm);

// A datatype of exactly `bytes` contiguous bytes (any size, int-safe).
int make_bytes_type(size_t bytes, MPI_Datatype* out);
// One element selecting blocks of `bytes` at the given byte displacements
// (relative to the buffer passed to MPI, or absolute with MPI_BOTTOM).
int make_blocks_type(size_t bytes, const std::vector<MPI_Aint>& displs, MPI_Datatype* out);

}  // namespace a2a::detail
