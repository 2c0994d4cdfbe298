// `a2a bench --twins`: each a2a algorithm against the MPI library's own
// implementation of the same algorithm, forced through MPI_T control
// variables in the same run.
//  Open MPI 4.1 (coll/tuned): coll_tuned_alltoall(v)_algorithm, read when a
//    communicator is created (with coll_tuned_use_dynamic_rules=1, which
//    `a2a bench --twins` sets in its environment before MPI_Init): each twin
//    row runs on a duplicate of MPI_COMM_WORLD made while its value was set.
//  MPICH 4: MPIR_CVAR_ALLTOALL(V)_INTRA_ALGORITHM and MPIR_CVAR_ALLTOALL_THROTTLE,
//    read by every call: a twin row sets them (and MPIR_CVAR_DEVICE_COLLECTIVES
//    to none) around its own call only, outside the timed region.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace a2a::tools {

struct Twin {
  std::vector<std::string> a2a;  // a2a's specs it is the twin of, e.g. "bruck-modified", "tra:radix=2"
  std::string label;             // the row, e.g. "twin:ompi-modified_bruck"
  std::vector<std::pair<std::string, int>> cvars;  // MPI_T control variables and values
  MPI_Comm comm = MPI_COMM_WORLD;                  // Open MPI: the communicator made with them set
};

class Twins {
 public:
  // Must run before MPI_Init: Open MPI reads coll_tuned_use_dynamic_rules there.
  static void before_init();
  // The twins this MPI library has for the collective (after MPI_Init;
  // collective over MPI_COMM_WORLD for Open MPI).  Empty, with `why`, when
  // the library or its control variables are not the expected ones.
  int setup(bool alltoallv, std::string& why);
  const std::vector<Twin>& rows() const { return rows_; }
  const Twin* find(const std::string& label) const;
  // Around a twin row's call (MPICH: its variables set, then restored).
  int enter(const Twin& t);
  int leave(const Twin& t);
  // Frees the twins' communicators and MPI_T; before MPI_Finalize.
  void finish();
  ~Twins() { finish(); }

 private:
  int write(const std::string& name, int value, int* old = nullptr);
  std::vector<Twin> rows_;
  std::vector<std::pair<std::string, int>> saved_;
  bool mpich_ = false, t_init_ = false;
};

}  // namespace a2a::tools
