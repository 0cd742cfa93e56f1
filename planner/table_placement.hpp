#pragma once
// Per-table placement: which member of a model-parallel group holds each table or slice.
//
// TableCosts prices a slice of a table by what it makes its holder do per step, from the
// sampled ids of a step (ids hashed uniformly over rows, so a row shard sees its row
// fraction of them):
//   group ids  A = M / c x ids per replica        (M group members, c context parallel)
//   HBM        A (w e + 8) lookup + 3 A w e update (w = dim x column fraction, e bytes)
//   network    A 8 input + 2 x output (pooled: M / c samples w e; sequence: A w e)
//   cost       HBM / hbm_bandwidth + network / per-GPU scale-out bandwidth   (seconds)
// CostBalancedPlacer: row-wise tables spread evenly; the other slices, largest cost
// first, go to the least-loaded member (host-sized block for table_row_wise and grid)
// whose weight bytes stay under half the GPU's memory; then local search moves and swaps
// slices off the most loaded member while that lowers the larger of the two loads.
// What TorchRec's own planner would propose is torchrec_style.hpp.

#include <vector>

#include "sim/cost/cost_model.hpp"
#include "sim/workload/plan.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

class TableCosts {
 public:
  /// Samples step 0 of `base` for ids per replica and table.
  TableCosts(const sim::workload::TrainingScenario& base, const sim::cost::CostModel& kernels);

  /// Seconds per step the holder of a slice (column fraction f, row fraction r) spends.
  double slice_seconds(int table, double f, double r, int group_size, int cp) const;
  /// Weight bytes of such a slice.
  double slice_bytes(int table, double f, double r) const;
  double memory_capacity() const { return capacity_; }
  double nvlink_bandwidth() const { return nvlink_bw_; }
  double nic_bandwidth() const { return nic_bw_; }
  double hbm_bandwidth() const { return hbm_bw_; }
  double ids_per_replica(int table) const { return ids_[static_cast<std::size_t>(table)]; }
  double samples_per_replica() const { return samples_; }
  const sim::workload::ModelConfig& model() const { return *model_; }

 private:
  const sim::workload::ModelConfig* model_;
  std::vector<double> ids_;
  double samples_ = 0;
  double hbm_bw_ = 1, nic_bw_ = 1, nvlink_bw_ = 1, capacity_ = 0;
};

/// Sets TableSharding::ranks for every slice of `plan` in groups of `group_size` members
/// with host-sized blocks of `host_size`; tables whose ranks are already complete keep them
/// (their load counts) and only the others are placed.
void place_tables(sim::workload::ParallelPlan& plan, const TableCosts& costs, int group_size,
                  int host_size, int cp);

/// Up to `count` neighbours of `plan` (every slice placed) that move or swap one slice off
/// the member with the largest measured time, `member_seconds` (seconds per step of each
/// group member, e.g. simulated compute), best predicted first: the larger of the two
/// members' loads afterwards, measured load -/+ the slices' closed-form seconds.
std::vector<sim::workload::ParallelPlan> placement_moves(const sim::workload::ParallelPlan& plan,
                                                         const TableCosts& costs,
                                                         const std::vector<double>& member_seconds,
                                                         int host_size, int cp, int count);

}  // namespace strait::planner
