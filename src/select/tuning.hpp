// The tuning file `a2a tune` writes and `auto` reads (A2A_TUNING_FILE): JSON,
//   {"format": "a2a-tuning", "version": 1, "mpi_library": "<first line of
//    MPI_Get_library_version>", "entries": [
//     {"collective": "alltoall", "procs": 8, "nodes": [4, 4],
//      "min_bytes": 0, "max_bytes": 24, "algorithm": "spread-out", ...}, ...]}
// keyed by collective, P, node layout (ranks per node, in node order) and a
// block-size range (alltoallv: of the global mean block; "skew" = max/mean of
// the workload it was tuned on picks among entries covering the same mean).
// A file that is not JSON, not an a2a tuning file, of another version, made
// with another MPI library, or with an entry the registry rejects is refused
// whole, with a message, and ignored (auto then uses the cost model).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "registry/registry.hpp"

namespace a2a::detail {

struct TuningEntry {
  Collective collective = Collective::alltoall;
  int procs = 0;
  std::vector<int> nodes;  // ranks per node
  long long min_bytes = 0, max_bytes = 0;  // inclusive
  double skew = 1;         // alltoallv: max block / mean block of the tuned workload
  std::string workload;    // alltoallv: the workload it was tuned on (informational)
  std::string algorithm;   // a spec, never "auto"
  double median_us = 0;    // measured time of the winner (informational)
};

struct TuningTable {
  std::string mpi_library;
  std::vector<TuningEntry> entries;
};

// Parses and checks a tuning file's text; `mpi_library` is this run's.
bool parse_tuning(const std::string& text, const std::string& mpi_library, TuningTable& out, std::string& error);
std::string tuning_json(const TuningTable& table);

// The entry for a call, or nullptr.  Alltoall: bytes = block size (max ignored).
const TuningEntry* find_entry(const TuningTable& table, Collective coll, const std::vector<int>& nodes,
                              long long mean_bytes, long long max_bytes);

// The first line of MPI_Get_library_version.
std::string mpi_library_version();

// This process's table from A2A_TUNING_FILE, loaded once (needs MPI
// initialised); nullptr when unset or refused.  `status` says which and why.
const TuningTable* process_tuning(std::string* status = nullptr, uint64_t* fingerprint = nullptr);

}  // namespace a2a::detail
