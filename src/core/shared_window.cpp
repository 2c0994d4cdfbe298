#include "core/shared_window.hpp"

namespace a2a::detail {

SharedWindow::~SharedWindow() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (win_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

int SharedWindow::split(MPI_Comm comm) {
  if (const int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_)) return rc;
  MPI_Comm_rank(node_, &rank_);
  MPI_Comm_size(node_, &size_);
  return MPI_SUCCESS;
}

int SharedWindow::allocate(size_t bytes, std::vector<char*>& parts) {
  char* mine = nullptr;
  int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, node_, &mine, &win_);
  if (rc != MPI_SUCCESS) return rc;
  if ((rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win_))) return rc;
  parts.assign(static_cast<size_t>(size_), nullptr);
  for (int p = 0; p < size_; ++p) {
    MPI_Aint size = 0;
    int unit = 0;
    if ((rc = MPI_Win_shared_query(win_, p, &size, &unit, &parts[static_cast<size_t>(p)]))) return rc;
  }
  return MPI_SUCCESS;
}

int SharedWindow::publish() {
  MPI_Win_sync(win_);
  return MPI_Barrier(node_);
}

int agree_min(int& v, MPI_Comm comm) { return MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm); }

}  // namespace a2a::detail
