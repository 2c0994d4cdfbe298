// The pure parts of a2a-closure: reading an edge list, which rank owns a
// vertex, and the sequential transitive closure the distributed one is
// checked against.
#pragma once
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace apps::closure {

using Edge = std::pair<long long, long long>;

// "src dst" per line; blank lines and lines starting with '#' are skipped.
// Returns false with a message naming `name` and the line on anything else
// (negative ids included).
inline bool read_edges(std::istream& in, const std::string& path, std::vector<Edge>& edges, std::string& error) {
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream row(line);
    long long a = -1, b = -1;
    std::string extra;
    if (!(row >> a >> b) || (row >> extra) || a < 0 || b < 0) {
      error = path + ":" + std::to_string(n) + ": expected two non-negative vertex ids, got '" + line + "'";
      return false;
    }
    edges.emplace_back(a, b);
  }
  return true;
}

inline bool read_edges(const std::string& path, std::vector<Edge>& edges, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  return read_edges(in, path, edges, error);
}

// The rank that owns vertex v (a mixing hash, so chains and grids spread).
inline int owner(long long v, int P) {
  unsigned long long h = static_cast<unsigned long long>(v) + 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<int>((h ^ (h >> 31)) % static_cast<unsigned long long>(P));
}

// Every (a, c) with a path a -> ... -> c of one or more edges, sorted.
inline std::vector<Edge> sequential_closure(const std::vector<Edge>& edges) {
  long long n = 0;
  for (const auto& [a, b] : edges) n = std::max(n, std::max(a, b) + 1);
  std::vector<std::vector<long long>> adj(n);
  for (const auto& [a, b] : edges) adj[a].push_back(b);
  std::vector<Edge> out;
  std::vector<char> seen(n);
  std::vector<long long> stack;
  for (long long s = 0; s < n; ++s) {
    std::fill(seen.begin(), seen.end(), 0);
    stack.assign(adj[s].begin(), adj[s].end());
    while (!stack.empty()) {
      const long long v = stack.back();
      stack.pop_back();
      if (seen[v]) continue;
      seen[v] = 1;
      out.emplace_back(s, v);
      for (long long w : adj[v])
        if (!seen[w]) stack.push_back(w);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace apps::closure
