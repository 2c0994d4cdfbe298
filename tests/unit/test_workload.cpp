// The count generators: deterministic, in range, shaped as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "workload/workload.hpp"

namespace w = a2a::workload;

namespace {
w::Workload make(const std::string& text, long long size = 100) {
  w::Workload out;
  std::string err;
  EXPECT_TRUE(w::parse(text, out, err)) << err;
  return w::with_size(out, size);
}
}  // namespace

TEST(Workload, DeterministicPerPairAndSeed) {
  const auto a = make("uniform:seed=7"), b = make("uniform:seed=8");
  int differ = 0;
  for (int s = 0; s < 16; ++s)
    for (int d = 0; d < 16; ++d) {
      EXPECT_EQ(w::count(a, s, d, 16), w::count(a, s, d, 16));
      differ += w::count(a, s, d, 16) != w::count(b, s, d, 16);
    }
  EXPECT_GT(differ, 128);
}

TEST(Workload, UniformCoversZeroToMaxWithMeanHalf) {
  const auto u = make("uniform", 1000);
  double sum = 0;
  long long lo = 1 << 30, hi = -1;
  for (int s = 0; s < 64; ++s)
    for (int d = 0; d < 64; ++d) {
      const long long c = w::count(u, s, d, 64);
      sum += c;
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
  EXPECT_GE(lo, 0);
  EXPECT_LE(hi, 1000);
  EXPECT_NEAR(sum / 4096, 500, 25);
}

TEST(Workload, NormalHasItsMeanAndDeviation) {
  const auto n = make("normal:mean=1000,dev=240");
  double sum = 0, sq = 0;
  for (int s = 0; s < 64; ++s)
    for (int d = 0; d < 64; ++d) {
      const double c = static_cast<double>(w::count(n, s, d, 64));
      sum += c;
      sq += c * c;
    }
  const double mean = sum / 4096, dev = std::sqrt(sq / 4096 - mean * mean);
  EXPECT_NEAR(mean, 1000, 15);
  EXPECT_NEAR(dev, 240, 15);
}

// A true power law: the share of counts in [k, 2k) falls like k^(1-A).
TEST(Workload, PowerLawDecaysAsAPowerNotGeometrically) {
  const auto p = make("power-law:max=4095,exponent=1.5");
  std::vector<double> octave(12, 0);
  for (int s = 0; s < 128; ++s)
    for (int d = 0; d < 128; ++d) {
      const long long x = w::count(p, s, d, 128) + 1;  // back to [1, S+1)
      int o = 0;
      while ((2LL << o) <= x) ++o;
      octave[o] += 1;
    }
  // Each octave holds about 2^(-0.5) of the previous one.
  for (int o = 1; o < 6; ++o) EXPECT_NEAR(octave[o] / octave[o - 1], std::pow(2.0, -0.5), 0.1) << o;
  EXPECT_GT(octave[8], 0);  // heavy tail: large blocks exist
}

TEST(Workload, SparseZeroFraction) {
  const auto sp = make("sparse:zero=0.75", 10);
  int zeros = 0;
  for (int s = 0; s < 64; ++s)
    for (int d = 0; d < 64; ++d) {
      const long long c = w::count(sp, s, d, 64);
      zeros += c == 0;
      EXPECT_LE(c, 10);
    }
  EXPECT_NEAR(zeros / 4096.0, 0.75, 0.03);
}

TEST(Workload, FftPatterns) {
  const auto n1 = make("fft-n1"), n2 = make("fft-n2");
  const int P = 16;  // ceil(0.625*16) = 10 senders, ceil(0.78125*16) = 13 receivers
  for (int s = 0; s < P; ++s)
    for (int d = 0; d < P; ++d) {
      EXPECT_EQ(w::count(n1, s, d, P), (s < 10 && d < 13) ? 8 : 0);
      EXPECT_EQ(w::count(n2, s, d, P), s == P - 1 ? 16 : 64);
    }
  EXPECT_EQ(w::count(n1, 6, 0, 11), 8);   // ceil(6.875) = 7 senders
  EXPECT_EQ(w::count(n1, 7, 0, 11), 0);
  EXPECT_EQ(w::count(n1, 0, 8, 11), 8);   // ceil(8.59) = 9 receivers
  EXPECT_EQ(w::count(n1, 0, 9, 11), 0);
}

TEST(Workload, RejectsBadStrings) {
  w::Workload out;
  std::string err;
  for (const char* bad : {"zipf", "uniform:max=-1", "uniform:mean=3", "sparse:zero=2", "normal:dev=x"})
    EXPECT_FALSE(w::parse(bad, out, err)) << bad;
}
