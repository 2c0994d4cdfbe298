// Node layouts from the environment overrides, and grouping by key.
#include <gtest/gtest.h>

#include "core/topology.hpp"

using a2a::detail::group_by_key;
using a2a::detail::node_ids_from;

namespace {
std::vector<long long> ids(const char* map, const char* sizes, const char* size, int P, std::string* err = nullptr) {
  std::vector<long long> out;
  std::string source, error;
  EXPECT_TRUE(node_ids_from(map, sizes, size, P, out, source, error));
  if (err) *err = error;
  return out;
}
}  // namespace

TEST(Topology, EqualUnequalAndExplicit) {
  EXPECT_EQ(ids(nullptr, nullptr, "4", 10), (std::vector<long long>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(ids(nullptr, "1,2,3", nullptr, 6), (std::vector<long long>{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(ids("0,1,0,1", nullptr, nullptr, 4), (std::vector<long long>{0, 1, 0, 1}));
  // The map wins over sizes, sizes over size.
  EXPECT_EQ(ids("1,1,0", "1,2", "1", 3), (std::vector<long long>{1, 1, 0}));
  EXPECT_EQ(ids(nullptr, "2,1", "1", 3), (std::vector<long long>{0, 0, 1}));
  std::vector<long long> none;
  std::string source, error;
  EXPECT_FALSE(node_ids_from(nullptr, nullptr, nullptr, 4, none, source, error));
  EXPECT_FALSE(node_ids_from("", "", "", 4, none, source, error));
}

TEST(Topology, BadOverridesSayWhy) {
  std::string err;
  EXPECT_TRUE(ids(nullptr, "1,2", nullptr, 4, &err).empty());
  EXPECT_NE(err.find("adding up to 4"), std::string::npos);
  EXPECT_TRUE(ids("0,1", nullptr, nullptr, 3, &err).empty());
  EXPECT_NE(err.find("one non-negative node id per rank"), std::string::npos);
  EXPECT_TRUE(ids(nullptr, nullptr, "0", 3, &err).empty());
  EXPECT_TRUE(ids(nullptr, "2,x", nullptr, 3, &err).empty());
  // Sizes whose sum wraps around to P (found by fuzz_node_map) are refused.
  EXPECT_TRUE(ids(nullptr, "9223372036854775807,9223372036854775807,6", nullptr, 4, &err).empty());
  EXPECT_NE(err.find("adding up to 4"), std::string::npos);
}

TEST(Topology, GroupsByKeyInOrderOfLowestRank) {
  const auto t = group_by_key({7, 3, 7, 3, 9}, "test");
  EXPECT_EQ(t.nodes(), 3);
  EXPECT_EQ(t.node_of, (std::vector<int>{0, 1, 0, 1, 2}));
  EXPECT_EQ(t.ranks[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(t.ranks[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(t.describe(), "3 nodes (test): sizes 2,2,1, not consecutive");
  EXPECT_EQ(group_by_key({5, 5}, "x").describe(), "1 node (x): sizes 2");
}
