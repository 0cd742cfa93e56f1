#pragma once
// TorchRec sharding plans: written in the shape of TorchRec's ShardingPlan._serialize()
// (torchrec/distributed/types.py) and read back, so a TorchRec plan can be simulated and beaten.
//
//   {"plan": {"embedding_bag_collection": {        module path (any; e.g. "model.sparse.ebc")
//      "t0": {"sharding_type": "table_wise",
//             "compute_kernel": "fused",
//             "ranks": [3],
//             "shards": [{"shard_offsets": [0, 0], "shard_sizes": [rows, dim],
//                         "placement": "rank:3/cuda:3",
//                         "bucket_id_offset": null, "num_buckets": null}]}}},
//    "strait": {...}}                              what the TorchRec form drops
// Sharding types: data_parallel (no shards), table_wise, row_wise, column_wise,
// table_row_wise, grid_shard. Row blocks are TorchRec's: ceil(rows / n) rows each, the last
// ones shorter or empty (rows 10 over 4 ranks: 3, 3, 3, 1). Column slices are of equal
// width, dim / column_shards. Ranks are those of the first model-parallel group (0..M-1);
// with 2D sparse parallelism every group repeats the layout, which the "strait" block
// states with the group size, the replicas, the topology assumed and strait's estimates.
//
// Reading is two stages. read_torchrec_file checks the file on its own and fails naming the
// file and the JSON pointer: keys known, sharding_type one of the above, compute_kernel one
// strait models ("fused": table in HBM, optimizer fused into the backward, for sharded
// tables; "dense" for data_parallel ones; fused_uvm(_caching), quant*, key_value,
// *_virtual_table and customized_kernel are refused), shards as [row, column] pairs of
// non-negative integers, a placement "rank:R/cuda:L" (L, the local index, is not checked),
// "ranks" listing each shard's rank, no shards for data_parallel and some for the others.
// parse_torchrec_plan adds the model's checks, each entry's where the file reaches it (its
// name first, its tiling after its own checks), so the first error is the one met in order:
// - every model table appears once, under any module path (tables of one model may sit
//   under several modules);
// - shards tile the table without gap or overlap: one [rows, dim] shard for table_wise;
//   equal column slices for column_wise; n row blocks of ceil(rows / n) rows, listed in
//   row order on n distinct ranks, for row_wise (n = the group size: every member holds
//   one), table_row_wise and grid (n = the host block; per table or column slice the ranks
//   of one aligned block b*n .. b*n+n-1); every rank lies in the group (the group and the
//   host block are apply_torchrec_plan's to check).
// strait prices row blocks as even shares (1/n of rows and ids each), so which member of a
// block holds which rows does not matter to it.
// Keys read and ignored (they change nothing strait models): per shard "bucket_id_offset"
// and "num_buckets" when null (PyTorch's ShardMetadata always has them; non-null marks
// bucket-wise shards of a virtual ZCH table, refused); per table "sharding_spec" (older
// writers' copy of the shards), "bounds_check_mode" (any value: FBGEMM's index checks), and
// "cache_params", "output_dtype" and "key_value_params" when null (set, they mean caching,
// another output type or an SSD/PS store: refused). "enforce_hbm" and "stochastic_rounding"
// (numerics) are true, false or null, kept in the file's entry and not simulated. The
// "strait" block, when present, gives the group size (else the whole world); its other keys
// are informative.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/table_placement.hpp"
#include "sim/core/config_node.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/plan.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

/// Module paths (names in the wrapped model, as DistributedModelParallel sees them) that
/// the written plan puts tables under: pooled ones in an EmbeddingBagCollection, sequence
/// ones in an EmbeddingCollection.
struct TorchRecModules {
  std::string pooled = "embedding_bag_collection";
  std::string sequence = "embedding_collection";
};

/// A rank a TorchRec file names (a shard's placement or a "ranks" entry) and where.
struct TorchRecRank {
  int rank = 0;
  ConfigNode node;
};

/// One shard of a file's entry: offsets and sizes as [row, column], where it is placed.
struct TorchRecShard {
  std::int64_t row_offset = 0, column_offset = 0, rows = 0, columns = 0;
  std::string placement;  // "rank:R/cuda:L", as written
  int rank = 0;           // R
  ConfigNode node;        // /plan/<module>/<table>/shards/<i>
};

/// One table's entry, /plan/<module>/<table>, as the file states it.
struct TorchRecEntry {
  std::string module, table;
  std::string sharding_type;   // TorchRec's name (data_parallel, ..., grid_shard)
  std::string compute_kernel;  // "fused", or "dense" for data_parallel
  std::optional<bool> enforce_hbm, stochastic_rounding;  // unset when absent or null
  std::optional<std::vector<TorchRecRank>> ranks;        // "ranks", unless absent or null
  std::vector<TorchRecShard> shards;                     // in list order; none: data_parallel
  ConfigNode node;
};

/// A TorchRec file on its own: what it states, every check that needs no model passed.
struct TorchRecFile {
  int group_size = 0;                  // the "strait" block's; 0 = the whole world
  std::vector<std::string> modules;    // module paths, one without tables too
  std::vector<TorchRecEntry> entries;  // module by module, in the reader's order
};

/// What a table's entry said, kept for the checks that need the group (apply).
struct TorchRecTable {
  std::optional<ConfigNode> entry;  // /plan/<module>/<table>
  int row_blocks = 0;               // per column slice: row_wise, table_row_wise, grid
  std::vector<TorchRecRank> ranks;  // every rank the entry names
};

struct TorchRecPlan {
  int group_size = 0;                                  // 0 = the whole world
  std::vector<sim::workload::TableSharding> sharding;  // per model table
  std::vector<TorchRecTable> tables;                   // per model table
};

/// The TorchRec form of `plan`'s sparse part on `scenario`'s cluster, tables under
/// `modules`. Throws Error for what the form cannot express (hybrid tables, one module
/// path for both pooled and sequence tables).
Json torchrec_plan_json(const sim::workload::ParallelPlan& plan,
                        const sim::workload::TrainingScenario& scenario, const TableCosts& costs,
                        const TorchRecModules& modules = {});

/// Reads a TorchRec plan file without a model (modules and tables in the order of the
/// reader's objects: by name). Throws ConfigError naming file and pointer, IoError.
TorchRecFile read_torchrec_file(const std::string& path);
TorchRecFile read_torchrec_file(const ConfigNode& root);

/// Reads a TorchRec plan file for `model`: read_torchrec_file's checks and the model's.
/// Throws ConfigError naming file and pointer.
TorchRecPlan read_torchrec_plan(const std::string& path, const sim::workload::ModelConfig& model);
TorchRecPlan parse_torchrec_plan(const ConfigNode& node, const sim::workload::ModelConfig& model);

/// `plan` with its sparse part from `torchrec` (group size, per-table sharding and ranks);
/// `document` (a plan file) is updated to match. Ranks outside the model-parallel group,
/// and row-block counts other than the group's (row_wise) or the host block's
/// (table_row_wise, grid), fail naming the TorchRec file and pointer. The group is the
/// "strait" block's, else the plan's ranks, else `cluster`'s GPUs; the host block needs
/// `cluster` (without one, checks that need what is unknown are skipped). Layout errors
/// name `/sparse/group_size` of `document`.
sim::workload::ParallelPlan apply_torchrec_plan(Json& document,
                                                const sim::workload::ParallelPlan& plan,
                                                const TorchRecPlan& torchrec,
                                                const sim::workload::ModelConfig& model,
                                                const sim::topology::Cluster* cluster = nullptr);

}  // namespace strait::planner
