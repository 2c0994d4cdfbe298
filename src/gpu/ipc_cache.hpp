// Both ends of CUDA IPC apart from the CUDA calls (src/gpu/cuda_ipc.cu
// adapts them; tests/unit/test_ipc_cache.cpp drives them with fake drivers):
// the exporter's handles (ExportCache, at the end) and the importer's cache
// of node-mates' buffers (IpcCache).
//
// What the driver does that the cache must live with (UCX's cuda_ipc cache,
// UCC and Open MPI's rgpusm meet the same): cudaMalloc places small
// allocations inside larger blocks and opening a handle maps the whole
// block, once per process: a second handle into a block already mapped
// fails with "already mapped".  A peer that frees a buffer and allocates
// again may get the same addresses for another allocation, which a mapping
// opened earlier does not show.
//
// So: an opened buffer is valid while the peer exports the same
// (base, buffer id, handle); buffers a new export overlaps are gone (the
// peer freed them) and closed.  When the driver says "already mapped" and
// exactly one open mapping of that peer covers the new buffer at the same
// distance from an entry it holds, the buffer shares it (one mapping per
// block); otherwise the covering mappings close and the open is retried,
// then with every mapping of that peer closed, then with every mapping
// closed, before failing.  At most `per_peer` mappings stay open per peer
// (least recently used closed first), and close_all() closes everything
// (before the communicator goes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace a2a::detail::gpu {

struct IpcHandle {
  unsigned char bytes[64];
  bool operator==(const IpcHandle& o) const { return std::memcmp(bytes, o.bytes, sizeof bytes) == 0; }
};

// What a peer exports for one buffer: its allocation (base and size in the
// peer's address space, the driver's buffer id) and the allocation's handle.
struct IpcBuffer {
  IpcHandle handle;
  uint64_t base = 0, size = 0, id = 0;
};

class IpcDriver {
 public:
  enum class Open { ok, already_mapped, failed };
  virtual ~IpcDriver() = default;
  // Maps the allocation of `h`; *ptr is its base in this process.
  virtual Open open(const IpcHandle& h, char** ptr) = 0;
  virtual void close(char* ptr) = 0;  // a pointer open() returned
  // The extent of the mapping holding `p` in this process; false if unknown.
  virtual bool mapped_range(const char* p, uintptr_t& base, size_t& size) = 0;
};

class IpcCache {
 public:
  IpcCache(IpcDriver& driver, size_t per_peer) : driver_(driver), per_peer_(per_peer) {}
  ~IpcCache() { close_all(); }
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;

  // Where peer `peer`'s buffer `b` starts in this process; false when it
  // cannot be opened (the driver's failure).
  bool open(int peer, const IpcBuffer& b, char*& ptr);
  void close_all();
  size_t mappings() const;  // open driver mappings, all peers
  size_t entries() const { return entries_.size(); }
  long long retries() const { return retries_; }  // opens tried again after "already mapped"

 private:
  struct Mapping {
    int peer;
    char* ptr;  // what the driver's open returned (closed with it)
    int users;
  };
  struct Entry {
    int peer;
    IpcBuffer buffer;
    char* ptr;      // the buffer's base in this process
    size_t mapping;  // index into maps_
    unsigned long long used;
  };
  void drop_entry(size_t e);
  void close_mapping(size_t m);  // and every entry on it
  IpcDriver::Open try_open(int peer, const IpcBuffer& b, char*& ptr);
  bool share(int peer, const IpcBuffer& b, char*& ptr, std::vector<size_t>& covering);

  IpcDriver& driver_;
  size_t per_peer_;
  std::vector<Mapping> maps_;   // users == 0: a free slot
  std::vector<Entry> entries_;
  unsigned long long clock_ = 0;
  long long retries_ = 0;
};

// The exporter's side.  A cudaMemcpy from pageable host memory into device
// memory may return before its bytes land (CUDA's "API synchronization
// behavior"): later work in this process is ordered after it, a node-mate
// reading over IPC is not, and read old bytes on an H200 (2026-11-26).
// So an allocation is marked SYNC_MEMOPS (as GPU transports such as PSM3
// do) when it is first exported, which also waits for such copies still
// pending; after that they complete before returning.  Handles are kept
// per (base, buffer id), at most `capacity`, least recently used dropped
// first.
class ExportDriver {
 public:
  virtual ~ExportDriver() = default;
  // The allocation holding `p`: its base, size and buffer id; false if none.
  virtual bool allocation(const char* p, uint64_t& base, uint64_t& size, uint64_t& id) = 0;
  virtual bool handle(uint64_t base, IpcHandle& h) = 0;
  // CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on the allocation at `base`.
  virtual bool sync_memops(uint64_t base) = 0;
};

class ExportCache {
 public:
  enum class Result { ok, not_device, failed };
  ExportCache(ExportDriver& driver, size_t capacity) : driver_(driver), capacity_(capacity) {}
  // What node-mates need to open the allocation holding `p`.
  Result share(const char* p, IpcBuffer& out);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    IpcBuffer buffer;
    unsigned long long used;
  };
  ExportDriver& driver_;
  size_t capacity_;
  std::vector<Entry> entries_;
  unsigned long long clock_ = 0;
};

}  // namespace a2a::detail::gpu
