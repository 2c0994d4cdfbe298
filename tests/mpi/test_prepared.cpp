// Prepared calls (src/front/cache.cpp): a repeated call reuses what an
// earlier identical one prepared, and anything that makes a call differ, or
// a handle stand for a new object, is seen: new data in the same buffers,
// new counts in the same arrays, a new spec in the same string, a freed
// communicator or datatype whose handle comes back for another, more call
// shapes than a thread keeps; a repeated native call run from its copy.
#include <algorithm>
#include <cstring>

#include "front/pipeline.hpp"
#include "harness.hpp"

using namespace a2a::test;

namespace {

int world(int& rank) {
  int P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  return P;
}

int value(int src, int dst, int j, int round) { return encode(src, dst, j) ^ (round << 24); }

std::string ran() {
  A2A_Stats st;
  A2A_Last_stats(&st);
  return st.algorithm;
}

// Counts of rank `src` to `dst` in round r (some zero).
int count_of(int src, int dst, int r) { return (src + 2 * dst + r) % 4; }

// Round r's counts, laid out in reverse order of peer with a gap before
// each block (some counts zero): this rank's sends in sc/sd, receives in rc/rd.
void reversed_with_gaps(std::vector<int>& sc, std::vector<int>& sd, std::vector<int>& rc, std::vector<int>& rd,
                        int rank, int r) {
  int so = 0, ro = 0;
  for (int i = static_cast<int>(sc.size()) - 1; i >= 0; --i) {
    sc[i] = count_of(rank, i, r);
    sd[i] = so + 1;
    so += sc[i] + 1;
    rc[i] = count_of(i, rank, r);
    rd[i] = ro + 1;
    ro += rc[i] + 1;
  }
}

// alltoallv of ints: this rank's blocks of round r written at s's
// displacements, and the received ints not what their source sent.
void put_blocks(std::vector<int>& s, const std::vector<int>& sc, const std::vector<int>& sd, int rank, int r) {
  for (size_t d = 0; d < sc.size(); ++d)
    for (int j = 0; j < sc[d]; ++j) s[sd[d] + j] = value(rank, static_cast<int>(d), j, r);
}
long long wrong_blocks(const std::vector<int>& got, const std::vector<int>& rc, const std::vector<int>& rd, int rank,
                       int r) {
  long long wrong = 0;
  for (size_t src = 0; src < rc.size(); ++src)
    for (int j = 0; j < rc[src]; ++j) wrong += got[rd[src] + j] != value(static_cast<int>(src), rank, j, r);
  return wrong;
}

}  // namespace

TEST(Prepared, RepeatedCallsSeeNewDataAndNewSpecs) {
  int rank;
  const int P = world(rank);
  const int n = 3;
  std::vector<int> s(n * P), r(n * P);
  char spec[32];
  // Same buffers every round; the spec string's contents change under the
  // same pointer, to a longer spec that the last one begins (scattered ->
  // scattered:block=4) and back to the shorter one.
  const char* specs[] = {"spread-out", "tra:radix=2", "pairwise", "scattered", "scattered:block=4", "scattered"};
  for (int round = 0; round < 12; ++round) {
    const char* want = specs[round % 6];
    std::strcpy(spec, want);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < n; ++j) s[n * d + j] = value(rank, d, j, round);
    std::fill(r.begin(), r.end(), -1);
    ASSERT_EQ(A2A_Alltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, MPI_COMM_WORLD, spec), MPI_SUCCESS);
    EXPECT_EQ(ran(), std::strcmp(want, "scattered") == 0 ? "scattered:block=32" : want) << "round " << round;
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < n; ++j) wrong += r[n * src + j] != value(src, rank, j, round);
    EXPECT_EQ(wrong, 0) << "round " << round;
  }
}

TEST(Prepared, AlltoallvSeesNewCountsInTheSameArrays) {
  int rank;
  const int P = world(rank);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  std::vector<int> s(4 * P + P), r(4 * P + P);
  for (int round = 0; round < 5; ++round) {
    reversed_with_gaps(sc, sd, rc, rd, rank, round);  // counts changing every round
    put_blocks(s, sc, sd, rank, round);
    std::fill(r.begin(), r.end(), -1);
    for (const char* spec : {"spread-out", "tuna:radix=2", "native"}) {
      ASSERT_EQ(A2A_Alltoallv(s.data(), sc.data(), sd.data(), MPI_INT, r.data(), rc.data(), rd.data(), MPI_INT,
                              MPI_COMM_WORLD, spec),
                MPI_SUCCESS);
      EXPECT_EQ(wrong_blocks(r, rc, rd, rank, round), 0) << spec << " round " << round;
    }
  }
}

// A freed communicator's handle comes back for a new one of another size:
// the call must run on the new one.
TEST(Prepared, FreedCommunicatorsAreForgotten) {
  int rank;
  const int P = world(rank);
  std::vector<int> s(P, 0), r(P, -1);
  const uint64_t before = a2a::detail::generation();
  for (int round = 0; round < 4; ++round) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, round % 2 == 0 ? 0 : rank % 2, rank, &c);
    int n = 0, me = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    for (int d = 0; d < n; ++d) s[d] = value(me, d, 0, round);
    ASSERT_EQ(A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, c, "spread-out"), MPI_SUCCESS);
    for (int src = 0; src < n; ++src) EXPECT_EQ(r[src], value(src, me, 0, round)) << "round " << round;
    MPI_Comm_free(&c);
  }
  EXPECT_GT(a2a::detail::generation(), before);
}

// A freed derived datatype's handle comes back for another layout (Open
// MPI reuses it at once): the same call, buffers and counts must follow the
// new layout.
TEST(Prepared, FreedDatatypesAreForgotten) {
  int rank;
  const int P = world(rank);
  const int n = 2, widest = 3;
  std::vector<int> s(n * widest * P), r(n * widest * P);  // the same buffers for every layout
  for (int stride = 1; stride <= widest; ++stride) {
    MPI_Datatype t;  // one int, `stride` ints apart
    MPI_Type_create_resized(MPI_INT, 0, stride * static_cast<MPI_Aint>(sizeof(int)), &t);
    MPI_Type_commit(&t);
    std::fill(s.begin(), s.end(), -2);
    std::fill(r.begin(), r.end(), -1);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < n; ++j) s[stride * (n * d + j)] = value(rank, d, j, stride);
    ASSERT_EQ(A2A_Alltoall(s.data(), n, t, r.data(), n, t, MPI_COMM_WORLD, "tra:radix=2"), MPI_SUCCESS);
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < n; ++j) wrong += r[stride * (n * src + j)] != value(src, rank, j, stride);
    EXPECT_EQ(wrong, 0) << "stride " << stride;
    if (stride > 1) {
      EXPECT_EQ(r[1], -1) << "a gap was written";
    }
    MPI_Type_free(&t);
  }
}

// Freeing a derived datatype forgets the calls that used one, not those of
// predefined types alone (never freed): a program that makes a datatype
// per phase (a2a-closure) keeps its count exchange hot, prepared once.
TEST(Prepared, FreedDatatypesKeepPredefinedCalls) {
  int rank;
  const int P = world(rank);
  std::vector<int> s(2 * P), r(2 * P);
  for (int d = 0; d < P; ++d) s[d] = value(rank, d, 0, 7);
  const auto counts = [&] { return A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, "native"); };
  const a2a::detail::CallArgs ints = a2a::detail::alltoall_args(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT,
                                                                MPI_COMM_WORLD, "native");
  ASSERT_EQ(counts(), MPI_SUCCESS);
  a2a::detail::ThreadState& ts = a2a::detail::thread_state();
  const a2a::detail::Prepared* kept = a2a::detail::find_prepared(ts, ints);
  ASSERT_NE(kept, nullptr);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  const a2a::detail::CallArgs pairs = a2a::detail::alltoall_args(s.data(), 1, pair, r.data(), 1, pair,
                                                                 MPI_COMM_WORLD, "native");
  ASSERT_EQ(A2A_Alltoall(s.data(), 1, pair, r.data(), 1, pair, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
  EXPECT_NE(a2a::detail::find_prepared(ts, pairs), nullptr);
  const uint64_t before = a2a::detail::generation();
  MPI_Type_free(&pair);
  EXPECT_GT(a2a::detail::generation(), before);
  EXPECT_EQ(a2a::detail::find_prepared(ts, pairs), nullptr) << "a call of the freed datatype still matched";
  EXPECT_EQ(a2a::detail::find_prepared(ts, ints), kept) << "a call of MPI_INT was forgotten";
  ASSERT_EQ(counts(), MPI_SUCCESS);
  for (int src = 0; src < P; ++src) EXPECT_EQ(r[src], value(src, rank, 0, 7));
  EXPECT_TRUE(a2a::detail::hot_repeat(ts.hot, ints)) << "the count exchange left the hot call";
  // A communicator freed forgets them all.
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  ASSERT_EQ(A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, c, "native"), MPI_SUCCESS);
  MPI_Comm_free(&c);
  EXPECT_EQ(a2a::detail::find_prepared(ts, ints), nullptr);
}

// More call shapes than a thread keeps prepared, cycled: all still right.
TEST(Prepared, MoreShapesThanSlots) {
  int rank;
  const int P = world(rank);
  const int shapes = static_cast<int>(a2a::detail::kPreparedSlots) + 3;
  std::vector<std::vector<int>> s(shapes), r(shapes);
  for (int k = 0; k < shapes; ++k) {
    s[k].resize((k + 1) * P);
    r[k].resize((k + 1) * P);
  }
  for (int pass = 0; pass < 3; ++pass)
    for (int k = 0; k < shapes; ++k) {
      const int n = k + 1;
      for (int d = 0; d < P; ++d)
        for (int j = 0; j < n; ++j) s[k][n * d + j] = value(rank, d, j, pass);
      ASSERT_EQ(A2A_Alltoall(s[k].data(), n, MPI_INT, r[k].data(), n, MPI_INT, MPI_COMM_WORLD, "auto"), MPI_SUCCESS);
      long long wrong = 0;
      for (int src = 0; src < P; ++src)
        for (int j = 0; j < n; ++j) wrong += r[k][n * src + j] != value(src, rank, j, pass);
      EXPECT_EQ(wrong, 0) << "shape " << k << " pass " << pass;
    }
}

// A call that fails leaves nothing prepared: the same call with the error
// fixed runs.
TEST(Prepared, ErrorsAreNotKept) {
  int rank;
  const int P = world(rank);
  std::vector<int> s(P, rank), r(P, -1);
  EXPECT_EQ(A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, "tra:radix=1"), MPI_ERR_ARG);
  EXPECT_EQ(A2A_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD, "tra:radix=2"), MPI_SUCCESS);
  for (int src = 0; src < P; ++src) EXPECT_EQ(r[src], src);
}

// A call with a new signature is prepared in the least recent prepared
// call's object (front/execute.cpp), which keeps what the two signatures
// share: whatever differs must not survive.  Calls cycle through more
// signatures than a thread keeps, each differing from the one it recycles
// in counts, then also in spec, datatype, communicator or collective; the
// data (encoding source, destination, index, round) and the stats name
// must be each call's own.
TEST(Prepared, RecycledCallsKeepOnlyWhatTheyShare) {
  int rank;
  const int P = world(rank);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const Layout& strided = strided_layout();
  const char* specs[] = {"spread-out", "native", "auto", "tuna:radix=2", "shm", "pairwise"};
  const int calls = 6 * static_cast<int>(a2a::detail::kPreparedSlots);
  for (int k = 0; k < calls; ++k) {
    const char* spec = specs[(k / 5) % 6];
    const MPI_Comm comm = (k / 7) % 2 ? dup : MPI_COMM_WORLD;
    const bool typed = (k / 11) % 2 == 1;  // the strided datatype
    const std::string what = std::string(spec) + " call " + std::to_string(k);
    if (k % 13 == 12) {  // an alltoall in between, its block size changing
      if (std::strncmp(spec, "tuna", 4) == 0) spec = "tra:radix=2";  // alltoallv's only
      const int n = 1 + k % 3;
      std::vector<int> s(n * P), r(n * P, -1);
      for (int d = 0; d < P; ++d)
        for (int j = 0; j < n; ++j) s[n * d + j] = value(rank, d, j, k);
      ASSERT_EQ(A2A_Alltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, comm, spec), MPI_SUCCESS) << what;
      for (int src = 0; src < P; ++src)
        for (int j = 0; j < n; ++j) EXPECT_EQ(r[n * src + j], value(src, rank, j, k)) << what;
      continue;
    }
    std::vector<int> sc(P), sd(P), rc(P), rd(P);
    int so = 0, ro = 0;
    for (int i = 0; i < P; ++i) {  // new counts every call
      sc[i] = count_of(rank, i, k) + k % 2;
      sd[i] = so;
      so += sc[i] + 1;
      rc[i] = count_of(i, rank, k) + k % 2;
      rd[i] = ro;
      ro += rc[i] + 1;
    }
    const Layout& l = typed ? strided : int_layout();  // both sides; counts in its elements
    const int per = l.ints();
    Buffer sb(l, so + 1), r(l, ro + 1);
    for (int d = 0; d < P; ++d)
      for (int j = 0; j < sc[d] * per; ++j) *sb.at(1, sd[d], j) = value(rank, d, j, k);
    ASSERT_EQ(A2A_Alltoallv(sb.data(), sc.data(), sd.data(), l.type, r.data(), rc.data(), rd.data(), l.type, comm,
                            spec),
              MPI_SUCCESS)
        << what;
    long long wrong = 0;
    for (int src = 0; src < P; ++src)
      for (int j = 0; j < rc[src] * per; ++j) wrong += *r.at(1, rd[src], j) != value(src, rank, j, k);
    EXPECT_EQ(wrong, 0) << what;
    const std::string name = ran();
    if (std::strcmp(spec, "auto") != 0) {
      EXPECT_EQ(name.substr(0, name.find(':')), std::string(spec).substr(0, std::string(spec).find(':'))) << what;
    }
  }
  MPI_Comm_free(&dup);
}

// A repeated native call runs the library straight from the thread's copy
// of its signature (HotCall, front/call.hpp): every change after three
// identical calls must still be seen, in the counts' arrays, the spec's
// string, the buffers and the data, and the stats must name native.
// A repeated alltoall of a2a's own algorithm runs from its hot copy
// (run_hot_own: the block view kept): every call's data, and stats that
// start over each call (counts not summed over calls), whatever the buffers,
// the spec or a type with gaps (no kept view) did in between.
TEST(Prepared, HotOwnCallsSeeEveryChange) {
  int rank;
  const int P = world(rank);
  const int n = 3;
  MPI_Datatype gapped;  // every other int
  MPI_Type_vector(n, 1, 2, MPI_INT, &gapped);
  MPI_Type_commit(&gapped);
  std::vector<int> s1(2 * n * P), s2(2 * n * P), r1(2 * n * P), r2(2 * n * P);
  const char* specs[] = {"spread-out", "shm", "tra:radix=2", "native", "shm"};
  int call = 0;
  for (int round = 0; round < 10; ++round) {
    const char* spec = specs[round % 5];
    const bool with_gaps = round == 7;
    // int j of block d: the vector's extent is 2n - 1 ints
    const auto at = [&](int d, int j) { return with_gaps ? d * (2 * n - 1) + 2 * j : n * d + j; };
    std::vector<int>& s = round % 3 == 2 ? s2 : s1;
    std::vector<int>& r = round % 4 == 1 ? r2 : r1;
    long long rounds = -2, bytes = -2;
    for (int again = 0; again < 4; ++again, ++call) {
      for (int d = 0; d < P; ++d)
        for (int j = 0; j < n; ++j) s[at(d, j)] = value(rank, d, j, call);
      std::fill(r.begin(), r.end(), -1);
      const int rc = with_gaps ? A2A_Alltoall(s.data(), 1, gapped, r.data(), 1, gapped, MPI_COMM_WORLD, spec)
                               : A2A_Alltoall(s.data(), n, MPI_INT, r.data(), n, MPI_INT, MPI_COMM_WORLD, spec);
      ASSERT_EQ(rc, MPI_SUCCESS);
      long long wrong = 0;
      for (int src = 0; src < P; ++src)
        for (int j = 0; j < n; ++j) wrong += r[at(src, j)] != value(src, rank, j, call);
      EXPECT_EQ(wrong, 0) << spec << " round " << round << " call " << again;
      A2A_Stats st;
      A2A_Last_stats(&st);
      if (again == 0) {
        rounds = st.rounds;
        bytes = st.bytes_sent;
      }
      EXPECT_EQ(st.rounds, rounds) << spec << " round " << round << " call " << again;
      EXPECT_EQ(st.bytes_sent, bytes) << spec << " round " << round << " call " << again;
    }
  }
  MPI_Type_free(&gapped);
}

TEST(Prepared, HotNativeCallsSeeEveryChange) {
  int rank;
  const int P = world(rank);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  std::vector<int> s1(6 * P), s2(6 * P), r(6 * P);
  char spec[32];
  const char* specs[] = {"native", "spread-out", "native"};
  int call = 0;
  for (int round = 0; round < 6; ++round) {
    std::strcpy(spec, specs[round % 3]);
    reversed_with_gaps(sc, sd, rc, rd, rank, round / 2);  // some counts zero, changing every other round
    for (int again = 0; again < 4; ++again, ++call) {
      std::vector<int>& s = round % 4 == 3 ? s2 : s1;
      put_blocks(s, sc, sd, rank, call);
      std::fill(r.begin(), r.end(), -1);
      ASSERT_EQ(A2A_Alltoallv(s.data(), sc.data(), sd.data(), MPI_INT, r.data(), rc.data(), rd.data(), MPI_INT,
                              MPI_COMM_WORLD, spec),
                MPI_SUCCESS);
      EXPECT_EQ(wrong_blocks(r, rc, rd, rank, call), 0) << spec << " round " << round << " call " << again;
      EXPECT_EQ(ran(), specs[round % 3]) << "round " << round << " call " << again;
    }
  }
}

// A hot native call stays hot through calls of other signatures (a
// transpose and its inverse take turns): each call in turn sees its new
// data and counts and names its own algorithm (its stats asked or not
// after the hot one), and a communicator freed meanwhile is not run on
// again, whichever handle comes back.
TEST(Prepared, HotCallsKeptThroughOtherCalls) {
  int rank;
  const int P = world(rank);
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  std::vector<int> s1(6 * P), s2(6 * P), r1(6 * P), r2(6 * P);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int call = 0;
  for (int round = 0; round < 8; ++round) {
    reversed_with_gaps(sc, sd, rc, rd, rank, round / 2);  // some counts zero, changing every other round
    if (round == 5) {  // the hot call's communicator freed; a new one (maybe the same handle) in its place
      MPI_Comm_free(&dup);
      MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    }
    for (int again = 0; again < 6; ++again, ++call) {
      const bool native = again % 2 == 0;
      std::vector<int>& s = native ? s1 : s2;
      std::vector<int>& r = native ? r1 : r2;
      put_blocks(s, sc, sd, rank, call);
      std::fill(r.begin(), r.end(), -1);
      ASSERT_EQ(A2A_Alltoallv(s.data(), sc.data(), sd.data(), MPI_INT, r.data(), rc.data(), rd.data(), MPI_INT,
                              native ? dup : MPI_COMM_WORLD, native ? "native" : "spread-out"),
                MPI_SUCCESS);
      EXPECT_EQ(wrong_blocks(r, rc, rd, rank, call), 0) << "round " << round << " call " << again;
      if (native && round % 2 == 0) continue;  // stats not asked: the next call's must be its own
      EXPECT_EQ(ran(), native ? "native" : "spread-out") << "round " << round << " call " << again;
      A2A_Stats st;
      A2A_Last_stats(&st);
      EXPECT_EQ(st.bytes_sent, [&] {
        long long b = 0;
        for (int d = 0; d < P; ++d) b += d != rank ? sc[d] * static_cast<long long>(sizeof(int)) : 0;
        return b;
      }()) << "round " << round << " call " << again;
    }
  }
  MPI_Comm_free(&dup);
}

// The hot call's spec is compared in words where the same string comes
// again (hot_same_spec): an edit in place of one character, at the end,
// within the last word or the terminator, must be seen, whether it makes
// another valid spec or an unknown one (an error, not the hot call).
TEST(Prepared, HotSpecEditedInPlace) {
  int rank;
  const int P = world(rank);
  std::vector<int> s(2 * P), r(2 * P), cnt(P, 2), dsp(P);
  for (int i = 0; i < P; ++i) dsp[i] = 2 * i;
  char spec[32];
  struct Edit {
    const char *hot, *then;
    bool valid;
  };
  const Edit edits[] = {{"native", "nativ", false},       {"native", "natives", false},
                        {"shm", "sh", false},             {"shm", "shm:", false},
                        {"pairwise", "pairwisf", false},  {"spread-out", "spread-ou", false},
                        {"spread-out", "pairwise", true}, {"scattered:block=4", "scattered:block=x", false},
                        {"scattered:block=4", "scattered:block=5", true}, {"native", "shm", true}};
  int call = 0;
  for (const bool v : {false, true})
    for (const Edit& e : edits) {
      for (const char* now : {e.hot, e.hot, e.hot, e.then, e.hot}) {
        std::strcpy(spec, now);
        for (int d = 0; d < P; ++d)
          for (int j = 0; j < 2; ++j) s[2 * d + j] = value(rank, d, j, call);
        std::fill(r.begin(), r.end(), -1);
        const int rc = v ? A2A_Alltoallv(s.data(), cnt.data(), dsp.data(), MPI_INT, r.data(), cnt.data(), dsp.data(),
                                         MPI_INT, MPI_COMM_WORLD, spec)
                         : A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, spec);
        const bool should_run = now == e.hot || e.valid;
        EXPECT_EQ(rc == MPI_SUCCESS, should_run) << e.hot << " -> " << now << (v ? " (alltoallv)" : "");
        if (!should_run) continue;
        // The stats' name: the spec itself where it has knobs, else begun by it.
        const std::string name = ran(), want = now;
        EXPECT_EQ(want.find(':') == std::string::npos ? name.substr(0, want.size()) : name, want)
            << e.hot << " -> " << now;
        long long wrong = 0;
        for (int src = 0; src < P; ++src)
          for (int j = 0; j < 2; ++j) wrong += r[2 * src + j] != value(src, rank, j, call);
        EXPECT_EQ(wrong, 0) << e.hot << " -> " << now;
        ++call;
      }
    }
}

// A rank whose call is the hot one must still join the agreement once the
// error check is `agree`: here the other ranks' calls are wrong (their
// blocks differ from rank 0's), and every rank must return the error;
// rank 0 skipping the agreement would leave the others waiting.
TEST(Prepared, HotCallsJoinTheAgreement) {
  int rank;
  const int P = world(rank);
  if (P < 2) GTEST_SKIP() << "needs another rank";
  std::vector<int> s(3 * P, rank), r(3 * P, -1);
  for (int k = 0; k < 3; ++k)
    ASSERT_EQ(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
  a2a::set_error_check(a2a::ErrorCheck::agree);
  const int recv_count = rank == 0 ? 2 : 3;
  EXPECT_NE(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), recv_count, MPI_INT, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
  a2a::set_error_check(a2a::ErrorCheck::local);
  EXPECT_EQ(A2A_Alltoall(s.data(), 2, MPI_INT, r.data(), 2, MPI_INT, MPI_COMM_WORLD, "native"), MPI_SUCCESS);
}

// An alltoallv whose counts and buffers change every call (a graph shuffle
// after its count exchange) reaches the library from its hot copy
// (hot_new_blocks): each call's data and stats are its own; displacements
// out of address order and in-place calls go the full way; arguments the
// full path rejects are rejected the same (every rank alike, so none waits).
TEST(Prepared, HotNativeCallsWithNewCountsAndBuffers) {
  int rank;
  const int P = world(rank);
  std::vector<int> s[2], r[2], sc(P), sd(P), rc(P), rd(P), mine(P), theirs(P);
  for (const char* spec : {"native", "auto"}) {
    for (int call = 0; call < 60; ++call) {
      for (int d = 0; d < P; ++d) mine[d] = count_of(rank, d, call) * (1 + call % 3);
      ASSERT_EQ(A2A_Alltoall(mine.data(), 1, MPI_INT, theirs.data(), 1, MPI_INT, MPI_COMM_WORLD, "auto"), MPI_SUCCESS);
      const bool reversed = call % 11 == 5;  // blocks laid out from the last rank down
      int so = 0, ro = 0;
      for (int k = 0; k < P; ++k) {
        const int i = reversed ? P - 1 - k : k;
        sc[i] = mine[i];
        sd[i] = so + call % 2;  // a gap every other call
        so = sd[i] + sc[i];
        rc[i] = theirs[i];
        rd[i] = ro + 1;
        ro = rd[i] + rc[i];
      }
      const int b = call / 7 % 2;  // the buffers move every 7 calls, and grow
      s[b].resize(std::max<size_t>(s[b].size(), so + call));
      r[b].resize(std::max<size_t>(r[b].size(), ro + call));
      put_blocks(s[b], sc, sd, rank, call);
      long long bytes = 0;
      for (int d = 0; d < P; ++d) bytes += d != rank ? sc[d] * static_cast<long long>(sizeof(int)) : 0;
      std::fill(r[b].begin(), r[b].end(), -1);
      ASSERT_EQ(A2A_Alltoallv(s[b].data(), sc.data(), sd.data(), MPI_INT, r[b].data(), rc.data(), rd.data(), MPI_INT,
                              MPI_COMM_WORLD, spec),
                MPI_SUCCESS);
      EXPECT_EQ(wrong_blocks(r[b], rc, rd, rank, call), 0) << spec << " call " << call;
      A2A_Stats st;
      A2A_Last_stats(&st);
      if (std::string(st.algorithm) == "native") {
        EXPECT_EQ(st.bytes_sent, bytes) << spec << " call " << call;
      }
    }
    // In place, then back: the send side is the receive side's.
    std::vector<int> in(2 * P);
    std::vector<int> ones(P, 2), at(P);
    for (int i = 0; i < P; ++i) {
      at[i] = 2 * i;
      in[2 * i] = encode(rank, i, 0);
      in[2 * i + 1] = encode(rank, i, 1);
    }
    ASSERT_EQ(A2A_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, in.data(), ones.data(), at.data(),
                            MPI_INT, MPI_COMM_WORLD, spec),
              MPI_SUCCESS);
    for (int i = 0; i < P; ++i) EXPECT_EQ(in[2 * i + 1], encode(i, rank, 1)) << spec;
    // What the full path rejects, on every rank, each right after a valid
    // call (so that it is the hot call's): a negative count, receive blocks
    // that overlap, a block to itself of two sizes.
    s[0].assign(P, rank);
    r[0].assign(P + 1, -1);
    const auto run = [&] {
      return A2A_Alltoallv(s[0].data(), sc.data(), sd.data(), MPI_INT, r[0].data(), rc.data(), rd.data(), MPI_INT,
                           MPI_COMM_WORLD, spec);
    };
    const auto valid = [&](int n) {  // n elements a block: new counts each time
      for (int i = 0; i < P; ++i) {
        sc[i] = rc[i] = n;
        sd[i] = rd[i] = i;
      }
      return run();
    };
    ASSERT_EQ(valid(0), MPI_SUCCESS);
    ASSERT_EQ(valid(1), MPI_SUCCESS);
    sc[0] = -1;
    EXPECT_EQ(run(), MPI_ERR_COUNT) << spec;
    if (P > 1) {
      ASSERT_EQ(valid(0), MPI_SUCCESS);
      ASSERT_EQ(valid(1), MPI_SUCCESS);
      rd[P - 1] = rd[P - 2];
      EXPECT_EQ(run(), MPI_ERR_BUFFER) << spec;
    }
    ASSERT_EQ(valid(0), MPI_SUCCESS);
    ASSERT_EQ(valid(1), MPI_SUCCESS);
    EXPECT_EQ(A2A_Alltoallv(r[0].data(), sc.data(), sd.data(), MPI_INT, r[0].data(), rc.data(), rd.data(), MPI_INT,
                            MPI_COMM_WORLD, spec),
              MPI_ERR_BUFFER)
        << spec << ": sent from the receive buffer";
    ASSERT_EQ(valid(0), MPI_SUCCESS);
    ASSERT_EQ(valid(1), MPI_SUCCESS);
    rc[rank] = 0;
    EXPECT_EQ(run(), MPI_ERR_TRUNCATE) << spec;
    ASSERT_EQ(valid(1), MPI_SUCCESS);
    for (int i = 0; i < P; ++i) EXPECT_EQ(r[0][i], i) << spec;
  }
}
