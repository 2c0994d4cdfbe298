#include "core/loaded.hpp"

#include <link.h>

#include <cstddef>
#include <cstring>

namespace a2a::detail {

namespace {

// The loader's count of objects ever added (glibc's dlpi_adds), read from
// the first object alone; 0 where the loader does not report it.
unsigned long long loader_adds() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* out) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

}  // namespace

bool LoadedObject::loaded() {
  if (found_.load(std::memory_order_relaxed)) return true;
  const unsigned long long adds = loader_adds();
  if (adds != 0 && adds == scanned_at_.load(std::memory_order_relaxed)) return false;
  scans_.fetch_add(1, std::memory_order_relaxed);
  const int hit = dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* name) {
        return info->dlpi_name && std::strstr(info->dlpi_name, static_cast<const char*>(name)) ? 1 : 0;
      },
      const_cast<char*>(name_));
  if (hit) found_.store(true, std::memory_order_relaxed);
  else scanned_at_.store(adds, std::memory_order_relaxed);
  return hit != 0;
}

}  // namespace a2a::detail
