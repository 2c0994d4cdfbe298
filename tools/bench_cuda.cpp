// `a2a bench --device cuda`: all-to-all(v) on device buffers, the ranks
// sharing the node's GPUs round-robin (one GPU: all on it).  Rows, per size
// (bytes per peer, or the workload's size knob for alltoallv):
//   cuda-ipc:path=kernel, cuda-ipc:path=memcpy, cuda-ipc (hybrid);
//   native: host-staged, D2H copy, MPI_Alltoall(v) on pinned host memory,
//     H2D copy (Debian's Open MPI is not CUDA-aware), a2a's "staged:native";
//   floor: one process (rank 0) copying all P x P blocks with one kernel,
//     the bound an all-to-all on one GPU cannot beat;
//   and any -a specs.
// Each row gets fresh device buffers; its first call on them (for cuda-ipc:
// handle export, exchange and open) is timed on its own (first_us), then
// -x warm-up and -i timed calls, each the maximum over ranks after a
// barrier; the table shows the median (min, max).  GB/s counts the bytes all
// ranks move (their own blocks included) per second; copy_frac divides it by
// the device's copy bandwidth, one device-to-device cudaMemcpy of 256 MiB
// measured by rank 0 at the start of the same run.  vs_staged is the
// median's ratio to the host-staged row's.  Rows run one after another (not
// interleaved as in the host bench): each holds its own buffers.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "a2a/a2a.hpp"
#include "bench_cuda.hpp"
#include "gpu/gpu.hpp"
#include "timing.hpp"

namespace g = a2a::detail::gpu;

namespace {

unsigned char pattern(int src, int dst, long long j) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + j * 7 + 1);
}

struct Layout {
  std::vector<int> sc, sd, rc, rd;
  long long sbytes = 0, rbytes = 0;
};

Layout layout_for(const CudaBenchOptions& o, long long m, int rank, int P) {
  Layout l;
  l.sc.assign(P, static_cast<int>(m));
  l.rc.assign(P, static_cast<int>(m));
  if (o.v) {
    const auto sized = a2a::workload::with_size(o.workload, m);
    for (int i = 0; i < P; ++i) {
      l.sc[i] = static_cast<int>(a2a::workload::count(sized, rank, i, P));
      l.rc[i] = static_cast<int>(a2a::workload::count(sized, i, rank, P));
    }
  }
  l.sd.assign(P, 0);
  l.rd.assign(P, 0);
  for (int i = 1; i < P; ++i) {
    l.sd[i] = l.sd[i - 1] + l.sc[i - 1];
    l.rd[i] = l.rd[i - 1] + l.rc[i - 1];
  }
  l.sbytes = static_cast<long long>(l.sd[P - 1]) + l.sc[P - 1];
  l.rbytes = static_cast<long long>(l.rd[P - 1]) + l.rc[P - 1];
  return l;
}


// What the bench does with a device: the GPU's, or host memory standing in
// for it (--device fake-cuda: the bench's own path checked without a GPU).
struct DeviceOps {
  int (*count)();
  int (*select)(MPI_Comm);
  void* (*alloc)(size_t);
  void (*release)(void*);
  int (*to_device)(void*, const void*, size_t);
  int (*to_host)(void*, const void*, size_t);
  int (*fill)(void*, int, size_t);
  double (*time_copy)(size_t);
  double (*time_floor)(int, size_t, int);
};

const DeviceOps kCuda = {g::device_count, g::select_local_device, g::alloc_device, g::free_device, g::copy_to_device,
                         g::copy_to_host, g::fill_device, g::time_device_copy, g::time_floor_kernel};
const DeviceOps kHostAsDevice = {
    [] { return 1; },
    [](MPI_Comm) -> int { return MPI_SUCCESS; },
    [](size_t bytes) { return std::malloc(std::max<size_t>(bytes, 1)); },
    [](void* p) { std::free(p); },
    [](void* d, const void* h, size_t n) -> int { return std::memcpy(d, h, n), MPI_SUCCESS; },
    [](void* h, const void* d, size_t n) -> int { return std::memcpy(h, d, n), MPI_SUCCESS; },
    [](void* d, int v, size_t n) -> int { return std::memset(d, v, n), MPI_SUCCESS; },
    [](size_t) { return -1.0; },
    [](int, size_t, int) { return -1.0; }};

struct Device {
  const DeviceOps& ops;
  void* send = nullptr;
  void* recv = nullptr;
  ~Device() {
    ops.release(send);
    ops.release(recv);
  }
};

int call(const CudaBenchOptions& o, const std::string& spec, const Layout& l, Device& d, long long m) {
  if (!o.v)
    return A2A_Alltoall(d.send, static_cast<int>(m), MPI_BYTE, d.recv, static_cast<int>(m), MPI_BYTE, MPI_COMM_WORLD,
                        spec.c_str());
  return A2A_Alltoallv(d.send, l.sc.data(), l.sd.data(), MPI_BYTE, d.recv, l.rc.data(), l.rd.data(), MPI_BYTE,
                       MPI_COMM_WORLD, spec.c_str());
}

double max_over_ranks(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

}  // namespace

int run_bench_cuda(const CudaBenchOptions& o) {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const DeviceOps& dev = o.fake ? kHostAsDevice : kCuda;
  int devices = dev.count(), least = devices;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (least == 0) {
    if (rank == 0)
      std::fprintf(stderr, "a2a bench --device cuda: %s\n",
                   g::built_with_cuda() ? "a rank sees no CUDA device" : "a2a was built without CUDA (no nvcc)");
    return 2;
  }
  int failed = dev.select(MPI_COMM_WORLD) != MPI_SUCCESS;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) {
    if (rank == 0) std::fprintf(stderr, "a2a bench --device cuda: cannot select a GPU: %s\n", g::last_error().c_str());
    return 2;
  }

  std::vector<std::string> rows = {"cuda-ipc:path=kernel", "cuda-ipc:path=memcpy", "cuda-ipc", "native"};
  if (o.fake) rows = {"spread-out", "native"};  // what runs on host memory
  for (const auto& a : o.algs)
    if (std::find(rows.begin(), rows.end(), a) == rows.end()) rows.push_back(a);
  const std::string floor_row = "floor";
  const size_t copy_bytes = size_t{256} << 20;
  double copy_GBps = -1;
  if (rank == 0) {
    const double t = dev.time_copy(copy_bytes);
    copy_GBps = t > 0 ? static_cast<double>(copy_bytes) / t / 1e9 : -1;
  }
  MPI_Bcast(&copy_GBps, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::string layout = a2a::layout(MPI_COMM_WORLD);  // collective on first use: every rank
  if (rank == 0) {
    std::printf("# a2a bench --device cuda %s: P=%d ranks on %d GPU(s) per node, %d iterations (+%d warm-up)\n",
                o.v ? "alltoallv" : "alltoall", P, devices, o.iters, o.warmup);
    if (o.v) std::printf("# workload %s; bytes = its size knob\n", o.workload_text.c_str());
    std::printf("# native = host-staged (D2H, MPI_%s, H2D); floor = rank 0 alone, one kernel over all P x P blocks\n",
                o.v ? "Alltoallv" : "Alltoall");
    std::printf("# device copy bandwidth (cudaMemcpy D2D, 256 MiB, rank 0): %.1f GB/s; layout: %s\n", copy_GBps,
                layout.c_str());
    std::printf("%10s  %-40s %11s %11s %11s %11s %9s %9s %9s %6s\n", "bytes", "algorithm", "median_us", "min_us",
                "max_us", "first_us", "GBps", "copy_frac", "vs_staged", "wrong");
  }
  nlohmann::json out = nlohmann::json::array();
  long long wrong_total = 0;
  for (long long m = std::max(1LL, o.min_bytes); m <= o.max_bytes; m *= 2) {
    const Layout l = layout_for(o, m, rank, P);
    long long moved = l.sbytes;  // bytes all ranks move
    MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    std::vector<unsigned char> host(static_cast<size_t>(l.sbytes));
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < l.sc[d]; ++j) host[l.sd[d] + j] = pattern(rank, d, j);
    struct Row {
      std::string name;
      double med, lo, hi, first;
      long long wrong;
    };
    std::vector<Row> done;
    for (const auto& spec : rows) {
      Device d{dev};
      d.send = dev.alloc(static_cast<size_t>(l.sbytes));
      d.recv = dev.alloc(static_cast<size_t>(l.rbytes));
      int ok = d.send && d.recv && dev.to_device(d.send, host.data(), host.size()) == MPI_SUCCESS;
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (!ok) {
        if (rank == 0) std::fprintf(stderr, "a2a bench: no device memory for %lld bytes: %s\n", m, g::last_error().c_str());
        return 1;
      }
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      int rc = call(o, spec, l, d, m);
      const double first = max_over_ranks(MPI_Wtime() - t0);
      std::vector<double> t(o.iters);
      for (int it = -o.warmup; it < o.iters && rc == MPI_SUCCESS; ++it) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        rc = call(o, spec, l, d, m);
        const double dt = max_over_ranks(MPI_Wtime() - t0);
        if (it >= 0) t[it] = dt;
      }
      if (rc != MPI_SUCCESS) {
        if (rank == 0)
          std::fprintf(stderr, "a2a bench: %s failed: %s %s\n", spec.c_str(), a2a::last_error_message().c_str(),
                       g::last_error().c_str());
        return 1;
      }
      A2A_Stats st;
      A2A_Last_stats(&st);
      long long wrong = 0;
      if (o.validate) {
        dev.fill(d.recv, 0xee, static_cast<size_t>(l.rbytes));
        call(o, spec, l, d, m);
        std::vector<unsigned char> got(static_cast<size_t>(l.rbytes));
        dev.to_host(got.data(), d.recv, got.size());
        for (int s = 0; s < P; ++s)
          for (int j = 0; j < l.rc[s]; ++j) wrong += got[l.rd[s] + j] != pattern(s, rank, j);
        MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      }
      done.push_back({st.algorithm, a2a::tools::median(t) * 1e6, *std::min_element(t.begin(), t.end()) * 1e6,
                      *std::max_element(t.begin(), t.end()) * 1e6, first * 1e6, wrong});
    }
    // The floor: rank 0 alone, the mean block for alltoallv.
    double floor_t = -1;
    if (rank == 0) floor_t = dev.time_floor(P, static_cast<size_t>(moved / (static_cast<long long>(P) * P)), o.iters);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) continue;
    if (floor_t > 0) done.push_back({floor_row, floor_t * 1e6, floor_t * 1e6, floor_t * 1e6, -1, 0});
    double staged = -1;
    for (const auto& r : done)
      if (r.name.rfind("staged:native", 0) == 0) staged = r.med;
    for (const auto& r : done) {
      const double GBps = static_cast<double>(moved) / (r.med * 1e-6) / 1e9;
      const double frac = copy_GBps > 0 ? GBps / copy_GBps : -1;
      const double vs = staged > 0 ? r.med / staged : -1;
      wrong_total += r.wrong;
      std::printf("%10lld  %-40s %11.2f %11.2f %11.2f %11.2f %9.2f %9.3f %9.3f %6lld\n", m, r.name.c_str(), r.med, r.lo,
                  r.hi, r.first, GBps, frac, vs, r.wrong);
      out.push_back({{"collective", o.v ? "alltoallv" : "alltoall"}, {"procs", P}, {"bytes", m},
                     {"algorithm", r.name}, {"median_us", r.med}, {"min_us", r.lo}, {"max_us", r.hi},
                     {"first_us", r.first}, {"GBps", GBps}, {"copy_fraction", frac}, {"ratio_to_staged", vs},
                     {"copy_GBps", copy_GBps}, {"wrong", r.wrong}});
    }
    std::fflush(stdout);
  }
  int status = 0;
  if (rank == 0) {
    std::ofstream csv(o.csv);
    csv << "collective,procs,bytes,algorithm,median_us,min_us,max_us,first_us,GBps,copy_fraction,ratio_to_staged,"
           "copy_GBps,wrong\n";
    for (const auto& r : out)
      csv << r["collective"].get<std::string>() << ',' << r["procs"] << ',' << r["bytes"] << ",\""
          << r["algorithm"].get<std::string>() << "\"," << r["median_us"] << ',' << r["min_us"] << ',' << r["max_us"]
          << ',' << r["first_us"] << ',' << r["GBps"] << ',' << r["copy_fraction"] << ',' << r["ratio_to_staged"]
          << ',' << r["copy_GBps"] << ',' << r["wrong"] << '\n';
    bool written = static_cast<bool>(csv.flush());
    if (!o.json.empty()) {
      std::ofstream js(o.json);
      written = static_cast<bool>(js << out.dump(2) << '\n') && written;
    }
    std::printf("# wrong: %lld %s\n# csv: %s\n", wrong_total, wrong_total ? "FAILED" : "OK", o.csv.c_str());
    status = wrong_total || !written ? 1 : 0;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}
