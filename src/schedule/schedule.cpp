#include "schedule/schedule.hpp"

#include <algorithm>

namespace a2a::detail::schedule {

long long ipow(long long base, int exp) {
  long long v = 1;
  for (int k = 0; k < exp; ++k) v *= base;
  return v;
}

int digit_count(long long P, long long r) {
  int w = 0;
  for (long long span = 1; span < P; span *= r) ++w;
  return w;
}

int digit(long long i, long long r, int x) {
  for (int k = 0; k < x; ++k) i /= r;
  return static_cast<int>(i % r);
}

std::vector<Step> tra_steps(int P, int r) {
  r = std::min(r, std::max(P, 2));
  std::vector<Step> steps;
  const int w = digit_count(P, r);
  long long rx = 1;  // r^x
  for (int x = 0; x < w; ++x, rx *= r) {
    for (int z = 1; z < r; ++z) {
      Step s;
      s.distance = static_cast<int>(z * rx);
      s.digit = x;
      s.span = rx;
      // Blocks whose x-th digit is z form units of r^x consecutive indices.
      for (long long base = z * rx; base < P; base += rx * r)
        for (long long i = base; i < std::min<long long>(base + rx, P); ++i) s.slots.push_back(static_cast<int>(i));
      if (!s.slots.empty()) steps.push_back(std::move(s));
    }
  }
  return steps;
}

std::vector<StepShape> tra_shape(int P, int r) {
  r = std::min(r, std::max(P, 2));
  std::vector<StepShape> steps;
  const int w = digit_count(P, r);
  long long rx = 1;
  for (int x = 0; x < w; ++x, rx *= r)
    for (int z = 1; z < r; ++z) {
      long long slots = 0;  // tra_steps' units, counted
      for (long long base = z * rx; base < P; base += rx * r) slots += std::min<long long>(rx, P - base);
      if (slots) steps.push_back({static_cast<int>(z * rx), static_cast<int>(slots), x});
    }
  return steps;
}

long long tra_rounds_closed(long long P, long long r) {
  if (P <= 1) return 0;
  r = std::min(r, P);
  const int w = digit_count(P, r);
  return w * (r - 1) - (ipow(r, w) - P) / ipow(r, w - 1);
}

long long tra_blocks_closed(long long P, long long r) {
  if (P <= 1) return 0;
  r = std::min(r, P);
  const int w = digit_count(P, r);
  long long D = 0, rx = 1;
  for (int x = 0; x < w; ++x, rx *= r) {
    const long long lgc = P % (rx * r);
    const long long lc = P / (rx * r) * rx;
    for (long long z = 1; z < r; ++z) {
      const long long t = lgc - z * rx;
      if (t <= 0) D += lc;
      else if (t / rx > 0) D += lc + rx;
      else D += lc + t % rx;
    }
  }
  return D;
}

long long tra_waits_closed(long long P, long long r, long long ports) {
  if (P <= 1) return 0;
  r = std::min(r, P);
  const long long b = ports <= 0 ? r - 1 : std::min(ports, r - 1);
  const int w = digit_count(P, r);
  const long long rx = ipow(r, w - 1);
  const long long top = (P + rx - 1) / rx - 1;  // steps of the highest digit
  return (w - 1) * ((r - 1 + b - 1) / b) + (top + b - 1) / b;
}

std::vector<Step> linear_steps(int P) {
  std::vector<Step> steps;
  for (int i = 1; i < P; ++i) steps.push_back(Step{i, {i}, i});
  return steps;
}

long long count_rounds(const std::vector<Step>& steps) {
  return std::count_if(steps.begin(), steps.end(), [](const Step& s) { return !s.slots.empty(); });
}

long long count_blocks(const std::vector<Step>& steps) {
  long long d = 0;
  for (const auto& s : steps) d += static_cast<long long>(s.slots.size());
  return d;
}

std::vector<std::vector<int>> remaining_hops(int P, const std::vector<Step>& steps) {
  // hops[k][j]: hops left for slot steps[k].slots[j], this one included.
  std::vector<int> left(P, 0);
  for (const auto& s : steps)
    for (int i : s.slots) ++left[i];
  std::vector<std::vector<int>> hops(steps.size());
  for (size_t k = 0; k < steps.size(); ++k)
    for (int i : steps[k].slots) hops[k].push_back(left[i]--);
  return hops;
}

long long tuna_temp_index(long long o, long long r) {
  long long rx = 1;
  int dx = 0;
  while (rx * r <= o) {
    rx *= r;
    ++dx;
  }
  return o - 1 - dx * (r - 1) - o / rx;
}

bool is_forwarded(long long o, long long r) {
  int nonzero = 0;
  for (; o > 0; o /= r) nonzero += o % r != 0;
  return nonzero >= 2;
}

}  // namespace a2a::detail::schedule
