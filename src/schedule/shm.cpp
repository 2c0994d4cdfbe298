#include "schedule/shm.hpp"

namespace a2a::detail::schedule {

namespace {
size_t lines(size_t bytes) { return (bytes + kShmLine - 1) / kShmLine * kShmLine; }
}  // namespace

ShmLayout shm_layout(int P, size_t capacity) {
  ShmLayout l;
  // The words peers poll, and the table they read next, side by side.
  l.ready = 0;
  l.largest = 8;  // a word per half
  l.pid = 24;
  l.self = 32;
  l.done = kShmLine;        // a line of its own: stored every exchange, polled only by senders of direct blocks
  l.direct = 2 * kShmLine;  // three words per half
  l.table = 3 * kShmLine;
  l.table_half = 2 * sizeof(long long) * static_cast<size_t>(P);
  l.data = lines(l.table + 2 * l.table_half);
  l.data_half = lines(capacity);
  l.total = l.data + 2 * l.data_half;
  return l;
}

PageSpan whole_pages(uintptr_t at, size_t len, size_t page) {
  const uintptr_t first = (at + page - 1) / page * page, end = (at + len) / page * page;
  return end > first ? PageSpan{first, static_cast<size_t>(end - first)} : PageSpan{};
}

size_t shm_half_limit(size_t scratch_limit) { return scratch_limit < kShmHalf ? scratch_limit : kShmHalf; }

size_t shm_piece_len(size_t block, int P, size_t half) {
  const size_t ranks = static_cast<size_t>(P);
  if (block <= half / ranks) return block;
  return half / ranks / kShmLine * kShmLine;
}

size_t shm_slot(size_t largest, size_t share) {
  size_t slot = kShmLine;
  while (slot < largest && slot < share) slot *= 2;
  return slot < share ? slot : share;
}

size_t shm_exchanges(size_t largest, size_t first, size_t then) {
  if (largest <= first || then == 0) return 1;
  return 1 + (largest - first + then - 1) / then;
}

std::string name_without_intra_shm(std::string name) {
  const std::string knob = "intra=shm";
  const size_t at = name.find(knob);
  if (at == std::string::npos || at == 0) return name;
  const size_t end = at + knob.size();
  if (name[at - 1] == ',') return name.erase(at - 1, knob.size() + 1);        // ",intra=shm"
  if (end < name.size() && name[end] == ',') return name.erase(at, knob.size() + 1);  // ":intra=shm,"
  return name.erase(at - 1, knob.size() + 1);                                 // ":intra=shm" ending the name
}

}  // namespace a2a::detail::schedule
