"""mpi4py's comm.Ialltoall and comm.Alltoall under the preloaded PMPI shim
(Debian's python3-mpi4py): the nonblocking one goes to the MPI library (the
shim serves only the blocking collectives, docs/architecture.md), the
blocking one to a2a; both right, with data encoding (source, destination,
index), and the nonblocking one overlapping a blocking receive (the hang
test's shape)."""
import array
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, P = comm.Get_rank(), comm.Get_size()
n = 4
value = lambda src, dst, j: (src * 64 + dst) * 1000 + j
send = array.array("i", [value(rank, d, j) for d in range(P) for j in range(n)])
wrong = 0
for nonblocking in (True, False):
    recv = array.array("i", [-1] * (n * P))
    if nonblocking:
        req = comm.Ialltoall([send, MPI.INT], [recv, MPI.INT])
        if rank == 0 and P > 1:
            comm.recv(source=1, tag=77)
            req.Wait()
        else:
            req.Wait()
            if rank == 1:
                comm.send(0, dest=0, tag=77)
    else:
        comm.Alltoall([send, MPI.INT], [recv, MPI.INT])
    wrong += sum(recv[s * n + j] != value(s, rank, j) for s in range(P) for j in range(n))
wrong = comm.allreduce(wrong)
if rank == 0:
    print("mpi4py ialltoall: %s (%d wrong)" % ("ok" if wrong == 0 else "WRONG", wrong))
