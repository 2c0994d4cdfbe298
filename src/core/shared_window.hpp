// Memory shared by the ranks of a node (MPI-3 shared windows), for shm
// (src/both/shm.cpp): the communicator of the ranks that share memory
// with this one and one window over it, a part per rank, locked for its
// whole life (passive target, MPI_MODE_NOCHECK: the parts are read and
// written by loads and stores, ordered by the caller's atomics).  Set-up and
// teardown are collective over the node; nothing here runs in a call's
// exchange.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace a2a::detail {

class SharedWindow {
 public:
  SharedWindow() = default;
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  // The window unlocked and freed, then the communicator, unless MPI is
  // finalized (segments kept for the process's life may outlive it).
  ~SharedWindow();

  // The ranks of comm that share memory with this one (collective over comm).
  int split(MPI_Comm comm);
  int rank() const { return rank_; }
  int size() const { return size_; }  // 0 before split
  // `bytes` for each rank, locked; `parts` each rank's part as mapped here
  // (collective over the node).
  int allocate(size_t bytes, std::vector<char*>& parts);
  bool allocated() const { return win_ != MPI_WIN_NULL; }
  // This rank's stores into its part seen by every rank after it returns:
  // MPI_Win_sync, then a barrier over the node (collective).
  int publish();
  MPI_Comm node() const { return node_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0, size_ = 0;
};

// The minimum of v over comm, in place: the set-up's agreements (the
// library's allreduce; a blocking collective every rank of comm joins).
int agree_min(int& v, MPI_Comm comm);

}  // namespace a2a::detail
