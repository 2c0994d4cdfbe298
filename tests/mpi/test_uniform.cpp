// Every uniform algorithm on real MPI: counts {0, 1, 3, 1000}, contiguous and
// strided datatype pairs, MPI_IN_PLACE, reversed and split communicators,
// exact K and D, untouched gaps and send buffers, user traffic isolation.
#include <algorithm>

#include "harness.hpp"

using namespace a2a::test;

namespace {

int world_size() {
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  return P;
}

std::vector<std::string> specs_for(int P) {
  return registry_specs(a2a::detail::Collective::alltoall, P,
                        {"auto", "scattered:block=2", "tra2:radix-intra=2,radix-inter=3"});
}

struct TypePair {
  const Layout* send;
  int send_factor;  // send elements per count unit
  const Layout* recv;
  int recv_factor;
};

std::vector<TypePair> type_pairs() {
  return {{&int_layout(), 1, &int_layout(), 1},
          {&strided_layout(), 1, &pair_layout(), 1},  // same signature, different types
          {&int_layout(), 2, &strided_layout(), 1},
          {&padded_layout(), 1, &padded_layout(), 1}};
}


// One call, fully checked; returns the number of problems on this rank.
long long run_case(MPI_Comm comm, const std::string& spec, const TypePair& tp, int count, bool in_place) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  const std::string what = spec + " P=" + std::to_string(P) + " count=" + std::to_string(count) + " " +
                           tp.send->name + "->" + tp.recv->name + (in_place ? " in-place" : "");
  const long long s_elems = static_cast<long long>(count) * tp.send_factor;
  const long long r_elems = static_cast<long long>(count) * tp.recv_factor;
  Buffer send(*tp.send, s_elems * P), recv(*tp.recv, r_elems * P);
  fill_send(send, s_elems, rank, P);
  if (in_place) fill_send(recv, r_elems, rank, P);
  const auto send_before = send.bytes;
  const int rc = A2A_Alltoall(in_place ? MPI_IN_PLACE : send.data(), static_cast<int>(s_elems), tp.send->type,
                              recv.data(), static_cast<int>(r_elems), tp.recv->type, comm, spec.c_str());
  long long problems = 0;
  EXPECT_EQ(rc, MPI_SUCCESS) << what << ": " << a2a::last_error_message();
  problems += rc != MPI_SUCCESS;
  if (count == 0) {
    EXPECT_EQ(recv.bytes, std::vector<unsigned char>(recv.bytes.size(), Buffer::kUntouched)) << what;
  } else {
    problems += check_recv(recv, r_elems, rank, P, what);
  }
  EXPECT_TRUE(send.bytes == send_before) << what << ": send buffer modified";
  problems += send.bytes != send_before;

  A2A_Stats st;
  A2A_Last_stats(&st);
  const Expected want = expected_stats(spec, P, count > 0 ? nodes_of(comm) : 1);  // no data: nothing runs
  if (spec != "auto" && !layout_dependent(spec)) {
    EXPECT_EQ(std::string(st.algorithm), want.canonical) << what;
  }
  if (count > 0 && spec != "native" && spec != "auto" && !layout_dependent(spec)) {
    const long long bs = r_elems * tp.recv->ints() * 4;
    EXPECT_EQ(st.rounds, want.rounds) << what;
    EXPECT_EQ(st.blocks_sent, want.blocks) << what;
    EXPECT_EQ(st.bytes_sent, want.blocks * bs) << what;
    if (want.waits >= 0) {
      EXPECT_EQ(st.waits, want.waits) << what;
    }
    problems += st.rounds != want.rounds || st.blocks_sent != want.blocks;
  }
  if (spec == "native" && count > 0) {
    EXPECT_EQ(st.waits, -1) << what;  // the library's own: hidden
  }
  return problems;
}

}  // namespace

TEST(Uniform, EveryAlgorithmCountAndTypePairOnWorld) {
  const int P = world_size();
  for (const auto& spec : specs_for(P))
    for (int count : {0, 1, 3, 1000})
      for (const auto& tp : type_pairs())
        run_case(MPI_COMM_WORLD, spec, tp, count, false);
}

// The k-port form (ports=B) at every radix and every B, with the default
// (all of a digit's exchanges): data, gaps, K, D and waits exact, in place
// too.  Also run alone at P = 6, 10, 11 and 13 (tests/CMakeLists.txt).
TEST(Uniform, EveryRadixAndPorts) {
  const int P = world_size();
  for (int r = 2; r <= P + 1; ++r)
    for (int b = 1; b <= std::max(1, std::min(r, P) - 1) + 1; ++b) {
      const bool all = b > std::max(1, std::min(r, P) - 1);
      const std::string spec = "tra:radix=" + std::to_string(r) + (all ? "" : ",ports=" + std::to_string(b));
      for (int count : {1, 1000}) run_case(MPI_COMM_WORLD, spec, type_pairs()[0], count, false);
      run_case(MPI_COMM_WORLD, spec, type_pairs()[2], 3, false);
      const TypePair strided{type_pairs()[2].recv, 1, type_pairs()[2].recv, 1};
      run_case(MPI_COMM_WORLD, spec, strided, 3, true);
    }
}

TEST(Uniform, InPlace) {
  const int P = world_size();
  for (const auto& spec : specs_for(P))
    for (int count : {1, 3, 1000})
      for (const auto& tp : {type_pairs()[0], type_pairs()[2]}) {
        // In place, the receive type describes the send data too.
        run_case(MPI_COMM_WORLD, spec, {tp.recv, tp.recv_factor, tp.recv, tp.recv_factor}, count, true);
      }
}

TEST(Uniform, ReversedAndSplitCommunicators) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int P = world_size();
  MPI_Comm reversed, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank < (P + 1) / 2, rank, &half);
  for (MPI_Comm comm : {reversed, half}) {
    int sub;
    MPI_Comm_size(comm, &sub);
    for (const auto& spec : specs_for(sub))
      for (const auto& tp : {type_pairs()[0], type_pairs()[2]})
        run_case(comm, spec, tp, 3, false);
  }
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&half);
}

// A user receive posted on the same communicator must never match library
// traffic: after every algorithm it still waits, and then gets the user's own
// message.
TEST(Uniform, LibraryTrafficNeverMatchesUserReceives) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int P = world_size();
  for (const auto& spec : specs_for(P)) {
    int token = -1;
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    run_case(MPI_COMM_WORLD, spec, type_pairs()[0], 3, false);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank is done with the library, no user message sent yet
    int done = 0;
    MPI_Status status;
    MPI_Test(&req, &done, &status);
    EXPECT_FALSE(done) << spec << ": user receive matched library traffic";
    MPI_Barrier(MPI_COMM_WORLD);
    const int mine = 7000 + rank;
    MPI_Send(&mine, 1, MPI_INT, (rank + 1) % P, 42, MPI_COMM_WORLD);
    if (!done) MPI_Wait(&req, &status);
    EXPECT_EQ(token, 7000 + (rank + P - 1) % P) << spec;
    EXPECT_EQ(status.MPI_TAG, 42) << spec;
  }
}

// Byte offsets above 2^31: an element type of 4 bytes with a 1 MiB extent
// makes P * count * extent exceed 2 GiB while touching only a page per int.
TEST(Uniform, OffsetsBeyondTwoGiB) {
  const int P = world_size();
  if (P > 4) GTEST_SKIP() << "virtual address budget: run at P <= 4";
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const MPI_Aint extent = 1 << 20;
  const long long count = (1LL << 31) / (P * extent) + 8;
  MPI_Datatype spread;
  MPI_Type_create_resized(MPI_INT, 0, extent, &spread);
  MPI_Type_commit(&spread);
  const size_t span = static_cast<size_t>(P * count * extent);
  ASSERT_GT(span, size_t{1} << 31);
  char* sbuf = map_sparse(span);
  char* rbuf = map_sparse(span);
  ASSERT_NE(sbuf, nullptr);
  ASSERT_NE(rbuf, nullptr);
  for (int d = 0; d < P; ++d)
    for (long long j = 0; j < count; ++j) *reinterpret_cast<int*>(sbuf + (d * count + j) * extent) = encode(rank, d, j);
  for (const char* spec : {"spread-out", "bruck-basic", "bruck-zero-copy", "tra:radix=auto", "native"}) {
    ASSERT_EQ(A2A_Alltoall(sbuf, static_cast<int>(count), spread, rbuf, static_cast<int>(count), spread,
                           MPI_COMM_WORLD, spec),
              MPI_SUCCESS) << spec;
    long long wrong = 0;
    for (int s = 0; s < P; ++s)
      for (long long j = 0; j < count; ++j) wrong += *reinterpret_cast<int*>(rbuf + (s * count + j) * extent) != encode(s, rank, j);
    EXPECT_EQ(wrong, 0) << spec;
  }
  munmap(sbuf, span);
  munmap(rbuf, span);
  MPI_Type_free(&spread);
}

TEST(Uniform, ScratchIsReusedAndReported) {
  const int P = world_size();
  std::vector<int> s(P * 64, 1), r(P * 64);
  A2A_Alltoall(s.data(), 64, MPI_INT, r.data(), 64, MPI_INT, MPI_COMM_WORLD, "bruck-basic");
  A2A_Stats st;
  A2A_Last_stats(&st);
  // Working array of P blocks plus two buffers of the widest step.
  const long long bs = 64 * 4;
  long long widest = 0;
  for (const auto& step : a2a::detail::schedule::tra_steps(P, 2))
    widest = std::max<long long>(widest, static_cast<long long>(step.slots.size()));
  EXPECT_EQ(st.temp_bytes, P * bs + 2 * widest * bs);
  A2A_Alltoall(s.data(), 64, MPI_INT, r.data(), 64, MPI_INT, MPI_COMM_WORLD, "spread-out");
  A2A_Last_stats(&st);
  EXPECT_EQ(st.temp_bytes, 0);
}

TEST(Alltoallv, NativeWithGapsAndOutOfOrderDisplacements) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int P = world_size();
  // Rank s sends (s + d) % 3 ints to d; blocks stored in reverse order with gaps.
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  int off = 0;
  for (int d = P - 1; d >= 0; --d) {
    sc[d] = (rank + d) % 3;
    sd[d] = off;
    off += sc[d] + 2;
  }
  std::vector<int> sbuf(off + 1, -1);
  for (int d = 0; d < P; ++d)
    for (int j = 0; j < sc[d]; ++j) sbuf[sd[d] + j] = encode(rank, d, j);
  off = 0;
  for (int s = P - 1; s >= 0; --s) {
    rc[s] = (s + rank) % 3;
    rd[s] = off;
    off += rc[s] + 1;
  }
  std::vector<int> rbuf(off + 1, -7);
  ASSERT_EQ(A2A_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_INT, rbuf.data(), rc.data(), rd.data(), MPI_INT,
                          MPI_COMM_WORLD, "native"),
            MPI_SUCCESS);
  std::vector<char> is_data(rbuf.size(), 0);
  for (int s = 0; s < P; ++s)
    for (int j = 0; j < rc[s]; ++j) {
      EXPECT_EQ(rbuf[rd[s] + j], encode(s, rank, j));
      is_data[rd[s] + j] = 1;
    }
  for (size_t k = 0; k < rbuf.size(); ++k)
    if (!is_data[k]) {
      EXPECT_EQ(rbuf[k], -7) << "gap " << k;
    }
}
