#include "alltoall/store_forward.hpp"

#include <algorithm>

namespace a2a::detail {

using schedule::wrap;

Task<Result> run_zero_rotation(const UniformCall& c, const std::vector<schedule::Step>& steps, int dir, int ports) {
  const int P = c.P(), p = c.rank();
  c.copy_self();
  if (steps.empty()) co_return MPI_SUCCESS;
  // Scratch only where a step is packed or a batch holds several
  // exchanges (a lone block per exchange, as at P = 2, needs none).
  Scratch& work = c.work();
  Scratch::Frame frame(work);
  Scratch::Region out_region{}, in_region{}, requests_region{};
  const size_t store = schedule::batch_requests(steps, ports);
  // A lone block still in the send buffer goes from there straight into
  // its final place; the rest are packed, sent, landed and placed.
  auto in_place = [](const schedule::Step& s) { return s.slots.size() == 1 && s.slots[0] % s.span == 0; };
  const bool staged = store || !std::all_of(steps.begin(), steps.end(), in_place);
  if (staged && !frame.take({&out_region, &in_region, &requests_region})) co_return MPI_ERR_INTERN;
  // A batch's requests, private under SMPI (Holds::sizes).
  auto* requests = store ? reinterpret_cast<MPI_Request*>(work.get(requests_region, store * sizeof(MPI_Request),
                                                                    c.stats, Scratch::Holds::sizes))
                         : nullptr;
  auto home = [&](int i) { return c.recv_block(wrap(p - static_cast<long long>(dir) * i, P)); };
  // Digits run in ascending order, so slot i has reached its home (and is
  // forwarded from there) once a lower digit of it was non-zero.
  auto from = [&](const schedule::Step& s, int i) {
    return i % s.span ? home(i) : c.send_block(wrap(p + static_cast<long long>(dir) * i, P));
  };
  auto dst_of = [&](const schedule::Step& s) { return wrap(p + static_cast<long long>(dir) * s.distance, P); };
  auto src_of = [&](const schedule::Step& s) { return wrap(p - static_cast<long long>(dir) * s.distance, P); };
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = schedule::batch_end(steps, first, ports);
    size_t packed = 0;
    for (size_t k = first; k < last; ++k)
      if (!in_place(steps[k])) packed += steps[k].slots.size();
    char* out = packed ? work.get(out_region, packed * c.bs, c.stats) : nullptr;
    char* in = packed ? work.get(in_region, packed * c.bs, c.stats) : nullptr;
    // Each exchange's message: from the buffers, or its part of out and in.
    size_t off = 0;
    auto place = [&](const schedule::Step& s, const char*& send, char*& recv) {
      if (in_place(s)) {
        send = from(s, s.slots[0]), recv = home(s.slots[0]);
        return;
      }
      send = out + off, recv = in + off;
      for (int i : s.slots) std::memcpy(out + off, from(s, i), c.bs), off += c.bs;
    };
    if (last - first == 1) {  // one exchange: the small awaiter
      const schedule::Step& s = steps[first];
      const char* send;
      char* recv;
      place(s, send, recv);
      const size_t bytes = s.slots.size() * c.bs;
      if (const int rc = co_await exchanged(send, bytes, dst_of(s), recv, bytes, src_of(s), c.comm(), c.stats))
        co_return rc;
    } else {
      StoredRequests reqs(requests, store);
      for (size_t k = first; k < last; ++k) {
        const char* send;
        char* recv;
        place(steps[k], send, recv);  // each exchange's receive before its send
        reqs.recv(recv, steps[k].slots.size() * c.bs, src_of(steps[k]), c.comm());
        reqs.send(send, steps[k].slots.size() * c.bs, dst_of(steps[k]), c.comm(), c.stats);
      }
      if (const int rc = co_await wait(reqs, c.stats)) co_return rc;
    }
    off = 0;
    for (size_t k = first; k < last; ++k) {
      const schedule::Step& s = steps[k];
      if (!in_place(s))
        for (int i : s.slots) std::memcpy(home(i), in + off, c.bs), off += c.bs;
      c.count_round(s.slots.size());
    }
  }
  co_return MPI_SUCCESS;
}

}  // namespace a2a::detail
