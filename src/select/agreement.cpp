#include "select/agreement.hpp"

namespace a2a::detail {

namespace {
void fold_trial(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const TrialAgreement*>(in);
  auto* b = static_cast<TrialAgreement*>(inout);
  for (int i = 0; i < *len; ++i) trial_fold(a[i], b[i]);
}

// The trial's agreement as one element of kTrialSlots doubles (the fold
// sees it whole) and its fold, made once.
struct TrialReduction {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
const TrialReduction& trial_reduction() {
  static_assert(sizeof(TrialAgreement) == kTrialSlots * sizeof(double));
  static const TrialReduction r = [] {
    TrialReduction made;
    MPI_Type_contiguous(kTrialSlots, MPI_DOUBLE, &made.type);
    MPI_Type_commit(&made.type);
    MPI_Op_create(&fold_trial, 1, &made.op);
    return made;
  }();
  return r;
}

}  // namespace

int agree_trial(MPI_Comm comm, TrialAgreement& a, std::string& error) {
  const TrialReduction& reduction = trial_reduction();
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, &a, 1, reduction.type, reduction.op, comm)) {
    error = "a2a: auto's trial could not agree on its times";
    return rc;
  }
  return MPI_SUCCESS;
}

int agree_event(MPI_Comm comm, double (&v)[4], double& seconds, std::string& error) {
  const double t0 = MPI_Wtime();
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_SUM, comm)) {
    error = "a2a: auto's drift check could not agree";
    return rc;
  }
  seconds = MPI_Wtime() - t0;
  return MPI_SUCCESS;
}

int root_sizes_pay(MPI_Comm comm, const ModelLayout& layout, const MachineModel& m,
                   const std::vector<std::string>& given, std::string& single, std::string& runner_up, bool& pays) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) {
    pays = sizes_pay(layout, m, given, single, runner_up);
    return MPI_SUCCESS;
  }
  constexpr size_t kSpec = 256;  // a spec's text, at most (registry specs are under 100 characters)
  char out[2 * kSpec + 1] = {};
  if (rank == 0) {
    out[0] = sizes_pay(layout, m, given, single, runner_up) ? 1 : 0;
    single.copy(out + 1, kSpec - 1);
    runner_up.copy(out + 1 + kSpec, kSpec - 1);
  }
  if (const int rc = MPI_Bcast(out, sizeof out, MPI_CHAR, 0, comm)) return rc;
  pays = out[0] != 0;
  single = out + 1;
  runner_up = out + 1 + kSpec;
  return MPI_SUCCESS;
}

}  // namespace a2a::detail
