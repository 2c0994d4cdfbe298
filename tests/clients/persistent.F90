! The persistent alltoall of this MPI library (MPI-4's, or Open MPI's
! MPIX_ pcollreq extension), for client.f90.
subroutine alltoall_init(sbuf, n, rbuf, request, ierr)
  use mpi
  implicit none
  integer :: sbuf(*), rbuf(*), n, request, ierr
#ifdef A2A_MPIX
  call MPIX_Alltoall_init(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, request, ierr)
#else
  call MPI_Alltoall_init(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, request, ierr)
#endif
end subroutine
