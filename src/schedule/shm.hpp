// The shared-memory exchange's arithmetic (src/uniform/shm.cpp), no MPI:
// where each word of a rank's part of the node segment lies, how large a
// part is made, which piece of every block one exchange carries, and where
// a piece sits in the part.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace a2a::detail::schedule {

constexpr size_t kShmLine = 64;  // data starts on a cache line of its own
// A half's data bytes at most; larger calls go through in pieces.  Measured
// (docs/results.md): 1 MiB halves took 0.58-0.67 of MPI_Alltoall at 4-8 MiB
// blocks where whole-call halves took 1.0-1.2 (P = 2, 4), pieces staying in
// cache between the copy in and the copy out.
constexpr size_t kShmHalf = size_t{1} << 20;

// One rank's part, written by that rank only: `ready` (the exchange its
// data is published for), then two halves, exchange e using half e % 2 (so
// a rank writes the next exchange while peers still read the last):
// `largest` (its largest outgoing block, alltoallv), a table of (offset, bytes) per destination, and
// `capacity` data bytes.  The polled words and the tables lie together, a
// peer's poll bringing them in a cache line or two; data from a multiple of
// kShmLine.
struct ShmLayout {
  size_t ready = 0, largest = 0, table = 0, table_half = 0, data = 0, data_half = 0, total = 0;
  size_t largest_at(unsigned long long e) const { return largest + 8 * (e % 2); }
  size_t table_at(unsigned long long e) const { return table + table_half * (e % 2); }
  size_t data_at(unsigned long long e) const { return data + data_half * (e % 2); }
};
ShmLayout shm_layout(int P, size_t capacity);

// Data bytes a half is made with for `need` bytes: need rounded up to a
// power of two, at least 4 KiB, so that calls growing step by step re-make
// the segment O(log) times; 0 when even that would pass `limit`.
size_t shm_capacity(size_t need, size_t limit);

// The data bytes of a half: kShmHalf, or less under A2A_SCRATCH_LIMIT
// (a part holds two halves).
size_t shm_half_limit(size_t scratch_limit);

// Bytes [off, off + len) of every block: what one exchange carries.
struct ShmPiece {
  size_t off = 0, len = 0;
  size_t of(size_t block) const { return block <= off ? 0 : block - off < len ? block - off : len; }
};

// The piece length for blocks of up to `block` bytes in halves of `half`:
// whole blocks where P of them fit, else half / P on whole cache lines; 0
// where not even one line per rank fits (shm cannot run).
size_t shm_piece_len(size_t block, int P, size_t half);

// Exchanges for a largest block of `largest` bytes when the first carries
// `first` bytes of every block and each later one `then` (at least one).
size_t shm_exchanges(size_t largest, size_t first, size_t then);

// Where rank `me` writes piece k of its outgoing blocks (alltoallv):
// destination d's at out_off[d], in destination order, the own block left
// out; the total, what the piece needs of the half.
size_t shm_pack_offsets(const long long* sbytes, int P, int me, ShmPiece k, std::vector<size_t>& out_off);

// A node-aware algorithm's stats name with its "intra=shm" knob left out
// (the phase ran point to point): "tra2:radix-intra=2,intra=shm" ->
// "tra2:radix-intra=2", "clustered:intra=shm" -> "clustered".
std::string name_without_intra_shm(std::string name);

}  // namespace a2a::detail::schedule
