#include "registry/spec.hpp"

namespace a2a {

namespace {
std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}
}  // namespace

bool split_spec(const std::string& text, Spec& out, std::string& error) {
  out = Spec{};
  const auto colon = text.find(':');
  out.name = trim(text.substr(0, colon));
  if (out.name.empty()) {
    error = "a2a: empty algorithm name in '" + text + "'";
    return false;
  }
  if (colon == std::string::npos) return true;
  std::string rest = text.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    const auto comma = rest.find(',', pos);
    const std::string item = trim(rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    const auto eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      error = "a2a: malformed parameter '" + item + "' in '" + text + "'; expected key=value";
      return false;
    }
    const std::string key = trim(item.substr(0, eq));
    if (out.params.count(key)) {
      error = "a2a: parameter '" + key + "' given twice in '" + text + "'";
      return false;
    }
    out.params[key] = trim(item.substr(eq + 1));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

}  // namespace a2a
