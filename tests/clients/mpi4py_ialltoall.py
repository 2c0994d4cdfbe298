"""mpi4py's comm.Ialltoall, comm.Ialltoallv and comm.Alltoall under the
preloaded PMPI shim (Debian's python3-mpi4py): all three served by a2a on
Open MPI (its progress hook advances the nonblocking ones inside mpi4py's
own MPI calls), with data encoding (source, destination, index) at
alltoallv's reversed, gapped displacements, and each nonblocking one
overlapping a blocking receive (the hang test's shape)."""
import array
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, P = comm.Get_rank(), comm.Get_size()
n = 4
value = lambda src, dst, j: (src * 64 + dst) * 1000 + j
displ = [(n + 1) * (P - 1 - d) for d in range(P)]  # reversed, one element apart
wrong = 0
for kind in ("ialltoall", "ialltoallv", "alltoall"):
    if kind == "ialltoallv":
        send = array.array("i", [-2] * ((n + 1) * P))
        for d in range(P):
            send[displ[d]:displ[d] + n] = array.array("i", [value(rank, d, j) for j in range(n)])
        recv = array.array("i", [-1] * ((n + 1) * P))
        counts = [n] * P
        req = comm.Ialltoallv([send, (counts, displ), MPI.INT], [recv, (counts, displ), MPI.INT])
    else:
        send = array.array("i", [value(rank, d, j) for d in range(P) for j in range(n)])
        recv = array.array("i", [-1] * (n * P))
        if kind == "alltoall":
            comm.Alltoall([send, MPI.INT], [recv, MPI.INT])
            req = None
        else:
            req = comm.Ialltoall([send, MPI.INT], [recv, MPI.INT])
    if req is not None:
        if rank == 0 and P > 1:
            comm.recv(source=1, tag=77)
            req.Wait()
        else:
            req.Wait()
            if rank == 1:
                comm.send(0, dest=0, tag=77)
    at = displ if kind == "ialltoallv" else [s * n for s in range(P)]
    wrong += sum(recv[at[s] + j] != value(s, rank, j) for s in range(P) for j in range(n))
    if kind == "ialltoallv":
        wrong += sum(recv[at[s] + n] != -1 for s in range(P))
wrong = comm.allreduce(wrong)
if rank == 0:
    print("mpi4py ialltoall: %s (%d wrong)" % ("ok" if wrong == 0 else "WRONG", wrong))
