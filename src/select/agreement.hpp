// auto's agreements, the only MPI its classes call (auto.cpp): every rank
// must decide alike, so what a decision reads is reduced or broadcast
// here, collective over the user's communicator.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "select/policy.hpp"
#include "select/trial.hpp"

namespace a2a::detail {

// One allreduce of a trial check's agreement, folded by trial_fold.
int agree_trial(MPI_Comm comm, TrialAgreement& a, std::string& error);
// A decided class's event: the ranks' drift flags, moved flags, bytes and
// last agreement's time, summed; `seconds` what this one took.
int agree_event(MPI_Comm comm, double (&v)[4], double& seconds, std::string& error);
// sizes_pay priced by rank 0 and broadcast: the same answer on every rank
// as each pricing it, at the same wall time, but a simulator that runs
// every rank on one host (SMPI) prices it once, not P times.
int root_sizes_pay(MPI_Comm comm, const ModelLayout& layout, const MachineModel& m,
                   const std::vector<std::string>& given, std::string& single, std::string& runner_up, bool& pays);

}  // namespace a2a::detail
