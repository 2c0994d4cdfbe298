// Every A2A_Alltoallv algorithm on real MPI with every workload generator:
// permuted displacements with gaps, zero counts, different send and receive
// datatypes, MPI_IN_PLACE, sub-communicators, skew, exact K/D/metadata and
// scratch, untouched gaps and unmodified inputs.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>

#include "core/config.hpp"
#include "schedule/shm.hpp"
#include "harness.hpp"
#include "alltoallv/two_phase.hpp"
#include "both/shm.hpp"
#include "workload/workload.hpp"

using namespace a2a::test;
namespace wl = a2a::workload;

namespace {

int size_of(MPI_Comm comm) {
  int P;
  MPI_Comm_size(comm, &P);
  return P;
}

std::vector<std::string> specs_for(int P) {
  return registry_specs(a2a::detail::Collective::alltoallv, P,
                        {"auto", "scattered:block=3", "tuna-hier:variant=staggered,radix=3,block=2"});
}

const std::vector<std::string>& workloads() {
  static const std::vector<std::string> w = {"uniform:max=5,seed=3", "uniform:max=300,seed=4",
                                             "normal:mean=20,dev=8", "power-law:max=200,exponent=1.2",
                                             "sparse:max=9,zero=0.6", "fft-n1", "fft-n2"};
  return w;
}

// Counts (in elements of the layout) and displacements: blocks stored in a
// rank-dependent permuted order, each after a one-element gap.
struct Side {
  std::vector<int> counts, displs;
  long long elems = 0;
};

Side side(const std::vector<int>& counts, int salt) {
  const int P = static_cast<int>(counts.size());
  std::vector<int> order(P);
  std::iota(order.begin(), order.end(), 0);
  std::rotate(order.begin(), order.begin() + salt % std::max(P, 1), order.end());
  std::reverse(order.begin(), order.end());
  Side s{counts, std::vector<int>(P), 0};
  for (int b : order) {
    s.elems += 1;  // gap
    s.displs[b] = static_cast<int>(s.elems);
    s.elems += counts[b];
  }
  s.elems += 1;
  return s;
}

struct TypePair {
  const Layout* send;
  int send_factor;
  const Layout* recv;
  int recv_factor;
};

std::vector<TypePair> type_pairs() {
  return {{&int_layout(), 1, &int_layout(), 1},
          {&strided_layout(), 1, &pair_layout(), 1},
          {&int_layout(), 2, &strided_layout(), 1},
          {&padded_layout(), 1, &padded_layout(), 1}};
}

int* at(Buffer& b, const Side& s, int block, long long j) {
  const Layout& l = *b.layout;
  const long long e = s.displs[block] + j / l.ints();
  return reinterpret_cast<int*>(b.data() + e * l.extent + l.offsets[j % l.ints()]);
}

// One checked call: counts come from the workload, scaled by the type pair.
void run_case(MPI_Comm comm, const std::string& spec, const TypePair& tp, const wl::Workload& w, bool in_place,
              const std::string& what_workload) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int P = size_of(comm);
  const std::string what = spec + " P=" + std::to_string(P) + " " + what_workload + " " + tp.send->name + "->" +
                           tp.recv->name + (in_place ? " in-place" : "");
  // In place, MPI sends block d of the receive buffer to d, so the counts
  // must be symmetric: count(s, d) == count(d, s).
  auto units = [&](int s, int d) {
    return static_cast<int>(in_place ? wl::count(w, std::min(s, d), std::max(s, d), P) : wl::count(w, s, d, P));
  };
  std::vector<int> sc(P), rc(P);
  for (int d = 0; d < P; ++d) sc[d] = units(rank, d) * tp.send_factor;
  for (int s = 0; s < P; ++s) rc[s] = units(s, rank) * tp.recv_factor;
  const Side ss = side(sc, rank), rs = side(rc, rank + 3);
  Buffer send(*tp.send, ss.elems), recv(*tp.recv, rs.elems);
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < static_cast<long long>(sc[d]) * tp.send->ints(); ++j) *at(send, ss, d, j) = encode(rank, d, j);
  if (in_place)
    for (int d = 0; d < P; ++d)
      for (long long j = 0; j < static_cast<long long>(rc[d]) * tp.recv->ints(); ++j) *at(recv, rs, d, j) = encode(rank, d, j);
  const auto send_before = send.bytes;
  const Side ss_before = ss, rs_before = rs;
  const int err = A2A_Alltoallv(in_place ? MPI_IN_PLACE : send.data(), ss.counts.data(), ss.displs.data(),
                                tp.send->type, recv.data(), rs.counts.data(), rs.displs.data(), tp.recv->type, comm,
                                spec.c_str());
  EXPECT_EQ(err, MPI_SUCCESS) << what << ": " << a2a::last_error_message();
  check_blocks(
      recv, rank, P, [&](int s) { return static_cast<long long>(rc[s]) * tp.recv->ints(); },
      [&](int s, long long j) { return at(recv, rs, s, j); }, what);
  EXPECT_TRUE(send.bytes == send_before) << what << ": send buffer modified";
  EXPECT_TRUE(ss.counts == ss_before.counts && ss.displs == ss_before.displs && rs.counts == rs_before.counts &&
              rs.displs == rs_before.displs)
      << what << ": count or displacement arrays modified";

  A2A_Stats st;
  A2A_Last_stats(&st);
  if ((spec.rfind("tuna", 0) == 0 && !layout_dependent(spec)) || spec == "two-phase-bruck" ||
      spec == "padded-bruck") {
    long long M = 0;  // global largest block, recomputed from the workload
    for (int s = 0; s < P; ++s)
      for (int d = 0; d < P; ++d) M = std::max<long long>(M, units(s, d) * tp.send_factor * tp.send->ints() * 4);
    const auto want = expected_stats(spec.rfind("tuna", 0) == 0 ? "tra" + spec.substr(4) : "tra:radix=2", P);
    if (spec.rfind("tuna", 0) == 0) {
      EXPECT_EQ(std::string(st.algorithm), "tuna" + want.canonical.substr(3)) << what;
    }
    if (M > 0 && P > 1) {
      EXPECT_EQ(st.rounds, want.rounds) << what;
      EXPECT_EQ(st.blocks_sent, want.blocks) << what;
      if (spec != "padded-bruck") {  // a batch's sizes, then its blocks where any move
        EXPECT_GE(st.waits, want.waits) << what;
        EXPECT_LE(st.waits, 2 * want.waits) << what;
      }
      if (spec == "padded-bruck") {
        EXPECT_EQ(st.bytes_sent, want.blocks * M) << what;
        EXPECT_EQ(st.meta_bytes_sent, 8) << what;
      } else {
        EXPECT_EQ(st.meta_bytes_sent, 8 * want.blocks + 8) << what;
      }
    }
  }
}

}  // namespace

TEST(Alltoallv, EveryAlgorithmWorkloadAndTypePair) {
  const int P = size_of(MPI_COMM_WORLD);
  for (const auto& text : workloads()) {
    wl::Workload w;
    std::string err;
    ASSERT_TRUE(wl::parse(text, w, err)) << err;
    w = wl::with_size(w, 10);
    for (const auto& spec : specs_for(P))
      for (const auto& tp : type_pairs()) run_case(MPI_COMM_WORLD, spec, tp, w, false, text);
  }
}

// TuNA's k-port form (ports=B) at every radix and every B, with the
// default (all): data, gaps, K, D, metadata and waits (test run_case),
// zero blocks included, in place too.  Also run alone at P = 6, 10, 11 and
// 13 (tests/CMakeLists.txt).
TEST(Alltoallv, TunaEveryRadixAndPorts) {
  const int P = size_of(MPI_COMM_WORLD);
  wl::Workload w;
  std::string err;
  ASSERT_TRUE(wl::parse("sparse:max=9,zero=0.3", w, err)) << err;
  for (int r = 2; r <= P + 1; ++r)
    for (int b = 1; b <= std::max(1, std::min(r, P) - 1) + 1; ++b) {
      const bool all = b > std::max(1, std::min(r, P) - 1);
      const std::string spec = "tuna:radix=" + std::to_string(r) + (all ? "" : ",ports=" + std::to_string(b));
      run_case(MPI_COMM_WORLD, spec, type_pairs()[0], w, false, "sparse");
      run_case(MPI_COMM_WORLD, spec, type_pairs()[2], w, false, "sparse");
      run_case(MPI_COMM_WORLD, spec, {type_pairs()[2].recv, 1, type_pairs()[2].recv, 1}, w, true, "sparse");
    }
}

TEST(Alltoallv, InPlace) {
  const int P = size_of(MPI_COMM_WORLD);
  wl::Workload w;
  std::string err;
  wl::parse("uniform:max=7,seed=11", w, err);
  for (const auto& spec : specs_for(P))
    for (const auto& tp : {type_pairs()[0], type_pairs()[2]})
      run_case(MPI_COMM_WORLD, spec, {tp.recv, tp.recv_factor, tp.recv, tp.recv_factor}, w, true, "uniform");
}

TEST(Alltoallv, ReversedAndSplitCommunicators) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int P = size_of(MPI_COMM_WORLD);
  MPI_Comm reversed, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  wl::Workload w;
  std::string err;
  wl::parse("sparse:max=6,zero=0.3", w, err);
  for (MPI_Comm comm : {reversed, half})
    for (const auto& spec : specs_for(size_of(comm)))
      for (const auto& tp : {type_pairs()[0], type_pairs()[1]}) run_case(comm, spec, tp, w, false, "sparse");
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&half);
}

// Rank 0's blocks are 1000 times larger than everyone else's: every
// algorithm still delivers, and TuNA reports exactly its bounded scratch.
TEST(Alltoallv, SkewedRankAndScratchBound) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int P = size_of(MPI_COMM_WORLD);
  const long long small = 3, big = 3000;
  std::vector<int> sc(P, static_cast<int>(rank == 0 ? big : small)), rc(P), sd(P), rd(P);
  for (int s = 0; s < P; ++s) rc[s] = static_cast<int>(s == 0 ? big : small);
  std::partial_sum(sc.begin(), sc.end() - 1, sd.begin() + 1);
  std::partial_sum(rc.begin(), rc.end() - 1, rd.begin() + 1);
  std::vector<int> sbuf(sd.back() + sc.back()), rbuf(rd.back() + rc.back());
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) sbuf[sd[d] + j] = encode(rank, d, j);
  const char* limit = std::getenv("A2A_SCRATCH_LIMIT");
  for (const auto& spec : specs_for(P)) {
    std::fill(rbuf.begin(), rbuf.end(), -1);
    ASSERT_EQ(A2A_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_INT, rbuf.data(), rc.data(), rd.data(), MPI_INT,
                            MPI_COMM_WORLD, spec.c_str()),
              MPI_SUCCESS) << spec;
    long long wrong = 0;
    for (int s = 0; s < P; ++s)
      for (int j = 0; j < rc[s]; ++j) wrong += rbuf[rd[s] + j] != encode(s, rank, j);
    EXPECT_EQ(wrong, 0) << spec;
    A2A_Stats st;
    A2A_Last_stats(&st);
    const long long M = big * 4;
    if (spec.rfind("tuna", 0) == 0 && !layout_dependent(spec) && P > 1) {
      const auto want = expected_stats("tra" + spec.substr(4), P);
      const auto steps = a2a::detail::schedule::tra_steps(P, std::stoi(want.canonical.substr(10)));
      const long long store = (P - (want.rounds + 1)) * M;  // the tight T alone
      const std::string ports = knob_of(spec, "ports");
      const int b = ports.empty() || ports == "all" ? 0 : std::stoi(ports);
      EXPECT_LE(st.temp_bytes, a2a::detail::two_phase_scratch(steps, P - (want.rounds + 1), M, b)) << spec;
      EXPECT_GE(st.temp_bytes, store) << spec;
      if (rank == 0) std::printf("# %s P=%d scratch %lld bytes (P*M would be %lld)\n", st.algorithm, P, st.temp_bytes, P * M);
    }
    if (spec.rfind("padded", 0) == 0 && limit && 2LL * P * M > std::atoll(limit)) {
      EXPECT_STREQ(st.algorithm, "spread-out") << spec << " should fall back above A2A_SCRATCH_LIMIT";
    } else if (spec.rfind("padded", 0) == 0) {
      EXPECT_STREQ(st.algorithm, spec.c_str());
    }
  }
}

// Displacements times extent beyond 2 GiB: a 4-byte element with a 1 MiB
// extent, so the offsets need 64 bits while only a page per int is touched.
TEST(Alltoallv, OffsetsBeyondTwoGiB) {
  const int P = size_of(MPI_COMM_WORLD);
  if (P > 4) GTEST_SKIP() << "virtual address budget: run at P <= 4";
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const MPI_Aint extent = 1 << 20;
  const int per = static_cast<int>((1LL << 31) / (P * extent) + 8);
  MPI_Datatype spread;
  MPI_Type_create_resized(MPI_INT, 0, extent, &spread);
  MPI_Type_commit(&spread);
  std::vector<int> displs(P);
  for (int i = 0; i < P; ++i) displs[i] = (P - 1 - i) * per;  // reversed order
  const size_t span = static_cast<size_t>(P) * per * extent;
  ASSERT_GT(span, size_t{1} << 31);
  char* sbuf = map_sparse(span);
  char* rbuf = map_sparse(span);
  ASSERT_NE(sbuf, nullptr);
  ASSERT_NE(rbuf, nullptr);
  // count(s, d) = per - (s+d)%2: not all equal, and both sides agree.
  std::vector<int> sc(P), rc(P);
  for (int i = 0; i < P; ++i) sc[i] = rc[i] = per - (rank + i) % 2;
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) *reinterpret_cast<int*>(sbuf + (static_cast<size_t>(displs[d]) + j) * extent) = encode(rank, d, j);
  for (const char* spec : {"spread-out", "padded-bruck", "two-phase-bruck", "tuna:radix=2", "native"}) {
    ASSERT_EQ(A2A_Alltoallv(sbuf, sc.data(), displs.data(), spread, rbuf, rc.data(), displs.data(), spread,
                            MPI_COMM_WORLD, spec),
              MPI_SUCCESS) << spec;
    long long wrong = 0;
    for (int s = 0; s < P; ++s)
      for (int j = 0; j < rc[s]; ++j)
        wrong += *reinterpret_cast<int*>(rbuf + (static_cast<size_t>(displs[s]) + j) * extent) != encode(s, rank, j);
    EXPECT_EQ(wrong, 0) << spec;
  }
  munmap(sbuf, span);
  munmap(rbuf, span);
  MPI_Type_free(&spread);
}

// Engines nested on one context's scratch: padded Bruck holds its padded
// buffers while the Bruck engine runs, TuNA's two-phase engine holds four
// regions.  Run inside an enclosing frame that holds two regions with a
// pattern in them, each must deliver its data and leave the pattern alone;
// a frame that asks for more regions than are free is refused.
TEST(Alltoallv, NestedEnginesNeverWriteTheirCallersScratch) {
  namespace d = a2a::detail;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  d::CommContext* ctx = nullptr;
  ASSERT_EQ(d::get_context(comm, ctx), MPI_SUCCESS);
  ASSERT_EQ(ctx->open_private(), MPI_SUCCESS);
  const int P = ctx->size, me = ctx->rank;
  d::Scratch& scratch = ctx->scratch;
  d::Stats st;
  {  // the frames end before the communicator (and its scratch) is freed
    d::Scratch::Frame outer(scratch);
    d::Scratch::Region a, b;
    ASSERT_TRUE(outer.take({&a, &b}));
    constexpr size_t kHeld = 1 << 16;
    char* held_a = scratch.get(a, kHeld, st);
    char* held_b = scratch.get(b, kHeld, st);
    std::memset(held_a, 0x5a, kHeld);
    std::memset(held_b, 0xa5, kHeld);
    // Block i of rank s to d holds (s + d) % 3 + 1 ints of value s*1000 + d*10 + j.
    auto ints = [](int s, int dst) { return (s + dst) % 3 + 1; };
    std::vector<int> send, recv;
    std::vector<MPI_Aint> soff(P), roff(P);
    std::vector<long long> sbytes(P), rbytes(P);
    for (int i = 0; i < P; ++i) {
      soff[i] = static_cast<MPI_Aint>(send.size() * sizeof(int));
      for (int j = 0; j < ints(me, i); ++j) send.push_back(me * 1000 + i * 10 + j);
      sbytes[i] = ints(me, i) * static_cast<long long>(sizeof(int));
    }
    size_t total = 0;
    for (int i = 0; i < P; ++i) {
      roff[i] = static_cast<MPI_Aint>(total * sizeof(int));
      rbytes[i] = ints(i, me) * static_cast<long long>(sizeof(int));
      total += static_cast<size_t>(ints(i, me));
    }
    for (const char* spec : {"padded-bruck", "tuna:radix=2", "tuna:radix=3", "two-phase-bruck"}) {
      recv.assign(total, -1);
      d::Resolved r;
      std::string error;
      ASSERT_EQ(d::resolve(d::Collective::alltoallv, spec, P, 0, r, error), MPI_SUCCESS) << error;
      scratch.begin_call();
      const d::VarCall call{reinterpret_cast<const char*>(send.data()), soff.data(), sbytes.data(),
                            reinterpret_cast<char*>(recv.data()), roff.data(), rbytes.data(), *ctx, st, -1};
      const d::Result ran = d::drive_blocking(r.info->varying(call, r.params), d::kFirstOpTag);
      ASSERT_FALSE(ran.fell_back()) << spec;
      ASSERT_EQ(ran.code(), MPI_SUCCESS) << spec;
      long long wrong = 0;
      for (int s = 0; s < P; ++s)
        for (int j = 0; j < ints(s, me); ++j) wrong += recv[roff[s] / sizeof(int) + j] != s * 1000 + me * 10 + j;
      EXPECT_EQ(wrong, 0) << spec;
      EXPECT_EQ(std::count(held_a, held_a + kHeld, 0x5a), static_cast<long>(kHeld)) << spec << " wrote into a held region";
      EXPECT_EQ(std::count(held_b, held_b + kHeld, static_cast<char>(0xa5)), static_cast<long>(kHeld))
          << spec << " wrote into a held region";
      EXPECT_EQ(scratch.held_work_regions(), 2) << spec << " kept regions after it returned";
    }
    {
      d::Scratch::Frame inner(scratch);
      d::Scratch::Region r[7];
      EXPECT_FALSE(inner.take({&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]})) << "more regions than are free";
      EXPECT_TRUE(inner.take({&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]}));
      EXPECT_NE(r[0], a);
      EXPECT_NE(r[0], b);
    }
    EXPECT_EQ(scratch.held_work_regions(), 2);
  }
  MPI_Comm_free(&comm);
}

// shm's segment across calls on one communicator: block sizes growing,
// shrinking and growing again, alltoall and alltoallv alternating, and
// alltoallv parts of very different sizes (one rank sends 16x more), with
// every block through the segment (direct=off), where blocks past a half
// (1 MiB, or A2A_SCRATCH_LIMIT in the .shm_limit run) go in pieces; and
// with blocks from 4 KiB read straight from the sender's buffer (CMA) or
// sent as messages, where the alltoallv parts mix both paths in one call.
// Every int encodes (source, destination, index); gaps between the receive
// blocks stay untouched; the segment never outgrows its two halves.
TEST(Alltoallv, ShmSegmentPiecesAndDirectBlocks) {
  if (!a2a::test::one_memory(MPI_COMM_WORLD)) GTEST_SKIP() << "shm's segment needs the ranks on one node";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int P = size_of(comm);
  int me;
  MPI_Comm_rank(comm, &me);
  auto code = [](int s, int d, long long j) { return static_cast<int>((s * 97 + d) * 100003 + j % 100003); };
  namespace sch = a2a::detail::schedule;
  const size_t half = sch::shm_half_limit(a2a::detail::config().scratch_limit);
  for (const std::string spec : {"shm:direct=off", "shm:direct=4K,via=cma", "shm:direct=4K,via=p2p"}) {
    const bool direct = spec != "shm:direct=off";
    long long most_rounds = 0;
    for (int n : {1, 3, 1000, 7, 0, 70000, 2, 4000, 5}) {
      for (bool v : {false, true}) {
        // alltoallv: rank s sends n ints to each peer, rank 1 16n (the big part).
        auto count = [&](int s) { return v ? n * (s == 1 ? 16 : 1) : n; };
        std::vector<int> scounts(P), sdispls(P), rcounts(P), rdispls(P);
        int sat = 0, rat = 0;
        for (int d = 0; d < P; ++d) {
          scounts[d] = count(me);
          sdispls[d] = sat;
          sat += scounts[d] + 1;  // a gap after every block
          rcounts[d] = count(d);
          rdispls[d] = rat;
          rat += rcounts[d] + 1;
        }
        std::vector<int> send(static_cast<size_t>(sat) + 1), recv(static_cast<size_t>(rat) + 1, -7);
        for (int d = 0; d < P; ++d)
          for (int j = 0; j < scounts[d]; ++j) send[sdispls[d] + j] = code(me, d, j);
        const std::string what = spec + (v ? " alltoallv n=" : " alltoall n=") + std::to_string(n);
        int rc;
        if (v) {
          rc = A2A_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_INT, recv.data(), rcounts.data(),
                             rdispls.data(), MPI_INT, comm, spec.c_str());
        } else {  // contiguous blocks of n ints
          std::vector<int> s2(static_cast<size_t>(n) * P), r2(static_cast<size_t>(n) * P, -7);
          for (int d = 0; d < P; ++d)
            for (int j = 0; j < n; ++j) s2[static_cast<size_t>(d) * n + j] = code(me, d, j);
          rc = A2A_Alltoall(s2.data(), n, MPI_INT, r2.data(), n, MPI_INT, comm, spec.c_str());
          for (int s = 0; s < P; ++s)
            for (int j = 0; j < n; ++j) recv[rdispls[s] + j] = r2[static_cast<size_t>(s) * n + j];
        }
        ASSERT_EQ(rc, MPI_SUCCESS) << what << ": " << a2a::last_error_message();
        long long wrong = 0;
        for (int s = 0; s < P; ++s) {
          for (int j = 0; j < rcounts[s]; ++j) wrong += recv[rdispls[s] + j] != code(s, me, j);
          wrong += v && recv[rdispls[s] + rcounts[s]] != -7;  // the gap
        }
        EXPECT_EQ(wrong, 0) << what;
        A2A_Stats st;
        A2A_Last_stats(&st);
        // Whole blocks while P of them fit in a half, else pieces of the half
        // (alltoallv's first exchange may carry a smaller one); direct blocks
        // (from 4 KiB) go whole in the first exchange.
        long long M = 0;
        for (int s = 0; s < P; ++s)
          if (!direct || 4LL * count(s) < 4096) M = std::max<long long>(M, 4LL * count(s));
        const size_t len = sch::shm_piece_len(static_cast<size_t>(M), P, half);
        const auto pieces = static_cast<long long>(sch::shm_exchanges(static_cast<size_t>(M), len, len));
        if (P > 1 && n > 0) {
          EXPECT_STREQ(st.algorithm, spec.c_str()) << what;
          if (v) {
            EXPECT_GE(st.rounds, pieces) << what;
            EXPECT_LE(st.rounds, pieces + 1) << what;
          } else {
            EXPECT_EQ(st.rounds, pieces) << what;
          }
          EXPECT_EQ(st.temp_bytes, static_cast<long long>(sch::shm_layout(P, half).total)) << what << ": bounded";
          most_rounds = std::max(most_rounds, st.rounds);
        }
      }
    }
    if (P > 1) {
      if (direct) {
        EXPECT_EQ(most_rounds, 1) << spec << ": the large blocks went direct, whole";
      } else {
        EXPECT_GT(most_rounds, 1) << spec << ": never went in pieces";
      }
    }
  }
  MPI_Comm_free(&comm);
}

// Preparing a communicator touches every page of its shm segment's data in
// this process, its own part and every peer's (present in
// /proc/self/pagemap), so that no call faults them in.
TEST(Alltoallv, ShmSegmentTouchedWhenPrepared) {
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &comm);  // world's group: its segment, kept, is made once
  ASSERT_EQ(A2A_Comm_prepare(comm), MPI_SUCCESS);
  namespace d = a2a::detail;
  d::CommContext* ctx = nullptr;
  ASSERT_EQ(d::get_context(comm, ctx), MPI_SUCCESS);
  if (ctx->topology.nodes() > 1) GTEST_SKIP() << "no segment over several nodes";
  const auto parts = d::shm_data_parts(*ctx);
  ASSERT_EQ(parts.size(), static_cast<size_t>(P));
  const int pagemap = open("/proc/self/pagemap", O_RDONLY);  // read with pread: a stream's seeks fail on it
  ASSERT_GE(pagemap, 0) << "no /proc/self/pagemap";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t pages = 0, present = 0;
  for (const auto& [at, len] : parts) {
    const auto span = d::schedule::whole_pages(reinterpret_cast<uintptr_t>(at), len, page);
    for (uintptr_t a = span.first; a < span.first + span.bytes; a += page) {
      std::uint64_t entry = 0;
      ASSERT_EQ(pread(pagemap, &entry, sizeof entry, static_cast<off_t>(a / page * sizeof entry)),
                static_cast<ssize_t>(sizeof entry));
      ++pages;
      present += (entry >> 63) & 1;
    }
  }
  close(pagemap);
  EXPECT_GT(pages, 0u);
  EXPECT_EQ(present, pages) << "pages of the segment not yet mapped in this process";
  MPI_Comm_free(&comm);
}

// Communicators over one group share one shm segment (libraries duplicate
// communicators per plan; a segment per duplicate would cost more than its
// calls save): a duplicate's first call finds the segment its sibling made,
// calls on the two interleave, and the segment outlives the communicator
// that made it.  A communicator over the same ranks in another
// order, and a sub-communicator, have their own.  Data encode (source,
// destination, index) throughout.
TEST(Alltoallv, ShmSegmentSharedByCommunicatorsOverOneGroup) {
  int P, me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (P < 2) GTEST_SKIP() << "needs 2 ranks";
  if (!a2a::test::one_memory(MPI_COMM_WORLD)) GTEST_SKIP() << "shm's segment needs the ranks on one node";
  auto code = [](int s, int d, int j) { return (s * 131 + d) * 100003 + j; };
  auto exchange = [&](MPI_Comm comm, int n, long long& temp) {
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    std::vector<int> s(static_cast<size_t>(n) * p), got(static_cast<size_t>(n) * p, -7);
    for (int d = 0; d < p; ++d)
      for (int j = 0; j < n; ++j) s[static_cast<size_t>(d) * n + j] = code(r, d, j);
    EXPECT_EQ(A2A_Alltoall(s.data(), n, MPI_INT, got.data(), n, MPI_INT, comm, "shm"), MPI_SUCCESS)
        << a2a::last_error_message();
    long long wrong = 0;
    for (int src = 0; src < p; ++src)
      for (int j = 0; j < n; ++j) wrong += got[static_cast<size_t>(src) * n + j] != code(src, r, j);
    A2A_Stats st;
    A2A_Last_stats(&st);
    temp = st.temp_bytes;
    return wrong;
  };
  const int big = 20000;  // 80 KB blocks
  MPI_Comm a, b, reversed, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  namespace d = a2a::detail;
  const auto segment = [](MPI_Comm comm) {
    d::CommContext* ctx = nullptr;
    EXPECT_EQ(d::get_context(comm, ctx), MPI_SUCCESS);
    return ctx->shm_state;
  };
  long long temp = 0;
  EXPECT_EQ(exchange(a, big, temp), 0);
  EXPECT_EQ(exchange(b, 1, temp), 0);
  const auto shared = segment(a);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(segment(b), shared) << "b's first call: a's segment";
  for (int round = 0; round < 3; ++round) {  // interleaved, sizes changing
    EXPECT_EQ(exchange(a, 1 + round, temp), 0);
    EXPECT_EQ(exchange(b, big - round, temp), 0);
  }
  MPI_Comm_free(&a);
  EXPECT_EQ(exchange(b, 3, temp), 0);
  EXPECT_EQ(segment(b), shared) << "the segment outlives the communicator that made it";
  EXPECT_EQ(exchange(reversed, 2, temp), 0);
  EXPECT_NE(segment(reversed), shared) << "another order: its own segment";
  EXPECT_EQ(exchange(half, 2, temp), 0);
  EXPECT_NE(segment(half), shared) << "a sub-communicator: its own segment";
  MPI_Comm_free(&b);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&half);
}
