#include "nonuniform/two_phase.hpp"

#include <algorithm>

namespace a2a::detail {

using schedule::mod;

namespace {
size_t widest(const std::vector<schedule::Step>& steps) {
  size_t w = 0;
  for (const auto& s : steps) w = std::max(w, s.slots.size());
  return w;
}
}  // namespace

long long two_phase_scratch(const std::vector<schedule::Step>& steps, long long capacity, long long M) {
  const long long W = static_cast<long long>(widest(steps));
  return capacity * M + 2 * W * M + 2 * W * static_cast<long long>(sizeof(long long));
}

Task<int> run_two_phase(const VarCall& c, const std::vector<schedule::Step>& steps, long long capacity,
                  const std::function<long long(int)>& index) {
  const int P = c.P(), p = c.rank();
  if (!c.meta_only) c.copy_self();
  long long M = 0;
  if (const int rc = co_await c.max_block(M)) co_return rc;
  if (M == 0 || steps.empty()) co_return MPI_SUCCESS;  // every block is empty, on every rank
  const size_t W = widest(steps), m = static_cast<size_t>(M);  // W: most blocks in one round
  Scratch& scratch = c.work();
  Scratch::Frame frame(scratch);
  Scratch::Region store, meta_region, out_region, in_region;
  if (!frame.take({&store, &meta_region, &out_region, &in_region})) co_return MPI_ERR_INTERN;
  char* T = c.meta_only ? nullptr : scratch.get(store, static_cast<size_t>(capacity) * m, c.stats);
  auto* sizes = reinterpret_cast<long long*>(
      scratch.get(meta_region, 2 * W * sizeof(long long), c.stats, Scratch::Holds::sizes));
  long long* sizes_out = sizes;
  long long* sizes_in = sizes + W;

  const auto hops = schedule::remaining_hops(P, steps);
  std::vector<long long> held(P, -1);  // bytes of slot i waiting in T; -1: still in the send buffer
  auto stored = [&](int i) { return T + static_cast<size_t>(index(i)) * m; };
  int err = MPI_SUCCESS;
  for (size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    const size_t n = s.slots.size();
    const int dst = mod(static_cast<long long>(p) - s.distance, P), src = mod(static_cast<long long>(p) + s.distance, P);
    for (size_t j = 0; j < n; ++j) {
      const int i = s.slots[j];
      sizes_out[j] = held[i] >= 0 ? held[i] : c.sbytes[mod(static_cast<long long>(p) - i, P)];
    }
    if (!c.plan || !c.plan->take(sizes_in, n)) {  // a plan's start replays what its init recorded
      Requests meta(2);
      meta.recv(sizes_in, n * sizeof(long long), src, c.comm());
      meta.send_meta(sizes_out, n * sizeof(long long), dst, c.comm(), c.stats);
      if (const int rc = co_await wait(meta)) co_return rc;
      if (c.plan) c.plan->record(sizes_in, n);
    }
    if (c.meta_only) {  // the sizes only: what each slot holds after the round
      for (size_t j = 0; j < n; ++j)
        if (hops[k][j] != 1) held[s.slots[j]] = sizes_in[j];
      continue;
    }

    size_t sent = 0, arriving = 0;
    for (size_t j = 0; j < n; ++j) {
      sent += static_cast<size_t>(sizes_out[j]);
      arriving += static_cast<size_t>(sizes_in[j]);
    }
    // Sized to this round's real bytes, known now from the metadata.
    char* out = scratch.get(out_region, sent, c.stats);
    char* in = scratch.get(in_region, arriving, c.stats);
    sent = 0;
    for (size_t j = 0; j < n; ++j) {
      const int i = s.slots[j];
      const char* from = held[i] >= 0 ? stored(i) : c.send_block(mod(static_cast<long long>(p) - i, P));
      copy_bytes(out + sent, from, static_cast<size_t>(sizes_out[j]));
      sent += static_cast<size_t>(sizes_out[j]);
    }
    Requests data(4);
    data.recv(in, arriving, src, c.comm());
    data.send(out, sent, dst, c.comm(), c.stats);
    if (const int rc = co_await wait(data)) co_return rc;

    size_t off = 0;
    for (size_t j = 0; j < n; ++j) {
      const int i = s.slots[j];
      const size_t got = static_cast<size_t>(sizes_in[j]);
      if (hops[k][j] == 1) {  // last hop: straight into the receive buffer
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
    c.count_round(n);
  }
  co_return err;
}

}  // namespace a2a::detail
