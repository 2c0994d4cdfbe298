// Which ranks share a node.  Pure parsing and grouping here (unit-tested);
// the communicator context computes it once per communicator.
//   A2A_NODE_MAP=0,1,0,1,...  node of every world rank, explicitly
//   A2A_NODE_SIZES=1,2,3      unequal nodes of consecutive world ranks
//   A2A_NODE_SIZE=Q           nodes of Q consecutive world ranks (last may be smaller)
//   otherwise                 MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
// The first of these that is set wins.  Nodes are numbered in the order of
// their lowest rank; each node's ranks are kept ascending.
#pragma once
#include <string>
#include <vector>

namespace a2a::detail {

struct Topology {
  std::vector<int> node_of;             // rank -> node
  std::vector<std::vector<int>> ranks;  // node -> its ranks, ascending
  std::string source;                   // where the layout came from
  std::string error;                    // set when an override could not be used

  int nodes() const { return static_cast<int>(ranks.size()); }
  std::string describe() const;         // "3 nodes (A2A_NODE_SIZES): 1,2,3"
};

// Groups ranks whose keys are equal (key_of[rank]) into nodes.
Topology group_by_key(const std::vector<long long>& key_of, const std::string& source);

// World-rank node ids from the environment overrides (read once, core/config.hpp) for a world of P ranks.
// Returns false when none is set; on a malformed or mismatched value returns
// true with `error` filled and no ids.
bool node_ids_from_env(int P, std::vector<long long>& ids, std::string& source, std::string& error);

// The same from explicit strings (what the environment holds), for tests.
bool node_ids_from(const char* map, const char* sizes, const char* size, int P, std::vector<long long>& ids,
                   std::string& source, std::string& error);

}  // namespace a2a::detail
