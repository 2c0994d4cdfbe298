// One size's buffers for `a2a bench` (bench.cpp, bench_overlap.cpp), their
// bytes encoding (source, destination, index), and the check of what came.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "a2a/a2a.h"
#include "core/context.hpp"
#include "workload/workload.hpp"

namespace a2a::tools {

inline unsigned char expected(int src, int dst, long long j) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + j * 7 + 1);
}

// One size's buffers.  Alltoall: m bytes per peer.  Alltoallv: counts from
// the workload, blocks packed in rank order.
struct Case {
  bool v = false;
  int P = 1, rank = 0;
  long long m = 0;
  std::vector<unsigned char, a2a::detail::BufferAllocator<unsigned char>> sbuf, rbuf;  // shared under A2A_SIM_SHARED
  std::vector<int> sc, sd, rc, rd;
  std::map<std::string, A2A_Plan> plans;  // "plan/" rows, freed with the case
  Case() = default;
  Case(Case&&) = default;
  ~Case() {
    for (auto& [name, plan] : plans) A2A_Plan_free(&plan);
  }
};

inline Case make_case(bool v, const a2a::workload::Workload& w, long long m, int rank, int P) {
  Case c;
  c.v = v;
  c.P = P;
  c.rank = rank;
  c.m = m;
  c.sc.assign(P, static_cast<int>(m));
  c.sd.assign(P, 0);
  c.rc.assign(P, static_cast<int>(m));
  c.rd.assign(P, 0);
  if (v) {
    const auto sized = a2a::workload::with_size(w, m);
    for (int i = 0; i < P; ++i) {
      c.sc[i] = static_cast<int>(a2a::workload::count(sized, rank, i, P));
      c.rc[i] = static_cast<int>(a2a::workload::count(sized, i, rank, P));
    }
  }
  for (int i = 1; i < P; ++i) {
    c.sd[i] = c.sd[i - 1] + c.sc[i - 1];
    c.rd[i] = c.rd[i - 1] + c.rc[i - 1];
  }
  c.sbuf.resize(static_cast<size_t>(c.sd[P - 1] + c.sc[P - 1]));
  c.rbuf.resize(static_cast<size_t>(c.rd[P - 1] + c.rc[P - 1]));
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < c.sc[d]; ++j) c.sbuf[c.sd[d] + j] = expected(rank, d, j);
  return c;
}

inline long long count_wrong(const Case& c) {
  long long wrong = 0;
  for (int s = 0; s < c.P; ++s)
    for (int j = 0; j < c.rc[s]; ++j) wrong += c.rbuf[c.rd[s] + j] != expected(s, c.rank, j);
  return wrong;
}

}  // namespace a2a::tools
