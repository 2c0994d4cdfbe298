#include "schedule/gpu_plan.hpp"

#include <cctype>

namespace a2a::detail::schedule {

GpuPath gpu_path(GpuPathMode mode, long long block_bytes, long long ipc_threshold, long long memcpy_threshold) {
  if (mode == GpuPathMode::kernel) return GpuPath::kernel;
  if (mode == GpuPathMode::memcpy) return GpuPath::memcpy;
  if (block_bytes < ipc_threshold) return GpuPath::host;
  return block_bytes < memcpy_threshold ? GpuPath::kernel : GpuPath::memcpy;
}

const char* gpu_path_name(GpuPath path) {
  switch (path) {
    case GpuPath::host: return "host";
    case GpuPath::kernel: return "kernel";
    case GpuPath::memcpy: return "memcpy";
  }
  return "?";
}

bool parse_bytes(const std::string& text, long long& bytes) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  long long v = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    const int digit = text[i] - '0';
    if (v > ((1LL << 62) - digit) / 10) return false;  // checked before it could overflow
    v = v * 10 + digit;
  }
  int shift = 0;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      default: return false;
    }
    if (++i != text.size()) return false;
  }
  if (v > ((1LL << 62) >> shift)) return false;
  bytes = v << shift;
  return true;
}

std::vector<StagedChunk> staged_chunks(int rank, int P, const std::vector<int>& node_of, const long long* block_bytes,
                                       long long chunk, bool sends) {
  std::vector<StagedChunk> out;
  if (chunk < 1) chunk = 1;
  for (int i = 1; i < P; ++i) {
    const int peer = sends ? (rank + i) % P : (rank - i + P) % P;
    if (node_of[peer] == node_of[rank]) continue;
    for (long long off = 0; off < block_bytes[peer]; off += chunk)
      out.push_back({peer, off, block_bytes[peer] - off < chunk ? block_bytes[peer] - off : chunk});
  }
  return out;
}

void pull_offers(const std::vector<int>& node_ranks, const long long* send_offset, const long long* send_bytes,
                 std::vector<long long>& out) {
  out.resize(2 * node_ranks.size());
  for (size_t j = 0; j < node_ranks.size(); ++j) {
    out[2 * j] = send_offset[node_ranks[j]];
    out[2 * j + 1] = send_bytes[node_ranks[j]];
  }
}

bool evenly_spaced(const long long* offset, int P, long long& stride) {
  stride = P > 1 ? offset[1] - offset[0] : 0;
  for (int i = 2; i < P; ++i)
    if (offset[i] - offset[i - 1] != stride) return false;
  return true;
}

}  // namespace a2a::detail::schedule
