#pragma once
// RankAccount: where one rank's time went, and the rules that book it, shared by the
// replay (op_replay.hpp) and the executor's measured runs (executor/measured_run.hpp).
//
// Accounting, per rank, of the "compute" stream's time:
//   - busy with kernels = compute;
//   - idle while its next op waits on a collective (the dependency that finished last) =
//     straggler wait until that collective started (every member had issued it), then
//     exposed communication of the collective's class; if this rank itself issued the
//     collective late, behind another of its collectives still running (a DC all-gather
//     behind its reduce-scatter, a DDP bucket behind the previous one), that one's time is
//     booked the same way (account_wait). So in 2D sparse plans, time an
//     embedding update waits on a replica sync across sparse groups is exposed
//     `replica_sync`, and only waiting for replica-group peers to issue it is straggler wait;
//   - idle for any other reason (pipeline dependencies, step boundaries) = bubble;
//   - idle after the rank's last compute-stream op until the run's last one ends anywhere
//     (account_tail): exposed communication while one of the rank's own collectives runs
//     (booked to the one that ends last when several overlap, e.g. the last step's replica
//     sync and an overlapped cross-datacenter dense sync), straggler wait when none does.
// Time is booked to what this rank waits on, not to why its peers are late: waiting at a
// later collective (e.g. a DDP bucket) for a peer whose update is still held up by its own
// replica sync is straggler wait.

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sim::run {

struct RankAccount {
  Time compute;
  Time straggler_wait;
  Time bubble;
  std::array<Time, workload::kCommClassCount> exposed_comm{};
  Time end;          // when the rank's last op finished
  double flops = 0;  // sum of kernel flops
  Time exposed_comm_total() const;
};

/// One of a rank's collectives as accounting sees it: from when it started (every member
/// had issued it) to when it ended on this rank.
struct CollectiveSpan {
  Time start;
  Time end;
  workload::CommClass comm_class = workload::CommClass::kDenseSync;
};

/// Books a rank's idle time after its last compute-stream op (`from`) until `makespan`:
/// each instant during one of `spans` is exposed communication of the span that ends last
/// among those running then; the rest is straggler wait.
void account_tail(RankAccount& a, Time from, Time makespan, std::vector<CollectiveSpan> spans);

/// A rank's op times as account_wait reads them, indexed by op: when this rank issued it,
/// when it started (a collective: when every member had issued it), when it ended; and the
/// rank's ops per stream in increasing index (see ops_by_stream).
struct OpTimes {
  const std::vector<workload::Op>& ops;
  const std::vector<Time>& issued;
  const std::vector<Time>& started;
  const std::vector<Time>& ended;
  const std::vector<std::vector<std::int32_t>>& stream_ops;
};

/// The indices of `ops` on each stream, in increasing order.
std::vector<std::vector<std::int32_t>> ops_by_stream(const std::vector<workload::Op>& ops);

/// Books a rank's compute-stream idle time [idle_since, now), which ended when op
/// `blocker` (the dependency that finished last; -1 for none) did. Not a collective, or one
/// over by idle_since: bubble. A collective: exposed communication of its class from when
/// it started, straggler wait while this rank had issued it and peers had not; before this
/// rank issued it, the chain is followed to what held up the issue (the later-ending of its
/// dependencies and its stream predecessor) while that is a collective of this rank still
/// running, booked the same way; what is left before the chain's first issue is straggler
/// wait. So a DC all-gather issued behind this rank's own reduce-scatter books both as
/// exposed communication (it once booked the reduce-scatter as straggler wait).
void account_wait(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                  const OpTimes& times);

/// `a` over `steps` steps as per-step averages (times and flops divided; `end` kept).
RankAccount per_step(const RankAccount& a, std::int64_t steps);

}  // namespace strait::sim::run
