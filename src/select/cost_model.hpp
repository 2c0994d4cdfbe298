// The cost model `auto` falls back on when no tuning-file entry matches:
// every registry row with a cost entry (its own file's walk of its rounds
// on a RankClock, core/cost.hpp), over the knob values worth sweeping, and
// native as the library's own choice.  Pure: no MPI, unit-tested
// (tests/unit/test_cost_model.cpp).
#pragma once
#include <string>
#include <vector>

#include "core/cost.hpp"

namespace a2a::detail {

// The MPI library of a version string (MPI_Get_library_version).
Library library_from_version(const std::string& mpi_get_library_version);

struct CostedSpec {
  std::string spec;  // e.g. "tra:radix=4"
  double seconds;
  int rounds = 0;    // rounds of the busiest evaluated rank
};

// Every candidate with its modelled time, cheapest first (ties: listed order).
// The candidates are the registry's rows with a cost entry that fit the
// layout, at candidate_radices(P) and, for the two-layer algorithms, at a
// few radices of the node size Q and the node count N.
// Alltoall: `mean_bytes` is the block size (max_bytes is ignored).
// Alltoallv: blocks are modelled at the global mean, padded ones at the max.
// "native", the MPI library's own, is costed as the algorithm the library
// runs for the call (library_alltoall(v)), or, for another library, as the
// best of the algorithms MPI libraries implement (linear, pairwise and
// radix-2 Bruck; alltoallv: linear and pairwise).
std::vector<CostedSpec> model_alltoall(const ModelLayout& layout, long long block_bytes, const MachineModel& m);
std::vector<CostedSpec> model_alltoallv(const ModelLayout& layout, long long mean_bytes, long long max_bytes,
                                        const MachineModel& m);

// The entry of `spec` in a ranking, or null.
const CostedSpec* find_costed(const std::vector<CostedSpec>& ranked, const std::string& spec);

// The algorithm the MPI library runs by default, as the a2a spec that sends
// the same messages ("spread-out" for its linear ones, "pairwise",
// "tra:radix=2" for Bruck), and whether it makes persistent requests per
// call; spec "" for another library.  Open MPI 4.1's coll/tuned fixed
// decision rules (its basic linear algorithms use persistent requests);
// MPICH's defaults (Bruck up to 256-byte blocks from 8 ranks, its scattered
// linear algorithm up to 32 KiB, then pairwise; scattered for alltoallv).
struct LibraryChoice {
  std::string spec;
  bool persistent = false;
};
LibraryChoice library_alltoall(Library library, int P, long long block_bytes);
LibraryChoice library_alltoallv(Library library, int P);

// One allreduce of a few integers (recursive doubling: ceil(log2 P) rounds).
double model_allreduce(const ModelLayout& layout, const MachineModel& m);

// The knob values the model (and a2a tune) sweep: candidate_radices(P), and
// for the two-layer algorithms 2, ceil(sqrt n) and n of the node size Q and
// the node count N.
struct SweepValues;
SweepValues model_values(int P, int Q, int N);

// Radices worth modelling for P ranks: all of 2..P up to P = 64, beyond that
// the neighbourhood of sqrt(P), the powers of two and P itself.
std::vector<int> candidate_radices(int P);

}  // namespace a2a::detail
