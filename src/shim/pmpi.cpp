// The PMPI drop-in library, liba2a_pmpi.so: applications run unchanged with
//   mpirun -x LD_PRELOAD=/path/liba2a_pmpi.so -x A2A_ALLTOALL=tra ./app
// (or linked before the MPI library).  MPI_Alltoall and MPI_Alltoallv run
// the algorithm of A2A_ALLTOALL / A2A_ALLTOALLV (default auto) with MPI's
// own error semantics: argument checks stay local (A2A_ERROR_CHECK=local
// unless set), and an error goes to the communicator's error handler.  What
// a2a does not serve, intercommunicators, goes to the MPI library's PMPI
// call.  The library's own collectives are reached through PMPI, so "native"
// never recurses into the shim.
#include <mpi.h>

#include <cstdlib>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"

namespace {

// MPI's semantics: no agreement round unless the user asked for one.
void shim_defaults() {
  static const bool once = [] {
    if (!std::getenv("A2A_ERROR_CHECK")) a2a::set_error_check(a2a::ErrorCheck::local);
    return true;
  }();
  (void)once;
}

bool inter(MPI_Comm comm) {
  int flag = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &flag) == MPI_SUCCESS && flag;
}

int report(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS && comm != MPI_COMM_NULL) MPI_Comm_call_errhandler(comm, rc);
  return rc;
}

}  // namespace

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  if (inter(comm)) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  shim_defaults();
  return report(comm, A2A_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr));
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  if (inter(comm))
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  shim_defaults();
  return report(comm, A2A_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, nullptr));
}
