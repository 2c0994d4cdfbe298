// Whether a shared object is loaded in this process, answered without
// scanning the loaded objects again until something new was loaded.  The
// CUDA build asks it on every prepared call (no libcuda: no device memory),
// and a full scan with a string search per object costs microseconds.
#pragma once
#include <atomic>

namespace a2a::detail {

class LoadedObject {
 public:
  explicit LoadedObject(const char* name_part) : name_(name_part) {}
  // True once an object whose path contains the name is loaded (objects are
  // taken as staying loaded once seen).
  bool loaded();
  long long scans() const { return scans_.load(std::memory_order_relaxed); }

 private:
  const char* name_;
  std::atomic<bool> found_{false};
  std::atomic<unsigned long long> scanned_at_{0};  // the loader's add count at the last miss
  std::atomic<long long> scans_{0};
};

}  // namespace a2a::detail
