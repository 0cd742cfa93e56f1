#pragma once
// ClosedFormCost: a per-rank step-time estimate without event simulation.
//
// From the op graph of one step (the same builder the simulator replays), per rank r:
//   F_r, B_r, O_r   forward (with the sparse lookup), backward (with the embedding update)
//                   and optimizer kernel time, each kernel at its roofline duration;
//   c_r[k]          the time of the rank's collectives of class k, each collective priced
//                   once, alone on the analytical network (network.hpp).
// Exposure (what the schedule cannot hide behind compute):
//   embedding in/out  pipelined (depth > 1): max(0, c_in + c_out - F_r), else c_in + c_out
//   gradient dist     c_grad (the update waits for it)
//   dense sync        max(c_dense / n_buckets, c_dense - B_r): buckets overlap backward,
//                     the last one cannot; overlapped cross-datacenter sync (stream
//                     xdc_comm): max(0, c_xdc - (F_r + B_r + O_r))
//   context parallel, MoE    c (inside layers, blocking)
//   replica sync      max(0, c_rs / staleness - (F_r + B_r))
// SM stealing: unless the schedule uses SM-free communication, every hidden collective
// second takes s x 1 s of compute, s = the GPU's comm_sm_fraction.
// Step time = max_r (F_r + B_r + O_r + stolen_r + exposed_r): a synchronous step waits for
// its slowest rank. Above 1,024 ranks only representative ranks are built
// (sim/workload/representative.hpp: about 1,024 ranks of evenly spread model-parallel
// blocks, plus the costliest replica's and slow ranks' blocks; inside a block of more than
// 1,024 members, about 1,024 of its members plus those whose shards or batches differ).
// An all-to-all of a group whose members were not all built is priced among the built
// members, each sending what it sends the whole group (keep_built_members); cross-datacenter
// bytes are scaled from the groups priced to all groups of each kind, and from the members
// built to all; a collective repeated on one group is priced once.
// Known limits: no contention between collectives, no cross-step overlap
// beyond the rules above; it ranks candidates, the simulation stages price them.

#include <memory>
#include <utility>

#include "planner/cost_model.hpp"

namespace strait::planner::detail {

class ClosedFormCost final : public CostModel {
 public:
  /// Above `representative_ranks` ranks only representative ones are built (tests set
  /// fewer to check that they stand for all).
  explicit ClosedFormCost(const sim::cost::CostModel& kernels,
                          std::shared_ptr<sim::workload::BatchCache> batches = nullptr,
                          int representative_ranks = 1024)
      : kernels_(kernels),
        batches_(std::move(batches)),
        representative_ranks_(representative_ranks) {}
  const char* name() const override { return "closed_form"; }
  Estimate estimate(const sim::workload::TrainingScenario& scenario) const override;

 private:
  const sim::cost::CostModel& kernels_;
  std::shared_ptr<sim::workload::BatchCache> batches_;  // null: sampled per estimate
  int representative_ranks_;
};

}  // namespace strait::planner::detail
