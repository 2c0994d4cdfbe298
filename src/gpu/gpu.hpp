// What the rest of a2a sees of the GPU part (src/gpu/cuda_ipc.cu where nvcc
// was found, src/gpu/no_cuda.cpp elsewhere): where a buffer lives, the
// cuda-ipc algorithm, staging of device buffers for host algorithms, and the
// few device operations the bench and the tests need.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

#include "schedule/gpu_plan.hpp"
#include "core/algorithm.hpp"

namespace a2a::detail::gpu {

bool built_with_cuda();
// Devices this process sees (0 without CUDA, without a driver or a GPU).
int device_count();
// cudaSetDevice (MPI error class).
int select_device(int ordinal);
// The ranks of a node (MPI_COMM_TYPE_SHARED of comm) take the node's GPUs
// round-robin (one GPU: all on it); collective.  MPI_ERR_OTHER without one.
inline int select_local_device(MPI_Comm comm) {
  MPI_Comm node;
  int local = 0, rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  const int n = device_count();
  return n > 0 ? select_device(local % n) : MPI_ERR_OTHER;
}

// Where a buffer lives: device memory (cudaMalloc; usable for IPC) or host
// memory (anything else, managed memory included: the CPU can read it).
// Without CUDA every buffer is host memory.  A process that never
// initialised the CUDA driver cannot hold device memory, so host-only
// programs pay no CUDA start-up here.
enum class Memory { host, device };
Memory memory_of(const void* p);
// Whether a or b (either may be null) is device memory, the driver asked
// once: the shim's first-call test, on cold memory.
bool any_device(const void* a, const void* b);

// cuda-ipc's knobs (its row: src/gpu/row.cpp): the copy path and the
// hybrid's thresholds (block bytes), the staged chunk's bytes.
struct Knobs {
  schedule::GpuPathMode path = schedule::GpuPathMode::hybrid;
  long long ipc_threshold = 4096, memcpy_threshold = 512 * 1024, chunk = 1 << 20;
};

// The cuda-ipc algorithm on device buffers (the API checked that every rank
// passes device memory and contiguous types).  `path` is what ran: kernel or
// memcpy (hybrid below its ipc-threshold never comes here: the API stages).
int ipc_alltoall(const UniformCall& call, const Knobs& knobs, schedule::GpuPath path);
// as_alltoall: every block on every rank has one size and every rank's send
// blocks are evenly spaced (agreed by the caller's allreduce), so no
// displacement exchange is needed.
int ipc_alltoallv(const VarCall& call, const Knobs& knobs, schedule::GpuPath path, bool as_alltoall);

// Per-communicator GPU state (node communicator, streams, IPC handle caches,
// staging); freed with the communicator's context.
struct State;

// Synchronous copies between device and host memory (the staging of device
// buffers for host algorithms, the bench and the tests); MPI error classes.
int copy_to_host(void* host, const void* device, size_t bytes);
int copy_to_device(void* device, const void* host, size_t bytes);
// Copies block i (bytes[i] long, at off[i] in both) of host to device, all
// queued, then one wait.
int copy_blocks_to_device(char* device, const char* host, const MPI_Aint* off, const long long* bytes, int n);
// Grow-only pinned host buffers of the communicator for staging device
// buffers (which = 0 send side, 1 receive side), counted in temp_bytes;
// nullptr when they cannot be had.
char* staging(CommContext& ctx, int which, size_t bytes, Stats& stats);
// Pinned host memory for staging (plain memory without CUDA).
void* alloc_pinned(size_t bytes);
void free_pinned(void* p);
void* alloc_device(size_t bytes);  // nullptr on failure or without CUDA
void free_device(void* p);

// For the bench: seconds of one device-to-device cudaMemcpy of `bytes` (the
// median of a few), and the single-process floor, one kernel copying the
// P x P blocks of `block` bytes from src (block (i, j) at (i*P + j)*block) to
// dst transposed; seconds, or a negative value without a device.
double time_device_copy(size_t bytes);
double time_floor_kernel(int P, size_t block, int iterations);
// Sets every byte of a device buffer (the bench's "clear before checking").
int fill_device(void* device, int value, size_t bytes);
// The last CUDA error as text, for messages; whether one was recorded
// since clear_last_error() (this thread).
std::string last_error();
bool error_recorded();
void clear_last_error();

}  // namespace a2a::detail::gpu
