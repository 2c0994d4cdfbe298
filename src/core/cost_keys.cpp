#include "core/cost_keys.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace a2a::detail {

namespace {

constexpr const char* kCostKeys[] = {"alpha_intra", "beta_intra", "alpha_inter", "beta_inter", "overhead", "copy",
                                     "persistent",  "flag",       "round",       "flag_round", "shm_copy", "cma"};
constexpr int kCostKeyCount = sizeof kCostKeys / sizeof kCostKeys[0];

// The scalar fields of the keys before shm_copy, in kCostKeys' order.
using Field = double& (*)(MachineCosts&);
constexpr Field kFields[] = {
    [](MachineCosts& m) -> double& { return m.intra.alpha; }, [](MachineCosts& m) -> double& { return m.intra.beta; },
    [](MachineCosts& m) -> double& { return m.inter.alpha; }, [](MachineCosts& m) -> double& { return m.inter.beta; },
    [](MachineCosts& m) -> double& { return m.overhead; },    [](MachineCosts& m) -> double& { return m.copy; },
    [](MachineCosts& m) -> double& { return m.persistent; },  [](MachineCosts& m) -> double& { return m.flag; },
    [](MachineCosts& m) -> double& { return m.round; },       [](MachineCosts& m) -> double& { return m.flag_round; }};
constexpr int kScalarKeys = sizeof kFields / sizeof kFields[0];

// Key k's value into m (shm_copy and cma: per byte at every measured size).
void set_cost(MachineCosts& m, int k, double v) {
  if (k < kScalarKeys) {
    kFields[k](m) = v;
    return;
  }
  double* curve = k == kScalarKeys ? m.seg : m.cma;
  for (int i = 0; i < kShmCopySizes; ++i) curve[i] = v * static_cast<double>(kShmCopyBytes[i]);
}

}  // namespace

std::string describe_costs(const MachineCosts& m) {
  MachineCosts c = m;
  std::string out;
  char v[64];
  for (int k = 0; k < kScalarKeys; ++k) {
    std::snprintf(v, sizeof v, "%s%s=%.3g", k ? "," : "", kCostKeys[k], kFields[k](c));
    out += v;
  }
  const auto curve = [&](const char* name, const double* t, const long long* bytes, int n) {
    out += name;
    for (int i = 0; i < n; ++i) {
      std::snprintf(v, sizeof v, " %lldK:%.3g", bytes[i] / 1024, t[i] * 1e6);
      out += v;
    }
    out += " us";
  };
  curve("; intra messages", c.intra.at, kLinkBytes, kLinkSizes);
  curve("; inter messages", c.inter.at, kLinkBytes, kLinkSizes);
  curve("; shm segment", c.seg, kShmCopyBytes, kShmCopySizes);
  curve("; cma", c.cma, kShmCopyBytes, kShmCopySizes);
  return out;
}

void apply_cost_keys(MachineCosts& m, const MachineCosts& given, unsigned keys) {
  MachineCosts g = given;
  for (int k = 0; k < kCostKeyCount; ++k) {
    if (!(keys & (1u << k))) continue;
    if (k < 4) {  // alpha_intra, beta_intra, alpha_inter, beta_inter: the link's measured curve goes
      LinkCost& link = k < 2 ? m.intra : m.inter;
      std::fill(std::begin(link.at), std::end(link.at), 0.0);
    }
    if (k < kScalarKeys) kFields[k](m) = kFields[k](g);
    else if (k == kScalarKeys) std::copy(std::begin(g.seg), std::end(g.seg), m.seg);
    else std::copy(std::begin(g.cma), std::end(g.cma), m.cma);
  }
}

bool parse_cost_model(const std::string& text, MachineCosts& m, unsigned& given, std::string& error) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int k = 0;
    while (k < kCostKeyCount && key != kCostKeys[k]) ++k;
    char* stop = nullptr;
    const double v = value.empty() ? -1 : std::strtod(value.c_str(), &stop);
    if (k == kCostKeyCount || value.empty() || *stop != '\0' || !(v >= 0) || v > 1) {
      error = "a2a: A2A_COST_MODEL: expected key=seconds pairs with keys alpha_intra, beta_intra, alpha_inter, "
              "beta_inter, overhead, copy, persistent, flag, round, flag_round, shm_copy, cma (0 <= value <= 1), "
              "got '" + item + "'";
      return false;
    }
    set_cost(m, k, v);
    given |= 1u << k;
  }
  return true;
}

}  // namespace a2a::detail
