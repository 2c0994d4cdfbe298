// A set of handles (communicators as integers) in one flat array: open
// addressing, linear probing, deletion by backward shift, grown at half
// full.  The shim's first-call test asks it on memory the application's
// work between calls has evicted, where every cache line read costs a miss:
// a lookup reads one line or two, and an insert allocates nothing until the
// table grows (a node-based set allocates at every insert and frees at
// every erase).  Not thread-safe: the caller locks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace a2a::detail {

class HandleSet {
 public:
  bool contains(uint64_t h) const {
    if (h == kEmpty) return has_empty_;
    for (size_t i = home(h);; i = next(i)) {
      if (slots_[i] == h) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }
  // False where h was there already.
  bool insert(uint64_t h) {
    if (h == kEmpty) {
      const bool fresh = !has_empty_;
      has_empty_ = true;
      return fresh;
    }
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t i = home(h);
    for (; slots_[i] != kEmpty; i = next(i))
      if (slots_[i] == h) return false;
    slots_[i] = h;
    ++used_;
    return true;
  }
  // False where h was not there.
  bool erase(uint64_t h) {
    if (h == kEmpty) {
      const bool was = has_empty_;
      has_empty_ = false;
      return was;
    }
    size_t i = home(h);
    for (; slots_[i] != h; i = next(i))
      if (slots_[i] == kEmpty) return false;
    // Backward shift: each later entry of the run moves into the hole when
    // its home does not lie cyclically in (hole, its slot].
    for (size_t j = next(i); slots_[j] != kEmpty; j = next(j)) {
      const size_t k = home(slots_[j]);
      if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = kEmpty;
    --used_;
    return true;
  }
  size_t size() const { return used_ + (has_empty_ ? 1 : 0); }

 private:
  static constexpr uint64_t kEmpty = 0;
  size_t home(uint64_t h) const { return static_cast<size_t>((h * 0x9e3779b97f4a7c15ull) >> 32) & (slots_.size() - 1); }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<uint64_t> old(2 * slots_.size(), kEmpty);
    old.swap(slots_);
    used_ = 0;
    for (uint64_t h : old)
      if (h != kEmpty) insert(h);
  }
  std::vector<uint64_t> slots_ = std::vector<uint64_t>(64, kEmpty);  // a power of two
  size_t used_ = 0;
  bool has_empty_ = false;  // the one value a slot cannot hold
};

}  // namespace a2a::detail
