// Test data for all-to-all: every int encodes (source, destination, index),
// buffers are laid out through datatypes with gaps, and every byte outside
// the data positions must come back untouched.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>

#include <cstring>
#include <string>
#include <vector>

#include "a2a/a2a.hpp"
#include "schedule/schedule.hpp"
#include "registry/registry.hpp"

namespace a2a::test {

inline int encode(int src, int dst, long long j) {
  return ((src * 64 + dst) << 16) + static_cast<int>(j % 65536);
}

// `bytes` of address space whose pages cost memory only once touched, for
// offsets beyond 2 GiB (unmap with munmap).
inline char* map_sparse(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

// Where the ints of one element sit, relative to the element's address.
struct Layout {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::vector<MPI_Aint> offsets;
  MPI_Aint extent = 0;
  int ints() const { return static_cast<int>(offsets.size()); }
};

inline const Layout& int_layout() {
  static const Layout l{"int", MPI_INT, {0}, 4};
  return l;
}
inline const Layout& pair_layout() {  // 2 contiguous ints in one element
  static const Layout l = [] {
    Layout x{"pair", MPI_DATATYPE_NULL, {0, 4}, 8};
    MPI_Type_contiguous(2, MPI_INT, &x.type);
    MPI_Type_commit(&x.type);
    return x;
  }();
  return l;
}
inline const Layout& strided_layout() {  // ints at 0 and 12, lb -4, extent 24
  static const Layout l = [] {
    Layout x{"strided", MPI_DATATYPE_NULL, {0, 12}, 24};
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_create_resized(vec, -4, 24, &x.type);
    MPI_Type_commit(&x.type);
    MPI_Type_free(&vec);
    return x;
  }();
  return l;
}

inline const Layout& padded_layout() {  // one int, extent 8: gap-free only at count 1
  static const Layout l = [] {
    Layout x{"padded", MPI_DATATYPE_NULL, {0}, 8};
    MPI_Type_create_resized(MPI_INT, 0, 8, &x.type);
    MPI_Type_commit(&x.type);
    return x;
  }();
  return l;
}

// A buffer of `elems` elements of a layout with margins on both sides.
struct Buffer {
  static constexpr size_t kMargin = 64;
  static constexpr unsigned char kUntouched = 0xEE;
  const Layout* layout;
  std::vector<unsigned char> bytes;
  Buffer(const Layout& l, long long elems)
      : layout(&l), bytes(2 * kMargin + static_cast<size_t>(elems * l.extent), kUntouched) {}
  unsigned char* data() { return bytes.data() + kMargin; }
  int* at(long long block_elems, int block, long long j) {  // j-th int of a block
    const long long e = block * block_elems + j / layout->ints();
    return reinterpret_cast<int*>(data() + e * layout->extent + layout->offsets[j % layout->ints()]);
  }
};

// Fills block d of `buf` with what this rank sends to d.
inline void fill_send(Buffer& buf, long long block_elems, int rank, int P) {
  const long long n = block_elems * buf.layout->ints();
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < n; ++j) *buf.at(block_elems, d, j) = encode(rank, d, j);
}

// Counts wrong data ints and touched gap bytes; prints the first few.
// ints(s): how many ints arrive from s; at(s, j): where the j-th one sits.
template <class Ints, class At>
long long check_blocks(Buffer& buf, int rank, int P, Ints ints, At at, const std::string& what) {
  std::vector<char> is_data(buf.bytes.size(), 0);
  long long wrong = 0;
  for (int s = 0; s < P; ++s)
    for (long long j = 0; j < ints(s); ++j) {
      int* p = at(s, j);
      std::memset(&is_data[reinterpret_cast<unsigned char*>(p) - buf.bytes.data()], 1, sizeof(int));
      if (*p != encode(s, rank, j) && wrong++ < 3)
        ADD_FAILURE() << what << ": rank " << rank << " got " << std::hex << *p << std::dec << " for (src " << s
                      << ", dst " << rank << ", index " << j << ")";
    }
  for (size_t b = 0; b < buf.bytes.size(); ++b)
    if (!is_data[b] && buf.bytes[b] != Buffer::kUntouched && wrong++ < 3)
      ADD_FAILURE() << what << ": rank " << rank << " wrote gap byte " << b;
  return wrong;
}

// The same for equal blocks of `block_elems` elements laid out back to back.
inline long long check_recv(Buffer& buf, long long block_elems, int rank, int P, const std::string& what) {
  return check_blocks(
      buf, rank, P, [&](int) { return block_elems * buf.layout->ints(); },
      [&](int s, long long j) { return buf.at(block_elems, s, j); }, what);
}

// Radices to test: every one from 2 to P+1 for small P, a spread above.
inline std::vector<int> radices_for(int P) {
  if (P > 9) return {2, 3, 4, 5, P / 2, P - 1, P, P + 3};
  std::vector<int> r;
  for (int x = 2; x <= P + 1; ++x) r.push_back(x);
  return r;
}

// Every host row of the registry at every knob choice, at radices_for(P)
// and auto, then `extra` (auto, settings the sweep leaves at defaults).
// shm's direct paths, which its default takes only where the machine's
// measurements say: every block direct (CMA; messages), and blocks from 64
// bytes (a workload's small blocks through the segment, its large ones not).
inline std::vector<std::string> shm_direct_specs() {
  return {"shm:direct=0,via=cma", "shm:direct=0,via=p2p", "shm:direct=64,via=cma", "shm:direct=64,via=p2p"};
}

inline std::vector<std::string> registry_specs(a2a::detail::Collective coll, int P,
                                               std::initializer_list<std::string> extra) {
  auto radices = a2a::detail::radix_values(radices_for(P));
  radices.push_back("auto");
  auto s = a2a::detail::sweep(coll, a2a::detail::kAnyHostLayout, {radices, {}, {}, a2a::detail::kSweptPorts});
  s.insert(s.end(), extra);
  for (const auto& d : shm_direct_specs()) s.push_back(d);
  return s;
}

// K, D and waits the specs must report, from the closed forms (independent
// of the implementation's own schedule code paths); waits -1: not checked.
struct Expected {
  std::string canonical;
  long long rounds, blocks, waits = -1;
};

// Layout-dependent algorithms (tra2, tuna-hier, clustered through shared
// memory) are checked by test_topology; here they report {-1, -1}: not checked.
inline bool layout_dependent(const std::string& spec) {
  return spec.rfind("tra2", 0) == 0 || spec.rfind("tuna-hier", 0) == 0 || spec == "clustered:intra=shm";
}

// The nodes of comm's layout (a2a::layout begins with their number).
inline int nodes_of(MPI_Comm comm) { return std::stoi(a2a::layout(comm)); }

// Whether comm's ranks share one node's memory (the library's own split:
// on an emulated or real cluster they may not, whatever A2A_NODE_* says).
inline bool one_memory(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int p, q;
  MPI_Comm_size(comm, &p);
  MPI_Comm_size(node, &q);
  MPI_Comm_free(&node);
  int all = q == p;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm);
  return all != 0;
}

// A knob's value in a spec string ("" where it is not given).
inline std::string knob_of(const std::string& spec, const std::string& key) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return "";
  for (size_t at = colon + 1; at < spec.size();) {
    const size_t end = std::min(spec.find(',', at), spec.size());
    const std::string kv = spec.substr(at, end - at);
    if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

inline Expected expected_stats(const std::string& spec, int P, int nodes = 1) {
  namespace s = a2a::detail::schedule;
  const long long lin = P - 1;
  const bool shm = spec == "shm" || spec.rfind("shm:", 0) == 0;
  if (shm && nodes > 1) return {"spread-out", lin, lin, P > 1};  // refused: the registry's fallback
  if (layout_dependent(spec)) return {spec, -1, -1};
  if (spec.rfind("tra", 0) == 0) {
    const std::string radix = knob_of(spec, "radix"), ports = knob_of(spec, "ports");
    long long r = radix.empty() || radix == "auto" ? s::ceil_sqrt(P) : std::stoll(radix);
    r = std::max(2LL, std::min<long long>(r, P));
    long long b = ports.empty() || ports == "all" ? 0 : std::stoll(ports);
    if (b >= r - 1) b = 0;  // at or above r-1: all, as named
    return {"tra:radix=" + std::to_string(r) + (b ? ",ports=" + std::to_string(b) : ""), s::tra_rounds_closed(P, r),
            s::tra_blocks_closed(P, r), s::tra_waits_closed(P, r, b)};
  }
  const long long K2 = s::tra_rounds_closed(P, 2);
  if (spec.rfind("bruck", 0) == 0) {
    std::string canon = spec;
    if (spec != "bruck-zero-rotation" && spec.find(':') == std::string::npos) canon += ":dt=0";
    return {canon, K2, s::tra_blocks_closed(P, 2), K2};
  }
  if (shm) return {spec, P > 1 ? 1 : 0, lin};  // one flag wait, P-1 blocks copied or read
  if (spec.rfind("scattered", 0) == 0) {
    const std::string given = knob_of(spec, "block");
    const auto* row = a2a::detail::find_algorithm(a2a::detail::Collective::alltoall, "scattered");
    const long long block = std::stoll(given.empty() ? row->params[0].fallback : given);  // the row's default
    return {"scattered:block=" + std::to_string(block), lin, lin, (lin + block - 1) / block};
  }
  if (spec == "pairwise") return {spec, lin, lin, lin};
  if (spec == "factor") return {spec, lin, lin, 2 * lin};
  if (spec == "linear" || spec == "spread-out") return {spec, lin, lin, P > 1};
  return {spec, lin, lin};
}

}  // namespace a2a::test
