#pragma once
// What a report says about found plans: per-table statistics in the spirit of TorchRec's
// planner stats, which parallel dimensions cross a datacenter boundary, and the whole
// outcome as JSON (the CLI prints the same as text).
//
// Per table, for one model-parallel group of M members (2D sparse parallelism replicates
// it): the members holding it, the cost-model seconds per step its shards cost their
// holders (TableCosts), the input (ids), output (embeddings) and gradient bytes per step
// it moves over the group, and the weight bytes per holding member.

#include <string>
#include <vector>

#include "planner/planner.hpp"
#include "planner/table_placement.hpp"

namespace strait::planner {

struct TableStat {
  std::string table;
  std::string sharding;
  std::vector<int> members;  // group members holding a shard (all of them: "all")
  bool all_members = false;
  double lookup_ms = 0;                                      // per step, summed over its shards
  double input_bytes = 0, output_bytes = 0, grad_bytes = 0;  // per step over the group
  double bytes_per_member = 0;                               // weights on one holder
};

/// GPUs per host (the first host's), the block size of table_row_wise and grid.
int host_size(const sim::workload::TrainingScenario& scenario);

/// `host_size`: ranks per host-sized block (table_row_wise, grid).
std::vector<TableStat> table_stats(const sim::workload::ParallelPlan& plan,
                                   const sim::workload::Layout& layout, const TableCosts& costs,
                                   int host_size);

/// Which parallel dimensions of `layout` have a group spanning two datacenters, each with
/// how it crosses ("sparse all-to-all", "dense sync (overlapped, background)", ...).
std::vector<std::string> datacenter_crossings(const sim::workload::ParallelPlan& plan,
                                              const sim::workload::Layout& layout);

/// One plan's figures (best stage) as JSON.
Json ranked_json(const RankedPlan& plan, const PlanRequest& request);

/// The whole outcome (top plans, references, ratios, per-table stats of the best).
Json outcome_json(const PlanOutcome& outcome, const PlanRequest& request, const TableCosts& costs);

/// best / reference in the objective's direction (> 1: the found plan is better).
double speedup(Objective objective, const Estimate& best, const Estimate& reference);

}  // namespace strait::planner
