#pragma once
// ReplayRanks: every rank's RankState in a replay, and the arrays their pointers slice:
// each op's end (kNotEnded until then) and each collective's start, at the ranks'
// ReplayRank offsets. Sized once, so the pointers stay valid; set up from the graph, the
// cluster and the options, and closed at the run's end into the ranks' accounts.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/huge_pages.hpp"
#include "sim/cost/gpu_model.hpp"
#include "sim/run/detail/rank_state.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/run/rank_account.hpp"
#include "sim/run/replay_graph.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::run::detail {

class ReplayTrace;

class ReplayRanks {
 public:
  /// The ranks of `graph`: their shapes, slices, streams, groups, costs for the graph's
  /// mode, GPU types and trace flags (`options`); in flow mode each adds its GPU to `gpus`.
  /// Traced ranks are named in `trace` (set when the options ask for a timeline) and must
  /// keep their ops.
  ReplayRanks(const ReplayGraph& graph, const topology::Cluster& cluster,
              const ReplayOptions& options, cost::GpuModel& gpus, ReplayTrace* trace);
  // The ranks point into this object's arrays and empty shape: it stays where it is built.
  ReplayRanks(const ReplayRanks&) = delete;
  ReplayRanks& operator=(const ReplayRanks&) = delete;

  RankState& operator[](std::size_t r) { return ranks_[r]; }
  const RankState& operator[](std::size_t r) const { return ranks_[r]; }
  std::size_t size() const { return ranks_.size(); }
  const RankState* data() const { return ranks_.data(); }

  /// At the run's end (`makespan`): every rank's account into `accounts` (by rank), its
  /// tail booked (account_rank_tail). A rank with ops that never ran is a deadlock error.
  void close_accounts(Time makespan, std::vector<RankAccount>& accounts);
  /// By rank: whether its GPU type progresses collectives on the host (host_progress.hpp).
  std::vector<std::uint8_t> host_progressed(const cost::CostModel& cost) const;

 private:
  void init_rank(std::size_t r, bool traced, const ReplayGraph& graph,
                 const topology::Cluster& cluster, const ReplayOptions& options,
                 cost::GpuModel& gpus, ReplayTrace* trace);

  OpShape empty_shape_;  // of ranks without ops
  HugeVector<RankState> ranks_;
  HugeVector<Time> op_ends_;
  HugeVector<Time> collective_starts_;
};

}  // namespace strait::sim::run::detail
