// cuda-ipc: all-to-all(v) on device buffers over CUDA IPC.
// Paper: Chen, Shafie Khorassani, Anthony, Shafi, Subramoni, Panda, "Highly
// Efficient Alltoall and Alltoallv Communication Algorithms for GPU Systems"
// (section III).
//
// Node-mates (the communicator's layout; A2A_NODE_SIZE splits one machine)
// share their send buffers by IPC handle and each rank pulls its blocks from
// them: at step i node-mate q reads from (q - i) mod Q (the paper's
// (rank + i) order seen from the receiver), so each GPU is read by one peer
// and written by one at a time.  The self block is a local copy (a process
// cannot open its own handle).  Two copy paths: one kernel over every block
// (16-byte vector loads, byte head and tail), or one cudaMemcpyAsync per
// block; `hybrid` picks by block size (src/schedule/gpu_plan.hpp).  Blocks
// for other nodes go through pinned host memory in chunks with MPI
// (src/gpu/staged.hpp), while the IPC copies run on their own stream.
//
// Per call: an allreduce of one int over the communicator once every local
// step that can fail is done (so no rank leaves while others wait for it),
// one MPI_Allgather of an Export record (a 64-byte IPC handle and four
// words) within the node; alltoallv adds an MPI_Alltoall of 16 bytes per
// node-mate (where its block for the receiver lies), unless the caller found
// it to be an alltoall.  Then one allreduce at the end: it agrees on errors
// and keeps every rank in the call until no peer reads its send buffer any
// more.  Cost: intra-node ~ (Q-1) blocks at NVLink or
// device-copy bandwidth plus the kernel/memcpy fixed cost (30-50 us in the
// paper); inter-node ~ spread-out with D2H and H2D copies overlapped in
// chunks.
//
// Handles: a rank exports the allocation (cuMemGetAddressRange: base and
// size, and its buffer id) with an offset; an ExportCache (src/gpu/
// ipc_cache.hpp) keeps its handles by (base, buffer id) and marks each
// allocation SYNC_MEMOPS when first exported.  Opened handles live in an
// IpcCache (the same file: validity by buffer id, a block's mapping shared
// by the buffers in it, retries on cudaErrorAlreadyMapped, kMappingsPerPeer
// per peer), all closed with the communicator.
// Driver calls go through cudaGetDriverEntryPointByVersion, so nothing links
// libcuda.
//
// As with CUDA-aware MPI, the caller has finished writing the send buffer
// (its kernels synchronised) before the call; its copies from pageable
// memory complete with SYNC_MEMOPS.  The IPC and staging streams are
// blocking streams, so their copies follow the caller's work queued on the
// legacy default stream (a cudaMemset of the receive buffer, say).
// MPI_IN_PLACE copies the receive buffer's blocks to device scratch first
// (peers read them while this rank overwrites them).
#include <cuda.h>  // driver types and enums only; libcuda is reached through the runtime
#include <cuda_runtime.h>


#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/loaded.hpp"
#include "gpu/gpu.hpp"
#include "gpu/ipc_cache.hpp"
#include "gpu/staged.hpp"

namespace a2a::detail::gpu {

namespace {

constexpr int kStageTag = 2;  // the private communicator's tag for staged chunks (operations use 3..32767)
constexpr size_t kMappingsPerPeer = 16;
constexpr size_t kExportsCached = 64;

thread_local std::string last_message;

int fail(cudaError_t e, const char* what) {
  last_message = std::string("a2a: ") + what + ": " + cudaGetErrorString(e);
  cudaGetLastError();  // clear a non-sticky error so later calls start clean
  return MPI_ERR_OTHER;
}
int to_mpi(cudaError_t e, const char* what) { return e == cudaSuccess ? MPI_SUCCESS : fail(e, what); }
#define A2A_CUDA_TRY(call)                              \
  do {                                                  \
    const cudaError_t e_ = (call);                      \
    if (e_ != cudaSuccess) return fail(e_, #call);      \
  } while (0)

// Driver entry points through the runtime.
struct Driver {
  using PointerAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
  using PointerAttributes = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  using SetAttribute = CUresult (*)(const void*, CUpointer_attribute, CUdeviceptr);
  using AddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  PointerAttribute pointer_attribute = nullptr;
  PointerAttributes pointer_attributes = nullptr;  // unlike the singular, no error for host pointers
  SetAttribute set_attribute = nullptr;
  AddressRange address_range = nullptr;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    const auto find = [](const char* name) -> void* {
      void* fn = nullptr;
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
          found != cudaDriverEntryPointSuccess)
        fn = nullptr;
      cudaGetLastError();
      return fn;
    };
    x.pointer_attribute = reinterpret_cast<Driver::PointerAttribute>(find("cuPointerGetAttribute"));
    x.pointer_attributes = reinterpret_cast<Driver::PointerAttributes>(find("cuPointerGetAttributes"));
    x.set_attribute = reinterpret_cast<Driver::SetAttribute>(find("cuPointerSetAttribute"));
    x.address_range = reinterpret_cast<Driver::AddressRange>(find("cuMemGetAddressRange"));
    return x;
  }();
  return d;
}

struct CopyDesc {
  const char* src;
  char* dst;
  unsigned long long bytes;
};

// Copies every descriptor's bytes; grid.y walks the descriptors (in the pull
// order), grid.x splits each one.  When source and destination share their
// alignment mod 16, a byte head brings them to 16 bytes, the body moves in
// 16-byte vectors and a byte tail ends it; otherwise bytes (rare: blocks of
// sizes that are not multiples of 16).
__global__ void copy_blocks(const CopyDesc* descs, int n) {
  for (int k = blockIdx.y; k < n; k += gridDim.y) {
    const CopyDesc d = descs[k];
    const unsigned long long tid = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
    const unsigned long long threads = gridDim.x * static_cast<unsigned long long>(blockDim.x);
    const auto s = reinterpret_cast<uintptr_t>(d.src), t = reinterpret_cast<uintptr_t>(d.dst);
    if (((s ^ t) & 15) == 0) {
      unsigned long long head = (16 - (t & 15)) & 15;
      if (head > d.bytes) head = d.bytes;
      for (unsigned long long i = tid; i < head; i += threads) d.dst[i] = d.src[i];
      const unsigned long long vecs = (d.bytes - head) / 16;
      const auto* vs = reinterpret_cast<const uint4*>(d.src + head);
      auto* vt = reinterpret_cast<uint4*>(d.dst + head);
      for (unsigned long long i = tid; i < vecs; i += threads) vt[i] = vs[i];
      for (unsigned long long i = head + vecs * 16 + tid; i < d.bytes; i += threads) d.dst[i] = d.src[i];
    } else {
      for (unsigned long long i = tid; i < d.bytes; i += threads) d.dst[i] = d.src[i];
    }
  }
}

int launch_copies(const CopyDesc* descs, int n, unsigned long long largest, cudaStream_t stream) {
  if (n == 0) return MPI_SUCCESS;
  const unsigned threads = 256;
  // About 64 KiB per thread block, at most 64 blocks per descriptor.
  const unsigned x = static_cast<unsigned>(std::min<unsigned long long>(64, std::max(1ULL, largest >> 16)));
  const unsigned y = static_cast<unsigned>(std::min(n, 65535));
  copy_blocks<<<dim3(x, y), threads, 0, stream>>>(descs, n);
  A2A_CUDA_TRY(cudaGetLastError());
  return MPI_SUCCESS;
}

// What a rank shares with its node-mates each call (plain bytes for MPI).
struct Export {
  IpcBuffer buffer;  // the allocation (handle, base and size in the exporter's space, buffer id)
  long long offset;  // the send pointer (first block) - base
  long long stride;  // alltoall: block r lies at send + r * stride
  int has;           // 0: nothing to read (no bytes for node-mates)
  int device;
};

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle), "an IPC handle is 64 bytes");

// The cache's driver: the runtime's IPC calls.
class RuntimeIpc : public IpcDriver {
 public:
  Open open(const IpcHandle& h, char** ptr) override {
    cudaIpcMemHandle_t handle;
    std::memcpy(&handle, h.bytes, sizeof handle);
    void* p = nullptr;
    const cudaError_t e = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
    if (e == cudaSuccess) {
      *ptr = static_cast<char*>(p);
      return Open::ok;
    }
    fail(e, "cudaIpcOpenMemHandle");
    return e == cudaErrorAlreadyMapped ? Open::already_mapped : Open::failed;
  }
  void close(char* ptr) override { cudaIpcCloseMemHandle(ptr); }
  bool mapped_range(const char* p, uintptr_t& base, size_t& size) override {
    CUdeviceptr b = 0;
    const Driver& d = driver();
    if (!d.address_range || d.address_range(&b, &size, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return false;
    base = static_cast<uintptr_t>(b);
    return true;
  }
};

// The exporter's driver: the allocation, its handle, SYNC_MEMOPS.
class RuntimeExport : public ExportDriver {
 public:
  bool allocation(const char* p, uint64_t& base, uint64_t& size, uint64_t& id) override {
    const Driver& d = driver();
    CUdeviceptr b = 0;
    size_t n = 0;
    unsigned long long i = 0;
    const auto ptr = reinterpret_cast<CUdeviceptr>(p);
    if (!d.address_range || !d.pointer_attribute || d.address_range(&b, &n, ptr) != CUDA_SUCCESS ||
        d.pointer_attribute(&i, CU_POINTER_ATTRIBUTE_BUFFER_ID, ptr) != CUDA_SUCCESS) {
      last_message = "a2a: cannot find the allocation of a device buffer";
      return false;
    }
    base = static_cast<uint64_t>(b);
    size = n;
    id = i;
    return true;
  }
  bool handle(uint64_t base, IpcHandle& h) override {
    cudaIpcMemHandle_t x;
    const cudaError_t e = cudaIpcGetMemHandle(&x, reinterpret_cast<void*>(base));
    if (e != cudaSuccess) return fail(e, "cudaIpcGetMemHandle"), false;
    std::memcpy(h.bytes, &x, sizeof h.bytes);
    return true;
  }
  bool sync_memops(uint64_t base) override {
    const Driver& d = driver();
    const unsigned int one = 1;
    const CUresult r =
        d.set_attribute ? d.set_attribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, static_cast<CUdeviceptr>(base))
                        : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS) return true;
    last_message = "a2a: cuPointerSetAttribute(SYNC_MEMOPS) failed: CUDA error " + std::to_string(static_cast<int>(r));
    return false;
  }
};

// Grow-only memory, pinned host or device.
struct Grown {
  char* ptr = nullptr;
  size_t cap = 0;
  bool device = false;
  int get(size_t bytes, Stats& st) {
    st.temp_bytes += static_cast<long long>(bytes);
    if (bytes <= cap) return MPI_SUCCESS;
    release();
    void* p = nullptr;
    const cudaError_t e = device ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes);
    if (e != cudaSuccess) return fail(e, device ? "cudaMalloc" : "cudaMallocHost");
    ptr = static_cast<char*>(p);
    cap = bytes;
    return MPI_SUCCESS;
  }
  void release() {
    if (ptr) device ? cudaFree(ptr) : cudaFreeHost(ptr);
    ptr = nullptr;
    cap = 0;
  }
};

class CudaCopier : public StageCopier {
 public:
  CudaCopier(cudaStream_t stream, std::vector<cudaEvent_t>& events) : stream_(stream), events_(events) {}
  int to_host(char* host, const char* device, size_t bytes, int slot) override {
    A2A_CUDA_TRY(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
    A2A_CUDA_TRY(cudaEventRecord(events_[slot], stream_));
    return MPI_SUCCESS;
  }
  int to_device(char* device, const char* host, size_t bytes, int slot) override {
    A2A_CUDA_TRY(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
    A2A_CUDA_TRY(cudaEventRecord(events_[slot], stream_));
    return MPI_SUCCESS;
  }
  int ready(int slot, bool& done) override {
    const cudaError_t e = cudaEventQuery(events_[slot]);
    done = e == cudaSuccess;
    if (e == cudaSuccess || e == cudaErrorNotReady) {
      if (e == cudaErrorNotReady) cudaGetLastError();
      return MPI_SUCCESS;
    }
    return fail(e, "cudaEventQuery");
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t>& events_;
};

}  // namespace

struct State {
  MPI_Comm node = MPI_COMM_NULL;
  int q = 0, Q = 1;
  std::vector<int> node_ranks;  // global ranks of the node-mates, by local index
  cudaStream_t ipc = nullptr, stage = nullptr;
  std::vector<cudaEvent_t> events;  // one per staging slot
  RuntimeExport exporter;
  ExportCache exported{exporter, kExportsCached};  // this rank's allocations
  RuntimeIpc runtime;
  IpcCache opened{runtime, kMappingsPerPeer};  // node-mates' buffers, by local index
  Grown mirror[2], chunks, descs, scratch{nullptr, 0, true};
  std::vector<Export> peers;
  std::vector<long long> offers, pulled;
  std::vector<CopyDesc> plan;

  ~State() {
    opened.close_all();
    for (auto& g : mirror) g.release();
    chunks.release();
    descs.release();
    scratch.release();
    for (auto e : events) cudaEventDestroy(e);
    if (ipc) cudaStreamDestroy(ipc);
    if (stage) cudaStreamDestroy(stage);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && node != MPI_COMM_NULL) MPI_Comm_free(&node);
  }

  // Collective over the communicator on first use: the node communicator.
  int setup(CommContext& ctx) {
    if (node != MPI_COMM_NULL) return MPI_SUCCESS;
    const int my_node = ctx.topology.node_of[ctx.rank];
    if (const int rc = MPI_Comm_split(ctx.comm, my_node, ctx.rank, &node)) return rc;
    MPI_Comm_rank(node, &q);
    MPI_Comm_size(node, &Q);
    node_ranks = ctx.topology.ranks[my_node];
    peers.resize(Q);
    // Blocking streams: they follow the caller's work on the legacy default stream.
    A2A_CUDA_TRY(cudaStreamCreateWithFlags(&ipc, cudaStreamDefault));
    A2A_CUDA_TRY(cudaStreamCreateWithFlags(&stage, cudaStreamDefault));
    events.resize(2 * kStageSlots);
    for (auto& e : events) A2A_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return MPI_SUCCESS;
  }

  // This rank's handle for the allocation holding `p`.
  int export_pointer(const char* p, Export& out) {
    const ExportCache::Result r = exported.share(p, out.buffer);
    if (r != ExportCache::Result::ok) return r == ExportCache::Result::not_device ? MPI_ERR_BUFFER : MPI_ERR_OTHER;
    out.offset = p - reinterpret_cast<const char*>(out.buffer.base);
    return MPI_SUCCESS;
  }

  // Node-mate j's exported allocation, opened in this process.
  int open_peer(int j, char*& ptr) {
    return opened.open(j, peers[j].buffer, ptr) ? MPI_SUCCESS : MPI_ERR_OTHER;  // last_message says why
  }
};

namespace {

State& state_of(CommContext& ctx) {
  if (!ctx.gpu_state) ctx.gpu_state.reset(new State);
  return *ctx.gpu_state;
}

// The whole algorithm, on the block view both collectives reduce to;
// `uniform` (alltoall, or an alltoallv the caller found to be one):
// node-mates' blocks lie at their first block + rank * stride, and no
// displacement exchange is needed.
int run_ipc(const VarCall& b, const Knobs& params, schedule::GpuPath path, bool uniform, long long stride) {
  CommContext& ctx = b.ctx;
  Stats& st = b.stats;
  State& s = state_of(ctx);
  const int P = ctx.size, me = ctx.rank;
  // Everything that can fail locally happens first, then one allreduce, so
  // that no rank leaves while others wait for it in the exchanges below.
  int err = s.setup(ctx);

  // MPI_IN_PLACE (or aliased buffers): node-mates read this rank's send
  // blocks while it writes its receive buffer, so read them from a copy.
  MPI_Aint lo = 0, hi = 0;
  bool any = false;
  for (int i = 0; i < P; ++i)
    if (b.sbytes[i] > 0) {
      lo = any ? std::min(lo, b.soff[i]) : b.soff[i];
      hi = any ? std::max<MPI_Aint>(hi, b.soff[i] + b.sbytes[i]) : b.soff[i] + b.sbytes[i];
      any = true;
    }
  const char* send = b.send;
  if (!err && any && b.send == b.recv) {
    err = s.scratch.get(static_cast<size_t>(hi - lo), st);
    if (!err) err = to_mpi(cudaMemcpyAsync(s.scratch.ptr, b.send + lo, hi - lo, cudaMemcpyDeviceToDevice, s.ipc),
                           "cudaMemcpyAsync (in-place copy)");
    if (!err) err = to_mpi(cudaStreamSynchronize(s.ipc), "cudaStreamSynchronize");
    send = s.scratch.ptr - lo;
  }
  const auto sends = schedule::staged_chunks(me, P, ctx.topology.node_of, b.sbytes, params.chunk, true);
  const auto recvs = schedule::staged_chunks(me, P, ctx.topology.node_of, b.rbytes, params.chunk, false);
  if (!err && (!sends.empty() || !recvs.empty())) err = s.chunks.get(2 * kStageSlots * static_cast<size_t>(params.chunk), st);

  // Export: this rank's first block (uniform) or its send pointer.
  Export mine{};
  bool shares = false;
  for (int j = 0; j < s.Q; ++j) shares = shares || (s.node_ranks[j] != me && b.sbytes[s.node_ranks[j]] > 0);
  if (!err && shares) {
    const char* first = uniform ? send + b.soff[0] : send + lo;
    err = s.export_pointer(first, mine);
    mine.offset += uniform ? 0 : send - first;  // offsets below are from the send pointer
    mine.stride = stride;
    mine.has = err == MPI_SUCCESS;
    cudaGetDevice(&mine.device);
  }
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, ctx.comm)) return rc;
  if (err) return err;
  if (const int rc = MPI_Allgather(&mine, sizeof mine, MPI_BYTE, s.peers.data(), sizeof mine, MPI_BYTE, s.node))
    return rc;
  st.meta_bytes_sent += static_cast<long long>(sizeof mine) * (s.Q - 1);
  if (!uniform) {
    std::vector<long long> off(b.soff, b.soff + P), bytes(b.sbytes, b.sbytes + P);
    schedule::pull_offers(s.node_ranks, off.data(), bytes.data(), s.offers);
    s.pulled.resize(2 * s.Q);
    if (const int rc = MPI_Alltoall(s.offers.data(), 2, MPI_LONG_LONG, s.pulled.data(), 2, MPI_LONG_LONG, s.node))
      return rc;
    st.meta_bytes_sent += 16LL * (s.Q - 1);
  }

  // The intra-node copies, in pull order, queued on the IPC stream.
  s.plan.clear();
  unsigned long long largest = 0;
  bool pulls = false;
  for (int step = 0; step < s.Q; ++step) {
    const int j = schedule::ipc_source(s.q, s.Q, step);
    const int src_rank = s.node_ranks[j];
    const long long bytes = b.rbytes[src_rank];
    if (bytes == 0) continue;
    const char* from = nullptr;
    if (src_rank == me) {
      from = send + b.soff[me];
    } else {
      char* base = nullptr;
      if (!s.peers[j].has) {
        err = std::max(err, static_cast<int>(MPI_ERR_OTHER));
        continue;
      }
      if (const int rc = s.open_peer(j, base)) {
        err = std::max(err, rc);
        continue;
      }
      const long long at = uniform ? static_cast<long long>(me) * s.peers[j].stride : s.pulled[2 * j];
      if (!uniform && s.pulled[2 * j + 1] != bytes) {
        last_message = "a2a: a node-mate sends a block of another size than this rank receives";
        err = std::max(err, static_cast<int>(MPI_ERR_TRUNCATE));
        continue;
      }
      from = base + s.peers[j].offset + at;
      pulls = true;
    }
    s.plan.push_back({from, b.recv + b.roff[src_rank], static_cast<unsigned long long>(bytes)});
    largest = std::max(largest, static_cast<unsigned long long>(bytes));
  }
  if (pulls) ++st.rounds;  // one IPC round, however many node-mates
  if (path == schedule::GpuPath::kernel) {
    if (const int rc = s.descs.get(s.plan.size() * sizeof(CopyDesc), st)) return rc;
    std::memcpy(s.descs.ptr, s.plan.data(), s.plan.size() * sizeof(CopyDesc));
    if (const int rc = launch_copies(reinterpret_cast<const CopyDesc*>(s.descs.ptr), static_cast<int>(s.plan.size()),
                                     largest, s.ipc))
      return rc;
  } else {
    for (const auto& c : s.plan)
      A2A_CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, s.ipc));
  }

  // Meanwhile, the other nodes' blocks through pinned host memory.
  if (!sends.empty() || !recvs.empty()) {
    CudaCopier copier(s.stage, s.events);
    const StagedSide out{&sends, const_cast<char*>(send), b.soff}, in{&recvs, b.recv, b.roff};
    if (const int rc = run_staged(ctx.comm, kStageTag, out, in, s.chunks.ptr, params.chunk, kStageSlots, copier, st))
      return rc;
  }
  A2A_CUDA_TRY(cudaStreamSynchronize(s.ipc));
  A2A_CUDA_TRY(cudaStreamSynchronize(s.stage));
  for (int i = 0; i < P; ++i)
    if (i != me && b.sbytes[i] > 0) {
      ++st.blocks_sent;
      st.bytes_sent += b.sbytes[i];
    }
  // Nobody leaves while a node-mate may still read its send buffer; errors
  // are agreed on the way.
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, ctx.comm)) return rc;
  return err;
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

int select_device(int ordinal) {
  A2A_CUDA_TRY(cudaSetDevice(ordinal));
  return MPI_SUCCESS;
}

// Device memory is owned through the CUDA driver, so a process that has not
// loaded libcuda holds none; asking the runtime there would start it (a few
// milliseconds on a program's first call, for nothing).
bool driver_loaded() {
  static LoadedObject libcuda("libcuda.so");
  return libcuda.loaded();
}

Memory memory_of(const void* p) {
  if (!p || !driver_loaded()) return Memory::host;
  const Driver& d = driver();
  if (!d.pointer_attributes) return Memory::host;
  // A process that never initialised the driver holds no device memory, and
  // this call then fails without starting CUDA; host pointers read type 0.
  unsigned int type = 0, managed = 0;  // the CPU reads managed memory: host algorithms work on it, IPC does not
  CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void* into[2] = {&type, &managed};
  if (d.pointer_attributes(2, which, into, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return Memory::host;
  return type == CU_MEMORYTYPE_DEVICE && !managed ? Memory::device : Memory::host;
}

bool any_device(const void* a, const void* b) {
  return driver_loaded() && (memory_of(a) == Memory::device || memory_of(b) == Memory::device);
}

int ipc_alltoall(const UniformCall& call, const Knobs& params, schedule::GpuPath path) {
  const int P = call.P();
  std::vector<MPI_Aint> soff(P), roff(P);
  std::vector<long long> bytes(P, static_cast<long long>(call.bs));
  for (int i = 0; i < P; ++i) {
    soff[i] = i * call.sstride;
    roff[i] = i * call.rstride;
  }
  const VarCall blocks{call.send, soff.data(), bytes.data(), call.recv, roff.data(), bytes.data(),
                       call.ctx, call.stats, static_cast<long long>(call.bs)};
  return run_ipc(blocks, params, path, true, call.sstride);
}

int ipc_alltoallv(const VarCall& call, const Knobs& params, schedule::GpuPath path, bool as_alltoall) {
  const int P = call.P();
  const long long stride = P > 1 ? call.soff[1] - call.soff[0] : 0;
  return run_ipc(call, params, path, as_alltoall, stride);
}

int copy_to_host(void* host, const void* device, size_t bytes) {
  if (bytes > 0) A2A_CUDA_TRY(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  return MPI_SUCCESS;
}

int copy_to_device(void* device, const void* host, size_t bytes) {
  if (bytes > 0) A2A_CUDA_TRY(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  return MPI_SUCCESS;
}

int copy_blocks_to_device(char* device, const char* host, const MPI_Aint* off, const long long* bytes, int n) {
  for (int i = 0; i < n; ++i)
    if (bytes[i] > 0)
      A2A_CUDA_TRY(cudaMemcpyAsync(device + off[i], host + off[i], bytes[i], cudaMemcpyHostToDevice, cudaStreamPerThread));
  A2A_CUDA_TRY(cudaStreamSynchronize(cudaStreamPerThread));
  return MPI_SUCCESS;
}

char* staging(CommContext& ctx, int which, size_t bytes, Stats& stats) {
  Grown& g = state_of(ctx).mirror[which];
  return g.get(bytes > 0 ? bytes : 1, stats) == MPI_SUCCESS ? g.ptr : nullptr;
}

void* alloc_pinned(size_t bytes) {
  void* p = nullptr;
  return cudaMallocHost(&p, bytes > 0 ? bytes : 1) == cudaSuccess ? p : (cudaGetLastError(), nullptr);
}
void free_pinned(void* p) {
  if (p) cudaFreeHost(p);
}
void* alloc_device(size_t bytes) {
  void* p = nullptr;
  return cudaMalloc(&p, bytes > 0 ? bytes : 1) == cudaSuccess ? p : (cudaGetLastError(), nullptr);
}
void free_device(void* p) {
  if (p) cudaFree(p);
}

int fill_device(void* device, int value, size_t bytes) {
  A2A_CUDA_TRY(cudaMemset(device, value, bytes));
  return MPI_SUCCESS;
}

std::string last_error() { return last_message.empty() ? "no CUDA error recorded" : last_message; }
bool error_recorded() { return !last_message.empty(); }
void clear_last_error() { last_message.clear(); }

namespace {

// Median seconds of `body` (queued on `stream`) over `reps` runs.
template <class Body>
double median_time(int reps, cudaStream_t stream, Body&& body) {
  cudaEvent_t a, b;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1;
  std::vector<double> t;
  body();  // warm-up
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a, stream);
    body();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (cudaGetLastError() != cudaSuccess) return -1;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

double time_device_copy(size_t bytes) {
  char* a = static_cast<char*>(alloc_device(bytes));
  char* b = static_cast<char*>(alloc_device(bytes));
  double t = -1;
  if (a && b) t = median_time(5, nullptr, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, nullptr); });
  free_device(a);
  free_device(b);
  return t;
}

double time_floor_kernel(int P, size_t block, int iterations) {
  const size_t n = static_cast<size_t>(P) * P;
  char* src = static_cast<char*>(alloc_device(n * block));
  char* dst = static_cast<char*>(alloc_device(n * block));
  CopyDesc* descs = static_cast<CopyDesc*>(alloc_device(n * sizeof(CopyDesc)));
  double t = -1;
  if (src && dst && descs) {
    std::vector<CopyDesc> plan(n);
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < P; ++j) plan[static_cast<size_t>(i) * P + j] = {src + (static_cast<size_t>(i) * P + j) * block,
                                                                          dst + (static_cast<size_t>(j) * P + i) * block, block};
    if (cudaMemcpy(descs, plan.data(), n * sizeof(CopyDesc), cudaMemcpyHostToDevice) == cudaSuccess)
      t = median_time(iterations, nullptr, [&] { launch_copies(descs, static_cast<int>(n), block, nullptr); });
  }
  free_device(src);
  free_device(dst);
  free_device(descs);
  return t;
}

}  // namespace a2a::detail::gpu
