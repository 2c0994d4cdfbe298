// Seeded per-peer count generators for A2A_Alltoallv, shared by the tests and
// the bench.  count(src, dst) is a pure function of the workload, so every
// rank computes both what it sends and what it must receive, and validation
// needs no extra communication.
//   uniform:max=S          integer uniform in 0..S (mean S/2), as both papers
//   normal:mean=M,dev=D    round(N(M, D)), clamped at 0
//   power-law:max=S,exponent=A
//                          bounded power law: x in [1, S+1) with density
//                          proportional to x^-A, count = floor(x) - 1
//   sparse:max=S,zero=F    0 with probability F, else uniform in 1..S
//   fft-n1                 ranks below ceil(0.625P) send 8 elements (doubles)
//                          to each of the first ceil(0.78125P) ranks, else 0
//   fft-n2                 64 elements per block; blocks from rank P-1: 16
// Every kind takes seed=N (default 1).  Counts are in elements.
#pragma once
#include <string>

namespace a2a::workload {

struct Workload {
  std::string kind = "uniform";
  long long max = -1;  // S (uniform, power-law, sparse); -1 until set
  double mean = -1, dev = -1, exponent = 1.0, zero = 0.5;
  unsigned long long seed = 1;
};

// Parses "kind[:key=value,...]"; false with a message on a bad string.
bool parse(const std::string& text, Workload& out, std::string& error);
// Fills the size knob the text left unset (S, or mean with dev = mean/4).
Workload with_size(Workload w, long long size);
long long count(const Workload& w, int src, int dst, int P);

}  // namespace a2a::workload
