// Per-communicator state: the private duplicate all library traffic runs on,
// grow-only scratch buffers reused across calls, and cached datatypes.  It is
// cached on the user's communicator as an attribute and freed with it.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedule/schedule.hpp"

namespace a2a::detail {

struct Stats {
  char algorithm[128] = {};  // the resolved spec, as in A2A_Stats
  long long rounds = 0, messages = 0, blocks_sent = 0, bytes_sent = 0, meta_bytes_sent = 0, temp_bytes = 0;
};

// Scratch regions, each grown to the largest request seen and then reused.
// temp_bytes of a call is the sum of the region sizes it asked for.
class Scratch {
 public:
  enum Region { kPackedSend, kPackedRecv, kWork0, kWork1, kCount };
  char* get(Region region, size_t bytes, Stats& stats);
  size_t reserved() const;

 private:
  std::unique_ptr<char[]> buf_[kCount];
  size_t cap_[kCount] = {};
};

// Derived datatypes cached across calls; keyed by a string the algorithm
// chooses (algorithm, block bytes), rebuilt only when the key changes.
class TypeCache {
 public:
  ~TypeCache();
  const std::vector<MPI_Datatype>* find(const std::string& key) const;
  const std::vector<MPI_Datatype>& store(const std::string& key, std::vector<MPI_Datatype> types);

 private:
  void clear();
  std::string key_;
  std::vector<MPI_Datatype> types_;
};

struct CommContext {
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate
  int rank = 0, size = 1;
  Scratch scratch;
  TypeCache types;
  ~CommContext();

  // Schedules depend only on P and the radix: built once per communicator.
  const std::vector<schedule::Step>& tra_steps(int radix);
  const std::vector<schedule::Step>& linear_steps();

 private:
  std::map<int, std::vector<schedule::Step>> tra_;
  std::vector<schedule::Step> linear_;
};

// Returns the context cached on `user` (collective on first use: MPI_Comm_dup).
int get_context(MPI_Comm user, CommContext*& ctx);

}  // namespace a2a::detail
