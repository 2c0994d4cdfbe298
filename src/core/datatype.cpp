#include "core/datatype.hpp"

#include <algorithm>
#include <climits>

namespace a2a::detail {

int describe(MPI_Datatype type, TypeInfo& out) {
  MPI_Count lb = 0;
  int rc = MPI_Type_size_x(type, &out.size);
  if (rc == MPI_SUCCESS) rc = MPI_Type_get_extent_x(type, &lb, &out.extent);
  if (rc == MPI_SUCCESS) rc = MPI_Type_get_true_extent_x(type, &out.true_lb, &out.true_extent);
  return rc;
}

namespace {
// Elements per MPI_Pack call so that its int byte count cannot overflow.
long long chunk_elements(const TypeInfo& info) {
  return info.size > 0 ? std::max<long long>(1, INT_MAX / info.size) : INT_MAX;
}
}  // namespace

int pack(const void* buf, long long count, MPI_Datatype type, const TypeInfo& info, char* out, MPI_Comm comm) {
  const long long step = chunk_elements(info);
  for (long long done = 0; done < count; done += step) {
    const int n = static_cast<int>(std::min(step, count - done));
    int position = 0;
    const int rc = MPI_Pack(static_cast<const char*>(buf) + done * info.extent, n, type, out + done * info.size,
                            static_cast<int>(n * info.size), &position, comm);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int unpack(const char* in, long long count, MPI_Datatype type, const TypeInfo& info, void* buf, MPI_Comm comm) {
  const long long step = chunk_elements(info);
  for (long long done = 0; done < count; done += step) {
    const int n = static_cast<int>(std::min(step, count - done));
    int position = 0;
    const int rc = MPI_Unpack(in + done * info.size, static_cast<int>(n * info.size), &position,
                              static_cast<char*>(buf) + done * info.extent, n, type, comm);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
