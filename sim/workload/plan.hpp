#pragma once
// ParallelPlan: how a model is parallelized and scheduled, as a plan file says.
//
//   {"name": "...", "ranks": 768,                       optional; default every GPU
//    "dense": {"parallelism": "ddp", "bucket_size": "25 MiB", "grad_sync": "buckets" | "grouped",
//              "comm_precision": "fp16"}
//           | {"parallelism": "fsdp", "group_size": 8, "placement": "host"},
//    "context_parallel": {"degree": 2, "mode": "all_gather" | "all_to_all", "placement": "host"},
//    "sparse": {"group_size": 256, "placement": "datacenter", "replica_sync_every": 1,
//               "default": "row_wise", "comm_precision": {"forward": "fp16", "backward": "bf16"},
//               "tables": {"t0": "table_wise", "t1": {"type": "grid", "column_shards": 2}},
//                          "t2": {"type": "column_wise", "column_shards": 2, "ranks": [3, 5]}},
//    "moe": {"expert_parallel": 8, "placement": "host"},
//    "schedule": {"pipeline_depth": 2, "pipelined": "sparse_forward" | "input_dist",
//                 "priorities": {"embedding": 0, "dense": 1},
//                 "sm_free_comm": true, "cross_dc_sync": "flat" | "hierarchical" | "overlapped",
//                 "load_balance": "none" | "greedy" | "karmarkar_karp"
//                               | {"method": "greedy", "scope": "datacenter"}}}
// Ranks are GPUs 0..ranks-1 in topology order. A group of size G placed at a level
// ("host", "rack"/"pod" = hosts under one leaf, "datacenter", "cluster") is a contiguous
// block of G ranks that must lie inside one domain of that level; the ranks at the same
// position of each block form the complementary (replica) group. The placement itself is
// checked against the cluster in layout.hpp.
// replica_sync_every K: replicas of each embedding shard (2D sparse parallelism) are
// averaged every K steps; the op graph spreads that over the steps, all-reducing a
// rotating 1/K slice of the shard's weights and optimizer state every step.
// replica_sync_staleness S (default 1): the slice synced after step s must be back before
// step s + S updates embeddings; up to S syncs are in flight at once (hides WAN latency).
// "ranks" (optional, table_wise / column_wise / table_row_wise / grid): the member of the
// model-parallel group that holds the table or each column slice, in slice order; for
// table_row_wise and grid the first member of the host-sized block. Without it slices go
// greedily by bytes (sharding.hpp); with it a plan found by `strait plan` reproduces exactly.
// "hot_rows" N (optional, any type but data_parallel): hybrid embedding, as NVIDIA's
// HugeCTR MLPerf DLRM does it: the table's N hottest rows are replicated on every rank
// (looked up and updated locally, gradients all-reduced with the dense ones), the rest
// sharded as "type" says; the share of ids that hit them is the Zipf mass of the N
// hottest rows under the data's id skew (unique_rows.hpp: zipf_head_mass).
// Priority classes: "embedding" (input/output/gradient distribution), "dense",
// "context_parallel", "replica_sync", "moe"; 0 is served first; default 0.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/enum_names.hpp"
#include "sim/cost/kernel_work.hpp"
#include "sim/workload/model.hpp"

namespace strait::sim::workload {

// Each enum's names, as plan files spell them, next to it (sim/core/enum_names.hpp).

enum class PlacementLevel { kHost, kRack, kDatacenter, kCluster };
constexpr auto enum_names(PlacementLevel) {
  return std::to_array<EnumName<PlacementLevel>>({{PlacementLevel::kHost, "host"},
                                                  {PlacementLevel::kRack, "rack"},
                                                  {PlacementLevel::kRack, "pod"},  // an alias
                                                  {PlacementLevel::kDatacenter, "datacenter"},
                                                  {PlacementLevel::kCluster, "cluster"}});
}
inline const char* to_string(PlacementLevel level) { return name_of(level); }

enum class ShardingType { kDataParallel, kTableWise, kRowWise, kColumnWise, kTableRowWise, kGrid };
constexpr auto enum_names(ShardingType) {
  return std::to_array<EnumName<ShardingType>>({{ShardingType::kDataParallel, "data_parallel"},
                                                {ShardingType::kTableWise, "table_wise"},
                                                {ShardingType::kRowWise, "row_wise"},
                                                {ShardingType::kColumnWise, "column_wise"},
                                                {ShardingType::kTableRowWise, "table_row_wise"},
                                                {ShardingType::kGrid, "grid"}});
}
inline const char* to_string(ShardingType type) { return name_of(type); }
/// `node` (a string) as a sharding type; an unknown name fails naming the closest one:
/// 'unknown sharding type "rows_wise" (did you mean "row_wise"?); expected one of ...'.
ShardingType sharding_type(const ConfigNode& node);

enum class DenseParallelism { kDdp, kFsdp };
constexpr auto enum_names(DenseParallelism) {
  return std::to_array<EnumName<DenseParallelism>>(
      {{DenseParallelism::kDdp, "ddp"}, {DenseParallelism::kFsdp, "fsdp"}});
}
/// How DDP all-reduces the dense gradients. kBuckets: in buckets of bucket_size as the
/// backward produces them, overlapped with the rest of the backward (PyTorch DDP).
/// kGrouped: all of them in one all-reduce once the dense backward has ended, with the
/// data-parallel tables' gradients (HugeCTR's grouped_all_reduce: its train pipeline runs
/// "Allreduce wgrad" after the bottom MLP's backward, then the dense update, while the
/// model-parallel embedding backward goes on on its own stream).
enum class GradSync { kBuckets, kGrouped };
constexpr auto enum_names(GradSync) {
  return std::to_array<EnumName<GradSync>>(
      {{GradSync::kBuckets, "buckets"}, {GradSync::kGrouped, "grouped"}});
}
enum class CpMode { kAllGather, kAllToAll };
constexpr auto enum_names(CpMode) {
  return std::to_array<EnumName<CpMode>>(
      {{CpMode::kAllGather, "all_gather"}, {CpMode::kAllToAll, "all_to_all"}});
}
enum class CrossDcSync { kFlat, kHierarchical, kOverlapped };
constexpr auto enum_names(CrossDcSync) {
  return std::to_array<EnumName<CrossDcSync>>({{CrossDcSync::kFlat, "flat"},
                                               {CrossDcSync::kHierarchical, "hierarchical"},
                                               {CrossDcSync::kOverlapped, "overlapped"}});
}
enum class LoadBalance { kNone, kGreedy, kKarmarkarKarp };
constexpr auto enum_names(LoadBalance) {
  return std::to_array<EnumName<LoadBalance>>({{LoadBalance::kNone, "none"},
                                               {LoadBalance::kGreedy, "greedy"},
                                               {LoadBalance::kKarmarkarKarp, "karmarkar_karp"}});
}

/// A process-group dimension: `size` ranks per group placed at `level`. `node` locates
/// it in the plan file for errors (size 0 = the whole world).
struct GroupSpec {
  int size = 0;
  PlacementLevel level = PlacementLevel::kCluster;
  std::optional<ConfigNode> node;
};

struct TableSharding {
  ShardingType type = ShardingType::kRowWise;
  int column_shards = 1;      // column_wise, grid
  std::vector<int> ranks;     // optional: group member per slice (see above); empty = greedy
  std::int64_t hot_rows = 0;  // hybrid: the hottest rows replicated data-parallel (see above)
};

/// What a pipelined step (depth > 1) runs ahead for the batches to come. kSparseForward:
/// input dist, lookup and output dist (TorchRec's TrainPipelineSemiSync: the lookup may read
/// weights one update old). kInputDist: the input dist only (TorchRec's TrainPipelineSparseDist,
/// HugeCTR's inter-iteration overlap, which prefetches the data distribution); the lookup
/// waits for the previous step's updates.
enum class Pipelined { kSparseForward, kInputDist };
constexpr auto enum_names(Pipelined) {
  return std::to_array<EnumName<Pipelined>>(
      {{Pipelined::kSparseForward, "sparse_forward"}, {Pipelined::kInputDist, "input_dist"}});
}

struct Schedule {
  int pipeline_depth = 1;
  Pipelined pipelined = Pipelined::kSparseForward;
  std::array<int, kCommClassCount> priority{};  // by CommClass
  bool sm_free = false;
  CrossDcSync cross_dc = CrossDcSync::kFlat;
  LoadBalance balance = LoadBalance::kNone;
  PlacementLevel balance_scope = PlacementLevel::kCluster;
};

/// Element types of the embedding all-to-alls, as TorchRec's QCommsConfig sets them:
/// pooled or sequence embeddings forward (output dist), their gradients backward (grad
/// dist). Unset: the tables' weight dtype. Plan file: "sparse": {"comm_precision":
/// {"forward": "fp16", "backward": "bf16"}}.
struct CommPrecision {
  std::optional<Precision> forward, backward;
};

struct ParallelPlan {
  std::string name;
  std::string file;
  int ranks = 0;  // 0 = every GPU of the cluster
  std::optional<ConfigNode> ranks_node;
  DenseParallelism dense = DenseParallelism::kDdp;
  Bytes bucket_size = 25 * kMiB;
  GradSync grad_sync = GradSync::kBuckets;
  /// Element type of the dense gradient sync (all-reduce or reduce-scatter) and of the
  /// data-parallel tables' gradients that join it, e.g. fp16 under mixed precision, where
  /// HugeCTR all-reduces __half wgrads. Unset: the parameters' and the tables' own dtypes.
  /// Plan file: "dense": {"comm_precision": "fp16"}.
  std::optional<Precision> grad_comm_precision;
  GroupSpec fsdp;  // FSDP shard group (HSDP when smaller than the world)
  int cp_degree = 1;
  CpMode cp_mode = CpMode::kAllGather;
  GroupSpec cp;
  GroupSpec sparse;  // embedding model-parallel group (2D sparse parallelism)
  int replica_sync_every = 1;
  int replica_sync_staleness = 1;       // steps a replica sync may run behind (syncs in flight)
  std::vector<TableSharding> sharding;  // per model table
  CommPrecision comm_precision;         // of the embedding all-to-alls
  GroupSpec expert;                     // MoE expert-parallel group
  Schedule schedule;
  /// Kernel implementation per family, where not the profiles' defaults. Plan file:
  /// "kernels": {"jagged_attention": "strait"} (configs/profiles/README.md).
  cost::KernelChoice kernels;

  static ParallelPlan load(const std::string& path, const ModelConfig& model);
  static ParallelPlan from_config(const ConfigNode& node, const ModelConfig& model);
};

}  // namespace strait::sim::workload
