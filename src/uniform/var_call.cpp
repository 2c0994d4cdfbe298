#include <algorithm>

#include "uniform/uniform.hpp"

namespace a2a::detail {

int VarCall::max_block(long long& M) const {
  stats.meta_bytes_sent += static_cast<long long>(sizeof M);
  if (global_max >= 0) {
    M = global_max;
    return MPI_SUCCESS;
  }
  M = 0;
  for (int i = 0; i < P(); ++i) M = std::max(M, sbytes[i]);
  return MPI_Allreduce(MPI_IN_PLACE, &M, 1, MPI_LONG_LONG, MPI_MAX, comm());
}

}  // namespace a2a::detail
