// The GPU part where nvcc was not found: every buffer is host memory, so the
// API never takes the device paths, and cuda-ipc falls back to its host
// algorithm (spread-out, named in the stats).  The device operations the
// bench and the tests ask for report that no device is there.
#include "gpu/gpu.hpp"

#include <cstring>

namespace a2a::detail::gpu {


bool built_with_cuda() { return false; }
int device_count() { return 0; }
int select_device(int) { return MPI_ERR_OTHER; }
Memory memory_of(const void*) { return Memory::host; }
bool any_device(const void*, const void*) { return false; }

int ipc_alltoall(const UniformCall&, const Knobs&, schedule::GpuPath) { return MPI_ERR_OTHER; }
int ipc_alltoallv(const VarCall&, const Knobs&, schedule::GpuPath, bool) { return MPI_ERR_OTHER; }

int copy_to_host(void*, const void*, size_t) { return MPI_ERR_OTHER; }
int copy_to_device(void*, const void*, size_t) { return MPI_ERR_OTHER; }
int copy_blocks_to_device(char*, const char*, const MPI_Aint*, const long long*, int) { return MPI_ERR_OTHER; }
char* staging(CommContext&, int, size_t, Stats&) { return nullptr; }
void* alloc_pinned(size_t bytes) { return new char[bytes > 0 ? bytes : 1]; }
void free_pinned(void* p) { delete[] static_cast<char*>(p); }
void* alloc_device(size_t) { return nullptr; }
void free_device(void*) {}
double time_device_copy(size_t) { return -1; }
double time_floor_kernel(int, size_t, int) { return -1; }
int fill_device(void*, int, size_t) { return MPI_ERR_OTHER; }
std::string last_error() { return "a2a was built without CUDA (nvcc was not found)"; }
bool error_recorded() { return false; }
void clear_last_error() {}

}  // namespace a2a::detail::gpu
