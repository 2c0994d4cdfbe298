// The cost of one call's path through a2a, against the MPI library's own
// call, at P = 1 (MPI_COMM_SELF): what a2a adds before any algorithm runs
// (the prepared-call lookup, stats, dispatch), so it stays near the floor.
// Google Benchmark; CI runs it as a smoke test without judging the times:
//   build/bench/call_overhead --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <vector>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"

namespace {

struct Buffers {
  std::vector<char> send, recv;
  std::vector<int> counts, displs;
  explicit Buffers(int bytes) : send(bytes, 1), recv(bytes), counts(1, bytes), displs(1, 0) {}
};

void mpi_alltoall(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  for (auto _ : state)
    benchmark::DoNotOptimize(MPI_Alltoall(b.send.data(), n, MPI_BYTE, b.recv.data(), n, MPI_BYTE, MPI_COMM_SELF));
}

void a2a_alltoall(benchmark::State& state, const char* spec, a2a::ErrorCheck mode) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  a2a::set_error_check(mode);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        A2A_Alltoall(b.send.data(), n, MPI_BYTE, b.recv.data(), n, MPI_BYTE, MPI_COMM_SELF, spec));
  a2a::set_error_check(a2a::ErrorCheck::local);
}

void a2a_plan(benchmark::State& state, const char* spec) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  A2A_Plan plan = nullptr;
  if (A2A_Alltoall_init(b.send.data(), n, MPI_BYTE, b.recv.data(), n, MPI_BYTE, MPI_COMM_SELF, spec, &plan)) {
    state.SkipWithError("A2A_Alltoall_init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(A2A_Start(plan));
  A2A_Plan_free(&plan);
}

void mpi_alltoallv(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  for (auto _ : state)
    benchmark::DoNotOptimize(MPI_Alltoallv(b.send.data(), b.counts.data(), b.displs.data(), MPI_BYTE, b.recv.data(),
                                           b.counts.data(), b.displs.data(), MPI_BYTE, MPI_COMM_SELF));
}

void a2a_alltoallv(benchmark::State& state, const char* spec) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  for (auto _ : state)
    benchmark::DoNotOptimize(A2A_Alltoallv(b.send.data(), b.counts.data(), b.displs.data(), MPI_BYTE, b.recv.data(),
                                           b.counts.data(), b.displs.data(), MPI_BYTE, MPI_COMM_SELF, spec));
}

}  // namespace

BENCHMARK(mpi_alltoall)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoall, native, "native", a2a::ErrorCheck::local)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_plan, native, "native")->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoall, spread_out, "spread-out", a2a::ErrorCheck::local)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoall, auto, "auto", a2a::ErrorCheck::local)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoall, agree_spread_out, "spread-out", a2a::ErrorCheck::agree)->Arg(16)->Arg(1024);
BENCHMARK(mpi_alltoallv)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoallv, native, "native")->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(a2a_alltoallv, spread_out, "spread-out")->Arg(16)->Arg(1024);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
