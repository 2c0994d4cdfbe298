// The resumable engine every algorithm runs on: an algorithm is a C++20
// coroutine (Task) that awaits its rounds' requests, its flags and its
// nested collectives.  Driven blocking (drive_blocking: what A2A_Alltoall
// does), every await completes in place (MPI_Waitall, the blocking
// collective, the spin) and the coroutine never suspends: the same MPI calls
// as a plain function.  Driven nonblocking (Operation, front/nonblocking.cpp),
// an await that is not complete suspends the coroutine, and a progress step
// (Operation::progress) tests what it waits for and resumes it when done:
// never blocking.  Each operation sends with its own tag, so operations in
// flight on one communicator never match each other's messages.  Why
// coroutines and not schedules as data: docs/architecture.md.
#pragma once
#include <mpi.h>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <utility>

namespace a2a::detail {

class RequestSet;

// What the running operation is and what it waits for (one per operation;
// the thread's current one while its coroutine runs).
struct OpState {
  bool blocking = true;  // awaits complete in place
  int tag = 1;           // of every message the operation sends
  // Where a nonblocking operation is suspended: the coroutine to resume and
  // what it waits for (requests to test, or a condition to poll).
  std::coroutine_handle<> resume{};
  RequestSet* requests = nullptr;
  bool (*poll)(void*) = nullptr;
  void* poll_arg = nullptr;
  bool patient = true;  // progress_step may poll for its next round (A2A_PROGRESS_PATIENCE)
  // Its neighbours in the pending list (pending_add), in start order.
  OpState* prev_pending = nullptr;
  OpState* next_pending = nullptr;
};

// The operation whose coroutine this thread runs (null: none; awaits then
// complete in place), and the thread's pool of coroutine frames: one
// initial-exec TLS slot (a load from the thread pointer; the default model
// in a shared library calls __tls_get_addr, which per message and per
// frame cost 0.04-0.1 us a call at P = 2).  SMPI loads a copy of the
// program per simulated rank, which static TLS could not hold.
struct FramePool;
struct EngineThread {
  OpState* op = nullptr;
  FramePool* pool = nullptr;
  bool stepping = false;  // in progress_pending_slow or wait_alone: a step never steps the others again
};
#if defined(A2A_SMPI) || defined(__CUDACC__)  // nvcc: the GPU file never reads it
extern thread_local constinit EngineThread engine_thread;
#else
extern thread_local constinit EngineThread engine_thread __attribute__((tls_model("initial-exec")));
#endif
inline OpState*& current_op() { return engine_thread.op; }
inline bool blocking_now() {
  const OpState* op = current_op();
  return !op || op->blocking;
}
// The tag the running operation's messages carry.
inline int op_tag() {
  const OpState* op = current_op();
  return op ? op->tag : 1;
}

// Coroutine frames from a per-thread pool of reused blocks: a call's frames
// cost no heap allocation once the thread has made calls of that shape.
// Free blocks by size class (multiples of kGrain), linked through their
// first word; the pool keeps as many as were ever live at once.  Inline: a
// blocking call allocates a frame or two, and the call into the library
// cost as much as the rest.
struct FramePool {
  static constexpr size_t kGrain = 64, kClasses = 128;
  void* head[kClasses] = {};
  ~FramePool();
};
void* frame_alloc_slow(size_t bytes);
inline size_t frame_class(size_t bytes) { return (bytes + FramePool::kGrain - 1) / FramePool::kGrain; }
inline void* frame_alloc(size_t bytes) {
  const size_t c = frame_class(bytes);
  FramePool* pool = engine_thread.pool;
  if (__builtin_expect(pool != nullptr && c < FramePool::kClasses && pool->head[c] != nullptr, 1)) {
    void* f = pool->head[c];
    pool->head[c] = *static_cast<void**>(f);
    return f;
  }
  return frame_alloc_slow(bytes);
}
inline void frame_free(void* f, size_t bytes) noexcept {
  const size_t c = frame_class(bytes);
  FramePool* pool = engine_thread.pool;
  if (__builtin_expect(pool != nullptr && c < FramePool::kClasses, 1)) {
    *static_cast<void**>(f) = pool->head[c];
    pool->head[c] = f;
    return;
  }
  ::operator delete(f);
}

// A lazily started coroutine returning T (an MPI code, or a Result), awaited
// by its caller (symmetric transfer: nesting grows no stack) or driven.
template <class T>
class [[nodiscard]] Task {
 public:
  struct promise_type {
    T value{MPI_SUCCESS};
    std::coroutine_handle<> parent{};
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Final {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        const auto parent = h.promise().parent;
        return parent ? parent : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    Final final_suspend() noexcept { return {}; }
    template <class V>
    void return_value(V&& v) {
      value = std::forward<V>(v);
    }
    void unhandled_exception() noexcept { std::terminate(); }
    static void* operator new(size_t bytes) { return frame_alloc(bytes); }
    static void operator delete(void* p, size_t bytes) noexcept { frame_free(p, bytes); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Task() {
    if (h_) h_.destroy();
  }
  bool done() const { return !h_ || h_.done(); }
  T& value() { return h_.promise().value; }
  Handle handle() const { return h_; }

  // Awaited by another coroutine: runs in place of the caller until done.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    h_.promise().parent = caller;
    return h_;
  }
  T await_resume() { return std::move(h_.promise().value); }

 private:
  Handle h_{};
};

// Runs `t` to completion on this thread, every await completing in place.
template <class T>
T drive_blocking(Task<T> t, int tag) {
  OpState op;
  op.tag = tag;
  OpState*& cur = current_op();
  OpState* outer = cur;
  cur = &op;
  t.handle().resume();
  cur = outer;
  return std::move(t.value());
}

// co_await until(cond): cond() (no arguments, true when met) holds.  Blocking:
// `spin` polls in place (the caller's own loop, with its yields);
// nonblocking: polled at each progress step.
template <class Cond, class Spin>
struct Until {
  Cond cond;
  Spin spin;
  bool await_ready() {
    if (blocking_now()) {
      spin();
      return true;
    }
    return cond();
  }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    OpState* op = current_op();
    op->resume = h;
    op->poll = [](void* c) { return (*static_cast<Cond*>(c))(); };
    op->poll_arg = &cond;
  }
  void await_resume() noexcept {}
};
template <class Cond, class Spin>
Until<Cond, Spin> until(Cond cond, Spin spin) {
  return Until<Cond, Spin>{std::move(cond), std::move(spin)};
}

// One step of a nonblocking operation suspended on `op`: tests what it waits
// for and, where that is done, resumes it (until it suspends again or ends).
// True where the coroutine was resumed.
bool progress_step(OpState& op);

// The process's pending nonblocking operations (weak progress: every a2a
// call advances them all; strong where a progress hook runs them inside the
// MPI library's calls, front/progress.hpp).  progress_pending() costs one relaxed load where
// none is pending; one thread at a time steps them (others return at once).
void pending_add(OpState* op);
void pending_remove(OpState* op);
// True where one still waits for its messages (or another thread steps them).
bool progress_pending_slow();
extern std::atomic<int> pending_count;
// A wait on op, the process's only pending operation: its round's requests
// waited out in MPI_Waitall (as the blocking call waits), op resumed; false
// (nothing done) where op waits for anything else, others are pending, or
// threads may start operations meanwhile (MPI_THREAD_MULTIPLE: one
// blocked here would hold up theirs, which a peer may wait on).  No
// operation depends on this one's progress: every other one it started
// has completed here.
bool wait_alone(OpState& op);
// Whether MPI provides MPI_THREAD_MULTIPLE (asked of MPI once).
bool threads_multiple();
inline void progress_pending() {
  if (__builtin_expect(pending_count.load(std::memory_order_relaxed) != 0, 0)) progress_pending_slow();
}

}  // namespace a2a::detail
