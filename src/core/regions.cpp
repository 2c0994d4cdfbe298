#include "core/regions.hpp"

#include <algorithm>

namespace a2a::detail {

void add_regions(std::vector<Region>& out, const void* base, const long long* off, const long long* bytes, int P,
                 bool recv) {
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  for (int i = 0; i < P; ++i)
    if (bytes[i] > 0) {
      const std::uintptr_t lo = b + static_cast<std::uintptr_t>(off[i]);
      out.push_back({lo, lo + static_cast<std::uintptr_t>(bytes[i]), recv, i});
    }
}

bool regions_collide(std::vector<Region>& regions, std::string& what) {
  const auto by_start = [](const Region& a, const Region& b) { return a.lo < b.lo; };
  if (!std::is_sorted(regions.begin(), regions.end(), by_start)) std::sort(regions.begin(), regions.end(), by_start);
  // Sweep in address order, remembering the receive and the send region
  // that reach furthest so far: a region starting before either ends overlaps it.
  const Region* far[2] = {nullptr, nullptr};  // [0] send, [1] recv
  for (const Region& r : regions) {
    const Region* hit = nullptr;
    if (far[1] && r.lo < far[1]->hi) hit = far[1];                // anything against a receive block
    else if (r.recv && far[0] && r.lo < far[0]->hi) hit = far[0];  // a receive block against a send block
    if (hit) {
      const Region& recv = hit->recv ? *hit : r;
      const Region& other = hit->recv ? r : *hit;
      what = other.recv ? "receive blocks " + std::to_string(std::min(recv.block, other.block)) + " and " +
                              std::to_string(std::max(recv.block, other.block))
                        : "receive block " + std::to_string(recv.block) + " and send block " + std::to_string(other.block);
      return true;
    }
    const Region*& f = far[r.recv ? 1 : 0];
    if (!f || r.hi > f->hi) f = &r;
  }
  return false;
}

}  // namespace a2a::detail
