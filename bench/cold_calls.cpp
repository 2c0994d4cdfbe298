// a2a's call path on cold caches (docs/results.md, "a2a's call path on
// cold caches"): the same MPI_Alltoall (4 long longs a block) or
// MPI_Alltoallv (1-200 long longs, counts new every call) through the
// library and through a2a with SPEC, interleaved, each call after writing
// MiB of memory (the application's work that evicts caches and TLB
// entries) and a barrier; prints the medians of 10,000 calls each and
// a2a's minus the library's.
//   mpirun -np 2 build/bench/cold_calls alltoall|alltoallv [MiB=4] [SPEC=" native"]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "a2a/a2a.h"

namespace {

volatile long sink;

void evict(std::vector<char>& junk) {
  long s = 0;
  for (size_t i = 0; i < junk.size(); i += 64) s += ++junk[i];
  sink = s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const bool v = argc > 1 && std::string(argv[1]) == "alltoallv";
  std::vector<char> junk(static_cast<size_t>(argc > 2 ? std::atoi(argv[2]) : 4) << 20);
  const char* spec = argc > 3 ? argv[3] : " native";  // named native: the hot call
  const int rounds = 2000, calls = 5;
  std::vector<double> library, a2a;
  std::vector<long long> sb(1 << 16), rb(1 << 16);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  unsigned seed = 1;  // the same on every rank
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 3; ++k) {
      const bool through_a2a = (k + r) % 3 == 1;  // the library twice per round, a2a once, rotated
      for (int c = 0; c < calls; ++c) {
        seed = seed * 1103515245 + 12345;
        const int n = 1 + static_cast<int>((seed >> 16) % 200);
        for (int d = 0, off = 0; d < P; off += sc[d], ++d) {
          sc[d] = n + d;
          sd[d] = off;
        }
        for (int d = 0, off = 0; d < P; off += rc[d], ++d) {
          rc[d] = n + me;
          rd[d] = off;
        }
        evict(junk);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (v && through_a2a)
          A2A_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_LONG_LONG, rb.data(), rc.data(), rd.data(),
                        MPI_LONG_LONG, MPI_COMM_WORLD, spec);
        else if (v)
          MPI_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_LONG_LONG, rb.data(), rc.data(), rd.data(),
                        MPI_LONG_LONG, MPI_COMM_WORLD);
        else if (through_a2a)
          A2A_Alltoall(sb.data(), 4, MPI_LONG_LONG, rb.data(), 4, MPI_LONG_LONG, MPI_COMM_WORLD, spec);
        else
          MPI_Alltoall(sb.data(), 4, MPI_LONG_LONG, rb.data(), 4, MPI_LONG_LONG, MPI_COMM_WORLD);
        (through_a2a ? a2a : library).push_back(MPI_Wtime() - t0);
      }
    }
  if (me == 0)
    std::printf("%s after %zu MiB: library %.3f us, a2a '%s' %.3f us, diff %.3f us\n", v ? "alltoallv" : "alltoall",
                junk.size() >> 20, median(library) * 1e6, spec, median(a2a) * 1e6,
                (median(a2a) - median(library)) * 1e6);
  MPI_Finalize();
  return 0;
}
