// Spec strings: accepted, rejected, canonical forms, and knob resolution.
#include <gtest/gtest.h>

#include "registry/registry.hpp"

using a2a::detail::Collective;
using a2a::detail::resolve;
using a2a::detail::Resolved;

namespace {
std::string canonical(const std::string& text, int P = 16, long long bs = 8) {
  Resolved r;
  std::string err;
  const int rc = resolve(Collective::alltoall, text, P, bs, r, err);
  return rc == MPI_SUCCESS ? r.canonical : "error: " + err;
}
int code(const std::string& text, Collective coll = Collective::alltoall) {
  Resolved r;
  std::string err;
  return resolve(coll, text, 16, 8, r, err);
}
}  // namespace

TEST(Spec, Canonical) {
  EXPECT_EQ(canonical("tra:radix=4"), "tra:radix=4");
  EXPECT_EQ(canonical("tra"), "tra:radix=4");
  EXPECT_EQ(canonical("tra:radix=auto", 17), "tra:radix=5");
  EXPECT_EQ(canonical("tra:radix=100", 9), "tra:radix=9");
  EXPECT_EQ(canonical("tra: radix = 3 "), "tra:radix=3");
  EXPECT_EQ(canonical("scattered"), "scattered:block=32");
  EXPECT_EQ(canonical("scattered:block=4"), "scattered:block=4");
  EXPECT_EQ(canonical("bruck-basic:dt=1"), "bruck-basic:dt=1");
  EXPECT_EQ(canonical("bruck-zero-copy"), "bruck-zero-copy:dt=0");
  EXPECT_EQ(canonical("linear"), "linear");
  EXPECT_EQ(canonical("native"), "native");
  EXPECT_EQ(canonical("auto", 64, 8), "auto");  // decided per communicator (select/auto.hpp)
  EXPECT_EQ(canonical("tra:radix=2", 1), "tra:radix=2");
  // ports: the default (all of a digit's exchanges) is left out; at or above r-1 it is all.
  EXPECT_EQ(canonical("tra:radix=8,ports=all"), "tra:radix=8");
  EXPECT_EQ(canonical("tra:radix=8,ports=3"), "tra:radix=8,ports=3");
  EXPECT_EQ(canonical("tra:radix=8,ports=7"), "tra:radix=8");
  EXPECT_EQ(canonical("tra:radix=8,ports=99"), "tra:radix=8");
  EXPECT_EQ(canonical("tra:radix=2,ports=1"), "tra:radix=2");
  EXPECT_EQ(canonical("tra:ports=1"), "tra:radix=4,ports=1");
  EXPECT_EQ(canonical("tra:radix=100,ports=5", 9), "tra:radix=9,ports=5");
}

TEST(Spec, Rejected) {
  for (const char* bad : {"", ":", "nosuch", "tra:radx=4", "tra:radix=1", "tra:radix=0", "tra:radix=-3",
                          "tra:radix=x", "tra:radix=", "tra:radix", "tra:radix=2,radix=3", "linear:dt=1",
                          "bruck-basic:dt=2", "scattered:block=0", "auto:radix=2", "tra:radix=4,", "tra:ports=0",
                          "tra:ports=-1", "tra:ports=x", "tra:ports=", "tra2:ports=2", "tra2:ports-inter=0"})
    EXPECT_EQ(code(bad), MPI_ERR_ARG) << "'" << bad << "'";
  EXPECT_EQ(code("tra", Collective::alltoallv), MPI_ERR_ARG);
  EXPECT_EQ(code("native", Collective::alltoallv), MPI_SUCCESS);
}

TEST(Spec, MessageNamesTheProblem) {
  Resolved r;
  std::string err;
  resolve(Collective::alltoall, "tra:radx=4", 8, 8, r, err);
  EXPECT_EQ(err, "a2a: unknown parameter 'radx' for tra; expected radix, ports");
  resolve(Collective::alltoall, "tra:ports=0", 8, 8, r, err);
  EXPECT_EQ(err, "a2a: ports must be an integer >= 1 or all, got '0'");
  resolve(Collective::alltoall, "brook", 8, 8, r, err);
  EXPECT_NE(err.find("unknown algorithm 'brook'"), std::string::npos);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

TEST(Spec, SyntaxCacheIsBounded) {
  for (int i = 0; i < 3 * static_cast<int>(a2a::detail::kMaxValidated); ++i) {
    EXPECT_EQ(canonical("tra:radix=" + std::to_string(i + 2), 1 << 20), "tra:radix=" + std::to_string(i + 2));
    EXPECT_LE(a2a::detail::validated_specs(), a2a::detail::kMaxValidated);
  }
  EXPECT_GT(a2a::detail::validated_specs(), 0u);
}
