// The shared-memory exchange's arithmetic (src/uniform/shm.cpp), no MPI:
// where each word of a rank's part of the node segment lies, how large a
// part is made, and where a block sits in it.
#pragma once
#include <cstddef>
#include <vector>

namespace a2a::detail::schedule {

constexpr size_t kShmLine = 64;  // data starts on a cache line of its own

// One rank's part, written by that rank only: `ready` (the exchange its
// data is published for), then two halves, exchange e using half e % 2 (so
// a rank writes the next exchange while peers still read the last): `need`
// (its outgoing bytes), a table of (offset, bytes) per destination, and
// `capacity` data bytes.  The polled words and the tables lie together, a
// peer's poll bringing them in a cache line or two; data from a multiple of
// kShmLine.
struct ShmLayout {
  size_t ready = 0, need = 0, table = 0, table_half = 0, data = 0, data_half = 0, total = 0;
  size_t need_at(unsigned long long e) const { return need + 8 * (e % 2); }
  size_t table_at(unsigned long long e) const { return table + table_half * (e % 2); }
  size_t data_at(unsigned long long e) const { return data + data_half * (e % 2); }
};
ShmLayout shm_layout(int P, size_t capacity);

// Data bytes a part is made with for `need` bytes: need rounded up to a
// power of two, at least 4 KiB, so that calls growing step by step re-make
// the segment O(log) times; 0 when even that would pass `limit`.
size_t shm_capacity(size_t need, size_t limit);

// Where rank `me` writes its outgoing blocks (alltoallv): destination d's
// block at out_off[d], in destination order, the own block left out; the
// total, the part's need.
size_t shm_pack_offsets(const long long* sbytes, int P, int me, std::vector<size_t>& out_off);

}  // namespace a2a::detail::schedule
