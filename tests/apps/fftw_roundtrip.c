/* A 3-D complex FFTW MPI transform round trip, the shim's application test.
 * Forward with FFTW_MPI_TRANSPOSED_OUT and backward with TRANSPOSED_IN are
 * the plans whose global transposes FFTW does with MPI_Alltoall (equal
 * blocks) or MPI_Alltoallv (unequal ones, e.g. 30 rows over 4 ranks).
 * Usage: fftw_roundtrip [N0xN1xN2 ...] (default 30x30x30 32x32x32).
 * FFTW_ROUNDTRIP_REPEAT=K: after the checks, each shape's plans run K more
 * round trips (plans are made to be reused: the steady state of the
 * transposes, where the first round trip is their cold start).
 * Checks a few forward coefficients against the direct DFT sum and the
 * normalised round trip against the input; prints one line per shape and
 * exits non-zero on a failure. */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic input from the global index, so every rank can compute it. */
static void value(ptrdiff_t i, ptrdiff_t j, ptrdiff_t k, double v[2]) {
  v[0] = sin(0.37 * (double)i + 1.3 * (double)j) + 0.01 * (double)k;
  v[1] = cos(0.11 * (double)(i * j) + 0.7 * (double)k);
}

static void fill(fftw_complex* in, ptrdiff_t ln0, ptrdiff_t s0, ptrdiff_t n1, ptrdiff_t n2) {
  for (ptrdiff_t i = 0; i < ln0; ++i)
    for (ptrdiff_t j = 0; j < n1; ++j)
      for (ptrdiff_t k = 0; k < n2; ++k) value(s0 + i, j, k, in[(i * n1 + j) * n2 + k]);
}

static int roundtrip(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, int rank, long repeat) {
  ptrdiff_t ln0, s0, ln1, s1;
  const ptrdiff_t alloc = fftw_mpi_local_size_3d_transposed(n0, n1, n2, MPI_COMM_WORLD, &ln0, &s0, &ln1, &s1);
  fftw_complex *in = fftw_alloc_complex(alloc), *mid = fftw_alloc_complex(alloc), *out = fftw_alloc_complex(alloc);
  /* Out of place, input destroyable: the conditions under which FFTW picks
   * its MPI_Alltoall(v) transpose. */
  const unsigned flags = FFTW_ESTIMATE | FFTW_DESTROY_INPUT;
  fftw_plan fwd = fftw_mpi_plan_dft_3d(n0, n1, n2, in, mid, MPI_COMM_WORLD, FFTW_FORWARD, flags | FFTW_MPI_TRANSPOSED_OUT);
  fftw_plan bwd = fftw_mpi_plan_dft_3d(n0, n1, n2, mid, out, MPI_COMM_WORLD, FFTW_BACKWARD, flags | FFTW_MPI_TRANSPOSED_IN);
  if (!fwd || !bwd) {
    if (rank == 0) printf("fftw_roundtrip %tdx%tdx%td: FAIL (no plan)\n", n0, n1, n2);
    return 1;
  }
  fill(in, ln0, s0, n1, n2);
  fftw_execute(fwd);

  /* Forward spot checks: X[a,b,c] = sum x[i,j,l] e^{-2 pi i (ai/n0 + bj/n1 + cl/n2)},
   * each rank summing its rows; the output is transposed (rows of n1 first). */
  const ptrdiff_t spots[3][3] = {{0, 0, 0}, {1, 2, 3}, {n0 - 1, n1 / 2 + 1, n2 - 2}};
  double spot_err = 0;
  for (int s = 0; s < 3; ++s) {
    const ptrdiff_t a = spots[s][0], b = spots[s][1], c = spots[s][2];
    double sum[2] = {0, 0}, got[2] = {0, 0}, v[2];
    for (ptrdiff_t i = s0; i < s0 + ln0; ++i)
      for (ptrdiff_t j = 0; j < n1; ++j)
        for (ptrdiff_t l = 0; l < n2; ++l) {
          const double t = -2 * M_PI * ((double)(a * i % n0) / n0 + (double)(b * j % n1) / n1 + (double)(c * l % n2) / n2);
          value(i, j, l, v);
          sum[0] += v[0] * cos(t) - v[1] * sin(t);
          sum[1] += v[0] * sin(t) + v[1] * cos(t);
        }
    if (b >= s1 && b < s1 + ln1) memcpy(got, mid[((b - s1) * n0 + a) * n2 + c], sizeof got);
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    spot_err = fmax(spot_err, hypot(got[0] - sum[0], got[1] - sum[1]) / (double)(n0 * n1 * n2));
  }

  fftw_execute(bwd);
  double err = 0, v[2];
  const double scale = 1.0 / (double)(n0 * n1 * n2);
  for (ptrdiff_t i = 0; i < ln0; ++i)
    for (ptrdiff_t j = 0; j < n1; ++j)
      for (ptrdiff_t k = 0; k < n2; ++k) {
        const double* o = out[(i * n1 + j) * n2 + k];
        value(s0 + i, j, k, v);
        err = fmax(err, hypot(o[0] * scale - v[0], o[1] * scale - v[1]));
      }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (long r = 0; r < repeat; ++r) {  /* the input is destroyed by each forward */
    fill(in, ln0, s0, n1, n2);
    fftw_execute(fwd);
    fftw_execute(bwd);
  }
  const int ok = err < 1e-10 && spot_err < 1e-10;
  if (rank == 0)
    printf("fftw_roundtrip %tdx%tdx%td: %s (round-trip max error %.3g, forward spot error %.3g)\n", n0, n1, n2,
           ok ? "ok" : "FAIL", err, spot_err);
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(bwd);
  fftw_free(in);
  fftw_free(mid);
  fftw_free(out);
  return !ok;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* defaults[] = {"30x30x30", "32x32x32"};
  const int n = argc > 1 ? argc - 1 : 2;
  const char* repeat_env = getenv("FFTW_ROUNDTRIP_REPEAT");
  const long repeat = repeat_env ? strtol(repeat_env, NULL, 10) : 0;
  int failed = 0;
  for (int s = 0; s < n; ++s) {
    const char* shape = argc > 1 ? argv[s + 1] : defaults[s];
    long a, b, c;
    if (sscanf(shape, "%ldx%ldx%ld", &a, &b, &c) != 3 || a < 1 || b < 1 || c < 1) {
      if (rank == 0) printf("fftw_roundtrip %s: FAIL (shape is N0xN1xN2)\n", shape);
      failed = 1;
      continue;
    }
    failed |= roundtrip(a, b, c, rank, repeat);
  }
  fftw_mpi_cleanup();
  MPI_Finalize();
  return failed;
}
