#include "core/transport.hpp"

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <vector>

#include "core/config.hpp"

namespace a2a::detail {

size_t max_message_bytes() {
  static const size_t limit = [] {  // at first use, as every variable (core/config.hpp)
    const size_t n = config().max_message_bytes;
    return n > 0 && n < kMaxMessageBytes ? n : kMaxMessageBytes;
  }();
  return limit;
}

MPI_Request* RequestSet::spill() {
  if (more_.empty()) more_.assign(inline_, inline_ + n_);
  more_.emplace_back();
  return &more_.back();
}

void RequestSet::recv_pieces(char* p, size_t bytes, int src, MPI_Comm comm) {
  while (bytes > 0) {
    const size_t piece = std::min(bytes, max_message_bytes());
    note(MPI_Irecv(p, static_cast<int>(piece), MPI_BYTE, src, op_tag(), comm, next()));
    p += piece;
    bytes -= piece;
  }
}

void RequestSet::post_sends(const char* p, size_t bytes, int dst, MPI_Comm comm, Stats* stats) {
  while (bytes > 0) {
    const size_t piece = std::min(bytes, max_message_bytes());
    note(MPI_Isend(p, static_cast<int>(piece), MPI_BYTE, dst, op_tag(), comm, next()));
    if (stats) stats->count_message(dst, piece);
    p += piece;
    bytes -= piece;
  }
}

void RequestSet::send_meta(const void* buf, size_t bytes, int dst, MPI_Comm comm, Stats& stats) {
  stats.meta_bytes_sent += static_cast<long long>(bytes);
  post_sends(static_cast<const char*>(buf), bytes, dst, comm, nullptr);
}

void RequestSet::recv_typed(void* buf, MPI_Datatype type, int src, MPI_Comm comm) {
  note(MPI_Irecv(buf, 1, type, src, op_tag(), comm, next()));
}

void RequestSet::send_typed(const void* buf, MPI_Datatype type, size_t payload, int dst, MPI_Comm comm,
                          Stats& stats) {
  note(MPI_Isend(buf, 1, type, dst, op_tag(), comm, next()));
  stats.count_message(dst, payload);
  stats.bytes_sent += static_cast<long long>(payload);
}

void RequestSet::finish() {
  more_.clear();
  n_ = 0;
  result_ = err_;
  err_ = MPI_SUCCESS;
}

int RequestSet::wait_all() {
  const bool spilled = !more_.empty();
  const size_t n = spilled ? more_.size() : n_;
  if (n) note(MPI_Waitall(static_cast<int>(n), spilled ? more_.data() : inline_, MPI_STATUSES_IGNORE));
  finish();
  return result_;
}

bool RequestSet::test_all() {
  const bool spilled = !more_.empty();
  const size_t n = spilled ? more_.size() : n_;
  int done = 1;
  if (n) {
    const int rc = MPI_Testall(static_cast<int>(n), spilled ? more_.data() : inline_, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {  // an error completes the wait: the rest are waited out, the error kept
      note(rc);
      wait_all();
      return true;
    }
  }
  if (done) finish();
  return done != 0;
}

int exchange(const void* sbuf, size_t sbytes, int dst, void* rbuf, size_t rbytes, int src, MPI_Comm comm,
             Stats& stats) {
  const size_t limit = max_message_bytes();
  if (sbytes > 0 && rbytes > 0 && sbytes <= limit && rbytes <= limit) {  // two requests, no set around them
    stats.bytes_sent += static_cast<long long>(sbytes);
    stats.count_message(dst, sbytes);
    const int tag = op_tag();
    MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    const int posted = MPI_Irecv(rbuf, static_cast<int>(rbytes), MPI_BYTE, src, tag, comm, &q[0]);
    const int sent = MPI_Isend(sbuf, static_cast<int>(sbytes), MPI_BYTE, dst, tag, comm, &q[1]);
    const int waited = MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    return posted != MPI_SUCCESS ? posted : sent != MPI_SUCCESS ? sent : waited;
  }
  InlineRequests<2> r(2);
  r.recv(rbuf, rbytes, src, comm);
  r.send(sbuf, sbytes, dst, comm, stats);
  return r.wait_all();
}

Task<int> exchange_replace(void* buf, MPI_Datatype type, size_t bytes, int dst, int src, MPI_Comm comm,
                           Stats& stats) {
#ifdef A2A_SMPI
  const bool in_place = false;
#else
  const bool in_place = blocking_now();
#endif
  int rc = MPI_SUCCESS;
  if (in_place) {
    rc = MPI_Sendrecv_replace(buf, 1, type, dst, op_tag(), src, op_tag(), comm, MPI_STATUS_IGNORE);
  } else {  // the send must leave before the blocks are overwritten
    std::vector<char> packed(bytes);
    Requests r(2);
    r.note(MPI_Irecv(packed.data(), static_cast<int>(bytes), MPI_BYTE, src, op_tag(), comm, r.add()));
    r.note(MPI_Isend(buf, 1, type, dst, op_tag(), comm, r.add()));
    rc = co_await wait(r);
    int position = 0;
    if (rc == MPI_SUCCESS) rc = MPI_Unpack(packed.data(), static_cast<int>(bytes), &position, buf, 1, type, comm);
  }
  if (rc != MPI_SUCCESS) co_return rc;
  stats.count_message(dst, bytes);
  stats.bytes_sent += static_cast<long long>(bytes);
  ++stats.waits;
  co_return MPI_SUCCESS;
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

Task<int> allreduce_max(long long& v, MPI_Comm comm) {
  if (blocking_now()) co_return MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_MAX, comm);
  int P = 1, me = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &me);
  for (int d = 1; d < P; d *= 2) {
    long long got = 0;
    Requests r(2);
    r.note(MPI_Irecv(&got, 1, MPI_LONG_LONG, (me - d + P) % P, op_tag(), comm, r.add()));
    r.note(MPI_Isend(&v, 1, MPI_LONG_LONG, (me + d) % P, op_tag(), comm, r.add()));
    if (const int rc = co_await wait(r)) co_return rc;
    v = std::max(v, got);
  }
  co_return MPI_SUCCESS;
}

Task<int> alltoall_ll(const long long* send, long long* recv, int n, MPI_Comm comm,
                      const std::vector<schedule::Step>& bruck) {
  if (blocking_now()) co_return PMPI_Alltoall(send, n, MPI_LONG_LONG, recv, n, MPI_LONG_LONG, comm);
  int P = 1, me = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &me);
  // Bruck (TRA at radix 2): slot i starts as the block for me + i and ends
  // as the block from me - i, after ceil(log2 P) rounds; all P-1 messages
  // at once cost P-1 latencies where they share a link (SMPI: 1.5x the
  // blocking call for tuna-hier at P = 128).  Scratch: 3 P n long longs
  // for the call (the node's size table: a few KiB).
  const size_t block = static_cast<size_t>(n);
  std::vector<long long> slots(static_cast<size_t>(P) * block), out, in;
  for (int i = 0; i < P; ++i)
    std::copy_n(send + static_cast<size_t>((me + i) % P) * block, block, slots.begin() + static_cast<long>(i * block));
  for (const schedule::Step& step : bruck) {
    const size_t count = step.slots.size() * block;
    out.resize(count);
    in.resize(count);
    for (size_t k = 0; k < step.slots.size(); ++k)
      std::copy_n(slots.begin() + static_cast<long>(step.slots[k] * block), block, out.begin() + static_cast<long>(k * block));
    Requests r(2);
    r.note(MPI_Irecv(in.data(), static_cast<int>(count), MPI_LONG_LONG, (me - step.distance + P) % P, op_tag(), comm,
                     r.add()));
    r.note(MPI_Isend(out.data(), static_cast<int>(count), MPI_LONG_LONG, (me + step.distance) % P, op_tag(), comm,
                     r.add()));
    if (const int rc = co_await wait(r)) co_return rc;
    for (size_t k = 0; k < step.slots.size(); ++k)
      std::copy_n(in.begin() + static_cast<long>(k * block), block, slots.begin() + static_cast<long>(step.slots[k] * block));
  }
  for (int i = 0; i < P; ++i)
    std::copy_n(slots.begin() + static_cast<long>(i * block), block, recv + static_cast<size_t>((me - i + P) % P) * block);
  co_return MPI_SUCCESS;
}

Task<int> alltoall_blocks(const char* send, char* recv, size_t bytes, MPI_Comm comm) {
  OwnedType block;
  int rc = make_bytes_type(bytes, block.out());
  if (rc == MPI_SUCCESS) rc = block.commit();
  if (rc != MPI_SUCCESS) co_return rc;
  if (blocking_now()) co_return PMPI_Alltoall(send, 1, block.get(), recv, 1, block.get(), comm);
  int P = 1, me = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &me);
  std::memcpy(recv + me * bytes, send + me * bytes, bytes);
  Requests r(2 * static_cast<size_t>(P));
  for (int i = 1; i < P; ++i) {
    const int from = (me - i + P) % P, to = (me + i) % P;
    r.note(MPI_Irecv(recv + from * bytes, 1, block.get(), from, op_tag(), comm, r.add()));
    r.note(MPI_Isend(send + to * bytes, 1, block.get(), to, op_tag(), comm, r.add()));
  }
  co_return co_await wait(r);
}

}  // namespace a2a::detail
