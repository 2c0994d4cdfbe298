#include "alltoallv/two_phase.hpp"

#include <algorithm>

namespace a2a::detail {

using schedule::mod;

long long two_phase_scratch(const std::vector<schedule::Step>& steps, long long capacity, long long M, int ports) {
  const long long W = static_cast<long long>(schedule::widest_batch(steps, ports));
  const long long store = static_cast<long long>(schedule::batch_requests(steps, ports));
  return capacity * M + 2 * W * M + 2 * W * static_cast<long long>(sizeof(long long)) +
         store * static_cast<long long>(sizeof(MPI_Request));
}

Task<int> run_two_phase(const VarCall& c, const std::vector<schedule::Step>& steps, long long capacity,
                        const std::function<long long(int)>& index, int ports) {
  const int P = c.P(), p = c.rank();
  if (!c.meta_only) c.copy_self();
  long long M = 0;
  if (const int rc = co_await c.max_block(M)) co_return rc;
  if (M == 0 || steps.empty()) co_return MPI_SUCCESS;  // every block is empty, on every rank
  const size_t m = static_cast<size_t>(M);
  Scratch& scratch = c.work();
  Scratch::Frame frame(scratch);
  Scratch::Region store, meta_region, out_region, in_region, book_region;
  if (!frame.take({&store, &meta_region, &out_region, &in_region, &book_region})) co_return MPI_ERR_INTERN;
  char* T = c.meta_only ? nullptr : scratch.get(store, static_cast<size_t>(capacity) * m, c.stats);
  const size_t book = schedule::batch_requests(steps, ports);
  auto* requests = book ? reinterpret_cast<MPI_Request*>(scratch.get(book_region, book * sizeof(MPI_Request), c.stats,
                                                                     Scratch::Holds::sizes))
                        : nullptr;

  const auto hops = schedule::remaining_hops(P, steps);
  std::vector<long long> held(P, -1);  // bytes of slot i waiting in T; -1: still in the send buffer
  auto stored = [&](int i) { return T + static_cast<size_t>(index(i)) * m; };
  auto dst_of = [&](const schedule::Step& s) { return mod(static_cast<long long>(p) - s.distance, P); };
  auto src_of = [&](const schedule::Step& s) { return mod(static_cast<long long>(p) + s.distance, P); };
  int err = MPI_SUCCESS;
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = schedule::batch_end(steps, first, ports);
    size_t n = 0;  // slots of the batch, round after round
    for (size_t k = first; k < last; ++k) n += steps[k].slots.size();
    auto* sizes = reinterpret_cast<long long*>(
        scratch.get(meta_region, 2 * n * sizeof(long long), c.stats, Scratch::Holds::sizes));
    long long* sizes_out = sizes;
    long long* sizes_in = sizes + n;
    for (size_t k = first, j = 0; k < last; ++k)
      for (int i : steps[k].slots) sizes_out[j++] = held[i] >= 0 ? held[i] : c.sbytes[mod(static_cast<long long>(p) - i, P)];
    if (!c.plan || !c.plan->take(sizes_in, n)) {  // a plan's start replays what its init recorded
      InlineRequests<2> one(2);
      StoredRequests many(requests, book);
      RequestSet& meta = last - first == 1 ? static_cast<RequestSet&>(one) : many;
      for (size_t k = first, j = 0; k < last; j += steps[k++].slots.size()) {
        const size_t bytes = steps[k].slots.size() * sizeof(long long);
        meta.recv(sizes_in + j, bytes, src_of(steps[k]), c.comm());
        meta.send_meta(sizes_out + j, bytes, dst_of(steps[k]), c.comm(), c.stats);
      }
      if (const int rc = co_await wait(meta, c.stats)) co_return rc;
      if (c.plan) c.plan->record(sizes_in, n);
    }
    if (c.meta_only) {  // the sizes only: what each slot holds after the batch
      for (size_t k = first, j = 0; k < last; ++k)
        for (size_t h = 0; h < steps[k].slots.size(); ++h, ++j)
          if (hops[k][h] != 1) held[steps[k].slots[h]] = sizes_in[j];
      continue;
    }

    size_t sent = 0, arriving = 0;
    for (size_t j = 0; j < n; ++j) {
      sent += static_cast<size_t>(sizes_out[j]);
      arriving += static_cast<size_t>(sizes_in[j]);
    }
    // Sized to this batch's real bytes, known now from the metadata.
    char* out = scratch.get(out_region, sent, c.stats);
    char* in = scratch.get(in_region, arriving, c.stats);
    {
      InlineRequests<4> one(4);
      StoredRequests many(requests, book);
      RequestSet& data = last - first == 1 ? static_cast<RequestSet&>(one) : many;
      // Round by round, its receive posted before its send.
      for (size_t k = first, j = 0, in_off = 0, off = 0; k < last; ++k) {
        const size_t begin = off;
        size_t arriving_k = 0;
        for (int i : steps[k].slots) {
          const size_t bytes = static_cast<size_t>(sizes_out[j]);
          arriving_k += static_cast<size_t>(sizes_in[j++]);
          copy_bytes(out + off, held[i] >= 0 ? stored(i) : c.send_block(mod(static_cast<long long>(p) - i, P)), bytes);
          off += bytes;
        }
        data.recv(in + in_off, arriving_k, src_of(steps[k]), c.comm());
        data.send(out + begin, off - begin, dst_of(steps[k]), c.comm(), c.stats);
        in_off += arriving_k;
      }
      if (const int rc = co_await wait(data, c.stats)) co_return rc;
    }

    size_t off = 0;
    for (size_t k = first, j = 0; k < last; ++k) {
      const auto& s = steps[k];
      for (size_t h = 0; h < s.slots.size(); ++h, ++j) {
        const int i = s.slots[h];
        const size_t got = static_cast<size_t>(sizes_in[j]);
        if (hops[k][h] == 1) {  // last hop: straight into the receive buffer
          const int from = mod(static_cast<long long>(p) + i, P);
          if (got != c.recv_bytes(from) && err == MPI_SUCCESS) err = MPI_ERR_TRUNCATE;
          copy_bytes(c.recv_block(from), in + off, std::min(got, c.recv_bytes(from)));
        } else {
          if (index(i) < 0 || index(i) >= capacity) co_return MPI_ERR_INTERN;  // a store map that overflows T
          copy_bytes(stored(i), in + off, got);
          held[i] = static_cast<long long>(got);
        }
        off += got;
      }
      c.count_round(s.slots.size());
    }
  }
  co_return err;
}

}  // namespace a2a::detail
