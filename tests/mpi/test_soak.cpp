// Randomized soak: cases drawn from a seed, each verified.  A case draws the
// collective, the communicator (world, reversed, or split in two), the
// algorithm and its knobs, the datatypes of both sides, the counts
// (zero-heavy, skewed, one huge block, uniform), the displacements (blocks
// in a permuted order after random gaps), and MPI_IN_PLACE; every int of the
// data encodes (source, destination, index), gap bytes and the send buffer
// must stay untouched.  One alltoallv case in ten moves a receive block of
// one rank onto another: in the agree mode every rank must get
// MPI_ERR_BUFFER, no buffer may change.  A quarter of the other cases agree
// too; the rest run in the default (local) mode.  Reproducible: case k of seed S is the same on any
// run (A2A_SOAK_SEED=S, A2A_SOAK_FIRST=k, A2A_SOAK_CASES=1 replays it).
//   A2A_SOAK_SEED     seed (default 1)          A2A_SOAK_CASES    most cases (default 100000)
//   A2A_SOAK_SECONDS  time bound (default 20)   A2A_SOAK_FIRST    first case index (default 0)
// Then 100,000 back-to-back small calls on one communicator (A2A_SOAK_CALLS;
// 20,000 and no RSS check under AddressSanitizer) with the resident set
// size before and after: it must stay flat.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "harness.hpp"

using namespace a2a::test;

namespace {

long long env_or(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

// A pure hash of a case and a few ints: counts every rank computes alike.
unsigned long long mix(unsigned long long a, unsigned long long b = 0, unsigned long long c = 0) {
  unsigned long long h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL ^
                         (c + 0x8cb92ba72f3d8dd7ULL) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  h *= 0xd6e8feb86659fd93ULL;
  return h ^ (h >> 32);
}

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[rng() % v.size()];
}

struct Case {
  bool v;
  std::string spec, counts, comm;
  const Layout *st, *rt;
  bool in_place, overlap = false;
  std::string describe() const {
    std::ostringstream o;
    o << (v ? "alltoallv" : "alltoall") << " '" << spec << "' comm=" << comm << " types=" << st->name << "/"
      << rt->name << " counts=" << counts << (in_place ? " in-place" : "")
      << (overlap ? " overlapping-receive" : "");
    return o.str();
  }
};

Case draw(unsigned long long seed, long long k, int P) {
  std::mt19937_64 rng(mix(seed, static_cast<unsigned long long>(k)));
  Case c;
  c.v = rng() % 2;
  c.comm = pick(rng, std::vector<std::string>{"world", "world", "reversed", "halves"});
  const int r = 2 + static_cast<int>(rng() % (P + 2));
  const std::string radix = std::to_string(r), block = std::to_string(1 + rng() % 5);
  // Any host row of the registry at any knob choice, this draw's radix, or
  // a batch size of this draw.
  namespace d = a2a::detail;
  auto specs = d::sweep(c.v ? d::Collective::alltoallv : d::Collective::alltoall, d::kAnyHostLayout,
                        {{radix}, {}, {}, a2a::detail::kSweptPorts});
  specs.insert(specs.end(), {"auto", "scattered:block=" + block});
  if (c.v) specs.insert(specs.end(), {"tuna-hier:radix=" + radix, "tuna-hier:variant=staggered,block=" + block});
  c.spec = pick(rng, specs);
  c.counts = pick(rng, std::vector<std::string>{"zero-heavy", "skewed", "huge", "uniform", "empty"});
  // Both sides carry the same ints per element: int/padded (1), pair/strided (2).
  const bool two = rng() % 2;
  const std::vector<const Layout*> one_int = {&int_layout(), &padded_layout()}, two_ints = {&pair_layout(), &strided_layout()};
  c.st = pick(rng, two ? two_ints : one_int);
  c.rt = pick(rng, two ? two_ints : one_int);
  c.in_place = rng() % 5 == 0;
  if (c.in_place || c.spec == "native") c.st = c.rt;  // Open MPI's own alltoall mishandles differing types
  if (c.v && !c.in_place && rng() % 10 == 0) {  // aliasing is checked on gap-free types
    c.overlap = true;
    c.st = c.rt = two ? &pair_layout() : &int_layout();
  }
  return c;
}

// Elements rank s sends rank d in case k (symmetric when in place).
int count_of(const Case& c, unsigned long long seed, long long k, int s, int d, int P) {
  if (c.in_place && c.v) {
    const int a = std::min(s, d), b = std::max(s, d);
    s = a;
    d = b;
  }
  const unsigned long long h = mix(seed, static_cast<unsigned long long>(k) * 7919 + 1, static_cast<unsigned long long>(s) * 65536 + d);
  if (!c.v) return static_cast<int>(mix(seed, static_cast<unsigned long long>(k), 99) % 4 == 0 ? 0 : mix(seed, k, 98) % 40);
  if (c.counts == "empty") return 0;
  if (c.counts == "zero-heavy") return h % 10 < 7 ? 0 : 1 + static_cast<int>(h % 8);
  if (c.counts == "skewed") return s == 0 ? 500 + static_cast<int>(h % 500) : static_cast<int>(h % 4);
  if (c.counts == "huge") return s == P - 1 && d == 0 ? 50000 : static_cast<int>(h % 6);
  return static_cast<int>(h % 21);
}

// Runs case k on `comm`; returns the number of wrong ints / gap bytes (or
// wrong outcomes of a refused case, counted in `refused`).
long long run_case(const Case& c, unsigned long long seed, long long k, MPI_Comm comm, long long& refused) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  std::vector<int> sc(P), rc(P), sd(P), rd(P);
  for (int d = 0; d < P; ++d) {
    sc[d] = count_of(c, seed, k, me, d, P);
    rc[d] = count_of(c, seed, k, d, me, P);
  }
  // Displacements: blocks in a permuted order after gaps of 0..3 elements.
  std::mt19937_64 rng(mix(seed, static_cast<unsigned long long>(k), 1000 + me));
  const auto place = [&](const std::vector<int>& counts, std::vector<int>& displs) {
    std::vector<int> order(P);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    long long at = 0;
    for (int i : order) {
      at += static_cast<long long>(rng() % 4);
      displs[i] = static_cast<int>(at);
      at += counts[i];
    }
    return at + 3;
  };
  long long selems = 0, relems = 0;
  if (c.v) {
    relems = place(rc, rd);
    selems = c.in_place ? relems : place(sc, sd);
    if (c.in_place) sd = rd;
  } else {
    selems = relems = static_cast<long long>(sc[0]) * P;
  }
  // The overlap case: rank `bad` puts its second non-empty receive block at
  // its first one's place (no overlap when it receives fewer than two).
  bool refuse = false;
  if (c.overlap) {
    const int bad = static_cast<int>(mix(seed, static_cast<unsigned long long>(k), 77) % P);
    std::vector<int> nonempty;
    for (int s = 0; s < P; ++s)
      if (count_of(c, seed, k, s, bad, P) > 0) nonempty.push_back(s);
    refuse = nonempty.size() >= 2;
    if (refuse && me == bad) rd[nonempty[1]] = rd[nonempty[0]];
    relems += *std::max_element(rc.begin(), rc.end());  // room for the moved block
  }
  Buffer sbuf(*c.st, selems), rbuf(*c.rt, relems);
  const auto at = [](Buffer& b, long long displ, long long j) {
    const Layout& l = *b.layout;
    return reinterpret_cast<int*>(b.data() + (displ + j / l.ints()) * l.extent + l.offsets[j % l.ints()]);
  };
  const int n_send = c.st->ints(), n_recv = c.rt->ints();
  Buffer& src = c.in_place ? rbuf : sbuf;
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < static_cast<long long>(sc[d]) * n_send; ++j)
      *at(src, c.v ? sd[d] : static_cast<long long>(d) * sc[0], j) = encode(me, d, j);
  const std::vector<unsigned char> send_before = sbuf.bytes, recv_before = rbuf.bytes;
  // One rank's bad receive blocks fail every rank only in the agree mode; a
  // quarter of the other cases run agreeing too, the rest in the default.
  const bool agree = c.overlap || mix(seed, static_cast<unsigned long long>(k), 99) % 4 == 0;
  a2a::set_error_check(agree ? a2a::ErrorCheck::agree : a2a::ErrorCheck::local);
  int code;
  if (c.v)
    code = A2A_Alltoallv(c.in_place ? MPI_IN_PLACE : sbuf.data(), sc.data(), sd.data(), c.st->type, rbuf.data(),
                         rc.data(), rd.data(), c.rt->type, comm, c.spec.c_str());
  else
    code = A2A_Alltoall(c.in_place ? MPI_IN_PLACE : sbuf.data(), sc[0], c.st->type, rbuf.data(), rc[0], c.rt->type,
                        comm, c.spec.c_str());
  a2a::set_error_check(a2a::ErrorCheck::local);
  if (refuse) {
    ++refused;
    int cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    const long long wrong = (cls != MPI_ERR_BUFFER) + (sbuf.bytes != send_before) + (rbuf.bytes != recv_before);
    if (wrong)
      ADD_FAILURE() << "seed " << seed << " case " << k << " (" << c.describe() << "): error class " << cls
                    << " (MPI_ERR_BUFFER expected), buffers " << (sbuf.bytes != send_before ? "send changed " : "")
                    << (rbuf.bytes != recv_before ? "receive changed" : "");
    return wrong;
  }
  if (code != MPI_SUCCESS) {
    ADD_FAILURE() << "seed " << seed << " case " << k << " (" << c.describe() << "): error " << code << " "
                  << a2a::last_error_message();
    return 1;
  }
  long long wrong = check_blocks(
      rbuf, me, P, [&](int s) { return static_cast<long long>(rc[s]) * n_recv; },
      [&](int s, long long j) { return at(rbuf, c.v ? rd[s] : static_cast<long long>(s) * rc[0], j); },
      "seed " + std::to_string(seed) + " case " + std::to_string(k) + " (" + c.describe() + ")");
  if (!c.in_place && sbuf.bytes != send_before) {
    ADD_FAILURE() << "seed " << seed << " case " << k << ": the send buffer changed";
    ++wrong;
  }
  return wrong;
}

long long rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  return -1;
}

}  // namespace

TEST(Soak, RandomCases) {
  const auto seed = static_cast<unsigned long long>(env_or("A2A_SOAK_SEED", 1));
  const long long first = env_or("A2A_SOAK_FIRST", 0), most = env_or("A2A_SOAK_CASES", 100000);
  const double seconds = static_cast<double>(env_or("A2A_SOAK_SECONDS", 20));
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm reversed, halves;
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
  const double t0 = MPI_Wtime();
  long long k = first, wrong = 0, refused = 0;
  for (int go = 1; go && k < first + most; ++k) {
    const Case c = draw(seed, k, P);
    const MPI_Comm comm = c.comm == "world" ? MPI_COMM_WORLD : c.comm == "reversed" ? reversed : halves;
    wrong += run_case(c, seed, k, comm, refused);
    go = MPI_Wtime() - t0 < seconds;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);  // rank 0's clock decides for all
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("soak: seed %llu, cases %lld..%lld (%lld cases, %lld with overlapping receive blocks refused) on %d "
                "ranks in %.1f s, %lld wrong\n",
                seed, first, k - 1, k - first, refused, P, MPI_Wtime() - t0, wrong);
  EXPECT_EQ(wrong, 0);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&halves);
}

// Back-to-back small calls on one communicator: memory stays flat (scratch
// and caches are reused, nothing grows per call).
// AddressSanitizer keeps freed memory in quarantine (RSS grows by design)
// and is slow: there the test makes fewer calls and checks data only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssMeaningful = false;
constexpr long long kDefaultCalls = 20000;
#else
constexpr bool kRssMeaningful = true;
constexpr long long kDefaultCalls = 100000;
#endif

TEST(Soak, ManySmallCallsKeepMemoryFlat) {
  const long long calls = env_or("A2A_SOAK_CALLS", kDefaultCalls);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<int> s(P, rank), r(P), counts(P, 1), displs(P);
  std::iota(displs.begin(), displs.end(), 0);
  const char* specs[] = {"tra:radix=2", "spread-out", "auto", "tuna:radix=2"};  // alltoall, v, alltoall, v
  long long before = 0, bad = 0;
  for (long long i = 0; i < calls; ++i) {
    if (i == calls / 10) before = rss_kib();  // after warm-up: scratch and caches exist
    const char* spec = specs[i % 4];
    const int rc = i % 2 ? A2A_Alltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(),
                                         displs.data(), MPI_INT, MPI_COMM_WORLD, spec)
                         : A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, spec);
    bad += rc != MPI_SUCCESS || r[P - 1] != P - 1;
  }
  const long long after = rss_kib();
  long long growth = after - before;
  MPI_Allreduce(MPI_IN_PLACE, &growth, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("soak: %lld back-to-back calls on %d ranks: rank 0 RSS %lld KiB after %lld, %lld KiB at the end; "
                "largest growth over ranks %lld KiB\n", calls, P, before, calls / 10, after, growth);
  EXPECT_EQ(bad, 0);
  if (kRssMeaningful) {
    EXPECT_LT(growth, 1024) << "memory grew by " << growth << " KiB over " << calls << " calls";
  } else if (rank == 0) {
    std::printf("soak: AddressSanitizer build: RSS not checked (its quarantine holds freed memory)\n");
  }
}
