// The C API: argument checks agreed by every rank, datatype handling (packing
// non-contiguous types and MPI_IN_PLACE input to bytes), dispatch through the
// registry, and the last call's statistics.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "a2a/a2a.h"
#include "a2a/a2a.hpp"
#include "core/context.hpp"
#include "core/datatype.hpp"
#include "select/registry.hpp"

namespace a2a::detail {
namespace {

std::mutex last_lock;
Stats last_stats;
std::string last_error;

// See a2a::ErrorCheck; the environment is read once, at the first call.
std::atomic<bool>& agree_flag() {
  static std::atomic<bool> agree{[] {
    const char* v = std::getenv("A2A_ERROR_CHECK");
    return !(v && std::strcmp(v, "local") == 0);
  }()};
  return agree;
}
bool agree_on_errors() { return agree_flag().load(std::memory_order_relaxed); }

const char* spec_text(const char* algorithm, const char* env) {
  if (algorithm) return algorithm;
  const char* v = std::getenv(env);
  return v && *v ? v : "auto";
}

// Applications repeat the same call: remember the last resolution per
// collective and thread, so a repeat costs a string compare.
struct Choice {
  std::string text;
  int P = -1;
  long long bs = -2;
  int rc = MPI_SUCCESS;
  Resolved res;
  std::string error;
};

const Choice& choose(Collective coll, const char* text, int P, long long bs) {
  thread_local Choice last[2];
  Choice& c = last[coll == Collective::alltoall ? 0 : 1];
  if (c.P != P || c.bs != bs || c.text != text) {
    c.text = text;
    c.P = P;
    c.bs = bs;
    c.rc = resolve(coll, c.text, P, bs, c.res, c.error);
  }
  return c;
}

void name_algorithm(Stats& st, const std::string& canonical) {
  std::strncpy(st.algorithm, canonical.c_str(), sizeof st.algorithm - 1);
}

// Folds local error codes (MAX) and checks that every rank's value agrees.
int agree(CommContext& ctx, int err, long long value, bool& values_differ) {
  values_differ = false;
  if (!agree_on_errors()) return err;
  long long v[3] = {err, -value, value};
  const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, ctx.comm);
  if (rc != MPI_SUCCESS) return rc;
  values_differ = -v[1] != v[2];
  return static_cast<int>(v[0]);
}

// An error found on another rank leaves this rank's message empty.
int failed(int err, std::string& msg) {
  if (msg.empty()) msg = "a2a: another rank found an argument error (error class " + std::to_string(err) + ")";
  return err;
}

int start(MPI_Comm comm, CommContext*& ctx) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return MPI_ERR_OTHER;
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
  return get_context(comm, ctx);
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm, Stats& st, std::string& msg) {
  CommContext* ctx = nullptr;
  if (const int rc = start(comm, ctx)) return rc;
  const int P = ctx->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place) {
    sendcount = recvcount;
    sendtype = recvtype;
  }
  int err = MPI_SUCCESS;
  TypeInfo sti, rti;
  long long bs = -1;
  if (sendcount < 0 || recvcount < 0) {
    err = MPI_ERR_COUNT;
  } else if (sendtype == MPI_DATATYPE_NULL || recvtype == MPI_DATATYPE_NULL || describe(sendtype, sti) ||
             describe(recvtype, rti)) {
    err = MPI_ERR_TYPE;
  } else {
    bs = static_cast<long long>(recvcount) * rti.size;
    if (static_cast<long long>(sendcount) * sti.size != bs) {
      err = MPI_ERR_TYPE;
      msg = "a2a: send and receive type signatures differ in size";
    } else if (bs > 0 && (!recvbuf || !sendbuf)) {
      err = MPI_ERR_BUFFER;
    }
  }
  const Choice* choice = nullptr;
  if (err == MPI_SUCCESS) {
    choice = &choose(Collective::alltoall, spec_text(algorithm, "A2A_ALLTOALL"), P, bs);
    err = choice->rc;
    msg = choice->error;
  }
  bool differ = false;
  err = agree(*ctx, err, bs, differ);
  if (err == MPI_SUCCESS && differ) {
    msg = "a2a: ranks disagree on the block size";
    err = MPI_ERR_TYPE;
  }
  if (err != MPI_SUCCESS) return failed(err, msg);
  const Resolved& res = choice->res;
  name_algorithm(st, res.canonical);
  if (bs == 0) return MPI_SUCCESS;

  if (!res.info->uniform) {  // native
    st.rounds = st.messages = -1;  // the MPI library's schedule is not visible
    st.blocks_sent = P - 1;
    st.bytes_sent = (P - 1) * bs;
    return MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, ctx->comm);
  }

  const size_t nbytes = static_cast<size_t>(bs);
  const char* send = nullptr;
  MPI_Aint sstride = static_cast<MPI_Aint>(bs);
  const void* src_buf = in_place ? recvbuf : sendbuf;
  const MPI_Aint src_step = static_cast<MPI_Aint>(sendcount) * sti.extent;
  if (!in_place && sti.contiguous(sendcount)) {
    send = static_cast<const char*>(sendbuf) + sti.true_lb;
    sstride = src_step;
  } else {
    char* packed = ctx->scratch.get(Scratch::kPackedSend, P * nbytes, st);
    for (int i = 0; i < P; ++i)
      if (const int rc = pack(static_cast<const char*>(src_buf) + i * src_step, sendcount, sendtype, sti,
                              packed + i * nbytes, ctx->comm))
        return rc;
    send = packed;
  }
  const MPI_Aint dst_step = static_cast<MPI_Aint>(recvcount) * rti.extent;
  const bool recv_direct = rti.contiguous(recvcount);
  char* recv = recv_direct ? static_cast<char*>(recvbuf) + rti.true_lb
                           : ctx->scratch.get(Scratch::kPackedRecv, P * nbytes, st);
  const UniformCall call{send, sstride, recv, recv_direct ? dst_step : static_cast<MPI_Aint>(bs), nbytes, *ctx, st};
  if (const int rc = res.info->uniform(call, res.params)) return rc;
  if (!recv_direct)
    for (int i = 0; i < P; ++i)
      if (const int rc = unpack(recv + i * nbytes, recvcount, recvtype, rti, static_cast<char*>(recvbuf) + i * dst_step,
                                ctx->comm))
        return rc;
  return MPI_SUCCESS;
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              const char* algorithm, Stats& st, std::string& msg) {
  CommContext* ctx = nullptr;
  if (const int rc = start(comm, ctx)) return rc;
  const int P = ctx->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int err = MPI_SUCCESS;
  TypeInfo sti, rti;
  long long sent = 0;
  if (!recvcounts || !rdispls || (!in_place && (!sendcounts || !sdispls))) {
    err = MPI_ERR_ARG;
  } else if (recvtype == MPI_DATATYPE_NULL || describe(recvtype, rti) ||
             (!in_place && (sendtype == MPI_DATATYPE_NULL || describe(sendtype, sti)))) {
    err = MPI_ERR_TYPE;
  } else {
    for (int i = 0; i < P; ++i) {
      if (recvcounts[i] < 0 || (!in_place && sendcounts[i] < 0)) err = MPI_ERR_COUNT;
      else if (!in_place) sent += static_cast<long long>(sendcounts[i]) * sti.size;
    }
  }
  const Choice* choice = nullptr;
  if (err == MPI_SUCCESS) {
    choice = &choose(Collective::alltoallv, spec_text(algorithm, "A2A_ALLTOALLV"), P, -1);
    err = choice->rc;
    msg = choice->error;
  }
  bool differ = false;
  err = agree(*ctx, err, 0, differ);
  if (err != MPI_SUCCESS) return failed(err, msg);
  name_algorithm(st, choice->res.canonical);
  st.rounds = st.messages = -1;
  st.bytes_sent = sent;
  return MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, ctx->comm);
}

template <class F>
int record(F&& body) {
  Stats st;
  std::string msg;
  const int rc = body(st, msg);
  std::lock_guard<std::mutex> guard(last_lock);
  last_stats = st;
  last_error = rc == MPI_SUCCESS ? std::string() : msg;
  return rc;
}

}  // namespace
}  // namespace a2a::detail

using a2a::detail::Stats;

extern "C" int A2A_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, const char* algorithm) {
  return a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, algorithm, st, msg);
  });
}

extern "C" int A2A_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, const char* algorithm) {
  return a2a::detail::record([&](Stats& st, std::string& msg) {
    return a2a::detail::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  comm, algorithm, st, msg);
  });
}

extern "C" int A2A_Last_stats(A2A_Stats* stats) {
  if (!stats) return MPI_ERR_ARG;
  std::lock_guard<std::mutex> guard(a2a::detail::last_lock);
  const Stats& s = a2a::detail::last_stats;
  std::memset(stats, 0, sizeof *stats);
  std::memcpy(stats->algorithm, s.algorithm, sizeof stats->algorithm);
  stats->rounds = s.rounds;
  stats->messages = s.messages;
  stats->blocks_sent = s.blocks_sent;
  stats->bytes_sent = s.bytes_sent;
  stats->meta_bytes_sent = s.meta_bytes_sent;
  stats->temp_bytes = s.temp_bytes;
  return MPI_SUCCESS;
}

std::string a2a::last_error_message() {
  std::lock_guard<std::mutex> guard(a2a::detail::last_lock);
  return a2a::detail::last_error;
}

void a2a::set_error_check(ErrorCheck mode) { a2a::detail::agree_flag() = mode == ErrorCheck::agree; }

a2a::ErrorCheck a2a::error_check() {
  return a2a::detail::agree_on_errors() ? ErrorCheck::agree : ErrorCheck::local;
}
