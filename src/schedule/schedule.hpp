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
#include <string>
#include <vector>

namespace a2a::detail::schedule {

struct Step {
  int distance = 0;        // send to p+distance, receive from p-distance (forward)
  std::vector<int> slots;  // slots exchanged in this step, ascending
  int digit = 0;           // TRA: the base-r digit x it serves (steps of one digit move disjoint slots)
  long long span = 1;      // TRA: r^x; a slot i with i % span != 0 arrived in an earlier digit's step
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
  int digit = 0;
  bool operator==(const StepShape&) const = default;
};
std::vector<StepShape> tra_shape(int P, int r);
// Closed forms of the TRA paper (propositions 3 and 4); r is clamped to P.
long long tra_rounds_closed(long long P, long long r);
long long tra_blocks_closed(long long P, long long r);

// The k-port form: the steps of one digit move disjoint slots, so up to
// `ports` of them fly together and are waited for once (a batch).  A
// batch is a run of consecutive steps of one digit, at most `ports` long
// (ports <= 0: every step of the digit, the r-1 of Jocksch et al.'s
// k-port Bruck); batch_end gives the step after the one starting at
// `first`.  Steps of other schedules (linear) carry distinct digits, one
// step a batch.
template <class S>
size_t batch_end(const std::vector<S>& steps, size_t first, int ports) {
  size_t last = first + 1;
  while (last < steps.size() && steps[last].digit == steps[first].digit &&
         (ports <= 0 || last - first < static_cast<size_t>(ports)))
    ++last;
  return last;
}
// The most slots one batch moves (its staging buffers' blocks).
template <class S>
size_t widest_batch(const std::vector<S>& steps, int ports) {
  size_t most = 0;
  for (size_t first = 0, last; first < steps.size(); first = last) {
    last = batch_end(steps, first, ports);
    size_t n = 0;
    for (size_t k = first; k < last; ++k) n += static_cast<size_t>(steps[k].slots.size());
    most = std::max(most, n);
  }
  return most;
}
// Requests one batch posts at most: two per exchange of the first batch
// (the lowest digit has the most steps); 0 where every batch is one
// exchange (a small inline set serves it).
template <class S>
size_t batch_requests(const std::vector<S>& steps, int ports) {
  const size_t exchanges = steps.empty() ? 0 : batch_end(steps, 0, ports);
  return exchanges > 1 ? 2 * exchanges : 0;
}
// Batches of TRA(P, r) with `ports` in flight: the waits of a rank.
long long tra_waits_closed(long long P, long long r, long long ports);
// ",key=B" for a stats name where `ports` runs fewer than all r-1 of a
// digit's exchanges, else "" (the default left out, as the registry does).
inline std::string ports_name(const char* key, int ports, int r) {
  return ports > 0 && ports < r - 1 ? std::string(",") + key + "=" + std::to_string(ports) : std::string();
}

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
// mod for -P < a < 2P (a rank plus or minus a distance), without a divide.
inline int wrap(long long a, int P) { return static_cast<int>(a < 0 ? a + P : a >= P ? a - P : a); }

}  // namespace a2a::detail::schedule
