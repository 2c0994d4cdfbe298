#include "gpu/ipc_cache.hpp"

#include <algorithm>

namespace a2a::detail::gpu {

namespace {
bool overlap(const IpcBuffer& a, const IpcBuffer& b) { return a.base < b.base + b.size && b.base < a.base + a.size; }
}  // namespace

size_t IpcCache::mappings() const {
  return static_cast<size_t>(std::count_if(maps_.begin(), maps_.end(), [](const Mapping& m) { return m.users > 0; }));
}

void IpcCache::drop_entry(size_t e) {
  const size_t m = entries_[e].mapping;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(e));
  if (--maps_[m].users == 0) {
    driver_.close(maps_[m].ptr);
    maps_[m].ptr = nullptr;
  }
}

void IpcCache::close_mapping(size_t m) {
  for (size_t e = entries_.size(); e-- > 0;)
    if (entries_[e].mapping == m) drop_entry(e);
}

void IpcCache::close_all() {
  while (!entries_.empty()) drop_entry(entries_.size() - 1);
}

// The new buffer inside a block this process already maps: every mapping
// of the peer that holds it at the distance an entry on it implies.  Only
// one such mapping can be the block's (the peer's live buffers do not
// overlap), so the buffer shares it; with more, none is trusted.
bool IpcCache::share(int peer, const IpcBuffer& b, char*& ptr, std::vector<size_t>& covering) {
  covering.clear();
  char* at = nullptr;
  for (const Entry& e : entries_) {
    if (e.peer != peer || std::find(covering.begin(), covering.end(), e.mapping) != covering.end()) continue;
    uintptr_t base = 0;
    size_t size = 0;
    if (!driver_.mapped_range(maps_[e.mapping].ptr, base, size)) continue;
    const uintptr_t q = reinterpret_cast<uintptr_t>(e.ptr) + static_cast<uintptr_t>(b.base - e.buffer.base);
    if (q >= base && q - base + b.size <= size) {
      covering.push_back(e.mapping);
      at = reinterpret_cast<char*>(q);
    }
  }
  if (covering.size() != 1) return false;
  ++maps_[covering[0]].users;
  entries_.push_back({peer, b, at, covering[0], clock_});
  ptr = at;
  return true;
}

bool IpcCache::open(int peer, const IpcBuffer& b, char*& ptr) {
  ++clock_;
  for (Entry& e : entries_)
    if (e.peer == peer && e.buffer.base == b.base && e.buffer.size == b.size && e.buffer.id == b.id &&
        e.buffer.handle == b.handle) {
      e.used = clock_;
      ptr = e.ptr;
      return true;
    }
  for (size_t e = entries_.size(); e-- > 0;)  // the peer freed what the new buffer overlaps
    if (entries_[e].peer == peer && overlap(entries_[e].buffer, b)) drop_entry(e);
  for (;;) {  // room for one more mapping of this peer: the least recently used goes
    size_t open = 0, lru = maps_.size();
    unsigned long long oldest = ~0ULL;
    for (size_t m = 0; m < maps_.size(); ++m) {
      if (maps_[m].users == 0 || maps_[m].peer != peer) continue;
      ++open;
      unsigned long long last = 0;
      for (const Entry& e : entries_)
        if (e.mapping == m) last = std::max(last, e.used);
      if (last < oldest) oldest = last, lru = m;
    }
    if (open < per_peer_ || lru == maps_.size()) break;
    close_mapping(lru);
  }
  std::vector<size_t> covering;
  for (int attempt = 0;; ++attempt) {
    char* p = nullptr;
    const IpcDriver::Open rc = driver_.open(b.handle, &p);
    if (rc == IpcDriver::Open::failed) return false;
    if (rc == IpcDriver::Open::ok) {
      size_t m = 0;
      while (m < maps_.size() && maps_[m].users > 0) ++m;
      if (m == maps_.size()) maps_.push_back({});
      maps_[m] = {peer, p, 1};
      entries_.push_back({peer, b, p, m, clock_});
      ptr = p;
      return true;
    }
    if (attempt == 3) return false;
    if (attempt == 0) {
      if (share(peer, b, ptr, covering)) return true;
      for (size_t m : covering) close_mapping(m);
    } else {
      for (size_t m = 0; m < maps_.size(); ++m)
        if (maps_[m].users > 0 && (attempt == 2 || maps_[m].peer == peer)) close_mapping(m);
    }
    ++retries_;
  }
}

ExportCache::Result ExportCache::share(const char* p, IpcBuffer& out) {
  uint64_t base = 0, size = 0, id = 0;
  if (!driver_.allocation(p, base, size, id)) return Result::not_device;
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.buffer.base == base && e.buffer.id == id; });
  if (it == entries_.end()) {
    IpcBuffer b;
    b.base = base;
    b.size = size;
    b.id = id;
    if (!driver_.sync_memops(base) || !driver_.handle(base, b.handle)) return Result::failed;
    if (entries_.size() >= capacity_)
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry& a, const Entry& b) { return a.used < b.used; }));
    entries_.push_back({b, 0});
    it = entries_.end() - 1;
  }
  it->used = ++clock_;
  out = it->buffer;
  return Result::ok;
}

}  // namespace a2a::detail::gpu

