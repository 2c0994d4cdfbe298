// a2a-fft: a slab-decomposed 3-D complex FFT (N0 x N1 x N2) whose two
// transposes are a2a all-to-alls.  FFTW does the local transforms.
//
// Ranks own x-planes in FFTW-MPI's block distribution (block ceil(N0/P), so
// when P does not divide N0 the last ranks are short or empty; the same for
// y).  Forward: a 2-D FFT over (y, z) of every local x-plane, a transpose to
// y-slabs (rank r sends rank d its x-planes' rows y of d's slab), then a 1-D
// FFT along x; the result is left in y-slab order [y][x][z].  Backward runs
// the inverse steps and scales by 1/(N0 N1 N2).  The transposes are uniform
// (A2A_Alltoall, --alltoall SPEC) when P divides N0 and N1, and non-uniform
// (A2A_Alltoallv, --alltoallv SPEC) otherwise, or always with --transpose
// alltoallv; `native` calls MPI's own.
// --case n1 and n2 give the TuNA paper's two non-uniform FFT shapes:
//   n1: N0 = ceil(0.625 P), N1 = ceil(0.78125 P), N2 = 4: the ranks below
//       ceil(0.625 P) send 4 complex (8 doubles) to each of the first
//       ceil(0.78125 P) ranks, the others nothing;
//   n2: N0 = 4(P-1)+1, N1 = P, N2 = 8: 32 complex (64 doubles) per block,
//       16 doubles from rank P-1.
// --overlap K pipelines each transpose in K slabs of x-planes: slab k's
// nonblocking all-to-all (A2A_Ialltoall(v), native MPI_Ialltoall(v)) is in
// flight while slab k+1's 2-D FFTs run (forward), or while slab k-1's
// inverse 2-D FFTs run (backward), with A2A_Test between planes.
// It verifies itself: forward then backward returns the input within 1e-10,
// and a single Fourier mode comes out as N0 N1 N2 at its wave numbers and
// zero elsewhere.  It reports compute time (FFTs and packing) and
// all-to-all time, each the maximum over ranks.
#include <fftw3.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/exchange.hpp"

namespace {

using cplx = std::complex<double>;

// FFTW-MPI's block distribution of n items over P ranks.
struct Blocks {
  std::vector<int> start, count;
  Blocks(int n, int P) : start(P), count(P) {
    const int b = (n + P - 1) / P;
    for (int r = 0; r < P; ++r) {
      start[r] = std::min(n, r * b);
      count[r] = std::min(n, start[r] + b) - start[r];
    }
  }
};

// A value of the input at global (x, y, z) that does not depend on P.
cplx input_at(long long x, long long y, long long z) {
  unsigned long long h = static_cast<unsigned long long>(x * 73856093LL ^ y * 19349663LL ^ z * 83492791LL);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return {static_cast<double>(h % 2001) / 1000.0 - 1.0, static_cast<double>((h >> 20) % 2001) / 1000.0 - 1.0};
}

class Fft3d {
 public:
  Fft3d(int n0, int n1, int n2, MPI_Comm comm, apps::Exchange& ex, bool always_v, int overlap)
      : N0(n0), N1(n1), N2(n2), comm_(comm), ex_(ex), xs_(n0, size(comm)), ys_(n1, size(comm)), K_(overlap) {
    MPI_Comm_rank(comm, &rank_);
    P_ = size(comm);
    nx_ = xs_.count[rank_];
    ny_ = ys_.count[rank_];
    uniform_ = !always_v && N0 % P_ == 0 && N1 % P_ == 0;
    slab_.resize(static_cast<size_t>(nx_) * N1 * N2);
    pencil_.resize(static_cast<size_t>(ny_) * N0 * N2);
    sbuf_.resize(std::max(slab_.size(), pencil_.size()));
    rbuf_.resize(sbuf_.size());
    // Per-peer counts (complex numbers) of the forward transpose; the
    // backward one swaps the roles.
    fc_.resize(P_);
    bc_.resize(P_);
    fd_.assign(P_, 0);
    bd_.assign(P_, 0);
    for (int d = 0; d < P_; ++d) {
      fc_[d] = nx_ * ys_.count[d] * N2;  // sent forward to d (received backward from d)
      bc_[d] = ny_ * xs_.count[d] * N2;  // received forward from d (sent backward to d)
      if (d) {
        fd_[d] = fd_[d - 1] + fc_[d - 1];
        bd_[d] = bd_[d - 1] + bc_[d - 1];
      }
    }
    auto* s = reinterpret_cast<fftw_complex*>(slab_.data());
    auto* p = reinterpret_cast<fftw_complex*>(pencil_.data());
    const int yz[2] = {N1, N2};
    if (nx_ > 0) {
      plane_f_ = fftw_plan_many_dft(2, yz, nx_, s, nullptr, 1, N1 * N2, s, nullptr, 1, N1 * N2, FFTW_FORWARD, FFTW_ESTIMATE);
      plane_b_ = fftw_plan_many_dft(2, yz, nx_, s, nullptr, 1, N1 * N2, s, nullptr, 1, N1 * N2, FFTW_BACKWARD, FFTW_ESTIMATE);
      // one x-plane at any offset (--overlap's slabs): SIMD-aligned like
      // the first where every plane is
      const unsigned flags = fftw_alignment_of(reinterpret_cast<double*>(s)) ==
                                     fftw_alignment_of(reinterpret_cast<double*>(s + static_cast<size_t>(N1) * N2))
                                 ? FFTW_ESTIMATE
                                 : FFTW_ESTIMATE | FFTW_UNALIGNED;
      one_f_ = fftw_plan_dft(2, yz, s, s, FFTW_FORWARD, flags);
      one_b_ = fftw_plan_dft(2, yz, s, s, FFTW_BACKWARD, flags);
    }
    if (ny_ > 0) {  // along x for one y: N2 transforms of stride N2
      const int x[1] = {N0};
      line_f_ = fftw_plan_many_dft(1, x, N2, p, nullptr, N2, 1, p, nullptr, N2, 1, FFTW_FORWARD, FFTW_ESTIMATE);
      line_b_ = fftw_plan_many_dft(1, x, N2, p, nullptr, N2, 1, p, nullptr, N2, 1, FFTW_BACKWARD, FFTW_ESTIMATE);
    }
  }
  ~Fft3d() {
    for (auto plan : {plane_f_, plane_b_, line_f_, line_b_, one_f_, one_b_})
      if (plan) fftw_destroy_plan(plan);
  }
  Fft3d(const Fft3d&) = delete;
  Fft3d& operator=(const Fft3d&) = delete;

  bool uniform() const { return uniform_; }
  std::vector<cplx>& slab() { return slab_; }      // [x local][y][z]
  std::vector<cplx>& pencil() { return pencil_; }  // [y local][x][z]
  int x0() const { return xs_.start[rank_]; }
  int y0() const { return ys_.start[rank_]; }
  int nx() const { return nx_; }
  int ny() const { return ny_; }

  int forward() {
    if (K_ > 0) return forward_overlapped();
    if (plane_f_) fftw_execute(plane_f_);
    // Pack: for d, x local, y in d's range, z.
    for (int d = 0; d < P_; ++d)
      for (int x = 0; x < nx_; ++x)
        std::memcpy(&sbuf_[fd_[d] + static_cast<size_t>(x) * ys_.count[d] * N2],
                    &slab_[(static_cast<size_t>(x) * N1 + ys_.start[d]) * N2], sizeof(cplx) * ys_.count[d] * N2);
    if (const int rc = transpose(fc_, fd_, bc_, bd_)) return rc;
    for (int s = 0; s < P_; ++s)  // from s: [x of s][y local][z] -> [y][x0(s) + x][z]
      for (int x = 0; x < xs_.count[s]; ++x)
        for (int y = 0; y < ny_; ++y)
          std::memcpy(&pencil_[(static_cast<size_t>(y) * N0 + xs_.start[s] + x) * N2],
                      &rbuf_[bd_[s] + (static_cast<size_t>(x) * ny_ + y) * N2], sizeof(cplx) * N2);
    for (int y = 0; y < ny_; ++y)
      fftw_execute_dft(line_f_, reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]),
                       reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]));
    return MPI_SUCCESS;
  }

  int backward() {
    if (K_ > 0) return backward_overlapped();
    for (int y = 0; y < ny_; ++y)
      fftw_execute_dft(line_b_, reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]),
                       reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]));
    for (int d = 0; d < P_; ++d)  // to d: [x of d][y local][z]
      for (int x = 0; x < xs_.count[d]; ++x)
        for (int y = 0; y < ny_; ++y)
          std::memcpy(&sbuf_[bd_[d] + (static_cast<size_t>(x) * ny_ + y) * N2],
                      &pencil_[(static_cast<size_t>(y) * N0 + xs_.start[d] + x) * N2], sizeof(cplx) * N2);
    if (const int rc = transpose(bc_, bd_, fc_, fd_)) return rc;
    for (int s = 0; s < P_; ++s)
      for (int x = 0; x < nx_; ++x)
        std::memcpy(&slab_[(static_cast<size_t>(x) * N1 + ys_.start[s]) * N2],
                    &rbuf_[fd_[s] + static_cast<size_t>(x) * ys_.count[s] * N2], sizeof(cplx) * ys_.count[s] * N2);
    if (plane_b_) fftw_execute(plane_b_);
    const double scale = 1.0 / (static_cast<double>(N0) * N1 * N2);
    for (auto& v : slab_) v *= scale;
    return MPI_SUCCESS;
  }

 private:
  // --overlap K: the transposes in K slabs of x-planes, each a nonblocking
  // all-to-all in flight while the next slab's FFTs run (forward) or the
  // last slab's inverse FFTs run (backward).  Slab k of a rank with n
  // x-planes: planes [n k / K, n (k + 1) / K), so every rank knows every
  // peer's slab from xs_.
  static int slab_begin(int n, int K, int k) { return static_cast<int>(static_cast<long long>(n) * k / K); }
  // Slab k's per-peer counts and displacements (complex numbers) of the
  // forward transpose (this rank's planes to d; d's planes from s), placed
  // after the earlier slabs' in sbuf_ and rbuf_.
  // sdl, rdl: the displacements from the slab's first block, which the
  // nonblocking call reads until it completes (kept here).
  struct Slab {
    std::vector<int> sc, sd, rc, rd, sdl, rdl;
  };
  std::vector<Slab> slabs() const {
    std::vector<Slab> out(K_);
    int so = 0, ro = 0;
    for (int k = 0; k < K_; ++k) {
      Slab& sl = out[k];
      sl.sc.resize(P_);
      sl.sd.resize(P_);
      sl.rc.resize(P_);
      sl.rd.resize(P_);
      const int mine = slab_begin(nx_, K_, k + 1) - slab_begin(nx_, K_, k);
      for (int d = 0; d < P_; ++d) {
        const int theirs = slab_begin(xs_.count[d], K_, k + 1) - slab_begin(xs_.count[d], K_, k);
        sl.sc[d] = mine * ys_.count[d] * N2;
        sl.rc[d] = theirs * ny_ * N2;
        sl.sd[d] = so;
        sl.rd[d] = ro;
        so += sl.sc[d];
        ro += sl.rc[d];
      }
      for (int d = 0; d < P_; ++d) {
        sl.sdl.push_back(sl.sd[d] - sl.sd[0]);
        sl.rdl.push_back(sl.rd[d] - sl.rd[0]);
      }
    }
    return out;
  }
  // A slab's nonblocking transpose (send sc/sdl from `send`, receive rc/rdl
  // into `recv`, both already at the slab's first block); an alltoall where
  // the slab is uniform (slab_uniform).
  int start(const cplx* send, const std::vector<int>& sc, const std::vector<int>& sdl, cplx* recv,
            const std::vector<int>& rc, const std::vector<int>& rdl, bool uniform, apps::Exchange::Request& req) {
    if (uniform)
      return ex_.ialltoall(send, sc[0], MPI_C_DOUBLE_COMPLEX, recv, rc[0], MPI_C_DOUBLE_COMPLEX, comm_, req);
    return ex_.ialltoallv(send, sc.data(), sdl.data(), MPI_C_DOUBLE_COMPLEX, recv, rc.data(), rdl.data(),
                          MPI_C_DOUBLE_COMPLEX, comm_, req);
  }
  // Every peer's count the same, both ways (and both directions alike).
  bool slab_uniform(const Slab& sl) const {
    return uniform_ && std::all_of(sl.sc.begin(), sl.sc.end(), [&](int c) { return c == sl.sc[0]; }) &&
           std::all_of(sl.rc.begin(), sl.rc.end(), [&](int c) { return c == sl.rc[0]; }) && sl.sc[0] == sl.rc[0];
  }

  int forward_overlapped() {
    const std::vector<Slab> sl = slabs();
    std::vector<apps::Exchange::Request> req(K_);
    for (int k = 0; k < K_; ++k) {
      const int a = slab_begin(nx_, K_, k), b = slab_begin(nx_, K_, k + 1);
      for (int x = a; x < b; ++x) {
        auto* plane = reinterpret_cast<fftw_complex*>(&slab_[static_cast<size_t>(x) * N1 * N2]);
        fftw_execute_dft(one_f_, plane, plane);
        if (k > 0) ex_.test(req[k - 1]);  // weak progress: the slab in flight advances between planes
      }
      for (int d = 0; d < P_; ++d)  // to d: [x of slab k][y of d][z]
        for (int x = a; x < b; ++x)
          std::memcpy(&sbuf_[sl[k].sd[d] + static_cast<size_t>(x - a) * ys_.count[d] * N2],
                      &slab_[(static_cast<size_t>(x) * N1 + ys_.start[d]) * N2], sizeof(cplx) * ys_.count[d] * N2);
      if (const int rc = start(sbuf_.data() + sl[k].sd[0], sl[k].sc, sl[k].sdl, rbuf_.data() + sl[k].rd[0], sl[k].rc,
                               sl[k].rdl, slab_uniform(sl[k]), req[k]))
        return rc;
    }
    for (int k = 0; k < K_; ++k)
      if (const int rc = ex_.wait(req[k], !slab_uniform(sl[k]))) return rc;
    for (int k = 0; k < K_; ++k)
      for (int s = 0; s < P_; ++s) {  // from s: [x of s's slab k][y local][z]
        const int a = slab_begin(xs_.count[s], K_, k), b = slab_begin(xs_.count[s], K_, k + 1);
        for (int x = a; x < b; ++x)
          for (int y = 0; y < ny_; ++y)
            std::memcpy(&pencil_[(static_cast<size_t>(y) * N0 + xs_.start[s] + x) * N2],
                        &rbuf_[sl[k].rd[s] + (static_cast<size_t>(x - a) * ny_ + y) * N2], sizeof(cplx) * N2);
      }
    for (int y = 0; y < ny_; ++y)
      fftw_execute_dft(line_f_, reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]),
                       reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]));
    return MPI_SUCCESS;
  }

  // The backward transpose is the forward one's roles swapped: this rank
  // sends each d its slab-k planes' rows (d's x-planes, rc/rd of the
  // forward slab read as sends) and receives its own slab k (sc/sd).
  int backward_overlapped() {
    for (int y = 0; y < ny_; ++y)
      fftw_execute_dft(line_b_, reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]),
                       reinterpret_cast<fftw_complex*>(&pencil_[static_cast<size_t>(y) * N0 * N2]));
    const std::vector<Slab> sl = slabs();
    std::vector<apps::Exchange::Request> req(K_);
    for (int k = 0; k < K_; ++k) {
      for (int d = 0; d < P_; ++d) {  // to d: [x of d's slab k][y local][z], in rbuf_'s forward layout
        const int a = slab_begin(xs_.count[d], K_, k), b = slab_begin(xs_.count[d], K_, k + 1);
        for (int x = a; x < b; ++x)
          for (int y = 0; y < ny_; ++y)
            std::memcpy(&rbuf_[sl[k].rd[d] + (static_cast<size_t>(x - a) * ny_ + y) * N2],
                        &pencil_[(static_cast<size_t>(y) * N0 + xs_.start[d] + x) * N2], sizeof(cplx) * N2);
      }
      if (const int rc = start(rbuf_.data() + sl[k].rd[0], sl[k].rc, sl[k].rdl, sbuf_.data() + sl[k].sd[0], sl[k].sc,
                               sl[k].sdl, slab_uniform(sl[k]), req[k]))
        return rc;
    }
    const double scale = 1.0 / (static_cast<double>(N0) * N1 * N2);
    for (int k = 0; k < K_; ++k) {
      if (const int rc = ex_.wait(req[k], !slab_uniform(sl[k]))) return rc;
      const int a = slab_begin(nx_, K_, k), b = slab_begin(nx_, K_, k + 1);
      for (int s = 0; s < P_; ++s)
        for (int x = a; x < b; ++x)
          std::memcpy(&slab_[(static_cast<size_t>(x) * N1 + ys_.start[s]) * N2],
                      &sbuf_[sl[k].sd[s] + static_cast<size_t>(x - a) * ys_.count[s] * N2],
                      sizeof(cplx) * ys_.count[s] * N2);
      for (int x = a; x < b; ++x) {  // the next slabs in flight meanwhile
        auto* plane = reinterpret_cast<fftw_complex*>(&slab_[static_cast<size_t>(x) * N1 * N2]);
        fftw_execute_dft(one_b_, plane, plane);
        for (size_t i = 0; i < static_cast<size_t>(N1) * N2; ++i) slab_[static_cast<size_t>(x) * N1 * N2 + i] *= scale;
        for (int j = k + 1; j < K_; ++j) ex_.test(req[j]);
      }
    }
    return MPI_SUCCESS;
  }

  static int size(MPI_Comm c) {
    int p = 1;
    MPI_Comm_size(c, &p);
    return p;
  }
  int transpose(const std::vector<int>& sc, const std::vector<int>& sd, const std::vector<int>& rc,
                const std::vector<int>& rd) {
    if (uniform_)
      return ex_.alltoall(sbuf_.data(), sc[0], MPI_C_DOUBLE_COMPLEX, rbuf_.data(), rc[0], MPI_C_DOUBLE_COMPLEX, comm_);
    return ex_.alltoallv(sbuf_.data(), sc.data(), sd.data(), MPI_C_DOUBLE_COMPLEX, rbuf_.data(), rc.data(), rd.data(),
                         MPI_C_DOUBLE_COMPLEX, comm_);
  }

  int N0, N1, N2;
  MPI_Comm comm_;
  apps::Exchange& ex_;
  Blocks xs_, ys_;
  int rank_ = 0, P_ = 1, nx_ = 0, ny_ = 0;
  bool uniform_ = true;
  int K_ = 0;  // --overlap: slabs per transpose (0: blocking transposes)
  std::vector<cplx> slab_, pencil_, sbuf_, rbuf_;
  std::vector<int> fc_, fd_, bc_, bd_;
  fftw_plan plane_f_ = nullptr, plane_b_ = nullptr, line_f_ = nullptr, line_b_ = nullptr, one_f_ = nullptr,
            one_b_ = nullptr;
};

struct Options {
  int n[3] = {32, 32, 32};
  int iterations = 3;
  std::string alltoall = "auto", alltoallv = "auto";
  bool always_v = false;  // --transpose alltoallv
  int overlap = 0;        // --overlap K
};

double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

// One run: the checks, then `iterations` timed forward/backward pairs.
apps::RunResult run(const Options& o, const std::string& a_spec, const std::string& v_spec, bool print) {
  apps::Exchange ex(a_spec, v_spec);
  Fft3d fft(o.n[0], o.n[1], o.n[2], MPI_COMM_WORLD, ex, o.always_v, o.overlap);
  apps::RunResult r;
  const long long N = static_cast<long long>(o.n[0]) * o.n[1] * o.n[2];
  // 1. A single mode (kx, ky, kz): N at its wave numbers, 0 elsewhere.
  const int kx = 1 % o.n[0], ky = 2 % o.n[1], kz = 3 % o.n[2];
  const double two_pi = 2 * std::acos(-1.0);
  for (int x = 0; x < fft.nx(); ++x)
    for (int y = 0; y < o.n[1]; ++y)
      for (int z = 0; z < o.n[2]; ++z) {
        const double phase = two_pi * (static_cast<double>(kx) * (fft.x0() + x) / o.n[0] +
                                       static_cast<double>(ky) * y / o.n[1] + static_cast<double>(kz) * z / o.n[2]);
        fft.slab()[(static_cast<size_t>(x) * o.n[1] + y) * o.n[2] + z] = std::polar(1.0, phase);
      }
  int rc = fft.forward();
  double spectrum_err = 0;
  for (int y = 0; y < fft.ny(); ++y)
    for (int x = 0; x < o.n[0]; ++x)
      for (int z = 0; z < o.n[2]; ++z) {
        const bool peak = x == kx && fft.y0() + y == ky && z == kz;
        const cplx v = fft.pencil()[(static_cast<size_t>(y) * o.n[0] + x) * o.n[2] + z];
        spectrum_err = std::max(spectrum_err, std::abs(v - cplx(peak ? static_cast<double>(N) : 0.0, 0.0)) / N);
      }
  // 2. Round trips of a P-independent input, timed.
  std::vector<cplx> input(fft.slab().size());
  for (int x = 0; x < fft.nx(); ++x)
    for (int y = 0; y < o.n[1]; ++y)
      for (int z = 0; z < o.n[2]; ++z) input[(static_cast<size_t>(x) * o.n[1] + y) * o.n[2] + z] = input_at(fft.x0() + x, y, z);
  ex.seconds = 0;
  double total = 0, roundtrip_err = 0;
  for (int it = 0; it < o.iterations && rc == MPI_SUCCESS; ++it) {
    fft.slab() = input;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    rc = fft.forward();
    if (rc == MPI_SUCCESS) rc = fft.backward();
    total += MPI_Wtime() - t0;
    for (size_t i = 0; i < input.size(); ++i) roundtrip_err = std::max(roundtrip_err, std::abs(fft.slab()[i] - input[i]));
  }
  int failed = rc != MPI_SUCCESS;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  spectrum_err = max_over_ranks(spectrum_err);
  roundtrip_err = max_over_ranks(roundtrip_err);
  r.total = max_over_ranks(total);
  r.exchange = max_over_ranks(ex.seconds);
  const double compute = max_over_ranks(total - ex.seconds);
  r.ran = fft.uniform() ? ex.ran_alltoall : ex.ran_alltoallv;
  r.ok = !failed && roundtrip_err < 1e-10 && spectrum_err < 1e-10;
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (print && rank == 0) {
    std::printf("a2a-fft: %dx%dx%d on %d ranks, %s transposes via %s%s '%s', ran %s", o.n[0], o.n[1], o.n[2], P,
                fft.uniform() ? "uniform" : "non-uniform", o.overlap ? "nonblocking " : "",
                fft.uniform() ? "A2A_Alltoall" : "A2A_Alltoallv", fft.uniform() ? a_spec.c_str() : v_spec.c_str(),
                r.ran.c_str());
    if (o.overlap) std::printf(", overlapped in %d slabs", o.overlap);
    std::printf("\n");
    std::printf("check: round trip max error %.3e, single-mode spectrum max error %.3e (relative to N): %s\n",
                roundtrip_err, spectrum_err, r.ok ? "ok" : "FAILED");
    std::printf("time: %d forward+backward pairs, total %.6f s, all-to-all %.6f s%s, compute %.6f s\n",
                o.iterations, r.total, r.exchange, o.overlap ? " (in its calls: start, test, wait)" : "", compute);
    if (failed) std::fprintf(stderr, "a2a-fft: a transpose failed: %s\n", a2a::last_error_message().c_str());
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a2a-fft: 3-D FFT whose transposes are a2a all-to-alls (run under mpirun)"};
  Options o;
  std::vector<int> n;
  std::string shape;
  std::vector<std::string> compare;
  int repeat = 5;
  app.add_option("-n,--size", n, "N0,N1,N2 (default 32,32,32)")->delimiter(',')->expected(3);
  app.add_option("--case", shape, "n1 or n2: the TuNA paper's non-uniform FFT shapes for this P")
      ->check(CLI::IsMember({"n1", "n2"}));
  app.add_option("--alltoall", o.alltoall, "spec for uniform transposes (native = MPI_Alltoall)");
  app.add_option("--alltoallv", o.alltoallv, "spec for non-uniform transposes (native = MPI_Alltoallv)");
  std::string transpose = "auto";
  app.add_option("--transpose", transpose,
                 "auto (A2A_Alltoall when P divides N0 and N1, else A2A_Alltoallv) or alltoallv (always)")
      ->check(CLI::IsMember({"auto", "alltoallv"}));
  app.add_option("-i,--iterations", o.iterations, "forward+backward pairs timed per run")->check(CLI::PositiveNumber);
  app.add_option("--overlap", o.overlap,
                 "K: each transpose in K slabs of x-planes, nonblocking (A2A_Ialltoall(v); native: MPI_Ialltoall(v)), "
                 "the next slab's FFTs while one is in flight (0: blocking transposes)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--compare", compare, "specs to run in turn (repeatable; native is added): a table of medians");
  app.add_option("--repeat", repeat, "runs per spec with --compare")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  MPI_Init(&argc, &argv);
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (n.size() == 3) std::copy(n.begin(), n.end(), o.n);
  o.always_v = transpose == "alltoallv";
  if (shape == "n1") {
    o.n[0] = (5 * P + 7) / 8;    // ceil(0.625 P)
    o.n[1] = (25 * P + 31) / 32;  // ceil(0.78125 P)
    o.n[2] = 4;
  } else if (shape == "n2") {
    o.n[0] = 4 * (P - 1) + 1;
    o.n[1] = P;
    o.n[2] = 8;
  }
  bool ok = true;
  if (compare.empty()) {
    ok = run(o, o.alltoall, o.alltoallv, true).ok;
  } else {
    ok = run(o, compare[0], compare[0], true).ok;  // prints the shape and checks
    ok = apps::compare(compare, repeat, [&](const std::string& spec) { return run(o, spec, spec, false); }) && ok;
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
