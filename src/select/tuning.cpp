#include "select/tuning.hpp"

#include <mpi.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "core/config.hpp"

namespace a2a::detail {
namespace {

using nlohmann::json;

const char* name_of(Collective c) { return c == Collective::alltoall ? "alltoall" : "alltoallv"; }

// Reads one entry; false with the reason.
bool read_entry(const json& e, TuningEntry& out, std::string& why) {
  if (!e.is_object()) return why = "not an object", false;
  const std::string coll = e.value("collective", "");
  if (coll != "alltoall" && coll != "alltoallv") return why = "collective must be alltoall or alltoallv", false;
  out.collective = coll == "alltoall" ? Collective::alltoall : Collective::alltoallv;
  out.procs = e.at("procs").get<int>();
  out.nodes = e.at("nodes").get<std::vector<int>>();
  out.min_bytes = e.at("min_bytes").get<long long>();
  out.max_bytes = e.at("max_bytes").get<long long>();
  out.algorithm = e.at("algorithm").get<std::string>();
  out.skew = e.value("skew", 1.0);
  out.workload = e.value("workload", "");
  out.median_us = e.value("median_us", 0.0);
  long long ranks = 0;
  for (int q : out.nodes) ranks += q > 0 ? q : -(1LL << 40);
  if (out.procs < 1 || ranks != out.procs) return why = "nodes must be positive and add up to procs", false;
  if (out.min_bytes < 0 || out.max_bytes < out.min_bytes) return why = "need 0 <= min_bytes <= max_bytes", false;
  if (!(out.skew >= 1)) return why = "skew must be >= 1", false;
  Resolved res;
  std::string err;
  if (out.algorithm.rfind("auto", 0) == 0) return why = "algorithm cannot be auto", false;
  if (resolve(out.collective, out.algorithm, out.procs, out.max_bytes, res, err) != MPI_SUCCESS) return why = err, false;
  return true;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

bool parse_document(const json& doc, const std::string& mpi_library, TuningTable& out, std::string& error) {
  if (!doc.is_object() || doc.value("format", "") != "a2a-tuning") {
    error = "not an a2a tuning file (no \"format\": \"a2a-tuning\"); make one with `a2a tune`";
    return false;
  }
  if (doc.value("version", 0) != 1) {
    error = "tuning file version " + doc.value("version", json()).dump() + " is not supported (expected 1)";
    return false;
  }
  out.mpi_library = doc.value("mpi_library", "");
  if (out.mpi_library != mpi_library) {
    error = "tuned with another MPI library ('" + out.mpi_library + "', this run uses '" + mpi_library + "')";
    return false;
  }
  if (!doc.contains("entries") || !doc["entries"].is_array()) {
    error = "no \"entries\" array";
    return false;
  }
  const auto& entries = doc["entries"];
  for (size_t i = 0; i < entries.size(); ++i) {
    TuningEntry e;
    std::string why;
    bool ok = false;
    try {
      ok = read_entry(entries[i], e, why);
    } catch (const json::exception& x) {
      why = x.what();
    }
    if (!ok) {
      error = "entry " + std::to_string(i) + ": " + why;
      out.entries.clear();
      return false;
    }
    out.entries.push_back(std::move(e));
  }
  return true;
}

}  // namespace

bool parse_tuning(const std::string& text, const std::string& mpi_library, TuningTable& out, std::string& error) {
  out = TuningTable{};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    error = std::string("not valid JSON (") + e.what() + ")";
    return false;
  }
  // Fields of the wrong JSON type (a version that is an array, ...) throw.
  try {
    return parse_document(doc, mpi_library, out, error);
  } catch (const json::exception& e) {
    error = std::string("malformed tuning file (") + e.what() + ")";
    out.entries.clear();
    return false;
  }
}

std::string tuning_json(const TuningTable& table) {
  json entries = json::array();
  for (const auto& e : table.entries) {
    json j = {{"collective", name_of(e.collective)}, {"procs", e.procs},         {"nodes", e.nodes},
              {"min_bytes", e.min_bytes},           {"max_bytes", e.max_bytes}, {"algorithm", e.algorithm},
              {"median_us", e.median_us}};
    if (e.collective == Collective::alltoallv) {
      j["skew"] = e.skew;
      j["workload"] = e.workload;
    }
    entries.push_back(std::move(j));
  }
  const json doc = {{"format", "a2a-tuning"}, {"version", 1}, {"mpi_library", table.mpi_library}, {"entries", entries}};
  return doc.dump(1) + "\n";
}

const TuningEntry* find_entry(const TuningTable& table, Collective coll, const std::vector<int>& nodes,
                              long long mean, long long max_bytes) {
  const TuningEntry* best = nullptr;
  double best_gap = 0;
  const double skew = coll == Collective::alltoallv && mean > 0 ? static_cast<double>(max_bytes) / mean : 1.0;
  for (const auto& e : table.entries) {
    if (e.collective != coll || e.nodes != nodes || mean < e.min_bytes || mean > e.max_bytes) continue;
    const double gap = std::fabs(std::log(e.skew) - std::log(std::max(skew, 1.0)));
    if (!best || gap < best_gap) best = &e, best_gap = gap;
  }
  return best;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(std::max(0, len)));
  s = s.substr(0, s.find_first_of("\r\n"));
  while (!s.empty() && (s.back() == ' ' || s.back() == ',' || s.back() == '\0')) s.pop_back();
  return s;
}

const TuningTable* process_tuning(std::string* status, uint64_t* fingerprint) {
  static std::once_flag once;
  static TuningTable table;
  static bool loaded = false;
  static std::string message;
  static uint64_t print = 0;
  std::call_once(once, [] {
    const char* path = config().tuning_path.c_str();
    if (!*path) {
      message = "no tuning file (A2A_TUNING_FILE unset)";
      return;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    if (!in.is_open()) {
      message = std::string("tuning file ") + path + " ignored: cannot be read";
    } else if (!parse_tuning(text.str(), mpi_library_version(), table, error)) {
      message = std::string("tuning file ") + path + " ignored: " + error;
    } else {
      loaded = true;
      print = fnv1a(text.str());
      message = std::string("tuning file ") + path + ": " + std::to_string(table.entries.size()) + " entries";
    }
  });
  if (status) *status = message;
  if (fingerprint) *fingerprint = print;
  return loaded ? &table : nullptr;
}

}  // namespace a2a::detail
