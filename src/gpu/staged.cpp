#include "gpu/staged.hpp"

#include <cstring>
#include <deque>

namespace a2a::detail::gpu {

int HostCopier::to_host(char* host, const char* device, size_t bytes, int) {
  std::memcpy(host, device, bytes);
  return MPI_SUCCESS;
}
int HostCopier::to_device(char* device, const char* host, size_t bytes, int) {
  std::memcpy(device, host, bytes);
  return MPI_SUCCESS;
}
int HostCopier::ready(int, bool& done) {
  done = true;
  return MPI_SUCCESS;
}

namespace {

// A slot's life: send slots go idle -> copying (D2H) -> in flight (Isend) ->
// idle; receive slots idle -> in flight (Irecv) -> copying (H2D) -> idle.
enum class Slot { idle, copying, in_flight };

}  // namespace

int run_staged(MPI_Comm comm, int tag, const StagedSide& send, const StagedSide& recv, char* staging,
               long long chunk, int slots, StageCopier& copier, Stats& stats) {
  const auto& sc = *send.chunks;
  const auto& rc = *recv.chunks;
  std::vector<Slot> state(2 * slots, Slot::idle);
  std::vector<size_t> item(2 * slots, 0);  // the chunk a busy slot holds
  std::vector<MPI_Request> req(2 * slots, MPI_REQUEST_NULL);
  std::vector<int> finished(2 * slots);
  size_t next_send = 0, next_recv = 0, sends_done = 0, recvs_done = 0;
  // Send slots whose copy is queued, in chunk order: a pair's chunks must
  // leave in order (the receiver posts them in order), however the copies'
  // completions are observed.
  std::deque<int> copying;
  const auto stage = [&](int slot) { return staging + static_cast<size_t>(slot) * static_cast<size_t>(chunk); };
  if (!sc.empty()) ++stats.rounds;
  while (sends_done < sc.size() || recvs_done < rc.size()) {
    for (int s = 0; s < 2 * slots; ++s) {
      const bool sending = s < slots;
      if (state[s] == Slot::idle) {
        if (sending && next_send < sc.size()) {
          const auto& c = sc[next_send];
          if (const int e = copier.to_host(stage(s), send.base + send.off[c.peer] + c.offset, c.bytes, s)) return e;
          item[s] = next_send++;
          state[s] = Slot::copying;
          copying.push_back(s);
        } else if (!sending && next_recv < rc.size()) {
          const auto& c = rc[next_recv];
          if (const int e = MPI_Irecv(stage(s), static_cast<int>(c.bytes), MPI_BYTE, c.peer, tag, comm, &req[s])) return e;
          item[s] = next_recv++;
          state[s] = Slot::in_flight;
        }
      }
      if (!sending && state[s] == Slot::copying) {
        bool done = false;
        if (const int e = copier.ready(s, done)) return e;
        if (done) {
          ++recvs_done;
          state[s] = Slot::idle;
        }
      }
    }
    while (!copying.empty()) {
      const int s = copying.front();
      bool done = false;
      if (const int e = copier.ready(s, done)) return e;
      if (!done) break;
      copying.pop_front();
      const auto& c = sc[item[s]];
      if (const int e = MPI_Isend(stage(s), static_cast<int>(c.bytes), MPI_BYTE, c.peer, tag, comm, &req[s])) return e;
      stats.count_message(c.peer, static_cast<size_t>(c.bytes));
      state[s] = Slot::in_flight;
    }
    int n = 0;
    if (const int e = MPI_Testsome(2 * slots, req.data(), &n, finished.data(), MPI_STATUSES_IGNORE)) return e;
    for (int k = 0; k < n && n != MPI_UNDEFINED; ++k) {
      const int s = finished[k];
      if (s < slots) {
        ++sends_done;
        state[s] = Slot::idle;
      } else {
        const auto& c = rc[item[s]];
        if (const int e = copier.to_device(recv.base + recv.off[c.peer] + c.offset, stage(s), c.bytes, s)) return e;
        state[s] = Slot::copying;
      }
    }
  }
  return MPI_SUCCESS;
}

}  // namespace a2a::detail::gpu
