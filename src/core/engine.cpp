#include "core/engine.hpp"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

#include "core/config.hpp"
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
// whose messages have arrived.  A step that found a round done keeps
// polling while each next round completes within the patience
// (A2A_PROGRESS_PATIENCE): its peers are evidently stepping too (node-mates
// inside their own tests), and a chain of quick rounds then runs in one
// call rather than one round per call.  A step that finds nothing done
// returns at once, and an operation one of whose rounds outlasted the
// patience is not polled so again (its rounds are slower than quick).
bool progress_step(OpState& op) {
  bool resumed = false;
  while (op.resume && wait_over(op)) {
    resume(op);
    resumed = true;
  }
  const double patience = resumed && op.resume && op.patient ? config().progress_patience_us * 1e-6 : 0;
  if (patience > 0)
    for (double until = MPI_Wtime() + patience; op.resume;) {
      if (wait_over(op)) {
        resume(op);
        until = MPI_Wtime() + patience;
      } else if (MPI_Wtime() >= until) {
        op.patient = false;  // its rounds outlast the patience: polling for them only takes the caller's time
        break;
      }
    }
  return resumed;
}

std::atomic<int> pending_count{0};

namespace {
// Linked through the operations themselves (OpState::prev_pending,
// next_pending): adding and removing one take a few stores, no search and
// no allocation (a vector's erase cost a nonblocking call 50 instructions).
struct Pending {
  std::mutex lock;
  OpState* head = nullptr;  // in start order
  OpState* tail = nullptr;
};
// Nothing to destroy at exit (operations may outlive static destruction).
static_assert(std::is_trivially_destructible_v<Pending>);
constinit Pending pending_list;

// Under MPI_THREAD_MULTIPLE any thread may start or step operations while
// another does; below it the program's calls into MPI (and a2a) take
// turns, and the list needs no lock.  Asked of MPI once (0: not yet).
std::atomic<int> thread_level_known{0};  // 1: below MULTIPLE, 2: MULTIPLE
}  // namespace

bool threads_multiple() {
  int known = thread_level_known.load(std::memory_order_relaxed);
  if (__builtin_expect(known == 0, 0)) {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    known = level >= MPI_THREAD_MULTIPLE ? 2 : 1;
    thread_level_known.store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

namespace {
// f on the list, under its lock where threads may race.
template <class F>
void with_pending(F f) {
  if (threads_multiple()) {
    const std::lock_guard<std::mutex> guard(pending_list.lock);
    f(pending_list);
  } else {
    f(pending_list);
  }
}
}  // namespace

void pending_add(OpState* op) {
  with_pending([op](Pending& p) {
    op->prev_pending = p.tail;
    op->next_pending = nullptr;
    (p.tail ? p.tail->next_pending : p.head) = op;
    p.tail = op;
    // Its only writers take turns (the lock, or one thread): no read-modify-write.
    pending_count.store(pending_count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  });
}

void pending_remove(OpState* op) {
  with_pending([op](Pending& p) {
    (op->prev_pending ? op->prev_pending->next_pending : p.head) = op->next_pending;
    (op->next_pending ? op->next_pending->prev_pending : p.tail) = op->prev_pending;
    op->prev_pending = op->next_pending = nullptr;
    pending_count.store(pending_count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  });
}

bool wait_alone(OpState& op) {
  if (threads_multiple() || engine_thread.stepping || !op.resume || !op.requests || pending_list.head != &op ||
      op.next_pending)
    return false;
  engine_thread.stepping = true;
  op.requests->wait_all();
  resume(op);
  engine_thread.stepping = false;
  return true;
}

bool progress_pending_slow() {
  bool& inside = engine_thread.stepping;
  if (inside) return true;
  std::unique_lock<std::mutex> guard;
  if (threads_multiple()) {
    guard = std::unique_lock<std::mutex>(pending_list.lock, std::try_to_lock);
    if (!guard) return true;  // another thread steps them now
  }
  inside = true;
  // A step completes no operation (completion is the caller's wait or
  // test) and starts none: the list stays as it is meanwhile.
  bool waiting = false;
  for (OpState* op = pending_list.head; op; op = op->next_pending) {
    progress_step(*op);
    waiting |= op->resume != nullptr;
  }
  inside = false;
  return waiting;
}

}  // namespace a2a::detail
