// Which progress mechanism serves a2a's nonblocking operations
// (front/progress.hpp), found once, and the thread of A2A_PROGRESS_THREAD.
#include "front/progress.hpp"

#include <mpi.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "core/config.hpp"
#include "core/engine.hpp"

namespace a2a::detail {
namespace {

// Open MPI's progress callbacks (opal/runtime/opal_progress.h): run by every
// turn of opal_progress(), the loop of each blocking call; the return is
// the number of events the callback completed.
using OpalCallback = int (*)();
using OpalRegister = int (*)(OpalCallback);
int opal_hook() { return advance_operations().done; }

// A2A_PROGRESS_THREAD's thread: steps while anything is pending or
// watched (yielding between steps), else sleeps until kicked.
struct ProgressThread {
  std::mutex lock;
  std::condition_variable wake;
  bool kicked = false, stop = false;
  std::thread thread;
};
ProgressThread* worker = nullptr;  // never destroyed: the thread ends at MPI_Finalize

void run_thread(ProgressThread& t) {
  std::unique_lock<std::mutex> guard(t.lock);
  while (!t.stop) {
    t.kicked = false;
    guard.unlock();
    const bool busy = advance_operations().busy;
    if (busy) std::this_thread::yield();
    guard.lock();
    if (!busy) t.wake.wait(guard, [&] { return t.kicked || t.stop; });
  }
}

struct Chosen {
  ProgressMode mode = ProgressMode::none;
  ProgressOffer offer;
};
std::atomic<int> chosen_mode{-1};  // -1: not yet found
Chosen chosen;
std::mutex choosing;

ProgressOffer find_offer() {
  ProgressOffer o;
#ifndef A2A_SMPI
  o.opal = dlsym(RTLD_DEFAULT, "opal_progress_register") != nullptr;
#endif
  o.thread_asked = config().progress_thread;
  o.thread_multiple = threads_multiple();
  return o;
}

// Open MPI's callback, registered at the first operation that goes pending
// (progress_kick): each turn of the library's progress loop calls it after.
std::once_flag opal_registered;
void register_opal() {
  std::call_once(opal_registered, [] {
    reinterpret_cast<OpalRegister>(dlsym(RTLD_DEFAULT, "opal_progress_register"))(opal_hook);
  });
}

void activate(ProgressMode mode) {
  if (mode == ProgressMode::thread) {
    worker = new ProgressThread;
    worker->thread = std::thread(run_thread, std::ref(*worker));
  }
}

}  // namespace

const char* progress_line(ProgressMode m, const ProgressOffer& o) {
  switch (m) {
    case ProgressMode::opal:
      return "opal_progress_register (Open MPI): a2a's operations advance inside any MPI call";
    case ProgressMode::thread:
      return "thread (A2A_PROGRESS_THREAD=1, MPI_THREAD_MULTIPLE): a thread of a2a's advances its operations";
    case ProgressMode::none:
      break;
  }
  return o.thread_asked ? "none: A2A_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE; a2a's operations advance "
                          "inside a2a's calls only (weak progress)"
                        : "none: a2a's operations advance inside a2a's calls only (weak progress)";
}

ProgressMode ensure_progress() {
  const int known = chosen_mode.load(std::memory_order_acquire);
  if (__builtin_expect(known >= 0, 1)) return static_cast<ProgressMode>(known);
  int live = 0, finished = 0;
  MPI_Initialized(&live);
  MPI_Finalized(&finished);
  if (!live || finished) return ProgressMode::none;
  std::lock_guard<std::mutex> guard(choosing);
  if (chosen_mode.load() < 0) {
    chosen.offer = find_offer();
    chosen.mode = choose_progress(chosen.offer);
    activate(chosen.mode);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (config().verbose && rank == 0)
      std::fprintf(stderr, "a2a: progress: %s\n", progress_line(chosen.mode, chosen.offer));
    chosen_mode.store(static_cast<int>(chosen.mode), std::memory_order_release);
  }
  return chosen.mode;
}

void progress_kick() {
  const ProgressMode mode = ensure_progress();
  if (mode == ProgressMode::opal) register_opal();
  if (mode != ProgressMode::thread) return;
  {
    std::lock_guard<std::mutex> guard(worker->lock);
    worker->kicked = true;
  }
  worker->wake.notify_one();
}

void stop_progress() {
  if (!worker || !worker->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> guard(worker->lock);
    worker->stop = true;
  }
  worker->wake.notify_one();
  worker->thread.join();
}

}  // namespace a2a::detail

namespace a2a {

std::string progress_mode() {
  using namespace a2a::detail;
  const ProgressMode m = ensure_progress();
  return progress_line(m, chosen_mode.load() >= 0 ? chosen.offer : ProgressOffer{});
}

}  // namespace a2a
