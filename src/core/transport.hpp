// Point-to-point helpers on the private communicator.  Byte counts are 64-bit;
// a message above max_message_bytes() travels as several ordered pieces with
// the same tag, so no MPI count ever overflows int.  Empty messages are not
// sent at all: both sides know the size, so both skip them.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "core/context.hpp"

namespace a2a::detail {

constexpr size_t kMaxMessageBytes = size_t{1} << 30;
// kMaxMessageBytes, or A2A_MAX_MESSAGE_BYTES (must be the same on every rank) so tests can exercise the splitting with
// small messages.
size_t max_message_bytes();
constexpr int kDataTag = 1;  // the private communicator carries only library traffic

// Requests in flight: up to kInline without touching the heap (a call's
// hot path allocates nothing at the sizes where that would show), more in
// a vector.
class Requests {
 public:
  explicit Requests(size_t expected = 2) {
    if (expected > kInline) more_.reserve(expected);
  }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  void recv(void* buf, size_t bytes, int src, MPI_Comm comm) {
    if (bytes > max_message_bytes()) return recv_pieces(static_cast<char*>(buf), bytes, src, comm);
    if (bytes > 0) note(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, src, kDataTag, comm, next()));
  }
  void send(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats) {
    stats.bytes_sent += static_cast<long long>(bytes);
    if (bytes > max_message_bytes()) return post_sends(static_cast<const char*>(buf), bytes, dst, comm, &stats);
    if (bytes == 0) return;
    note(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dst, kDataTag, comm, next()));
    stats.count_message(dst, bytes);
  }
  // Metadata (block sizes): counted in meta_bytes_sent, not as data.
  void send_meta(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats);
  // Derived-datatype message of one element (block lists built by the caller).
  void recv_typed(void* buf, MPI_Datatype type, int src, MPI_Comm comm);
  void send_typed(const void* buf, MPI_Datatype type, size_t payload, int dst, MPI_Comm comm, Stats& stats);
  int wait_all();  // first MPI error seen, or MPI_SUCCESS

 private:
  void post_sends(const char* p, size_t bytes, int dst, MPI_Comm comm, Stats* stats);
  void recv_pieces(char* p, size_t bytes, int src, MPI_Comm comm);
  MPI_Request* next() { return more_.empty() && n_ < kInline ? &inline_[n_++] : spill(); }
  MPI_Request* spill();
  static constexpr size_t kInline = 64;
  MPI_Request inline_[kInline];
  size_t n_ = 0;                   // requests in inline_ (when more_ is empty)
  std::vector<MPI_Request> more_;  // all of them, once they outgrow inline_
  int err_ = MPI_SUCCESS;
  void note(int rc) { if (rc != MPI_SUCCESS && err_ == MPI_SUCCESS) err_ = rc; }
};

// One blocking exchange: send `sbytes` to dst while receiving `rbytes` from src.
int exchange(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src, MPI_Comm comm,
             Stats& stats);

// A datatype of exactly `bytes` contiguous bytes (any size, int-safe).
int make_bytes_type(size_t bytes, MPI_Datatype* out);
// One element selecting blocks of `bytes` at the given byte displacements
// (relative to the buffer passed to MPI, or absolute with MPI_BOTTOM).
int make_blocks_type(size_t bytes, const std::vector<MPI_Aint>& displs, MPI_Datatype* out);

}  // namespace a2a::detail
