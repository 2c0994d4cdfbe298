// The timing loop `a2a bench` and `a2a tune` share: every iteration runs
// each row once, in an order shuffled every iteration (the same on every
// rank: same seed), after a barrier, so noise on a shared machine and the
// cache state left by the previous row hit all rows alike.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace a2a::tools {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Nothing to do around a row's call.
struct NoHook {
  int operator()(size_t) const { return 0; }
};

// t[row][it] = seconds of row's call in timed iteration it (after `warmup`
// untimed ones).  run(row) makes the call and returns its MPI code; on a
// failure the loop stops with that code and `failed` = the row.  batch > 1
// times that many calls back to back and counts their mean (for call
// overheads below the timer's resolution).  before/after(row) run around
// the timed calls, untimed (the bench's twin rows set MPI_T variables there).
template <class Run, class Before = NoHook, class After = NoHook>
int time_rows(size_t rows, int warmup, int iters, unsigned seed, Run&& run, std::vector<std::vector<double>>& t,
              size_t& failed, int batch = 1, Before&& before = Before{}, After&& after = After{}) {
  t.assign(rows, std::vector<double>(iters));
  std::vector<size_t> order(rows);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 shuffler(seed);
  for (int it = -warmup; it < iters; ++it) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (size_t a : order) {
      int rc = before(a);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int b = 0; b < batch && rc == MPI_SUCCESS; ++b) rc = run(a);
      const double dt = (MPI_Wtime() - t0) / batch;
      if (const int e = after(a); rc == MPI_SUCCESS) rc = e;
      if (rc != MPI_SUCCESS) {
        failed = a;
        return rc;
      }
      if (it >= 0) t[a][it] = dt;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace a2a::tools
