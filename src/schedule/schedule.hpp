// Pure schedule math for the uniform all-to-all algorithms: digits, rounds,
// block lists, closed forms for K and D.  No MPI here, so every schedule is
// unit-tested by simulation (tests/unit/test_schedule.cpp).
//
// Slot model shared by all schedules.  Rank p holds P slots.  In the forward
// orientation slot i starts as send block (p+i)%P, a step of distance d sends
// the listed slots to (p+d)%P and receives the same slots from (p-d)%P, and
// slot i finally holds the block from source (p-i)%P.  The mirrored
// orientation (modified / zero-rotation Bruck) negates every distance: slot i
// starts as send block (p-i)%P and ends as the block from (p+i)%P.  Either
// way slot 0 is the rank's own block and never travels.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace a2a::detail::schedule {

struct Step {
  int distance = 0;        // send to p+distance, receive from p-distance (forward)
  std::vector<int> slots;  // slots exchanged in this step, ascending
};

// Number of base-r digits needed to write 0..P-1 (w = ceil(log_r P)), integer only.
int digit_count(long long P, long long r);
long long ipow(long long base, int exp);
// Smallest r with r*r >= x: the "auto" radix, integer only.
inline long long ceil_sqrt(long long x) {
  long long r = 1;
  while (r * r < x) ++r;
  return r;
}
int digit(long long i, long long r, int x);  // x-th base-r digit of i
// The radix a TRA or TuNA phase over n ranks runs: r clamped to 2..max(n, 2)
// (TRA2's and hierarchical TuNA's phases, and their replay traces).
inline int phase_radix(long long r, int n) {
  return static_cast<int>(std::max(2LL, std::min(r, static_cast<long long>(std::max(n, 2)))));
}

// TRA: rounds (x ascending, z ascending) that send at least one block.
std::vector<Step> tra_steps(int P, int r);
// The same rounds as the cost model reads them, with no slot lists: O(P)
// time, O(rounds) memory (the lists hold O(P log_r P) slots).
struct StepShape {
  int distance = 0;
  int slots = 0;
  bool operator==(const StepShape&) const = default;
};
std::vector<StepShape> tra_shape(int P, int r);
// Closed forms of the TRA paper (propositions 3 and 4); r is clamped to P.
long long tra_rounds_closed(long long P, long long r);
long long tra_blocks_closed(long long P, long long r);

// Linear family: step i (1..P-1) sends slot i over distance i.
std::vector<Step> linear_steps(int P);

// Totals of a schedule.
long long count_rounds(const std::vector<Step>& steps);
long long count_blocks(const std::vector<Step>& steps);

// Number of steps at or after `step` in which `slot` still moves
// (zero-copy Bruck alternates buffers by the parity of this number).
std::vector<std::vector<int>> remaining_hops(int P, const std::vector<Step>& steps);

// The 1-factor algorithm (Traff, "Efficient all-to-all communication on
// clusters of SMP nodes", section 2): in round i, 0 <= i < P, rank u pairs
// with (i - u) mod P; every round is a perfect matching of the complete graph
// with self-loops, and over the P rounds every pair meets exactly once (each
// rank meets itself once: its local copy).  Works for every P.
inline int factor_partner(int u, int i, int P) {
  const int v = (i - u) % P;
  return v < 0 ? v + P : v;
}

// TuNA's tight temporary store (Fan et al., TuNA, section III-C): a slot
// whose index has two or more non-zero base-r digits is forwarded, so it
// waits in T between hops; the K "direct" slots z*r^x and slot 0 never do.
// T thus needs P-(K+1) places, and slot o maps to
// t = o - 1 - dx*(r-1) - dz (dx, dz: position and value of o's highest
// digit), which counts the stored slots below o.  Only for stored slots.
long long tuna_temp_index(long long o, long long r);
bool is_forwarded(long long o, long long r);  // two or more non-zero digits

inline int mod(long long a, int P) { long long m = a % P; return static_cast<int>(m < 0 ? m + P : m); }

}  // namespace a2a::detail::schedule
