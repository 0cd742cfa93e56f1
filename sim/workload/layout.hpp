#pragma once
// Layout: ranks and process groups of a plan on a cluster. Rank r runs on GPU r (topology
// order: datacenter, host, local index). Each group dimension (context parallel, FSDP
// shard, embedding model-parallel, expert parallel) cuts the ranks into contiguous blocks
// of its size; each block must lie inside one domain of its placement level, else a
// ConfigError names the plan file, the key and the sizes. Ranks at the same position of
// every block form the dimension's replica group (data parallel across blocks).

#include <string>
#include <vector>

#include "sim/topology/cluster.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/plan.hpp"

namespace strait::sim::workload {

/// One dimension of blocks: per rank its block group and replica group (indices into
/// Layout::groups; replica -1 when the block is the whole world).
struct GroupDimension {
  int size = 1;
  std::vector<int> block;    // per rank
  std::vector<int> replica;  // per rank
};

struct Layout {
  int world = 0;
  int replicas = 0;  // data-parallel replicas = world / context-parallel degree
  std::vector<ProcessGroup> groups;
  int all = -1;  // every rank (DDP, flat sync)
  GroupDimension cp, fsdp, sparse, expert;
  /// Host-sized blocks inside each model-parallel group (block: the rank's host block;
  /// replica: the members at its position of every block of its group, or -1 with one
  /// block), built when some table is table_row_wise or grid; size 1 otherwise.
  GroupDimension sparse_host;
  std::vector<int> dc_block;    // per rank: its datacenter's ranks (overlapped sync)
  std::vector<int> dc_replica;  // per rank: same position in each datacenter
  std::vector<int> rank_dc;     // per rank: datacenter index

  static Layout build(const topology::Cluster& cluster, const ParallelPlan& plan);
};

/// Domain id of each of the first `world` GPUs at `level` (host index, leaf group,
/// datacenter, or 0 for the cluster). Leaf groups come from the leaf switch of each
/// host's first NIC; hosts without one form their own group.
std::vector<int> domains(const topology::Cluster& cluster, int world, PlacementLevel level);

}  // namespace strait::sim::workload
