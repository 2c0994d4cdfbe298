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
thread_local EngineThread engine_thread;
#else
thread_local EngineThread engine_thread __attribute__((tls_model("initial-exec")));
#endif

// Free frames by size class (multiples of kGrain up to kClasses * kGrain),
// at most kKept each: a thread's frames are few and of few sizes.
constexpr size_t kGrain = 128, kClasses = 64, kKept = 16;

struct FramePool {
  void* free[kClasses][kKept] = {};
  int count[kClasses] = {};
  ~FramePool() {
    for (size_t c = 0; c < kClasses; ++c)
      for (int i = 0; i < count[c]; ++i) ::operator delete(free[c][i]);
  }
};

namespace {

// The pool's owner: frees it when the thread ends.
struct PoolOwner {
  std::unique_ptr<FramePool> pool;
  ~PoolOwner() { engine_thread.pool = nullptr; }
};

[[gnu::noinline]] FramePool& make_pool() {
  static thread_local PoolOwner owner;
  owner.pool = std::make_unique<FramePool>();
  return *(engine_thread.pool = owner.pool.get());
}
inline FramePool& pool() {
  FramePool* p = engine_thread.pool;
  return p ? *p : make_pool();
}
size_t size_class(size_t bytes) { return (bytes + kGrain - 1) / kGrain; }

}  // namespace

void* frame_alloc(size_t bytes) {
  const size_t c = size_class(bytes);
  if (c < kClasses) {
    FramePool& p = pool();
    if (p.count[c] > 0) return p.free[c][--p.count[c]];
    return ::operator new(c * kGrain);
  }
  return ::operator new(bytes);
}

void frame_free(void* f, size_t bytes) noexcept {
  const size_t c = size_class(bytes);
  if (c < kClasses) {
    FramePool& p = pool();
    if (p.count[c] < static_cast<int>(kKept)) {
      p.free[c][p.count[c]++] = f;
      return;
    }
  }
  ::operator delete(f);
}

bool progress_step(OpState& op) {
  if (!op.resume) return false;
  if (op.requests) {
    if (!op.requests->test_all()) return false;
  } else if (op.poll && !op.poll(op.poll_arg)) {
    return false;
  }
  const std::coroutine_handle<> h = std::exchange(op.resume, {});
  op.requests = nullptr;
  op.poll = nullptr;
  OpState*& cur = current_op();
  OpState* outer = cur;
  cur = &op;
  h.resume();
  cur = outer;
  return true;
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
}  // namespace

void pending_add(OpState* op) {
  std::lock_guard<std::mutex> guard(pending().lock);
  pending().ops.push_back(op);
  pending_count.store(static_cast<int>(pending().ops.size()), std::memory_order_relaxed);
}

void pending_remove(OpState* op) {
  std::lock_guard<std::mutex> guard(pending().lock);
  auto& ops = pending().ops;
  ops.erase(std::remove(ops.begin(), ops.end(), op), ops.end());
  pending_count.store(static_cast<int>(ops.size()), std::memory_order_relaxed);
}

void progress_pending_slow() {
  static thread_local bool inside = false;  // a step never steps the others again
  if (inside) return;
  std::unique_lock<std::mutex> guard(pending().lock, std::try_to_lock);
  if (!guard) return;  // another thread steps them now
  inside = true;
  for (OpState* op : pending().ops) progress_step(*op);
  inside = false;
}

}  // namespace a2a::detail
