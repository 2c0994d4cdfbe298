// Spec strings (the call's argument, A2A_ALLTOALL/A2A_ALLTOALLV): resolve
// against both collectives at a P and block size taken from the input.
// Whatever comes in: MPI_SUCCESS with a canonical spec that resolves again
// to itself, or MPI_ERR_ARG with a message starting "a2a: ".
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schedule/gpu_plan.hpp"
#include "registry/registry.hpp"

using namespace a2a::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int P = 1 + data[0] % 64;
  const long long bs = data[1];
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  for (Collective coll : {Collective::alltoall, Collective::alltoallv}) {
    Resolved r;
    std::string error;
    const int rc = resolve(coll, text, P, bs, r, error);
    if (rc != MPI_SUCCESS) {
      if (rc != MPI_ERR_ARG || error.rfind("a2a: ", 0) != 0) std::abort();
      continue;
    }
    if (r.canonical.empty()) std::abort();
    Resolved again;
    if (resolve(coll, r.canonical, P, bs, again, error) != MPI_SUCCESS || again.canonical != r.canonical) std::abort();
  }
  long long bytes = 0;
  (void)schedule::parse_bytes(text, bytes);
  return 0;
}
