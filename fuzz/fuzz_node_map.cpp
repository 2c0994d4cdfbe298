// Node layouts from the environment (A2A_NODE_MAP, A2A_NODE_SIZES,
// A2A_NODE_SIZE): three lines of input and a P.  Accepted layouts give one
// node id per rank and group into nodes that cover every rank once.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/topology.hpp"

using namespace a2a::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int P = 1 + data[0] % 128;
  std::string rest(reinterpret_cast<const char*>(data + 1), size - 1), part[3];
  for (int k = 0, at = 0; k < 3; ++k) {
    const auto nl = rest.find('\n', at);
    part[k] = rest.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (nl == std::string::npos) break;
    at = static_cast<int>(nl) + 1;
  }
  std::vector<long long> ids;
  std::string source, error;
  const bool set = node_ids_from(part[0].empty() ? nullptr : part[0].c_str(), part[1].empty() ? nullptr : part[1].c_str(),
                                 part[2].empty() ? nullptr : part[2].c_str(), P, ids, source, error);
  if (!set || !error.empty()) return 0;
  if (static_cast<int>(ids.size()) != P) std::abort();
  const Topology t = group_by_key(ids, source);
  int covered = 0;
  for (const auto& node : t.ranks) covered += static_cast<int>(node.size());
  if (covered != P || static_cast<int>(t.node_of.size()) != P) std::abort();
  return 0;
}
