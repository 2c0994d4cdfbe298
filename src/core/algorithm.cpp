#include <algorithm>

#include "core/algorithm.hpp"

namespace a2a::detail {

Task<int> VarCall::max_block(long long& M) const {
  stats.meta_bytes_sent += static_cast<long long>(sizeof M);
  if (global_max >= 0) {
    M = global_max;
    co_return MPI_SUCCESS;
  }
  if (plan && plan->take(&M, 1)) co_return MPI_SUCCESS;
  M = 0;
  for (int i = 0; i < P(); ++i) M = std::max(M, sbytes[i]);
  const int rc = co_await allreduce_max(M, comm());
  if (plan) plan->record(&M, 1);
  co_return rc;
}

}  // namespace a2a::detail
