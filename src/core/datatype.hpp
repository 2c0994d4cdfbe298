// What the API layer needs to know of a user datatype, and int-safe packing
// of `count` elements into contiguous bytes (and back).
#pragma once
#include <mpi.h>

namespace a2a::detail {

struct TypeInfo {
  MPI_Count size = 0, extent = 0, true_lb = 0, true_extent = 0;
  // `count` consecutive elements form one gap-free run starting at buf + true_lb.
  bool contiguous(long long count) const {
    return size == true_extent && (count <= 1 || extent == size);
  }
};

int describe(MPI_Datatype type, TypeInfo& out);
int pack(const void* buf, long long count, MPI_Datatype type, const TypeInfo& info, char* out, MPI_Comm comm);
int unpack(const char* in, long long count, MPI_Datatype type, const TypeInfo& info, void* buf, MPI_Comm comm);

}  // namespace a2a::detail
