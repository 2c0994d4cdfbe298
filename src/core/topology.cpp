#include "core/topology.hpp"

#include "core/config.hpp"

#include <cstdlib>
#include <map>
#include <sstream>

namespace a2a::detail {

std::string Topology::describe() const {
  std::ostringstream out;
  out << nodes() << (nodes() == 1 ? " node" : " nodes") << " (" << source << "): sizes ";
  for (int n = 0; n < nodes(); ++n) out << (n ? "," : "") << ranks[n].size();
  bool consecutive = true;
  for (size_t r = 1; r < node_of.size(); ++r) consecutive = consecutive && node_of[r] >= node_of[r - 1];
  if (!consecutive) out << ", not consecutive";
  if (!error.empty()) out << "; " << error;
  return out.str();
}

Topology group_by_key(const std::vector<long long>& key_of, const std::string& source) {
  Topology t;
  t.source = source;
  std::map<long long, int> node_of_key;
  for (size_t r = 0; r < key_of.size(); ++r) {
    auto it = node_of_key.find(key_of[r]);
    if (it == node_of_key.end()) {
      it = node_of_key.emplace(key_of[r], t.nodes()).first;
      t.ranks.emplace_back();
    }
    t.node_of.push_back(it->second);
    t.ranks[it->second].push_back(static_cast<int>(r));
  }
  return t;
}

namespace {

bool parse_list(const char* text, std::vector<long long>& out) {
  out.clear();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) return false;
    out.push_back(v);
  }
  return !out.empty();
}

}  // namespace

bool node_ids_from(const char* map, const char* sizes, const char* size, int P, std::vector<long long>& ids,
                   std::string& source, std::string& error) {
  ids.clear();
  error.clear();
  std::vector<long long> list;
  if (map && *map) {
    source = "A2A_NODE_MAP";
    if (!parse_list(map, list) || static_cast<int>(list.size()) != P)
      error = "A2A_NODE_MAP needs one non-negative node id per rank (" + std::to_string(P) + ")";
    else
      ids = list;
    return true;
  }
  if (sizes && *sizes) {
    source = "A2A_NODE_SIZES";
    long long total = 0;
    bool ok = parse_list(sizes, list);
    for (long long q : list) {
      ok = ok && q > 0 && q <= P - total;  // bounded so the sum cannot overflow
      if (ok) total += q;
    }
    if (!ok || total != P) {
      error = "A2A_NODE_SIZES needs positive sizes adding up to " + std::to_string(P);
      return true;
    }
    for (size_t n = 0; n < list.size(); ++n) ids.insert(ids.end(), static_cast<size_t>(list[n]), static_cast<long long>(n));
    return true;
  }
  if (size && *size) {
    source = "A2A_NODE_SIZE";
    const bool ok = parse_list(size, list) && list.size() == 1 && list[0] > 0;
    if (!ok) {
      error = "A2A_NODE_SIZE needs one positive integer";
      return true;
    }
    for (int r = 0; r < P; ++r) ids.push_back(r / list[0]);
    return true;
  }
  return false;
}

bool node_ids_from_env(int P, std::vector<long long>& ids, std::string& source, std::string& error) {
  const Config& c = config();
  return node_ids_from(c.node_map.c_str(), c.node_sizes.c_str(), c.node_size.c_str(), P, ids, source, error);
}

}  // namespace a2a::detail
