#include "first_call.hpp"

#include "a2a/a2a.hpp"
#include "a2a/interpose.hpp"

namespace a2a::shim {
namespace {

// Cheapest refusals first; a communicator a2a has met is most calls' answer
// (claim).  `stats`: leave the stats of the library's call (not while warming).
template <class Elements>
bool first_to_library(bool v, const void* sendbuf, MPI_Datatype stype, const void* recvbuf, MPI_Datatype rtype,
                      bool arrays, MPI_Comm comm, int min_ranks, bool stats, Elements sent_elements) {
  if (!interpose::runs_auto(v) || error_check() == ErrorCheck::agree) return false;
  // Types that differ run on bytes; alone on a communicator, native runs on a2a's duplicate.
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place && stype != rtype) return false;
  // Arguments a2a's checks reject go that way, to be reported as a2a reports them.
  if (rtype == MPI_DATATYPE_NULL || !arrays) return false;
  // No check of the communicator: an intercommunicator goes to the library either way.
  if (!interpose::claim(comm)) return false;
  int P = 1;
  if (PMPI_Comm_size(comm, &P) != MPI_SUCCESS || P < min_ranks || interpose::device_memory(recvbuf) ||
      (!in_place && interpose::device_memory(sendbuf))) {
    interpose::unclaim(comm);
    return false;
  }
  if (!stats) return true;
  int type_size = 0;
  PMPI_Type_size(in_place ? rtype : stype, &type_size);
  interpose::served_by_library(v, v ? 0 : P - 1, sent_elements(P) * type_size);
  return true;
}

bool alltoall_test(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, int min_ranks, bool stats) {
  const int count = sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
  return first_to_library(false, sendbuf, sendtype, recvbuf, recvtype, true, comm, min_ranks, stats,
                          [&](int P) { return static_cast<long long>(P - 1) * count; });
}

}  // namespace

bool first_alltoall_to_library(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall_test(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 2, true);
}

bool first_alltoallv_to_library(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;  // the send data is described by the receive arguments
  const int* counts = in_place ? recvcounts : sendcounts;
  const bool arrays = counts && (in_place ? rdispls : sdispls) && recvcounts && rdispls;
  return first_to_library(true, sendbuf, sendtype, recvbuf, recvtype, arrays, comm, 2, true, [&](int P) {
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    long long elements = 0;
    for (int i = 0; i < P; ++i) elements += i != me ? counts[i] : 0;
    return elements;
  });
}

void warm_first_call() {
  MPI_Comm fresh = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_SELF, &fresh) != MPI_SUCCESS) return;
  char one = 0, back = 0;
  alltoall_test(&one, 1, MPI_BYTE, &back, 1, MPI_BYTE, fresh, 1, false);
  interpose::forget(fresh);
  PMPI_Comm_free(&fresh);
}

}  // namespace a2a::shim
