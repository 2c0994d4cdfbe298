#include "core/engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "core/transport.hpp"

namespace a2a::detail {

#ifdef A2A_SMPI
constinit thread_local EngineThread engine_thread;
#else
constinit thread_local EngineThread engine_thread __attribute__((tls_model("initial-exec")));
#endif

FramePool::~FramePool() {
  for (void* f : head)
    while (f) ::operator delete(std::exchange(f, *static_cast<void**>(f)));
}

namespace {

// The pool's owner: frees it when the thread ends (later frees go to the heap).
struct PoolOwner {
  std::unique_ptr<FramePool> pool;
  ~PoolOwner() { engine_thread.pool = nullptr; }
};

}  // namespace

// A block of the size's class (so that any frame of the class fits it when
// reused), the thread's pool made on its first frame.
void* frame_alloc_slow(size_t bytes) {
  if (!engine_thread.pool) {
    static thread_local PoolOwner owner;
    owner.pool = std::make_unique<FramePool>();
    engine_thread.pool = owner.pool.get();
  }
  const size_t c = frame_class(bytes);
  return ::operator new(c < FramePool::kClasses ? c * FramePool::kGrain : bytes);
}

namespace {
// Resumes op, whose wait is over (until it suspends again or ends).
void resume(OpState& op) {
  const std::coroutine_handle<> h = std::exchange(op.resume, {});
  op.requests = nullptr;
  op.poll = nullptr;
  OpState*& cur = current_op();
  OpState* outer = cur;
  cur = &op;
  h.resume();
  cur = outer;
}
// Whether what op is suspended on is over (its requests done, its
// condition met).
bool wait_over(OpState& op) {
  if (op.requests) return op.requests->test_all();
  return !op.poll || op.poll(op.poll_arg);
}
}  // namespace

// A resumed operation suspends on the round it posts untested
// (WaitRequests): tested again here, so that one step runs every round
// whose messages have arrived.
bool progress_step(OpState& op) {
  bool resumed = false;
  while (op.resume && wait_over(op)) {
    resume(op);
    resumed = true;
  }
  return resumed;
}

std::atomic<int> pending_count{0};

namespace {
struct Pending {
  std::mutex lock;
  std::vector<OpState*> ops;  // in start order
};
Pending& pending() {
  static Pending* p = new Pending;  // never destroyed: operations may outlive static destruction order
  return *p;
}

// Under MPI_THREAD_MULTIPLE any thread may start or step operations while
// another does; below it the program's calls into MPI (and a2a) take
// turns, and the list needs no lock (two atomic operations a call each).
bool threads_multiple() {
  static const bool multiple = [] {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return level >= MPI_THREAD_MULTIPLE;
  }();
  return multiple;
}
std::unique_lock<std::mutex> lock_pending() {
  return threads_multiple() ? std::unique_lock<std::mutex>(pending().lock) : std::unique_lock<std::mutex>();
}
}  // namespace

void pending_add(OpState* op) {
  const auto guard = lock_pending();
  pending().ops.push_back(op);
  pending_count.store(static_cast<int>(pending().ops.size()), std::memory_order_relaxed);
}

void pending_remove(OpState* op) {
  const auto guard = lock_pending();
  auto& ops = pending().ops;
  ops.erase(std::remove(ops.begin(), ops.end(), op), ops.end());
  pending_count.store(static_cast<int>(ops.size()), std::memory_order_relaxed);
}

bool wait_alone(OpState& op) {
  if (threads_multiple() || engine_thread.stepping || !op.resume || !op.requests) return false;
  auto& ops = pending().ops;
  if (ops.size() != 1 || ops[0] != &op) return false;
  engine_thread.stepping = true;
  op.requests->wait_all();
  resume(op);
  engine_thread.stepping = false;
  return true;
}

void progress_pending_slow() {
  bool& inside = engine_thread.stepping;
  if (inside) return;
  std::unique_lock<std::mutex> guard;
  if (threads_multiple()) {
    guard = std::unique_lock<std::mutex>(pending().lock, std::try_to_lock);
    if (!guard) return;  // another thread steps them now
  }
  inside = true;
  for (OpState* op : pending().ops) progress_step(*op);
  inside = false;
}

}  // namespace a2a::detail
