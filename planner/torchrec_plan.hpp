#pragma once
// TorchRec sharding plans: written in the shape of TorchRec's serialized ShardingPlan and
// read back, so a TorchRec plan can be simulated and beaten.
//
//   {"plan": {"embedding_bag_collection": {                  pooled tables; sequence tables
//      "t0": {"sharding_type": "table_wise",                 go under "embedding_collection"
//             "compute_kernel": "fused",
//             "ranks": [3],
//             "shards": [{"shard_offsets": [0, 0], "shard_sizes": [rows, dim],
//                         "placement": "rank:3/cuda:3"}]}}},
//    "strait": {...}}                                        what the TorchRec form drops
// Sharding types: data_parallel (no shards), table_wise, row_wise, column_wise,
// table_row_wise, grid_shard. Row blocks are ceil(rows / n) rows (the last one shorter).
// Ranks are those of the first model-parallel group (ranks 0..M-1); with 2D sparse
// parallelism every group repeats the layout, which the "strait" block states with the
// group size, the replicas, the topology assumed and strait's estimates per table.
// Reading: every model table must appear once; the "strait" block, when present, gives the
// group size (else the whole world); column slices are ordered by their column offset.

#include <string>
#include <vector>

#include "planner/table_placement.hpp"
#include "sim/core/config_node.hpp"
#include "sim/workload/plan.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

struct TorchRecPlan {
  int group_size = 0;                                  // 0 = the whole world
  std::vector<sim::workload::TableSharding> sharding;  // per model table
};

/// The TorchRec form of `plan`'s sparse part on `scenario`'s cluster.
Json torchrec_plan_json(const sim::workload::ParallelPlan& plan,
                        const sim::workload::TrainingScenario& scenario, const TableCosts& costs);

/// Reads a TorchRec plan file for `model`. Throws ConfigError naming file and pointer.
TorchRecPlan read_torchrec_plan(const std::string& path, const sim::workload::ModelConfig& model);
TorchRecPlan parse_torchrec_plan(const ConfigNode& node, const sim::workload::ModelConfig& model);

/// `plan` with its sparse part from `torchrec` (group size, per-table sharding and ranks);
/// `document` (a plan file) is updated to match. Layout errors name `/sparse/group_size`.
sim::workload::ParallelPlan apply_torchrec_plan(Json& document,
                                                const sim::workload::ParallelPlan& plan,
                                                const TorchRecPlan& torchrec,
                                                const sim::workload::ModelConfig& model);

}  // namespace strait::planner
