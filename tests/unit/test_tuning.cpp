// The tuning file: written and read back, lookups by collective, layout,
// size and skew, and every kind of bad file refused with a clear reason.
#include <gtest/gtest.h>

#include "select/tuning.hpp"

using namespace a2a::detail;

namespace {
const char* kLib = "Test MPI 1.0";
TuningTable sample() {
  TuningTable t;
  t.mpi_library = kLib;
  t.entries = {{Collective::alltoall, 4, {4}, 0, 100, 1, "", "spread-out", 12.5},
               {Collective::alltoall, 4, {4}, 101, 1LL << 40, 1, "", "tra:radix=2", 80},
               {Collective::alltoall, 4, {2, 2}, 0, 1LL << 40, 1, "", "tra2:radix-intra=2,radix-inter=2", 9},
               {Collective::alltoallv, 4, {4}, 0, 1000, 1, "uniform", "tuna:radix=3", 20},
               {Collective::alltoallv, 4, {4}, 0, 1000, 8, "power-law", "spread-out", 30}};
  return t;
}
std::string refusal(const std::string& text) {
  TuningTable t;
  std::string err;
  EXPECT_FALSE(parse_tuning(text, kLib, t, err)) << text;
  EXPECT_TRUE(t.entries.empty());
  return err;
}
}  // namespace

TEST(Tuning, WrittenAndReadBack) {
  const TuningTable t = sample();
  TuningTable back;
  std::string err;
  ASSERT_TRUE(parse_tuning(tuning_json(t), kLib, back, err)) << err;
  ASSERT_EQ(back.entries.size(), t.entries.size());
  for (size_t i = 0; i < t.entries.size(); ++i) {
    EXPECT_EQ(back.entries[i].algorithm, t.entries[i].algorithm);
    EXPECT_EQ(back.entries[i].nodes, t.entries[i].nodes);
    EXPECT_EQ(back.entries[i].max_bytes, t.entries[i].max_bytes);
    EXPECT_DOUBLE_EQ(back.entries[i].skew, t.entries[i].skew);
  }
}

TEST(Tuning, Lookup) {
  const TuningTable t = sample();
  auto alg = [&](Collective c, std::vector<int> nodes, long long mean, long long max) {
    const TuningEntry* e = find_entry(t, c, nodes, mean, max);
    return e ? e->algorithm : std::string("none");
  };
  EXPECT_EQ(alg(Collective::alltoall, {4}, 100, 100), "spread-out");
  EXPECT_EQ(alg(Collective::alltoall, {4}, 101, 101), "tra:radix=2");
  EXPECT_EQ(alg(Collective::alltoall, {2, 2}, 5, 5), "tra2:radix-intra=2,radix-inter=2");
  EXPECT_EQ(alg(Collective::alltoall, {1, 3}, 5, 5), "none");  // another layout
  EXPECT_EQ(alg(Collective::alltoall, {8}, 5, 5), "none");     // another P
  EXPECT_EQ(alg(Collective::alltoallv, {4}, 100, 120), "tuna:radix=3");  // near-uniform
  EXPECT_EQ(alg(Collective::alltoallv, {4}, 100, 900), "spread-out");    // skewed
  EXPECT_EQ(alg(Collective::alltoallv, {4}, 2000, 2000), "none");
}

TEST(Tuning, BadFilesRefused) {
  EXPECT_NE(refusal("{\"format\": \"a2a-tuning\", ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("{\"stations\": [1, 2]}").find("not an a2a tuning file"), std::string::npos);
  EXPECT_NE(refusal("[1, 2, 3]").find("not an a2a tuning file"), std::string::npos);
  EXPECT_NE(refusal(R"({"format": "a2a-tuning", "version": 2, "mpi_library": "Test MPI 1.0", "entries": []})")
                .find("version 2 is not supported"),
            std::string::npos);
  // Header fields of the wrong JSON type (found by fuzz_tuning): refused, no throw.
  for (const char* text : {R"({"format": "a2a-tuning", "version": [1], "entries": []})",
                           R"({"format": 7, "version": 1})",
                           R"({"format": "a2a-tuning", "version": 1, "mpi_library": ["x"], "entries": []})"})
    EXPECT_FALSE(refusal(text).empty()) << text;
  TuningTable other = sample();
  other.mpi_library = "Other MPI 9";
  EXPECT_NE(refusal(tuning_json(other)).find("another MPI library"), std::string::npos);
  EXPECT_NE(refusal(R"({"format": "a2a-tuning", "version": 1, "mpi_library": "Test MPI 1.0"})").find("entries"),
            std::string::npos);
  // Bad entries: the whole file is refused, naming the entry.
  const std::pair<const char*, const char*> bad_entries[] = {
      {R"("algorithm": "tra:radix=1")", "radix"},
      {R"("algorithm": "nosuch")", "unknown algorithm"},
      {R"("algorithm": "auto")", "cannot be auto"},
      {R"("algorithm": 7)", "entry 0"},
  };
  for (const auto& [alg, why] : bad_entries) {
    const std::string text = std::string(R"({"format": "a2a-tuning", "version": 1, "mpi_library": "Test MPI 1.0", )") +
                             R"("entries": [{"collective": "alltoall", "procs": 4, "nodes": [4], "min_bytes": 0, )" +
                             R"("max_bytes": 10, )" + alg + "}]}";
    const std::string err = refusal(text);
    EXPECT_NE(err.find("entry 0"), std::string::npos) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
  }
  auto entry = [](const char* fields) {
    return std::string(R"({"format": "a2a-tuning", "version": 1, "mpi_library": "Test MPI 1.0", "entries": [{)") +
           fields + "}]}";
  };
  EXPECT_NE(refusal(entry(R"("collective": "alltoall", "procs": 4, "nodes": [3], "min_bytes": 0, "max_bytes": 1, "algorithm": "linear")"))
                .find("add up to procs"),
            std::string::npos);
  EXPECT_NE(refusal(entry(R"("collective": "alltoall", "procs": 4, "nodes": [4], "min_bytes": 5, "max_bytes": 1, "algorithm": "linear")"))
                .find("min_bytes"),
            std::string::npos);
  EXPECT_NE(refusal(entry(R"("collective": "bcast", "procs": 4, "nodes": [4], "min_bytes": 0, "max_bytes": 1, "algorithm": "linear")"))
                .find("collective"),
            std::string::npos);
  EXPECT_NE(refusal(entry(R"("collective": "alltoall", "procs": 4, "nodes": [4], "min_bytes": 0, "algorithm": "linear")"))
                .find("max_bytes"),
            std::string::npos);
}
