#pragma once
// RankMemoryModel: the memory report's terms (memory_model.hpp) for one rank at a time,
// from what the op-graph builder derives for it anyway: its group's embedding traffic per
// step and its layers' work per batch shape. A training run thus works each out once
// (build_op_graph fills the report as it builds, OpGraphOptions::memory), and
// memory_per_rank runs the same code without building ops.

#include <memory>
#include <vector>

#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/scenario.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload::detail {

/// The embedding traffic of model-parallel group `block` in each of the first `steps` steps
/// of `batches` ([step][replica]): member i trains on its replica's batch over the CP degree.
std::vector<std::unique_ptr<SparseTraffic>> group_traffic(
    const TrainingScenario& scenario, const ShardMap& map,
    const std::vector<std::vector<ReplicaBatch>>& batches, int steps, int block);

class RankMemoryModel {
 public:
  /// Terms over the first `steps` steps' batches.
  RankMemoryModel(const TrainingScenario& scenario, const DenseStack& stack, const ShardMap& map,
                  int steps);

  /// Each of `members`' largest output-dist buffers (send + receive) over the steps, from
  /// its group's `traffic` per step, by member index (0 for the others).
  std::vector<double> output_buffers(const std::vector<const SparseTraffic*>& traffic,
                                     const std::vector<int>& members) const;

  /// The terms of `rank`, member `member` of its group, whose output-dist buffers take
  /// `output_buffer` bytes; `layer_work` [step] keeps the layers' work of the last shape
  /// (shared with the op-graph builder, which asks for the same shapes just before).
  RankMemory rank(int rank, int member, double output_buffer,
                  const std::vector<std::vector<ReplicaBatch>>& batches,
                  std::vector<LayerWorkMemo>& layer_work) const;

 private:
  const TrainingScenario& sc_;
  const DenseStack& stack_;
  const ShardMap& map_;
  int steps_;
  double params_ = 0, largest_layer_ = 0;
  double dp_elems_ = 0, dp_rows_ = 0;  // data-parallel tables and hybrid tables' hot rows
};

}  // namespace strait::sim::workload::detail
