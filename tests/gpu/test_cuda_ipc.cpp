// cuda-ipc and device buffers on a GPU: several ranks sharing one GPU (or
// one each), every copy path, alltoall and alltoallv (zero counts, gapped
// and reversed displacements, MPI_IN_PLACE), host algorithms on staged
// device buffers, new allocations between calls (the IPC handle caches), and
// the errors for mixed placements and non-contiguous types, auto's trial of
// cuda-ipc against host staging, and the
// caller's copies still in flight at the call (a pageable cudaMemcpy into the
// send buffer, a cudaMemset of the receive buffer).  With
// A2A_NODE_SIZE the other "nodes'" blocks take the staged MPI path.
// Exits 77 (ctest: skipped) when no rank sees a CUDA device.
// `--probe` (no MPI): exit 0 when this process sees a device, 77 otherwise.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "gpu/gpu.hpp"
#include "select/trial.hpp"
#include "../mpi/gtest_mpi.hpp"

namespace g = a2a::detail::gpu;

namespace {

int rank_, size_;

unsigned char pattern(int src, int dst, long long j) {
  return static_cast<unsigned char>(src * 37 + dst * 11 + j * 3 + 1);
}

// A device buffer holding a copy of a host vector, and back.
struct DeviceBuffer {
  char* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(const std::vector<unsigned char>& host) : bytes(host.size()) {
    ptr = static_cast<char*>(g::alloc_device(bytes));
    EXPECT_NE(ptr, nullptr) << g::last_error();
    EXPECT_EQ(g::copy_to_device(ptr, host.data(), bytes), MPI_SUCCESS);
  }
  ~DeviceBuffer() { g::free_device(ptr); }
  std::vector<unsigned char> read() const {
    std::vector<unsigned char> out(bytes);
    EXPECT_EQ(g::copy_to_host(out.data(), ptr, bytes), MPI_SUCCESS);
    return out;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::string ran() {
  A2A_Stats st;
  A2A_Last_stats(&st);
  return st.algorithm;
}

long long count_wrong(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want) {
  long long wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) wrong += got[i] != want[i];
  return wrong;
}

// Alltoall of `bs` bytes per block; `in_place` sends from the receive buffer.
void check_alltoall(const std::string& spec, long long bs, bool in_place, const char* expect_in_name) {
  const int P = size_, me = rank_;
  std::vector<unsigned char> send(P * bs), want(P * bs);
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < bs; ++j) {
      send[d * bs + j] = pattern(me, d, j);
      want[d * bs + j] = pattern(d, me, j);
    }
  DeviceBuffer dsend(send), drecv(in_place ? send : std::vector<unsigned char>(P * bs, 0xee));
  const int rc = A2A_Alltoall(in_place ? MPI_IN_PLACE : dsend.ptr, static_cast<int>(bs), MPI_BYTE, drecv.ptr,
                              static_cast<int>(bs), MPI_BYTE, MPI_COMM_WORLD, spec.c_str());
  ASSERT_EQ(rc, MPI_SUCCESS) << spec << ": " << a2a::last_error_message() << " " << g::last_error();
  EXPECT_NE(ran().find(expect_in_name), std::string::npos) << spec << " ran " << ran();
  EXPECT_EQ(count_wrong(drecv.read(), want), 0) << spec << " bs=" << bs << (in_place ? " in place" : "");
  if (!in_place) {
    EXPECT_EQ(dsend.read(), send) << "the send buffer changed";
  }
}

// Alltoallv of ints: zero counts, blocks in reverse order with gaps; the
// gaps of the receive buffer must stay untouched.  `equal` gives every block
// `unit` ints at regular displacements (the alltoall shortcut).
void check_alltoallv(const std::string& spec, int unit, bool equal, const char* expect_in_name) {
  const int P = size_, me = rank_;
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int so = 0, ro = 3;
  for (int d = P - 1; d >= 0; --d) {
    sc[d] = equal ? unit : ((me + 2 * d) % 4 == 0 ? 0 : unit * ((me + d) % 3 + 1));
    rc[d] = equal ? unit : ((d + 2 * me) % 4 == 0 ? 0 : unit * ((d + me) % 3 + 1));
    rd[d] = ro;
    ro += rc[d] + (equal ? 0 : 5);
  }
  for (int d = 0; d < P; ++d) {  // sends ascending when equal (evenly spaced), else reversed with gaps
    const int k = equal ? d : P - 1 - d;
    sd[k] = so;
    so += sc[k] + (equal ? 0 : 2);
  }
  std::vector<unsigned char> send(4 * static_cast<size_t>(so), 0x11), want(4 * static_cast<size_t>(ro), 0xee);
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < 4LL * sc[d]; ++j) send[4LL * sd[d] + j] = pattern(me, d, j);
  for (int s = 0; s < P; ++s)
    for (long long j = 0; j < 4LL * rc[s]; ++j) want[4LL * rd[s] + j] = pattern(s, me, j);
  DeviceBuffer dsend(send), drecv(std::vector<unsigned char>(want.size(), 0xee));
  const int code = A2A_Alltoallv(dsend.ptr, sc.data(), sd.data(), MPI_INT, drecv.ptr, rc.data(), rd.data(), MPI_INT,
                                 MPI_COMM_WORLD, spec.c_str());
  ASSERT_EQ(code, MPI_SUCCESS) << spec << ": " << a2a::last_error_message() << " " << g::last_error();
  EXPECT_NE(ran().find(expect_in_name), std::string::npos) << spec << " ran " << ran();
  EXPECT_EQ(count_wrong(drecv.read(), want), 0) << spec << " unit=" << unit << (equal ? " equal" : "");
  EXPECT_EQ(dsend.read(), send) << "the send buffer changed";
}

}  // namespace

TEST(CudaIpc, SmallAlltoallEveryPath) {
  check_alltoall("cuda-ipc:path=kernel", 4096, false, "path=kernel");
  check_alltoall("cuda-ipc:path=memcpy", 4096, false, "path=memcpy");
  check_alltoallv("cuda-ipc:path=kernel", 3, false, "path=kernel");
}

TEST(CudaIpc, AlltoallEveryPathAndSize) {
  for (long long bs : {1LL, 13LL, 4096LL, 4099LL, 65541LL, 1LL << 20})
    for (const char* path : {"kernel", "memcpy"}) {
      check_alltoall(std::string("cuda-ipc:path=") + path + ",chunk=64K", bs, false, path);
      check_alltoall(std::string("cuda-ipc:path=") + path, bs, true, path);
    }
}

TEST(CudaIpc, HybridPicksByBlockSize) {
  check_alltoall("cuda-ipc", 16, false, "staged:");                // below ipc-threshold: a host algorithm
  check_alltoall("cuda-ipc", 8192, false, "path=hybrid(kernel)");
  check_alltoall("cuda-ipc", 1 << 20, false, "path=hybrid(memcpy)");
  check_alltoall("auto", 8192, false, "path=hybrid(kernel)");       // auto's first turn (AutoTriesHostStaging)
  check_alltoall("cuda-ipc:ipc-threshold=0,memcpy-threshold=1", 16, false, "hybrid(memcpy)");
}

TEST(CudaIpc, AlltoallvZeroCountsGapsAndEqualCounts) {
  for (const char* path : {"kernel", "memcpy"})
    for (int unit : {1, 7, 1024, 70000}) {
      const std::string spec = std::string("cuda-ipc:path=") + path + ",chunk=4K";
      check_alltoallv(spec, unit, false, path);
      check_alltoallv(spec, unit, true, path);
    }
  check_alltoallv("cuda-ipc", 2, false, "staged:");
  check_alltoallv("cuda-ipc", 4096, false, "hybrid(kernel)");
}

TEST(CudaIpc, HostAlgorithmsRunStaged) {
  for (const char* spec : {"spread-out", "native", "tra:radix=3", "bruck-zero-copy"}) {
    check_alltoall(spec, 100, false, "staged:");
    check_alltoall(spec, 100, true, "staged:");
  }
  for (const char* spec : {"spread-out", "native", "tuna:radix=2", "padded-bruck"}) check_alltoallv(spec, 5, false, "staged:");
}

// New allocations every call (freed ones' addresses come back): the peers'
// caches must not read a stale mapping.
TEST(CudaIpc, FreshBuffersEveryCall) {
  for (int k = 0; k < 40; ++k) check_alltoall("cuda-ipc:path=kernel", 256 + 16 * (k % 5), false, "kernel");
}

// The caller's last copies may still be in flight: the send buffer written
// by a cudaMemcpy from pageable memory (it may return before the bytes land;
// node-mates read them over IPC), the receive buffer poisoned by an
// asynchronous cudaMemset just before the call.  Large blocks, so that the
// copies take long enough to be caught.
TEST(CudaIpc, TheCallersCopiesInFlightAreSeen) {
  const int P = size_, me = rank_;
  for (long long bs : {1LL << 20, 4LL << 20})
    for (const char* path : {"kernel", "memcpy"}) {
      std::vector<unsigned char> send(P * bs), want(P * bs);
      for (int d = 0; d < P; ++d)
        for (long long j = 0; j < bs; ++j) {
          send[d * bs + j] = pattern(me, d, j);
          want[d * bs + j] = pattern(d, me, j);
        }
      std::vector<unsigned char> zeros(P * bs, 0);
      DeviceBuffer dsend(zeros), drecv(zeros);
      for (int round = 0; round < 3; ++round) {
        for (auto& x : send) x = static_cast<unsigned char>(x + 1);  // new bytes every round
        for (auto& x : want) x = static_cast<unsigned char>(x + 1);
        ASSERT_EQ(g::copy_to_device(dsend.ptr, send.data(), send.size()), MPI_SUCCESS);
        ASSERT_EQ(g::fill_device(drecv.ptr, 0xee, drecv.bytes), MPI_SUCCESS);
        const std::string spec = std::string("cuda-ipc:path=") + path;
        ASSERT_EQ(A2A_Alltoall(dsend.ptr, static_cast<int>(bs), MPI_BYTE, drecv.ptr, static_cast<int>(bs), MPI_BYTE,
                               MPI_COMM_WORLD, spec.c_str()),
                  MPI_SUCCESS)
            << g::last_error();
        EXPECT_EQ(count_wrong(drecv.read(), want), 0) << spec << " bs=" << bs << " round " << round;
      }
    }
}

// auto on device buffers: cuda-ipc's IPC path (at every size, below the
// hybrid's ipc-threshold too) and host staging of the library's call
// ("staged:native") take turns on the first calls, the data right on every
// one, then every rank keeps the same one (measured) within the trial's
// calls.  Block sizes of their own (auto's classes are per size class,
// shared by communicators of world's ranks).
TEST(CudaIpc, AutoTriesHostStaging) {
  struct Case {
    const char* what;
    bool v;
    long long size;  // alltoall: block bytes; alltoallv: ints per block
  };
  for (const Case& k : {Case{"alltoall 64 KiB", false, 65536}, Case{"alltoallv 32 KiB", true, 8192},
                        Case{"alltoall 16 B", false, 16}}) {
    const auto call = [&k] {
      if (k.v)
        check_alltoallv("auto", static_cast<int>(k.size), true, "");
      else
        check_alltoall("auto", k.size, false, "");
    };
    std::vector<std::string> seen;
    int calls = 0;
    std::string by;
    while (calls < a2a::detail::most_trial_calls(2) + 2) {
      call();
      ++calls;
      by = A2A_Last_decided_by();
      if (by != "trial") break;
      const std::string name = ran();
      EXPECT_TRUE(name.rfind("cuda-ipc:path=hybrid(", 0) == 0 || name == "staged:native") << name;
      if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
    }
    EXPECT_EQ(by, "measured") << k.what;
    EXPECT_LE(calls, a2a::detail::most_trial_calls(2) + 1) << k.what;
    EXPECT_EQ(seen.size(), 2u) << k.what << ": " << ::testing::PrintToString(seen);
    const std::string kept = ran();
    const int mine = kept == "staged:native" ? 1 : 0;
    int lo = mine, hi = mine;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lo, hi) << k.what << ": ranks kept different algorithms; this one " << kept;
    if (rank_ == 0) std::printf("auto on device buffers, %s: kept %s\n", k.what, kept.c_str());
    for (int again = 0; again < 5; ++again) {
      call();
      EXPECT_EQ(ran(), kept) << k.what;
      EXPECT_STREQ(A2A_Last_decided_by(), "measured") << k.what;
    }
  }
}

TEST(CudaIpc, MixedPlacementAndLayoutsAreRefused) {
  const int P = size_;
  std::vector<unsigned char> host(64 * P);
  DeviceBuffer dev(host), dev2(host);
  // Rank 0 passes host memory, the others device memory: with the agreed
  // check every rank fails alike (the default local check cannot see it,
  // and the ranks would wait for each other in different algorithms).
  const bool on_host = rank_ == 0 && P > 1;
  a2a::set_error_check(a2a::ErrorCheck::agree);
  int rc = A2A_Alltoall(on_host ? static_cast<void*>(host.data()) : dev.ptr, 64, MPI_BYTE,
                        on_host ? static_cast<void*>(host.data()) : dev2.ptr, 64, MPI_BYTE, MPI_COMM_WORLD, "cuda-ipc");
  a2a::set_error_check(a2a::ErrorCheck::local);
  if (P > 1) {
    EXPECT_EQ(rc, MPI_ERR_BUFFER);
  }
  // One buffer on the device and one on the host.
  std::vector<unsigned char> hrecv(64 * P);
  rc = A2A_Alltoall(dev.ptr, 64, MPI_BYTE, hrecv.data(), 64, MPI_BYTE, MPI_COMM_WORLD, "cuda-ipc");
  EXPECT_EQ(rc, MPI_ERR_BUFFER);
  // A strided type on device buffers.
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  rc = A2A_Alltoall(dev.ptr, 1, strided, dev2.ptr, 1, strided, MPI_COMM_WORLD, "cuda-ipc");
  EXPECT_EQ(rc, MPI_ERR_TYPE);
  MPI_Type_free(&strided);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--probe") == 0) return g::device_count() > 0 ? 0 : 77;
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const int devices = g::device_count();
  int lo = devices, hi = devices;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (hi == 0) {
    if (rank_ == 0) std::printf("no CUDA device on any rank (%s): skipped\n", g::built_with_cuda() ? "built with CUDA" : "built without CUDA");
    MPI_Finalize();
    return 77;
  }
  if (lo == 0) {
    if (rank_ == 0) std::fprintf(stderr, "some ranks see no CUDA device\n");
    MPI_Finalize();
    return 1;
  }
  int failed = g::select_local_device(MPI_COMM_WORLD) != MPI_SUCCESS;
  if (failed) std::fprintf(stderr, "rank %d: %s\n", rank_, g::last_error().c_str());
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) {
    MPI_Finalize();
    return 1;
  }
  const int rc = a2a::test::run_all_tests_on_every_rank();
  MPI_Finalize();
  return rc;
}
