// HandleSet (core/handle_set.hpp) against std::set under random inserts and
// erases whose values collide in the table (clustered runs, wrap-around at
// the end, growth), and the one value a slot cannot hold (0).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/handle_set.hpp"

using a2a::detail::HandleSet;

TEST(HandleSet, AgreesWithStdSetUnderRandomUse) {
  for (uint64_t range : {8ull, 100ull, 5000ull}) {  // few values: long runs; many: growth
    HandleSet h;
    std::set<uint64_t> want;
    std::mt19937_64 rng(range);
    for (int step = 0; step < 200000; ++step) {
      const uint64_t v = rng() % range;  // 0 included
      switch (rng() % 3) {
        case 0:
          ASSERT_EQ(h.insert(v), want.insert(v).second) << "insert " << v << " step " << step;
          break;
        case 1:
          ASSERT_EQ(h.erase(v), want.erase(v) == 1) << "erase " << v << " step " << step;
          break;
        default:
          ASSERT_EQ(h.contains(v), want.count(v) == 1) << "contains " << v << " step " << step;
      }
      ASSERT_EQ(h.size(), want.size());
    }
    for (uint64_t v = 0; v < range; ++v) ASSERT_EQ(h.contains(v), want.count(v) == 1) << v;
  }
}

// Handles as Open MPI has them (pointers 16 or more bytes apart) and as
// MPICH has them (0x44000000 and up): all kept through growth, and gone
// once erased, in any order.
TEST(HandleSet, KeepsPointerAndIntegerHandles) {
  for (uint64_t base : {0x55d0c0a00000ull, 0x44000000ull}) {
    const uint64_t step = base > 0xffffffffull ? 0x1d0 : 1;
    HandleSet h;
    for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(h.insert(base + i * step));
    for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(h.contains(base + i * step));
    for (uint64_t i = 0; i < 1000; i += 2) ASSERT_TRUE(h.erase(base + i * step));
    for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(h.contains(base + i * step), i % 2 == 1) << i;
    EXPECT_EQ(h.size(), 500u);
  }
}
