// The sequential closure the distributed one is checked against, checked
// against closed forms; the edge-list reader's errors; owner() in range.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "closure.hpp"

namespace c = apps::closure;

TEST(Closure, ChainCycleAndTree) {
  std::vector<c::Edge> chain;
  for (int i = 0; i < 10; ++i) chain.emplace_back(i, i + 1);
  EXPECT_EQ(c::sequential_closure(chain).size(), 11u * 10 / 2);  // every i < j
  std::vector<c::Edge> cycle;
  for (int i = 0; i < 6; ++i) cycle.emplace_back(i, (i + 1) % 6);
  EXPECT_EQ(c::sequential_closure(cycle).size(), 36u);  // self pairs included (paths of length 6)
  const std::vector<c::Edge> tree = {{0, 1}, {0, 2}, {1, 3}, {1, 4}};
  const std::vector<c::Edge> want = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 3}, {1, 4}};
  EXPECT_EQ(c::sequential_closure(tree), want);
}

TEST(Closure, ReaderRefusesBadLines) {
  const std::string path = testing::TempDir() + "a2a_closure_edges.txt";
  std::vector<c::Edge> edges;
  std::string error;
  std::ofstream(path) << "# comment\n\n0 1\n 2\t3 \n";
  ASSERT_TRUE(c::read_edges(path, edges, error)) << error;
  EXPECT_EQ(edges, (std::vector<c::Edge>{{0, 1}, {2, 3}}));
  for (const char* bad : {"0 1 2\n", "0\n", "a b\n", "-1 2\n"}) {
    std::ofstream(path) << bad;
    edges.clear();
    EXPECT_FALSE(c::read_edges(path, edges, error)) << bad;
    EXPECT_NE(error.find(":1: expected two non-negative vertex ids"), std::string::npos) << error;
  }
  EXPECT_FALSE(c::read_edges(path + ".missing", edges, error));
  std::remove(path.c_str());
}

TEST(Closure, OwnerInRange) {
  for (int P : {1, 2, 3, 7, 16})
    for (long long v = 0; v < 1000; ++v) {
      const int o = c::owner(v, P);
      EXPECT_GE(o, 0);
      EXPECT_LT(o, P);
    }
}
