// The IPC handle cache (src/gpu/ipc_cache.hpp) against a fake CUDA driver
// that does what the real one does to a cache: small allocations share
// 2 MiB blocks, an open maps the whole block once per process (a second
// handle into a mapped block: "already mapped"), freed addresses come back
// for new allocations with new buffer ids, and a mapping keeps a freed
// block's old memory alive.  Each open pointer is checked against what the
// exporter holds at that moment, so a stale mapping is caught.  The cache
// a2a had before (LegacyCache, below: the same logic over the same fake)
// fails the fresh-buffers pattern exactly as the H100 run did.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "gpu/ipc_cache.hpp"

using namespace a2a::detail::gpu;

namespace {

constexpr uint64_t kBlock = 2 << 20;      // the driver's sub-allocation block
constexpr uint64_t kSmall = 1 << 20;      // larger allocations get blocks of their own
constexpr uint64_t kAlign = 512;

struct Block {
  uint64_t phys;  // physical identity, never reused
  uint64_t va, size;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> allocs;  // offset -> (size, buffer id)
  bool freed = false;
  int importers = 0;  // open mappings of it anywhere
};

// Shared by every fake process: physical blocks live while allocated or mapped.
struct FakeWorld {
  uint64_t next_phys = 1, next_id = 1;
  std::map<uint64_t, std::shared_ptr<Block>> blocks;  // by phys
};

// One peer's device memory (its own address space).
class FakeExporter {
 public:
  explicit FakeExporter(FakeWorld& w, uint64_t va0) : w_(w), va0_(va0) {}
  uint64_t alloc(uint64_t size) {
    size = (size + kAlign - 1) / kAlign * kAlign;
    if (size <= kSmall)
      for (auto& b : live_) {  // first fit in a block with room
        uint64_t at = 0;
        for (const auto& [off, a] : b->allocs) {
          if (off - at >= size) break;
          at = off + a.first;
        }
        if (b->size - at >= size && b->size == kBlock) return place(*b, at, size);
      }
    const uint64_t span = (size + kBlock - 1) / kBlock * kBlock;
    uint64_t va = va0_;  // the lowest free range: freed addresses come back
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& b : live_)
        if (va < b->va + b->size && b->va < va + span) va = b->va + b->size, moved = true;
    }
    auto b = std::make_shared<Block>(Block{w_.next_phys++, va, span, {}, false, 0});
    w_.blocks[b->phys] = b;
    live_.push_back(b);
    return place(*b, 0, size);
  }
  void free(uint64_t va) {
    for (auto it = live_.begin(); it != live_.end(); ++it) {
      Block& b = **it;
      if (va < b.va || va >= b.va + b.size) continue;
      b.allocs.erase(va - b.va);
      if (b.allocs.empty()) {
        b.freed = true;
        if (b.importers == 0) w_.blocks.erase(b.phys);
        live_.erase(it);
      }
      return;
    }
    FAIL() << "free of an unknown address";
  }
  // What cuMemGetAddressRange, CU_POINTER_ATTRIBUTE_BUFFER_ID and
  // cudaIpcGetMemHandle give for the allocation at va.
  IpcBuffer exported(uint64_t va) const {
    for (const auto& b : live_) {
      if (va < b->va || va >= b->va + b->size) continue;
      const auto& a = b->allocs.at(va - b->va);
      IpcBuffer out{};
      const uint64_t words[3] = {b->phys, va - b->va, a.second};
      std::memcpy(out.handle.bytes, words, sizeof words);
      out.base = va;
      out.size = a.first;
      out.id = a.second;
      return out;
    }
    ADD_FAILURE() << "export of an unknown address";
    return {};
  }

 private:
  uint64_t place(Block& b, uint64_t at, uint64_t size) {
    b.allocs[at] = {size, w_.next_id++};
    return b.va + at;
  }
  FakeWorld& w_;
  uint64_t va0_;
  std::vector<std::shared_ptr<Block>> live_;
};

// The importing process's driver.
class FakeImporter : public IpcDriver {
 public:
  explicit FakeImporter(FakeWorld& w) : w_(w) {}
  Open open(const IpcHandle& h, char** ptr) override {
    ++opens;
    if (fail_next) {
      fail_next = false;
      return Open::failed;
    }
    uint64_t words[3];
    std::memcpy(words, h.bytes, sizeof words);
    auto it = w_.blocks.find(words[0]);
    if (it == w_.blocks.end()) return Open::failed;  // the exporter freed it
    for (const auto& [va, m] : maps_)
      if (m.block->phys == words[0]) {
        ++already_mapped;
        return Open::already_mapped;
      }
    uint64_t va = 0x7000000000ULL;  // the lowest free range here too
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [v, m] : maps_)
        if (va < v + m.block->size && v < va + it->second->size) va = v + m.block->size, moved = true;
    }
    ++it->second->importers;
    maps_[va] = {it->second, va + words[1]};
    *ptr = reinterpret_cast<char*>(va + words[1]);
    return Open::ok;
  }
  void close(char* ptr) override {
    for (auto it = maps_.begin(); it != maps_.end(); ++it)
      if (it->second.returned == reinterpret_cast<uint64_t>(ptr)) {
        Block& b = *it->second.block;
        if (--b.importers == 0 && b.freed) w_.blocks.erase(b.phys);
        maps_.erase(it);
        return;
      }
    ++bad_closes;
  }
  bool mapped_range(const char* p, uintptr_t& base, size_t& size) override {
    const uint64_t q = reinterpret_cast<uint64_t>(p);
    for (const auto& [va, m] : maps_)
      if (q >= va && q < va + m.block->size) {
        base = va;
        size = m.block->size;
        return true;
      }
    return false;
  }
  // The buffer id a read of `bytes` at p here would see: 0 when p is not
  // mapped, the block was freed (stale memory) or no live allocation there.
  uint64_t reads(const char* p, uint64_t bytes) const {
    const uint64_t q = reinterpret_cast<uint64_t>(p);
    for (const auto& [va, m] : maps_) {
      if (q < va || q >= va + m.block->size || m.block->freed) continue;
      for (const auto& [off, a] : m.block->allocs)
        if (q - va >= off && q - va + bytes <= off + a.first) return a.second;
    }
    return 0;
  }
  size_t live_mappings() const { return maps_.size(); }
  long long opens = 0, already_mapped = 0, bad_closes = 0;
  bool fail_next = false;

 private:
  struct Map {
    std::shared_ptr<Block> block;
    uint64_t returned;
  };
  FakeWorld& w_;
  std::map<uint64_t, Map> maps_;
};

// a2a's cache before this one: by (peer, base), a new handle at the same
// base closes the old mapping, at most 16 per peer.
class LegacyCache {
 public:
  explicit LegacyCache(IpcDriver& d) : d_(d) {}
  bool open(int peer, const IpcBuffer& b, char*& ptr) {
    auto& list = mapped_[peer];
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->base != b.base) continue;
      if (it->handle == b.handle) return ptr = it->ptr, true;
      d_.close(it->ptr);
      list.erase(it);
      break;
    }
    if (list.size() >= 16) {
      d_.close(list.front().ptr);
      list.erase(list.begin());
    }
    char* p = nullptr;
    if (d_.open(b.handle, &p) != IpcDriver::Open::ok) return false;
    list.push_back({b.base, b.handle, p});
    ptr = p;
    return true;
  }
  void close_all() {
    for (auto& [peer, list] : mapped_)
      for (auto& m : list) d_.close(m.ptr);
    mapped_.clear();
  }

 private:
  struct M {
    uint64_t base;
    IpcHandle handle;
    char* ptr;
  };
  IpcDriver& d_;
  std::map<int, std::vector<M>> mapped_;
};

// The test_cuda_ipc pattern that failed on the H100: every call allocates
// new send buffers of a size from 16 B to 4 MiB per peer and frees them
// after; a few calls keep the previous buffer alive across the next.
template <typename Cache>
long long fresh_buffers(Cache& cache, FakeImporter& drv, FakeExporter* peers, int npeers, long long& wrong) {
  std::mt19937 rng(7);
  long long failed = 0;
  std::vector<std::vector<uint64_t>> held(npeers);
  for (int call = 0; call < 400; ++call) {
    const uint64_t size = uint64_t{16} << (rng() % 19);
    for (int j = 0; j < npeers; ++j) {
      const uint64_t va = peers[j].alloc(size * 4);
      held[j].push_back(va);
      const IpcBuffer b = peers[j].exported(va);
      char* p = nullptr;
      if (!cache.open(j, b, p)) {
        ++failed;
      } else if (drv.reads(p, b.size) != b.id) {
        ++wrong;
      }
      while (held[j].size() > (call % 5 == 0 ? 2u : 1u)) {
        peers[j].free(held[j].front());
        held[j].erase(held[j].begin());
      }
    }
  }
  return failed;
}

TEST(IpcCache, LegacyCacheFailsOnFreshBuffersAsOnTheH100) {
  FakeWorld w;
  FakeImporter drv(w);
  FakeExporter peers[3] = {FakeExporter(w, 1ULL << 40), FakeExporter(w, 1ULL << 40), FakeExporter(w, 1ULL << 40)};
  LegacyCache cache(drv);
  long long wrong = 0;
  const long long failed = fresh_buffers(cache, drv, peers, 3, wrong);
  EXPECT_GT(failed, 0) << "the fake no longer models the failure the H100 showed";
  EXPECT_GT(drv.already_mapped, 0);
  cache.close_all();
}

TEST(IpcCache, FreshBuffersEveryCallOpenRightAndStayBounded) {
  FakeWorld w;
  FakeImporter drv(w);
  FakeExporter peers[3] = {FakeExporter(w, 1ULL << 40), FakeExporter(w, 1ULL << 40), FakeExporter(w, 1ULL << 40)};
  long long wrong = 0, failed = 0;
  {
    IpcCache cache(drv, 4);
    failed = fresh_buffers(cache, drv, peers, 3, wrong);
    EXPECT_LE(cache.mappings(), 3u * 4u);
    EXPECT_EQ(cache.mappings(), drv.live_mappings());
  }  // the destructor closes everything
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(drv.live_mappings(), 0u);
  EXPECT_EQ(drv.bad_closes, 0);
  EXPECT_TRUE(w.blocks.empty() || std::all_of(w.blocks.begin(), w.blocks.end(), [](const auto& b) {
                return !b.second->freed;
              })) << "a freed block stayed mapped";
}

TEST(IpcCache, LiveBuffersOfOneBlockShareItsMapping) {
  FakeWorld w;
  FakeImporter drv(w);
  FakeExporter peer(w, 1ULL << 40);
  IpcCache cache(drv, 16);
  const uint64_t a = peer.alloc(4096), b = peer.alloc(8192);
  for (int call = 0; call < 10; ++call) {
    for (uint64_t va : {a, b}) {
      const IpcBuffer e = peer.exported(va);
      char* p = nullptr;
      ASSERT_TRUE(cache.open(0, e, p));
      EXPECT_EQ(drv.reads(p, e.size), e.id);
    }
  }
  EXPECT_EQ(drv.opens, 2) << "one open for the block, one refused with already mapped, then shared";
  EXPECT_EQ(cache.mappings(), 1u);
  EXPECT_EQ(cache.entries(), 2u);
  cache.close_all();
  EXPECT_EQ(drv.live_mappings(), 0u);
  EXPECT_EQ(drv.bad_closes, 0);
}

TEST(IpcCache, AnAddressFreedAndReusedIsOpenedAgain) {
  FakeWorld w;
  FakeImporter drv(w);
  FakeExporter peer(w, 1ULL << 40);
  IpcCache cache(drv, 16);
  for (uint64_t size : {uint64_t{4} << 20, uint64_t{256}, uint64_t{3} << 20, uint64_t{64}}) {
    const uint64_t va = peer.alloc(size);
    ASSERT_EQ(va, 1ULL << 40) << "the fake reuses the address";
    const IpcBuffer e = peer.exported(va);
    char* p = nullptr;
    ASSERT_TRUE(cache.open(0, e, p));
    EXPECT_EQ(drv.reads(p, e.size), e.id) << size;
    peer.free(va);
  }
  EXPECT_EQ(cache.mappings(), 1u);
}

TEST(IpcCache, PeersAreApartAndAFailedOpenLeavesTheCacheSound) {
  FakeWorld w;
  FakeImporter drv(w);
  FakeExporter p0(w, 1ULL << 40), p1(w, 1ULL << 40);  // the same addresses in two processes
  IpcCache cache(drv, 2);
  const IpcBuffer e0 = p0.exported(p0.alloc(100)), e1 = p1.exported(p1.alloc(100));
  char *x = nullptr, *y = nullptr;
  ASSERT_TRUE(cache.open(0, e0, x));
  ASSERT_TRUE(cache.open(1, e1, y));
  EXPECT_NE(x, y);
  EXPECT_EQ(drv.reads(x, 100), e0.id);
  EXPECT_EQ(drv.reads(y, 100), e1.id);
  const IpcBuffer e2 = p0.exported(p0.alloc(2 << 20));
  drv.fail_next = true;
  char* z = nullptr;
  EXPECT_FALSE(cache.open(0, e2, z));
  EXPECT_TRUE(cache.open(0, e2, z));
  EXPECT_EQ(drv.reads(z, e2.size), e2.id);
  const IpcBuffer e3 = p0.exported(p0.alloc(4 << 20));  // a third mapping of peer 0: the oldest goes
  char* v = nullptr;
  ASSERT_TRUE(cache.open(0, e3, v));
  EXPECT_EQ(cache.mappings(), 3u);
  EXPECT_EQ(cache.mappings(), drv.live_mappings());
  ASSERT_TRUE(cache.open(1, e1, y));
  EXPECT_EQ(drv.reads(y, 100), e1.id);
  cache.close_all();
  EXPECT_EQ(drv.live_mappings(), 0u);
  EXPECT_EQ(drv.bad_closes, 0);
}

}  // namespace

// The exporter's side (ExportCache) against a fake process whose copies
// from pageable memory into device memory may land after they return, as
// CUDA documents and as an H200 showed (node-mates read old bytes): a
// copy stays pending, invisible to node-mates, until the allocation is
// marked SYNC_MEMOPS (which waits for it); after that copies land at once.
namespace {

class FakeDevice : public ExportDriver {
 public:
  struct Alloc {
    uint64_t size, id;
    bool sync = false;
    std::vector<unsigned char> landed, pending;  // pending: the bytes still in flight
  };
  uint64_t alloc(uint64_t size) {
    uint64_t base = 1 << 20;  // freed bases come back
    while (allocs_.count(base)) base += 1 << 20;
    allocs_[base] = Alloc{size, next_id_++, false, std::vector<unsigned char>(size, 0), {}};
    return base;
  }
  void free(uint64_t base) { allocs_.erase(base); }
  // cudaMemcpy from pageable host memory of `value` over the whole allocation.
  void copy_in(uint64_t base, unsigned char value) {
    Alloc& a = allocs_.at(base);
    if (a.sync)
      a.landed.assign(a.size, value);
    else
      a.pending.assign(a.size, value);
  }
  // What a node-mate reads through its mapping.
  unsigned char peer_reads(uint64_t base) const { return allocs_.at(base).landed.at(0); }

  bool allocation(const char* p, uint64_t& base, uint64_t& size, uint64_t& id) override {
    const auto at = reinterpret_cast<uint64_t>(p);
    for (const auto& [b, a] : allocs_)
      if (at >= b && at < b + a.size) {
        base = b, size = a.size, id = a.id;
        return true;
      }
    return false;
  }
  bool handle(uint64_t base, IpcHandle& h) override {
    ++handles;
    const uint64_t words[2] = {base, allocs_.at(base).id};
    std::memset(h.bytes, 0, sizeof h.bytes);
    std::memcpy(h.bytes, words, sizeof words);
    return true;
  }
  bool sync_memops(uint64_t base) override {
    ++syncs;
    if (fail_sync) return false;
    Alloc& a = allocs_.at(base);
    a.sync = true;
    if (!a.pending.empty()) a.landed.swap(a.pending), a.pending.clear();
    return true;
  }
  int handles = 0, syncs = 0;
  bool fail_sync = false;

 private:
  std::map<uint64_t, Alloc> allocs_;
  uint64_t next_id_ = 1;
};

const char* ptr(uint64_t base, uint64_t offset = 0) { return reinterpret_cast<const char*>(base + offset); }

}  // namespace

TEST(ExportCache, NodeMatesReadWhatACopyJustWrote) {
  FakeDevice dev;
  ExportCache cache(dev, 4);
  const uint64_t a = dev.alloc(4096);
  dev.copy_in(a, 7);
  // Handing out the handle alone (a2a before this cache) lets them read old bytes.
  IpcHandle bare;
  dev.handle(a, bare);
  EXPECT_EQ(dev.peer_reads(a), 0);
  IpcBuffer b;
  ASSERT_EQ(cache.share(ptr(a, 100), b), ExportCache::Result::ok);
  EXPECT_EQ(dev.peer_reads(a), 7);
  EXPECT_EQ(b.base, a);
  EXPECT_EQ(b.size, 4096u);
  // Later copies land before they return; the handle is reused.
  dev.copy_in(a, 9);
  EXPECT_EQ(dev.peer_reads(a), 9);
  const int handles = dev.handles, syncs = dev.syncs;
  IpcBuffer again;
  ASSERT_EQ(cache.share(ptr(a), again), ExportCache::Result::ok);
  EXPECT_EQ(again.handle, b.handle);
  EXPECT_EQ(dev.handles, handles);
  EXPECT_EQ(dev.syncs, syncs);
}

TEST(ExportCache, AFreedAddressReallocatedIsExportedAfresh) {
  FakeDevice dev;
  ExportCache cache(dev, 4);
  const uint64_t a = dev.alloc(4096);
  IpcBuffer first, second;
  ASSERT_EQ(cache.share(ptr(a), first), ExportCache::Result::ok);
  dev.free(a);
  ASSERT_EQ(dev.alloc(4096), a);  // same base, new buffer id
  dev.copy_in(a, 5);
  ASSERT_EQ(cache.share(ptr(a), second), ExportCache::Result::ok);
  EXPECT_NE(second.id, first.id);
  EXPECT_FALSE(second.handle == first.handle);
  EXPECT_EQ(dev.peer_reads(a), 5);
  EXPECT_EQ(dev.syncs, 2);
}

TEST(ExportCache, BoundedLeastRecentlyUsedFirst) {
  FakeDevice dev;
  ExportCache cache(dev, 3);
  uint64_t bases[4];
  IpcBuffer b;
  for (auto& x : bases) {
    x = dev.alloc(512);
    ASSERT_EQ(cache.share(ptr(x), b), ExportCache::Result::ok);
  }
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(dev.handles, 4);
  ASSERT_EQ(cache.share(ptr(bases[3]), b), ExportCache::Result::ok);  // kept
  EXPECT_EQ(dev.handles, 4);
  ASSERT_EQ(cache.share(ptr(bases[0]), b), ExportCache::Result::ok);  // dropped first
  EXPECT_EQ(dev.handles, 5);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(ExportCache, FailuresCacheNothing) {
  FakeDevice dev;
  ExportCache cache(dev, 4);
  IpcBuffer b;
  int host = 0;
  EXPECT_EQ(cache.share(reinterpret_cast<const char*>(&host), b), ExportCache::Result::not_device);
  const uint64_t a = dev.alloc(64);
  dev.fail_sync = true;
  EXPECT_EQ(cache.share(ptr(a), b), ExportCache::Result::failed);
  EXPECT_EQ(cache.size(), 0u);
  dev.fail_sync = false;
  EXPECT_EQ(cache.share(ptr(a), b), ExportCache::Result::ok);
  EXPECT_EQ(dev.syncs, 2);
}
