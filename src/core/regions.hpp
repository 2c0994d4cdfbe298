// Aliasing checks of a call's buffers, at block granularity: the bytes a
// block of `count` elements covers, and whether any receive block overlaps
// another receive block or any send block.  Pure (no MPI calls); used for
// gap-free types, where a block's range is exactly its bytes (strided types
// may interleave legally within overlapping ranges, so they are not checked).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace a2a::detail {

struct Region {
  std::uintptr_t lo, hi;  // [lo, hi), absolute addresses
  bool recv;
  int block;
};

// The regions of P blocks at base + off[i], bytes[i] long (empty ones left out).
void add_regions(std::vector<Region>& out, const void* base, const long long* off, const long long* bytes, int P,
                 bool recv);

// True when a receive region shares a byte with another receive region or
// with a send region; `what` then names the pair ("receive blocks 2 and 5",
// "receive block 1 and send block 3").  Send regions may overlap each other.
// Sorts `regions` when they are not already in address order.
bool regions_collide(std::vector<Region>& regions, std::string& what);

}  // namespace a2a::detail
