// What the API layer needs to know of a user datatype, int-safe packing of
// `count` elements into contiguous bytes (and back), and the owner of the
// datatypes the library makes for itself.
#pragma once
#include <mpi.h>

#include <utility>

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

// A datatype of the library's own (make_bytes_type, make_blocks_type:
// core/transport.hpp), freed with its owner, so no early return leaks it.
// Move-only; a call's types live no longer than the call, before
// MPI_Finalize.
class OwnedType {
 public:
  OwnedType() = default;
  OwnedType(OwnedType&& o) noexcept : t_(std::exchange(o.t_, MPI_DATATYPE_NULL)) {}
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  ~OwnedType() { reset(); }
  MPI_Datatype get() const { return t_; }
  MPI_Datatype* out() {  // for a make_*_type call: the old type freed first
    reset();
    return &t_;
  }
  int commit() { return MPI_Type_commit(&t_); }
  void reset() {
    if (t_ != MPI_DATATYPE_NULL) MPI_Type_free(&t_);
  }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

// p as an absolute address, for datatypes used with MPI_BOTTOM.
inline MPI_Aint address(const void* p) {
  MPI_Aint a = 0;
  MPI_Get_address(p, &a);
  return a;
}

}  // namespace a2a::detail
