// The one agreement of a2a: a single allreduce of six integers folds every
// rank's error class, the block-size range (alltoall) or largest block
// (alltoallv), the bytes all ranks send, and where the buffers live.  Plans
// run it once at init; plain calls only in the agree mode; auto's alltoallv
// decisions use it for their global sizes.
#include <algorithm>

#include "front/call.hpp"

namespace a2a::detail {

namespace {

constexpr int kValues = 6;  // err, -lo, hi, device, host (max); sent (sum)

void fold(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i + kValues - 1 < *len; i += kValues) {
    for (int k = 0; k < kValues - 1; ++k) b[i + k] = std::max(a[i + k], b[i + k]);
    b[i + kValues - 1] += a[i + kValues - 1];
  }
}

MPI_Op fold_op() {
  static const MPI_Op op = [] {
    MPI_Op o = MPI_OP_NULL;
    MPI_Op_create(&fold, 1, &o);
    return o;
  }();
  return op;
}

}  // namespace

int agree(const Prepared& p, int err, Global& g, std::string& msg) {
  const long long lo = p.args.v() ? 0 : p.bs, hi = p.args.v() ? p.largest : p.bs;
  long long v[kValues] = {err, -lo, hi, p.where.device, p.where.host, p.args.v() ? p.sent : 0};
  if (const int rc = MPI_Allreduce(MPI_IN_PLACE, v, kValues, MPI_LONG_LONG, fold_op(), p.ctx->user)) return rc;
  g.err = static_cast<int>(v[0]);
  g.lo = -v[1];
  g.hi = v[2];
  g.where.device = v[3];
  g.where.host = v[4];
  g.sent = v[5];
  if (g.err == MPI_SUCCESS && !p.args.v() && g.lo != g.hi) {
    msg = "a2a: ranks disagree on the block size";
    g.err = MPI_ERR_TYPE;
  } else if (g.err == MPI_SUCCESS && g.where.mixed()) {
    msg = "a2a: some ranks pass device buffers and others host buffers";
    g.err = MPI_ERR_BUFFER;
  }
  return MPI_SUCCESS;
}

int failed(int err, std::string& msg) {
  if (msg.empty()) msg = "a2a: another rank found an argument error (error class " + std::to_string(err) + ")";
  return err;
}

}  // namespace a2a::detail
