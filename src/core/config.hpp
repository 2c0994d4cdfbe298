// The environment, read once per process (at a2a's first use), so no call
// reads a variable on its hot path and no other file reads one.  A change to
// the environment after that first use is not seen; programs choose per call
// with the spec argument, or with a2a::set_error_check.
#pragma once
#include <cstddef>
#include <string>

namespace a2a::detail {

struct Config {
  std::string alltoall = "auto";   // A2A_ALLTOALL: the spec of calls that pass NULL
  std::string alltoallv = "auto";  // A2A_ALLTOALLV
  bool agree = false;              // A2A_ERROR_CHECK=agree; default local, as MPI libraries check
  bool verbose = false;            // A2A_VERBOSE
  std::string tuning_path;         // A2A_TUNING_FILE ("" unset)
  bool tuning_file = false;        // it is set (on every rank or on none)
  std::string cost_model;          // A2A_COST_MODEL ("" unset)
  // A2A_AUTO_TRIAL: which of auto's picks are timed against native on the
  // application's calls before auto keeps them (select/trial.hpp).
  enum class Trial { model, all, off } trial = Trial::model;  // model (default), all (tuning entries too), off
  // A2A_TEST_SLOWDOWN (tests only): auto's drift samples count this many
  // times their measured time, as if the pick had turned slow; 1 unset.
  double test_slowdown = 1;
  // A2A_NODE_MAP, A2A_NODE_SIZES, A2A_NODE_SIZE ("" unset; core/topology.hpp).
  std::string node_map, node_sizes, node_size;
  // A2A_PROGRESS_PATIENCE (microseconds): a progress step that found a
  // nonblocking operation's round done keeps stepping it while each next
  // round completes within this long (core/engine.cpp: progress_step).
  double progress_patience_us = 2;
  // A2A_PROGRESS_THREAD=1: where the MPI library has no progress hook and
  // the program runs at MPI_THREAD_MULTIPLE, a thread of a2a's advances its
  // pending operations (front/progress.hpp).
  bool progress_thread = false;
  size_t scratch_limit = size_t{1} << 30;  // A2A_SCRATCH_LIMIT (bytes > 0)
  size_t max_message_bytes = 0;            // A2A_MAX_MESSAGE_BYTES (bytes > 0; 0 unset)
  bool sim_shared = false;                 // A2A_SIM_SHARED (SMPI builds)
  // The job's ranks on this machine as the launcher says
  // (OMPI_COMM_WORLD_LOCAL_SIZE, MPICH Hydra's MPI_LOCALNRANKS); 0 unsaid.
  long long launcher_local_ranks = 0;
};

const Config& config();

}  // namespace a2a::detail
