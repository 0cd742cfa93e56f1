#pragma once
// Representative ranks: the ranks an estimate builds to stand for a whole job (the
// planner's closed form and its memory check above 1,024 ranks), instead of every rank.
//
// Blocks: model-parallel blocks (contiguous runs of sparse-group size) of about
// `min_ranks` ranks, evenly spaced, plus the blocks holding the costliest replica and any
// slow rank. Inside a block of more than `min_ranks` members (a group of 16,384), about
// `min_ranks` evenly spaced members, plus the members of the costliest replica, of slow
// ranks and every member holding a placed slice (table-wise, column-wise, table-row-wise
// and grid tables: the members whose shards differ from the row-wise ones all hold).
// The members left out hold what their neighbours hold and train on batches of the same
// distribution; a collective among a block's members is priced on the members built
// (planner/detail/closed_form_cost.hpp says how).

#include <vector>

#include "sim/workload/batch.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload {

/// The model-parallel blocks that stand for all of them: all blocks when `min_ranks` <= 0
/// or the world is no larger. Sorted, deterministic.
std::vector<int> representative_blocks(const TrainingScenario& scenario,
                                       const std::vector<ReplicaBatch>& batches, int min_ranks);

/// A representative block and its members that stand for all of them (ascending indices
/// within the group).
struct RepresentativeBlock {
  int block = 0;
  std::vector<int> members;
};

/// representative_blocks, each with its representative members (every member when the
/// block has at most `min_ranks`, or `min_ranks` <= 0). `map`: the plan's shard map.
std::vector<RepresentativeBlock> representative_ranks(const TrainingScenario& scenario,
                                                      const std::vector<ReplicaBatch>& batches,
                                                      const ShardMap& map, int min_ranks);

}  // namespace strait::sim::workload
