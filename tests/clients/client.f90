! An unchanged Fortran MPI program (use mpi): MPI_ALLTOALL, MPI_ALLTOALL with
! MPI_IN_PLACE and MPI_ALLTOALLV with encoded data, checked on arrival, then
! MPI_IALLTOALL and MPI_IALLTOALLV completed by MPI_WAIT, and a persistent
! alltoall (persistent.F90) started 5 times with the data changed between
! starts, then freed (by a2a where a progress hook serves them, else by the
! library: the last line says).  It is
! linked with liba2a_pmpi; A2A_Last_stats, reached through ISO_C_BINDING,
! confirms the shim ran the algorithm named by A2A_ALLTOALL / A2A_ALLTOALLV.
program client
  use mpi
  use iso_c_binding
  implicit none
  type, bind(c) :: stats_t
    character(kind=c_char) :: algorithm(128)
    integer(c_long_long) :: rest(9)
  end type
  interface
    integer(c_int) function last_stats(st) bind(c, name="A2A_Last_stats")
      import :: c_int, stats_t
      type(stats_t), intent(out) :: st
    end function
  end interface
  integer, parameter :: n = 3
  integer :: rank, np, ierr, s, d, j, bad, so, ro, request, round
  integer, allocatable :: sbuf(:), rbuf(:), sc(:), sd(:), rc(:), rd(:), vbuf(:), wbuf(:)
  logical :: via_a2a, nb_via_a2a

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  bad = 0
  via_a2a = .true.
  allocate(sbuf(n * np), rbuf(n * np), sc(np), sd(np), rc(np), rd(np))

  call fill_uniform(0)
  call MPI_Alltoall(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check_uniform(0)
  via_a2a = via_a2a .and. ran("A2A_ALLTOALL")

  rbuf = sbuf
  call alltoall_in_place(rbuf, n, ierr)  ! in_place.f90
  call check_uniform(0)
  via_a2a = via_a2a .and. ran("A2A_ALLTOALL")

  ! alltoallv: s sends mod(s + d, 3) integers to d, blocks in reverse order
  so = 0
  ro = 0
  do d = np - 1, 0, -1
    sc(d + 1) = mod(rank + d, 3)
    sd(d + 1) = so
    so = so + sc(d + 1)
    rc(d + 1) = mod(d + rank, 3)
    rd(d + 1) = ro
    ro = ro + rc(d + 1)
  end do
  deallocate(sbuf, rbuf)
  allocate(sbuf(max(so, 1)), rbuf(max(ro, 1)))
  do d = 0, np - 1
    do j = 0, sc(d + 1) - 1
      sbuf(sd(d + 1) + j + 1) = code(rank, d, j)
    end do
  end do
  call MPI_Alltoallv(sbuf, sc, sd, MPI_INTEGER, rbuf, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check_v(rbuf)
  via_a2a = via_a2a .and. ran("A2A_ALLTOALLV")

  ! The nonblocking calls: the last stats name alltoallv's algorithm until
  ! a2a runs the alltoall.
  allocate(vbuf(size(sbuf)), wbuf(size(rbuf)))
  vbuf = sbuf
  deallocate(sbuf, rbuf)
  allocate(sbuf(n * np), rbuf(n * np))
  call fill_uniform(0)
  rbuf = -1
  call MPI_Ialltoall(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check_uniform(0)
  nb_via_a2a = ran("A2A_ALLTOALL")
  wbuf = -1
  call MPI_Ialltoallv(vbuf, sc, sd, MPI_INTEGER, wbuf, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check_v(wbuf)
  nb_via_a2a = nb_via_a2a .and. ran("A2A_ALLTOALLV")
  if (request /= MPI_REQUEST_NULL) bad = bad + 1

  call alltoall_init(sbuf, n, rbuf, request, ierr)
  do round = 1, 5
    call fill_uniform(round)
    rbuf = -1
    call MPI_Start(request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    call check_uniform(round)
  end do
  call MPI_Request_free(request, ierr)
  if (request /= MPI_REQUEST_NULL) bad = bad + 1
  nb_via_a2a = nb_via_a2a .and. ran("A2A_ALLTOALL")  ! its stats come with the free

  if (.not. via_a2a) bad = bad + 1000000
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (bad == 0) then
      if (nb_via_a2a) then
        print '(a,i0,a)', 'fortran client: P=', np, &
          ' alltoall, in-place and alltoallv via a2a: ok; nonblocking, persistent: ok via a2a'
      else
        print '(a,i0,a)', 'fortran client: P=', np, &
          ' alltoall, in-place and alltoallv via a2a: ok; nonblocking, persistent: ok via the library'
      end if
    else
      print '(a,i0)', 'fortran client: WRONG ', bad
    end if
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1

contains

  integer function code(src, dst, idx)
    integer, intent(in) :: src, dst, idx
    code = (src * 64 + dst) * 1000 + idx
  end function

  ! alltoall's blocks, each value shifted by `round` (a persistent start's)
  subroutine fill_uniform(round)
    integer, intent(in) :: round
    do d = 0, np - 1
      do j = 0, n - 1
        sbuf(d * n + j + 1) = code(rank, d, j) + round * 10000000
      end do
    end do
  end subroutine

  subroutine check_uniform(round)
    integer, intent(in) :: round
    do s = 0, np - 1
      do j = 0, n - 1
        if (rbuf(s * n + j + 1) /= code(s, rank, j) + round * 10000000) bad = bad + 1
      end do
    end do
  end subroutine

  ! alltoallv's blocks in buf, at rd
  subroutine check_v(buf)
    integer, intent(in) :: buf(:)
    do s = 0, np - 1
      do j = 0, rc(s + 1) - 1
        if (buf(rd(s + 1) + j + 1) /= code(s, rank, j)) bad = bad + 1
      end do
    end do
  end subroutine

  logical function ran(env)
    character(*), intent(in) :: env
    character(len=128) :: want
    type(stats_t) :: st
    integer :: k, length, rc_
    call get_environment_variable(env, want, length)
    rc_ = last_stats(st)
    ran = length > 0
    if (want(1:length) == 'auto') then  ! whatever auto chose
      ran = st%algorithm(1) /= c_null_char
      return
    end if
    do k = 1, length
      if (want(k:k) == ':') exit
      ran = ran .and. st%algorithm(k) == want(k:k)
    end do
  end function

end program client
