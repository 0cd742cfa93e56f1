#pragma once
// ShardMap: where each embedding table lives inside one model-parallel group of M ranks
// (every group holds the same layout: 2D sparse parallelism replicates it across groups).
//
//   data_parallel   the whole table on every rank (gradients all-reduced with the dense ones)
//   table_wise      the whole table on one member
//   row_wise        rows split evenly over all M members
//   column_wise     dim split into column_shards slices, each on one member
//   table_row_wise  rows split evenly over the members of one host-sized block
//   grid            column slices, each split table-row-wise over a host-sized block
// A table with hot_rows (hybrid) is laid out by its type; its hot rows sit on every rank
// besides (their ids never reach the shards: detail/sparse_traffic.hpp).
// Whole-table and column slices go, largest first, to the least-loaded member (block for
// table_row_wise and grid) by weight bytes, after the row-wise tables are spread; ties go
// to the lowest index, so the layout is deterministic. Slices with an explicit member
// (TableSharding::ranks) go there first, in table order, and count in the load. Ids are assumed
// hashed uniformly over rows, so a shard with row fraction f receives f of the table's ids.

#include <vector>

#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"

namespace strait::sim::workload {

struct Shard {
  int table = 0;
  double row_fraction = 1;  // of the table's rows (and of its ids)
  double col_fraction = 1;  // of the table's dim
};

/// Whether each slice of a table sharded as `t` spreads its rows over a host-sized block
/// (table_row_wise, grid) instead of sitting on one member.
bool spans_host_block(ShardingType t);
/// Slices placed on members for a table sharded as `s`: 1 (table_wise, table_row_wise),
/// its column shards (column_wise, grid), 0 (row_wise, data_parallel: spread, not placed).
int placed_slices(const TableSharding& s);
/// Each slice's fraction of the table's columns (column_wise, grid: 1 / column shards).
double slice_column_fraction(const TableSharding& s);

/// Members per host-sized block of a `group_size`-member model-parallel group on hosts of
/// `host_size` GPUs: min(host_size, group_size), or 1 when the group does not split into
/// such blocks (table_row_wise and grid tables spread over one block).
int host_block_size(int host_size, int group_size);

struct ShardMap {
  int group_size = 1;
  int host_size = 1;  // members per host-sized block (1 when the group does not split so)
  std::vector<std::vector<Shard>> member_shards;  // per member of the group
  std::vector<int> data_parallel_tables;          // indices of replicated tables
  std::vector<ShardingType> type;                 // per table
  std::vector<std::int64_t> hot_rows;             // per table: rows replicated (hybrid), or 0

  /// Layout of `model`'s tables as `plan` says, in groups of `group_size` ranks whose
  /// host-sized blocks have `host_size` ranks.
  static ShardMap build(const ModelConfig& model, const ParallelPlan& plan, int group_size,
                        int host_size);

  /// Weight elements (rows x cols) member `m` holds (sharded tables only).
  double weight_elements(const ModelConfig& model, int m) const;
  /// Rows member `m` holds, summed over its shards (for row-wise optimizer state).
  double rows(const ModelConfig& model, int m) const;
  /// True when some table is sharded (input/output distribution needed).
  bool has_sharded() const;
  /// True when table `t`'s pooled outputs are summed inside its host-sized block before they
  /// leave it (TorchRec's TwRw/Grid pooled dist: a reduce-scatter inside the host, then an
  /// all-to-all among the members at the same position of every block).
  bool host_reduced(const ModelConfig& model, int t) const;
  /// True when some table is host_reduced.
  bool any_host_reduced(const ModelConfig& model) const;
  /// True when some sharded table is not host_reduced (the group-wide output dist runs).
  bool any_flat_output(const ModelConfig& model) const;
};

}  // namespace strait::sim::workload
