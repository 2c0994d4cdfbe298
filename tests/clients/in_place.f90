! MPI_ALLTOALL with MPI_IN_PLACE for client.f90, in a file of its own:
! gfortran compares the arguments of every call to one external procedure
! in a file, and where MPICH's `use mpi` gives MPI_ALLTOALL no interface it
! warns that MPI_IN_PLACE (a scalar) stands where the other call passes an
! array.
subroutine alltoall_in_place(rbuf, n, ierr)
  use mpi
  implicit none
  integer, intent(inout) :: rbuf(*)
  integer, intent(in) :: n
  integer, intent(out) :: ierr
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
end subroutine
