// cuda-ipc's row (core/row.hpp), listed by the registry.  Its entries are
// host fallbacks: device buffers never reach the registry's entry, the API
// runs them in src/gpu (gpu.hpp; the algorithm and its paths: cuda_ipc.cu,
// docs/gpu.md).
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "core/row.hpp"
#include "gpu/gpu.hpp"

namespace a2a::detail {

namespace {

Task<Result> host_buffers(const UniformCall&, const Params&) { co_return Result::fallback(); }
Task<Result> host_buffers(const VarCall&, const Params&) { co_return Result::fallback(); }

}  // namespace

AlgorithmInfo cuda_ipc_row(Collective coll) {
  static const gpu::Knobs defaults{};
  static const std::vector<std::string> paths = {"kernel", "memcpy", "hybrid"};  // GpuPathMode's order
  static const std::vector<ParamInfo> knobs = {
      {"path", KnobKind::choice, paths[static_cast<int>(defaults.path)],
       "kernel, memcpy, or hybrid: a host algorithm (staged) below ipc-threshold, the kernel below memcpy-threshold, "
       "cudaMemcpyAsync above",
       set_knob<&gpu::Knobs::path>, 0, 0, paths},
      bytes_knob("ipc-threshold", defaults.ipc_threshold, 0, 1LL << 62,
                 "hybrid: smallest block (bytes; K, M, G) copied over CUDA IPC",
                 set_knob<&gpu::Knobs::ipc_threshold>),
      bytes_knob("memcpy-threshold", defaults.memcpy_threshold, 0, 1LL << 62,
                 "hybrid: smallest block copied with cudaMemcpyAsync",
                 set_knob<&gpu::Knobs::memcpy_threshold>),
      bytes_knob("chunk", defaults.chunk, 1, 1LL << 30,
                 "inter-node blocks go through pinned host memory in chunks of this many bytes (<= 1G)",
                 set_knob<&gpu::Knobs::chunk>)};
  return row_of(coll,
                {.name = "cuda-ipc",
                 .summary = "device buffers: node-mates' blocks pulled over CUDA IPC, other nodes' staged through "
                            "pinned memory",
                 .params = knobs,
                 .knobs = Params(defaults),
                 .fallback = "spread-out",
                 .needs = kNeedsDevice},
                host_buffers, host_buffers);
}

}  // namespace a2a::detail
