// Spec strings "name[:key=value[,key=value...]]": parsing and validation
// against the registry, done once per distinct string and cached.
#pragma once
#include <map>
#include <string>

namespace a2a {

struct Spec {
  std::string name;
  std::map<std::string, std::string> params;  // every registered key, defaults filled in
};

// Splits a spec string; returns false with a message on malformed input.
bool split_spec(const std::string& text, Spec& out, std::string& error);

}  // namespace a2a
