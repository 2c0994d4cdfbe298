// C++ conveniences over the C API.
#pragma once
#include <string>
#include <utility>
#if __cplusplus >= 202002L
#include <span>
#endif

#include "a2a/a2a.h"

namespace a2a {

// How argument errors reach the ranks.
//  local (default): each rank checks its own arguments before any
//    communication, as MPI libraries do; errors agree when every rank passes
//    the same (bad) arguments, as MPI itself assumes.
//  agree: one 6-integer MPI_Allreduce per call folds every rank's checks, so
//    a bad argument on any one rank fails the call on all (for debugging).
// Plans agree once, at init, in either mode.  The initial mode comes from
// A2A_ERROR_CHECK=agree|local; set_error_check changes it for this process
// (every rank of a communicator must match).
enum class ErrorCheck { agree, local };
void set_error_check(ErrorCheck mode);
ErrorCheck error_check();

// The node layout a2a uses for `comm`, e.g. "3 nodes (A2A_NODE_SIZES): sizes
// 1,2,3" (collective on a communicator's first use, like every a2a call).
std::string layout(MPI_Comm comm);

// Where "auto" gets its decisions from in this process: "tuning file PATH:
// N entries", "no tuning file (A2A_TUNING_FILE unset)", or "tuning file PATH
// ignored: <why>" (not JSON, not an a2a tuning file, another version or MPI
// library, a bad entry).  Reads the file on first use (needs MPI initialised).
std::string tuning_status();

// What advances a2a's nonblocking operations between a2a's calls, e.g.
// "opal_progress_register (Open MPI): a2a's operations advance inside any MPI
// call", "thread (A2A_PROGRESS_THREAD=1, ...)" or "none: ... (weak
// progress)" (docs/progress.md).  Found on first use (MPI
// initialised); A2A_VERBOSE=1 prints it then.
std::string progress_mode();

// Why the calling thread's last call failed, e.g. "a2a: unknown parameter 'radx' for
// tra; expected radix"; empty after a successful call.
std::string last_error_message();

// A nonblocking operation (A2A_Ialltoall(v), A2A_Istart) owned: waited for
// when it goes out of scope (the error is then lost: call wait() to see it).
class Request {
 public:
  Request() = default;
  explicit Request(A2A_Request r) : r_(r) {}
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, A2A_REQUEST_NULL)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      wait();
      r_ = std::exchange(o.r_, A2A_REQUEST_NULL);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { wait(); }
  int wait() { return A2A_Wait(&r_, MPI_STATUS_IGNORE); }
  // True once complete (then done()); an error completes it too (wait()'s
  // error is then the one test saw: call test(&rc) to get it).
  bool test(int* rc = nullptr) {
    int flag = 1;
    const int e = A2A_Test(&r_, &flag, MPI_STATUS_IGNORE);
    if (rc) *rc = e;
    return flag != 0;
  }
  bool done() const { return r_ == A2A_REQUEST_NULL; }
  A2A_Request* get() { return &r_; }  // for the C calls

 private:
  A2A_Request r_ = A2A_REQUEST_NULL;
};

#if __cplusplus >= 202002L
// A2A_Ialltoall over spans of P equal blocks of `type` elements (T the
// element's C++ type: the counts are the spans' sizes over P).
template <class T>
int ialltoall(std::span<const T> send, std::span<T> recv, MPI_Datatype type, MPI_Comm comm, Request& out,
              const char* algorithm = nullptr) {
  int P = 1;
  MPI_Comm_size(comm, &P);
  Request r;
  const int rc = A2A_Ialltoall(send.data(), static_cast<int>(send.size() / P), type, recv.data(),
                               static_cast<int>(recv.size() / P), type, comm, algorithm, r.get());
  out = std::move(r);
  return rc;
}
#endif

}  // namespace a2a
