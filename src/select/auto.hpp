// What "auto" runs on a communicator: the tuning file's entry for the call
// when one matches (A2A_TUNING_FILE, see tuning.hpp), otherwise the cheapest
// candidate of the cost model (cost_model.hpp) with the machine's alpha and
// beta.  Decisions are memoised per communicator; communicators of world's
// ranks in world's order share world's (CommContext::world_order).
//
// Every rank must decide alike, so everything a decision reads is the same on
// every rank: P, the layout, the call's global block sizes (alltoall: the
// agreed block size; alltoallv: the global mean and maximum from one
// allreduce), the tuning file (its fingerprint is compared across the
// communicator once, where the launcher does not say that the whole job is
// on one machine; a mismatch disables it there) and the model (rank 0's
// measurement, broadcast).  The measurement, unless A2A_COST_MODEL gives
// every value or the machine is oversubscribed, is a ping-pong of well under
// a millisecond between rank 0 and a node-mate and a rank of another node,
// collective on the communicator that decides first; made on one of all the
// job's ranks, it serves every later communicator of world ranks.  auto's
// first call on a communicator decides nothing (front/execute.cpp).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "select/cost_model.hpp"
#include "select/registry.hpp"
#include "select/tuning.hpp"

namespace a2a::detail {

struct CommContext;

struct AutoDecision {
  Resolved resolved;
  const char* source = "";  // "tuning" or "model"
};

struct AutoState {
  bool prepared = false;               // tuning agreed and model measured
  int v_fixed_known = 0;               // alltoallv: 1 once v_fixed is decided
  std::unique_ptr<AutoDecision> v_fixed;  // alltoallv without sizes (see below), or null
  bool tuning_checked = false;
  const TuningTable* table = nullptr;  // agreed on this communicator
  std::vector<int> nodes;              // ranks per node
  bool model_ready = false;
  MachineModel model;
  ModelLayout layout;
  std::map<std::tuple<int, long long, long long>, AutoDecision> memo;
};

// Alltoallv needs the global mean and maximum block (an allreduce) only when
// auto's choice could depend on them.  When every algorithm the
// communicator's tuning entries and the cost model (over block sizes 1 B ..
// 1 GiB and skews 1, 4, 64, each non-native pick paying that allreduce) can
// pick is one and the same (native, typically), or one of linear,
// spread-out and scattered (which send the same messages: one per non-empty
// pair, same tag, same pieces, all in flight or in MPICH's batches, so ranks
// could even mix them), auto runs it (the most frequent) for every call on
// this communicator: the same on every rank, with no allreduce.  Sets `out`
// to that decision, or to null when the sizes are needed.  Collective on the
// communicator's first auto call.
int auto_without_sizes(CommContext& ctx, const AutoDecision*& out, std::string& error);
bool same_messages_family(const std::string& spec);

int resolve_auto(CommContext& ctx, Collective coll, long long mean_bytes, long long max_bytes, const AutoDecision*& out,
                 std::string& error);

// The model's parameters for ctx (measuring them if needed; collective).
int machine_model(CommContext& ctx, MachineModel& out, std::string& error);

}  // namespace a2a::detail
