#include "workload/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "registry/spec.hpp"

namespace a2a::workload {

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Deterministic uniforms in [0, 1) for the pair (src, dst).
struct Draws {
  uint64_t state;
  Draws(const Workload& w, int src, int dst) : state(splitmix(w.seed) ^ splitmix((uint64_t(src) << 32) | uint32_t(dst))) {}
  double next() {
    state = splitmix(state);
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  }
};

long long ceil_frac(long long P, long long num, long long den) { return (P * num + den - 1) / den; }

}  // namespace

bool parse(const std::string& text, Workload& out, std::string& error) {
  a2a::Spec spec;
  if (!a2a::split_spec(text, spec, error)) return false;
  out = Workload{};
  out.kind = spec.name;
  if (out.kind != "uniform" && out.kind != "normal" && out.kind != "power-law" && out.kind != "sparse" &&
      out.kind != "fft-n1" && out.kind != "fft-n2") {
    error = "a2a: unknown workload '" + out.kind + "'; expected uniform, normal, power-law, sparse, fft-n1, fft-n2";
    return false;
  }
  for (const auto& [key, value] : spec.params) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = end && *end == '\0';
    if (!number || v < 0) {
      error = "a2a: workload parameter " + key + " must be a non-negative number, got '" + value + "'";
      return false;
    }
    if (key == "seed") out.seed = static_cast<unsigned long long>(v);
    else if (key == "max" && (out.kind == "uniform" || out.kind == "power-law" || out.kind == "sparse")) out.max = static_cast<long long>(v);
    else if (key == "mean" && out.kind == "normal") out.mean = v;
    else if (key == "dev" && out.kind == "normal") out.dev = v;
    else if (key == "exponent" && out.kind == "power-law") out.exponent = v;
    else if (key == "zero" && out.kind == "sparse" && v <= 1) out.zero = v;
    else {
      error = "a2a: unknown or out-of-range workload parameter '" + key + "' for " + out.kind;
      return false;
    }
  }
  return true;
}

Workload with_size(Workload w, long long size) {
  if (w.max < 0) w.max = size;
  if (w.mean < 0) w.mean = static_cast<double>(size);
  if (w.dev < 0) w.dev = w.mean / 4;
  return w;
}

long long count(const Workload& w, int src, int dst, int P) {
  Draws d(w, src, dst);
  if (w.kind == "fft-n1") return (src < ceil_frac(P, 5, 8) && dst < ceil_frac(P, 25, 32)) ? 8 : 0;
  if (w.kind == "fft-n2") return src == P - 1 ? 16 : 64;
  if (w.kind == "normal") {
    const double u1 = 1.0 - d.next(), u2 = d.next();  // Box-Muller
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
    return std::max(0LL, std::llround(w.mean + w.dev * z));
  }
  const long long S = std::max(0LL, w.max);
  if (w.kind == "sparse") {
    if (d.next() < w.zero || S == 0) return 0;
    return 1 + static_cast<long long>(d.next() * static_cast<double>(S));
  }
  if (w.kind == "power-law") {
    const double u = d.next(), hi = static_cast<double>(S) + 1, a = w.exponent;
    const double x = std::abs(a - 1) < 1e-12 ? std::pow(hi, u)
                                             : std::pow(1 + u * (std::pow(hi, 1 - a) - 1), 1 / (1 - a));
    return std::min(S, static_cast<long long>(std::floor(x)) - 1);
  }
  return static_cast<long long>(d.next() * static_cast<double>(S + 1));  // uniform 0..S
}

}  // namespace a2a::workload
