#include "twins.hpp"

#include <cstdlib>
#include <cstring>

namespace a2a::tools {

#ifdef A2A_SMPI
// SimGrid's SMPI has no MPI_T and no twin algorithms to force.
void Twins::before_init() {}
int Twins::write(const std::string&, int, int*) { return MPI_ERR_ARG; }
int Twins::setup(bool, std::string& why) {
  why = "SimGrid's SMPI has no MPI_T control variables";
  return MPI_ERR_OTHER;
}
#else
namespace {

// The value of `item` in a control variable's enumeration.  Open MPI
// publishes MPI_T enumerations; MPICH's are plain ints in the order its
// description lists the choices ("auto - ... brucks - ..."), so the given
// list is checked against that order.
bool enum_value(int index, const std::string& item, const std::vector<std::string>& order, int& value) {
  char name[256], desc[8192];
  int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum en;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind, &scope) !=
      MPI_SUCCESS)
    return false;
  if (en != MPI_T_ENUM_NULL) {
    int items = 0, len = sizeof name;
    if (MPI_T_enum_get_info(en, &items, name, &len) != MPI_SUCCESS) return false;
    for (int k = 0; k < items; ++k) {
      char text[256];
      int text_len = sizeof text;
      if (MPI_T_enum_get_item(en, k, &value, text, &text_len) == MPI_SUCCESS && item == text) return true;
    }
    return false;
  }
  const std::string d = desc;
  size_t at = 0;
  int found = -1;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t hit = std::string::npos;
    for (size_t from = at; (from = d.find(order[k], from)) != std::string::npos; ++from) {
      size_t after = from + order[k].size();
      while (after < d.size() && d[after] == ' ') ++after;
      if (after + 1 < d.size() && d[after] == '-' && d[after + 1] == ' ') {
        hit = from;
        break;
      }
    }
    if (hit == std::string::npos) return false;
    at = hit + order[k].size();
    if (order[k] == item) found = static_cast<int>(k);
  }
  value = found;
  return found >= 0;
}

const std::vector<std::string> kMpichAlltoall = {"auto", "brucks", "nb", "pairwise", "pairwise_sendrecv_replace",
                                                 "scattered"};
const std::vector<std::string> kMpichAlltoallv = {"auto", "nb", "pairwise_sendrecv_replace", "scattered"};
const std::vector<std::string> kMpichDevice = {"all", "none", "percoll"};

}  // namespace

void Twins::before_init() {
#ifdef OPEN_MPI
  setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
#endif
}

int Twins::write(const std::string& name, int value, int* old) {
  int index = -1, count = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return MPI_ERR_ARG;
  MPI_T_cvar_handle h;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) return MPI_ERR_ARG;
  int rc = MPI_SUCCESS;
  if (old) rc = MPI_T_cvar_read(h, old);
  if (rc == MPI_SUCCESS) rc = MPI_T_cvar_write(h, &value);
  MPI_T_cvar_handle_free(&h);
  return rc;
}

int Twins::setup(bool v, std::string& why) {
  rows_.clear();
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    why = "MPI_T is not available";
    return MPI_ERR_OTHER;
  }
  t_init_ = true;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  const bool ompi = std::strstr(version, "Open MPI") != nullptr;
  mpich_ = !ompi && std::strstr(version, "MPICH") != nullptr;
  if (!ompi && !mpich_) {
    why = "neither Open MPI nor MPICH";
    return MPI_ERR_OTHER;
  }
  // (a2a spec, library algorithm, extra variables)
  struct Wanted {
    const char* a2a;
    const char* algorithm;
    std::vector<std::pair<std::string, int>> extra;
  };
  std::vector<Wanted> wanted;
  std::string var;
  std::vector<std::string> order;
  if (ompi) {
    var = v ? "coll_tuned_alltoallv_algorithm" : "coll_tuned_alltoall_algorithm";
    if (v)
      wanted = {{"linear", "basic_linear", {}}, {"spread-out", "basic_linear", {}}, {"pairwise", "pairwise", {}}};
    else
      wanted = {{"linear", "linear", {}},
                {"spread-out", "linear", {}},
                {"scattered", "linear_sync", {{"coll_tuned_alltoall_algorithm_max_requests", 32}}},
                {"pairwise", "pairwise", {}},
                {"bruck-modified", "modified_bruck", {}},
                {"tra:radix=2", "modified_bruck", {}}};
    int index = -1, dynamic = 0, count = 0;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index("coll_tuned_use_dynamic_rules", &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) {
      why = "Open MPI without coll/tuned";
      return MPI_ERR_OTHER;
    }
    MPI_T_cvar_read(h, &dynamic);
    MPI_T_cvar_handle_free(&h);
    if (!dynamic) {
      why = "coll_tuned_use_dynamic_rules is off (set OMPI_MCA_coll_tuned_use_dynamic_rules=1)";
      return MPI_ERR_OTHER;
    }
  } else {
    var = v ? "MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM" : "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM";
    order = v ? kMpichAlltoallv : kMpichAlltoall;
    const std::pair<std::string, int> all_at_once{"MPIR_CVAR_ALLTOALL_THROTTLE", 0}, batches{"MPIR_CVAR_ALLTOALL_THROTTLE", 32};
    if (v)
      wanted = {{"linear", "scattered", {all_at_once}}, {"spread-out", "scattered", {all_at_once}},
                {"scattered", "scattered", {batches}}};
    else
      wanted = {{"linear", "scattered", {all_at_once}},     {"spread-out", "scattered", {all_at_once}},
                {"scattered", "scattered", {batches}},       {"pairwise", "pairwise", {}},
                {"bruck-modified", "brucks", {}},            {"tra:radix=2", "brucks", {}}};
  }
  int index = -1;
  if (MPI_T_cvar_get_index(var.c_str(), &index) != MPI_SUCCESS) {
    why = "no control variable " + var;
    return MPI_ERR_OTHER;
  }
  int device_none = -1;
  if (mpich_) {
    int dindex = -1;
    if (MPI_T_cvar_get_index("MPIR_CVAR_DEVICE_COLLECTIVES", &dindex) != MPI_SUCCESS ||
        !enum_value(dindex, "none", kMpichDevice, device_none)) {
      why = "MPIR_CVAR_DEVICE_COLLECTIVES is not the expected all|none|percoll";
      return MPI_ERR_OTHER;
    }
  }
  for (const auto& w : wanted) {
    int value = 0;
    if (!enum_value(index, w.algorithm, order, value)) {
      why = std::string(var) + " has no value " + w.algorithm;
      return MPI_ERR_OTHER;
    }
    Twin t;
    t.a2a = {w.a2a};
    t.label = std::string("twin:") + (ompi ? "ompi-" : "mpich-") + w.algorithm;
    if (mpich_ && !w.extra.empty() && w.extra[0].second == 0) t.label += "(throttle=0)";
    if (Twin* same = const_cast<Twin*>(find(t.label))) {
      same->a2a.push_back(w.a2a);
      continue;
    }
    t.cvars.emplace_back(var, value);
    t.cvars.insert(t.cvars.end(), w.extra.begin(), w.extra.end());
    if (mpich_) t.cvars.emplace_back("MPIR_CVAR_DEVICE_COLLECTIVES", device_none);
    if (ompi) {  // the forced choice is read when the communicator is made
      if (const int rc = enter(t)) {
        why = "cannot write " + var;
        return rc;
      }
      MPI_Comm_dup(MPI_COMM_WORLD, &t.comm);
      leave(t);
    }
    rows_.push_back(t);
  }
  return MPI_SUCCESS;
}
#endif  // A2A_SMPI

const Twin* Twins::find(const std::string& label) const {
  for (const auto& t : rows_)
    if (t.label == label) return &t;
  return nullptr;
}

int Twins::enter(const Twin& t) {
  saved_.clear();
  for (const auto& [name, value] : t.cvars) {
    int old = 0;
    if (const int rc = write(name, value, &old)) return rc;
    saved_.emplace_back(name, old);
  }
  return MPI_SUCCESS;
}

int Twins::leave(const Twin&) {
  int rc = MPI_SUCCESS;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
    if (const int e = write(it->first, it->second)) rc = e;
  saved_.clear();
  return rc;
}

void Twins::finish() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (auto& t : rows_)
    if (t.comm != MPI_COMM_WORLD) MPI_Comm_free(&t.comm);
  rows_.clear();
#ifndef A2A_SMPI
  if (t_init_) MPI_T_finalize();  // before MPI_Finalize: Open MPI 4.1 crashes otherwise
#endif
  t_init_ = false;
}

}  // namespace a2a::tools
