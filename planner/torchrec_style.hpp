#pragma once
// torchrec_style_sharding: the plan TorchRec's planner would propose, the baseline strait's
// planner must beat. Per table the sharding type with the smallest summed per-shard perf
// (forward + backward compute and communication, no overlap, two bandwidth levels: NVLink
// inside a host, the NIC across hosts), shards placed largest perf first on the rank with
// the smallest perf sum, over the ranks of one sharding group (all ranks, or the group of
// 2D sparse parallelism as TorchRec's DMPCollection shards it). Slices are priced with
// TableCosts (table_placement.hpp).

#include "planner/table_placement.hpp"
#include "sim/workload/plan.hpp"

namespace strait::planner {

/// Sharding types and placement as TorchRec's planner would choose them over a sharding
/// group of `world` ranks (sets plan.sharding).
void torchrec_style_sharding(sim::workload::ParallelPlan& plan, const TableCosts& costs, int world,
                             int host_size, int cp);

}  // namespace strait::planner
