// The shim's policy for a communicator's first all-to-all (first_call.cpp).
#pragma once
#include <mpi.h>

namespace a2a::shim {

// True where the shim hands this call to the MPI library untouched: auto's
// first call on a communicator a2a has not met (it would run native and
// decide nothing), host buffers, one type, arguments a2a would accept, more
// than one rank.  It marks the communicator (the next call makes its
// context and decides) and leaves the stats of a native call.  A
// communicator used once (FFTW makes one per plan) then costs what the
// library costs.
bool first_alltoall_to_library(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
bool first_alltoallv_to_library(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm);

// The test run once on a communicator of its own and taken back (MPI_Init):
// on cold code and memory it cost the application's first call 4-6 us.
void warm_first_call();

}  // namespace a2a::shim
