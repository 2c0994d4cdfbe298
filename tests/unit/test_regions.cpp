// The aliasing check without MPI: receive blocks may not share a byte with
// each other or with a send block; send blocks may overlap each other;
// empty blocks never collide; order does not matter.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/regions.hpp"

using a2a::detail::add_regions;
using a2a::detail::Region;
using a2a::detail::regions_collide;

namespace {

bool collide(const char* send, std::vector<long long> soff, std::vector<long long> sbytes, const char* recv,
             std::vector<long long> roff, std::vector<long long> rbytes, std::string* what = nullptr) {
  std::vector<Region> r;
  if (send) add_regions(r, send, soff.data(), sbytes.data(), static_cast<int>(soff.size()), false);
  add_regions(r, recv, roff.data(), rbytes.data(), static_cast<int>(roff.size()), true);
  std::string w;
  const bool hit = regions_collide(r, w);
  if (what) *what = w;
  return hit;
}

}  // namespace

TEST(Regions, DisjointBuffersAndInterleavedBlocksPass) {
  char buf[100];
  EXPECT_FALSE(collide(buf, {0, 10}, {10, 10}, buf + 50, {0, 10}, {10, 10}));
  // Send and receive blocks interleaved in one array without touching.
  EXPECT_FALSE(collide(buf, {0, 20, 40}, {10, 10, 10}, buf, {10, 30, 50}, {10, 10, 10}));
  // Send blocks overlapping each other (the same data to many) are fine.
  EXPECT_FALSE(collide(buf, {0, 0, 5}, {10, 10, 10}, buf + 60, {0, 10, 20}, {10, 10, 10}));
  // Empty blocks at any place never collide.
  EXPECT_FALSE(collide(buf, {3}, {0}, buf, {0, 3, 3}, {3, 0, 4}));
}

TEST(Regions, OverlapsAreFoundAndNamed) {
  char buf[100];
  std::string what;
  EXPECT_TRUE(collide(buf, {0}, {10}, buf + 9, {0}, {5}, &what));
  EXPECT_EQ(what, "receive block 0 and send block 0");
  EXPECT_TRUE(collide(nullptr, {}, {}, buf, {40, 0, 35}, {10, 10, 6}, &what));  // 35..41 meets 40..50
  EXPECT_EQ(what, "receive blocks 0 and 2");
  EXPECT_TRUE(collide(buf, {50, 0}, {10, 1}, buf, {20, 55}, {10, 1}, &what));  // recv 1 inside send 0
  EXPECT_EQ(what, "receive block 1 and send block 0");
  // A send block starting inside a long receive block.
  EXPECT_TRUE(collide(buf, {30}, {2}, buf, {0}, {40}, &what));
  EXPECT_EQ(what, "receive block 0 and send block 0");
}

// Against a brute force over random layouts.
TEST(Regions, MatchesBruteForce) {
  std::mt19937 rng(3);
  char buf[256];
  for (int t = 0; t < 3000; ++t) {
    const int P = 1 + static_cast<int>(rng() % 6);
    std::vector<long long> so(P), sb(P), ro(P), rb(P);
    for (int i = 0; i < P; ++i) {
      so[i] = rng() % 120;
      sb[i] = rng() % 4 == 0 ? 0 : rng() % 20;
      ro[i] = rng() % 120;
      rb[i] = rng() % 4 == 0 ? 0 : rng() % 20;
    }
    bool brute = false;
    const auto meet = [](long long a, long long al, long long b, long long bl) {
      return al > 0 && bl > 0 && a < b + bl && b < a + al;
    };
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < P; ++j) {
        brute = brute || meet(ro[i], rb[i], so[j], sb[j]);
        if (i != j) brute = brute || meet(ro[i], rb[i], ro[j], rb[j]);
      }
    EXPECT_EQ(collide(buf, so, sb, buf, ro, rb), brute) << "case " << t;
  }
}
