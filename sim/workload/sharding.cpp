#include "sim/workload/sharding.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::workload {
namespace {

// A whole table or a column slice, to place on one member or over one host-sized block.
struct Slice {
  int table;
  double col_fraction;
  bool host_block;
  int member;      // explicit group member (block start for host blocks), or -1
  int blocks = 1;  // host blocks a table_row_wise table's rows span
};

int least_loaded(const std::vector<double>& load) {
  return static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
}

// Weight elements of table t (rows x dim): what the members' load is counted in.
double table_elements(const ModelConfig& model, int t) {
  return static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows) *
         model.tables[static_cast<std::size_t>(t)].dim;
}

// The member the plan names for slice c of table t (block start for host blocks), or -1
// when it names none; throws ConfigError for one outside the group or off a block start.
int named_member(const ModelConfig& model, const ParallelPlan& plan, int t, int c, int group_size,
                 int host_size) {
  const auto& s = plan.sharding[static_cast<std::size_t>(t)];
  if (s.ranks.empty()) return -1;
  const int m = s.ranks[static_cast<std::size_t>(c)];
  const bool block = spans_host_block(s.type);
  if (m >= group_size || (block && m % host_size != 0)) {
    throw ConfigError(
        plan.file,
        fmt::format("/sparse/tables/{}/ranks/{}", model.tables[static_cast<std::size_t>(t)].name,
                    c),
        block ? fmt::format("expected the first member of a {}-rank block in a group of {}, "
                            "got {}",
                            host_size, group_size, m)
              : fmt::format("expected a member of the {}-rank model-parallel group, got {}",
                            group_size, m));
  }
  return m;
}

// Table t's slices as its sharding type cuts it (none for row-wise and data-parallel).
void add_slices(const ModelConfig& model, const ParallelPlan& plan, int t, int group_size,
                int host_size, std::vector<Slice>& slices) {
  const auto& s = plan.sharding[static_cast<std::size_t>(t)];
  auto member = [&](int c) { return named_member(model, plan, t, c, group_size, host_size); };
  switch (s.type) {
    case ShardingType::kTableWise:
      slices.push_back({t, 1.0, false, member(0)});
      break;
    case ShardingType::kTableRowWise: {
      // Its rows over every GPU of each block it names (one block when it names none).
      const int k = std::max<int>(1, static_cast<int>(s.ranks.size()));
      for (int c = 0; c < k; ++c) slices.push_back({t, 1.0, true, member(c), k});
      break;
    }
    case ShardingType::kColumnWise:
    case ShardingType::kGrid:
      for (int c = 0; c < s.column_shards; ++c) {
        slices.push_back({t, slice_column_fraction(s), spans_host_block(s.type), member(c)});
      }
      break;
    default:
      break;
  }
}

// Every table's slices in the order they are placed: those with an explicit member first,
// in table order, then the others largest first.
std::vector<Slice> slices_in_order(const ModelConfig& model, const ParallelPlan& plan,
                                   int group_size, int host_size) {
  std::vector<Slice> slices;
  for (int t = 0; t < static_cast<int>(model.tables.size()); ++t)
    add_slices(model, plan, t, group_size, host_size, slices);
  std::stable_sort(slices.begin(), slices.end(), [&](const Slice& a, const Slice& b) {
    if ((a.member >= 0) != (b.member >= 0)) return a.member >= 0;
    if (a.member >= 0) return false;
    return table_elements(model, a.table) * a.col_fraction >
           table_elements(model, b.table) * b.col_fraction;
  });
  return slices;
}

// Row-wise tables over every member (they spread evenly and set the baseline load); lists
// the data-parallel tables.
void place_row_wise(ShardMap& map, const ModelConfig& model, std::vector<double>& load) {
  const int group_size = map.group_size;
  for (int t = 0; t < static_cast<int>(map.type.size()); ++t) {
    const ShardingType type = map.type[static_cast<std::size_t>(t)];
    if (type == ShardingType::kDataParallel) map.data_parallel_tables.push_back(t);
    if (type != ShardingType::kRowWise) continue;
    for (int m = 0; m < group_size; ++m) {
      map.member_shards[static_cast<std::size_t>(m)].push_back({t, 1.0 / group_size, 1.0});
      load[static_cast<std::size_t>(m)] += table_elements(model, t) / group_size;
    }
  }
}

// One slice on its member, or over every member of its host block, the least loaded
// member or block unless the plan names one.
void place_slice(ShardMap& map, const Slice& s, const ModelConfig& model,
                 std::vector<double>& load) {
  const int group_size = map.group_size, host_size = map.host_size;
  const double size = table_elements(model, s.table) * s.col_fraction;
  if (!s.host_block) {
    const int m = s.member >= 0 ? s.member : least_loaded(load);
    map.member_shards[static_cast<std::size_t>(m)].push_back({s.table, 1.0, s.col_fraction});
    load[static_cast<std::size_t>(m)] += size;
    return;
  }
  std::vector<double> block_load(static_cast<std::size_t>(group_size / host_size), 0.0);
  for (int m = 0; m < group_size; ++m)
    block_load[static_cast<std::size_t>(m / host_size)] += load[static_cast<std::size_t>(m)];
  const int b = s.member >= 0 ? s.member / host_size : least_loaded(block_load);
  const double share = 1.0 / (static_cast<double>(s.blocks) * host_size);
  for (int i = 0; i < host_size; ++i) {
    const int m = b * host_size + i;
    map.member_shards[static_cast<std::size_t>(m)].push_back({s.table, share, s.col_fraction});
    load[static_cast<std::size_t>(m)] += size * share;
  }
}

}  // namespace

int placed_slices(const TableSharding& s) {
  switch (s.type) {
    case ShardingType::kTableWise:
    case ShardingType::kTableRowWise:
      return 1;
    case ShardingType::kColumnWise:
    case ShardingType::kGrid:
      return s.column_shards;
    default:
      return 0;
  }
}

bool spans_host_block(ShardingType t) {
  return t == ShardingType::kTableRowWise || t == ShardingType::kGrid;
}

double slice_column_fraction(const TableSharding& s) {
  return s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid
             ? 1.0 / s.column_shards
             : 1.0;
}

int host_block_size(int host_size, int group_size) {
  const int block = std::max(1, std::min(host_size, group_size));
  return group_size % block == 0 ? block : 1;
}

ShardMap ShardMap::build(const ModelConfig& model, const ParallelPlan& plan, int group_size,
                         int host_size) {
  ShardMap map;
  map.group_size = group_size;
  map.member_shards.resize(static_cast<std::size_t>(group_size));
  host_size = host_block_size(host_size, group_size);
  map.host_size = host_size;
  const auto n = model.tables.size();
  map.type.resize(n);
  map.hot_rows.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    map.type[t] = plan.sharding[t].type;
    map.hot_rows[t] = plan.sharding[t].hot_rows;
  }
  std::vector<double> load(static_cast<std::size_t>(group_size), 0.0);
  place_row_wise(map, model, load);
  for (const Slice& s : slices_in_order(model, plan, group_size, host_size))
    place_slice(map, s, model, load);
  return map;
}

double ShardMap::weight_elements(const ModelConfig& model, int m) const {
  double e = 0;
  for (const Shard& s : member_shards[static_cast<std::size_t>(m)]) {
    const auto& t = model.tables[static_cast<std::size_t>(s.table)];
    e += static_cast<double>(t.rows) * s.row_fraction * t.dim * s.col_fraction;
  }
  return e;
}

double ShardMap::rows(const ModelConfig& model, int m) const {
  double r = 0;
  for (const Shard& s : member_shards[static_cast<std::size_t>(m)]) {
    r += static_cast<double>(model.tables[static_cast<std::size_t>(s.table)].rows) * s.row_fraction;
  }
  return r;
}

bool ShardMap::has_sharded() const { return data_parallel_tables.size() < type.size(); }

bool ShardMap::host_reduced(const ModelConfig& model, int t) const {
  const ShardingType ty = type[static_cast<std::size_t>(t)];
  return host_size > 1 && spans_host_block(ty) &&
         model.tables[static_cast<std::size_t>(t)].pooling != Pooling::kSequence;
}

bool ShardMap::any_host_reduced(const ModelConfig& model) const {
  for (int t = 0; t < static_cast<int>(type.size()); ++t)
    if (host_reduced(model, t)) return true;
  return false;
}

bool ShardMap::any_flat_output(const ModelConfig& model) const {
  for (int t = 0; t < static_cast<int>(type.size()); ++t) {
    if (type[static_cast<std::size_t>(t)] != ShardingType::kDataParallel && !host_reduced(model, t))
      return true;
  }
  return false;
}

}  // namespace strait::sim::workload
