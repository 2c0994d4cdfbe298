#include "core/transport.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/config.hpp"

namespace a2a::detail {

size_t max_message_bytes() {
  static const size_t limit = [] {  // at first use, as every variable (core/config.hpp)
    const size_t n = config().max_message_bytes;
    return n > 0 && n < kMaxMessageBytes ? n : kMaxMessageBytes;
  }();
  return limit;
}

MPI_Request* Requests::spill() {
  if (more_.empty()) more_.assign(inline_, inline_ + n_);
  more_.emplace_back();
  return &more_.back();
}

void Requests::recv_pieces(char* p, size_t bytes, int src, MPI_Comm comm) {
  while (bytes > 0) {
    const size_t piece = std::min(bytes, max_message_bytes());
    note(MPI_Irecv(p, static_cast<int>(piece), MPI_BYTE, src, kDataTag, comm, next()));
    p += piece;
    bytes -= piece;
  }
}

void Requests::post_sends(const char* p, size_t bytes, int dst, MPI_Comm comm, Stats* stats) {
  while (bytes > 0) {
    const size_t piece = std::min(bytes, max_message_bytes());
    note(MPI_Isend(p, static_cast<int>(piece), MPI_BYTE, dst, kDataTag, comm, next()));
    if (stats) stats->count_message(dst, piece);
    p += piece;
    bytes -= piece;
  }
}

void Requests::send_meta(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats) {
  stats.meta_bytes_sent += static_cast<long long>(bytes);
  post_sends(static_cast<const char*>(buf), bytes, dst, comm, nullptr);
}

void Requests::recv_typed(void* buf, MPI_Datatype type, int src, MPI_Comm comm) {
  note(MPI_Irecv(buf, 1, type, src, kDataTag, comm, next()));
}

void Requests::send_typed(const void* buf, MPI_Datatype type, size_t payload, int dst, MPI_Comm comm,
                          Stats& stats) {
  note(MPI_Isend(buf, 1, type, dst, kDataTag, comm, next()));
  stats.count_message(dst, payload);
  stats.bytes_sent += static_cast<long long>(payload);
}

int Requests::wait_all() {
  const bool spilled = !more_.empty();
  const size_t n = spilled ? more_.size() : n_;
  if (n) note(MPI_Waitall(static_cast<int>(n), spilled ? more_.data() : inline_, MPI_STATUSES_IGNORE));
  more_.clear();
  n_ = 0;
  const int rc = err_;
  err_ = MPI_SUCCESS;
  return rc;
}

int exchange(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src, MPI_Comm comm,
             Stats& stats) {
  const size_t limit = max_message_bytes();
  if (sbytes > 0 && rbytes > 0 && sbytes <= limit && rbytes <= limit) {  // one call into the library
    stats.bytes_sent += static_cast<long long>(sbytes);
    stats.count_message(dst, sbytes);
    return MPI_Sendrecv(sbuf, static_cast<int>(sbytes), MPI_BYTE, dst, kDataTag, rbuf, static_cast<int>(rbytes),
                        MPI_BYTE, src, kDataTag, comm, MPI_STATUS_IGNORE);
  }
  Requests r;
  r.recv(rbuf, rbytes, src, comm);
  r.send(sbuf, sbytes, dst, comm, stats);
  return r.wait_all();
}

int make_bytes_type(size_t bytes, MPI_Datatype* out) {
  const size_t limit = max_message_bytes();
  if (bytes <= limit) return MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, out);
  // Whole pieces followed by the remainder, as a two-member struct.
  MPI_Datatype piece, parts;
  const size_t n = bytes / limit, rest = bytes % limit;
  MPI_Type_contiguous(static_cast<int>(limit), MPI_BYTE, &piece);
  MPI_Type_contiguous(static_cast<int>(n), piece, &parts);
  int lens[2] = {1, static_cast<int>(rest)};
  MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(n * limit)};
  MPI_Datatype types[2] = {parts, MPI_BYTE};
  const int rc = MPI_Type_create_struct(rest ? 2 : 1, lens, displs, types, out);
  MPI_Type_free(&piece);
  MPI_Type_free(&parts);
  return rc;
}

int make_blocks_type(size_t bytes, const std::vector<MPI_Aint>& displs, MPI_Datatype* out) {
  const int count = static_cast<int>(displs.size());
  if (bytes <= max_message_bytes()) {  // plain bytes: no intermediate type to free early
    int rc = MPI_Type_create_hindexed_block(count, static_cast<int>(bytes), displs.data(), MPI_BYTE, out);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(out);
    return rc;
  }
  MPI_Datatype block;
  int rc = make_bytes_type(bytes, &block);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Type_create_hindexed_block(count, 1, displs.data(), block, out);
  MPI_Type_free(&block);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(out);
  return rc;
}

}  // namespace a2a::detail
