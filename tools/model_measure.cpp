// Ping-pong between ranks 0 and 1 for the alltoallv cost model: alpha is half
// the round trip of a 1-byte message, beta the extra time per byte of a
// 1 MiB one (medians of 50 round trips each).
#include <mpi.h>

#include <algorithm>
#include <vector>

namespace {
double half_round_trip(int rank, std::vector<char>& buf, int bytes) {
  std::vector<double> t;
  for (int it = 0; it < 60; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    if (it >= 10) t.push_back((MPI_Wtime() - t0) / 2);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}
}  // namespace

// True on rank 0 (which then prints the model), false elsewhere.
bool measure_alpha_beta(double& alpha, double& beta) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P >= 2) {
    const int big = 1 << 20;
    std::vector<char> buf(big);
    alpha = half_round_trip(rank, buf, 1);
    beta = std::max(0.0, half_round_trip(rank, buf, big) - alpha) / big;
  }
  MPI_Bcast(&alpha, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&beta, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rank == 0;
}
