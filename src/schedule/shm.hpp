// The shared-memory exchange's arithmetic (src/both/shm.cpp), no MPI:
// where each word of a rank's part of the node segment lies, how large a
// part is made, which piece of every block one exchange carries, and where
// a piece sits in the part.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace a2a::detail::schedule {

constexpr size_t kShmLine = 64;  // data starts on a cache line of its own
// A half's data bytes at most; larger calls go through in pieces.  Measured
// (docs/results.md): 1 MiB halves took 0.58-0.67 of MPI_Alltoall at 4-8 MiB
// blocks where whole-call halves took 1.0-1.2 (P = 2, 4), pieces staying in
// cache between the copy in and the copy out.
constexpr size_t kShmHalf = size_t{1} << 20;

// One rank's part, written by that rank only.  Its first line: `ready` (the
// exchange its data is published for), `largest` (per half: its largest
// outgoing block through the segment, alltoallv), `pid` and `self` (the
// part's address in its owner's process, for CMA; written once).  Then
// `done` on a line of its own (the last exchange whose direct blocks it
// has read; stored every exchange, so it must not share the polled line),
// alltoall's direct blocks per half (`base`, `stride`, `bytes` of its send
// blocks), alltoallv's direct blocks per half (address, bytes per
// destination), and two halves of `capacity` data bytes, exchange e using
// half e % 2 (so a rank writes the next exchange while peers still read
// the last), each with a slot of k.len bytes per destination (the receiver
// finds its piece with nothing to read but the polled line).
struct ShmLayout {
  size_t ready = 0, done = 0, pid = 0, self = 0, largest = 0, direct = 0, table = 0, table_half = 0, data = 0,
         data_half = 0, total = 0;
  size_t largest_at(unsigned long long e) const { return largest + 8 * (e % 2); }
  // Alltoall's direct blocks of exchange e: base address, stride, block bytes.
  size_t direct_at(unsigned long long e) const { return direct + 24 * (e % 2); }
  size_t table_at(unsigned long long e) const { return table + table_half * (e % 2); }
  size_t data_at(unsigned long long e) const { return data + data_half * (e % 2); }
};
ShmLayout shm_layout(int P, size_t capacity);

// The data bytes of a half: kShmHalf, or less under A2A_SCRATCH_LIMIT
// (a part holds two halves).
size_t shm_half_limit(size_t scratch_limit);

// The whole pages of `page` bytes inside [at, at + len): the first page's
// address and the bytes they span (0 where none is whole), what madvise
// takes.
struct PageSpan {
  uintptr_t first = 0;
  size_t bytes = 0;
};
PageSpan whole_pages(uintptr_t at, size_t len, size_t page);

// Bytes [off, off + len) of every block: what one exchange carries.
struct ShmPiece {
  size_t off = 0, len = 0;
  size_t of(size_t block) const { return block <= off ? 0 : block - off < len ? block - off : len; }
};

// The piece length for blocks of up to `block` bytes in halves of `half`:
// whole blocks where P of them fit, else half / P on whole cache lines; 0
// where not even one line per rank fits (shm cannot run).
size_t shm_piece_len(size_t block, int P, size_t half);

// Alltoallv's slot per destination in a sender's first exchange: its
// largest block through the segment rounded up to a power of two (a line
// at least), at most `share` (the half's share per rank).  The sender
// publishes that largest block on the line its peers poll, so a receiver
// finds its piece at me * slot with nothing more to read, and small calls
// stay on the first lines of a half, not a share apart.
size_t shm_slot(size_t largest, size_t share);

// Exchanges for a largest block of `largest` bytes when the first carries
// `first` bytes of every block and each later one `then` (at least one).
size_t shm_exchanges(size_t largest, size_t first, size_t then);

// Does a block of `bytes` skip the segment when blocks from `direct_from`
// bytes do (sender and receiver decide alike from the block's size)?
inline bool shm_direct(size_t bytes, long long direct_from) {
  return bytes > 0 && direct_from >= 0 && static_cast<unsigned long long>(bytes) >= static_cast<unsigned long long>(direct_from);
}

// A node-aware algorithm's stats name with its "intra=shm" knob left out
// (the phase ran point to point): "tra2:radix-intra=2,intra=shm" ->
// "tra2:radix-intra=2", "clustered:intra=shm" -> "clustered".
std::string name_without_intra_shm(std::string name);

}  // namespace a2a::detail::schedule
