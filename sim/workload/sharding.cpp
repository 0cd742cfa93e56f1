#include "sim/workload/sharding.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::workload {
namespace {

int least_loaded(const std::vector<double>& load) {
  return static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
}

}  // namespace

ShardMap ShardMap::build(const ModelConfig& model, const ParallelPlan& plan, int group_size,
                         int host_size) {
  ShardMap map;
  map.group_size = group_size;
  map.member_shards.resize(static_cast<std::size_t>(group_size));
  host_size = std::max(1, std::min(host_size, group_size));
  if (group_size % host_size != 0) host_size = 1;
  map.host_size = host_size;
  const int blocks = group_size / host_size;
  std::vector<double> load(static_cast<std::size_t>(group_size), 0.0);
  const auto bytes = [&](int t) {
    return static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows) *
           model.tables[static_cast<std::size_t>(t)].dim;
  };
  const int n = static_cast<int>(model.tables.size());
  map.type.resize(static_cast<std::size_t>(n));
  map.hot_rows.resize(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    map.type[static_cast<std::size_t>(t)] = plan.sharding[static_cast<std::size_t>(t)].type;
    map.hot_rows[static_cast<std::size_t>(t)] = plan.sharding[static_cast<std::size_t>(t)].hot_rows;
  }

  // Row-wise first: they spread evenly and set the baseline load.
  for (int t = 0; t < n; ++t) {
    const ShardingType type = map.type[static_cast<std::size_t>(t)];
    if (type == ShardingType::kDataParallel) map.data_parallel_tables.push_back(t);
    if (type != ShardingType::kRowWise) continue;
    for (int m = 0; m < group_size; ++m) {
      map.member_shards[static_cast<std::size_t>(m)].push_back({t, 1.0 / group_size, 1.0});
      load[static_cast<std::size_t>(m)] += bytes(t) / group_size;
    }
  }
  // Then slices (whole tables or column slices): those with an explicit member first, in
  // table order, then the others largest first.
  struct Slice {
    int table;
    double col_fraction;
    bool host_block;
    int member;      // explicit group member (block start for host blocks), or -1
    int blocks = 1;  // host blocks a table_row_wise table's rows span
  };
  std::vector<Slice> slices;
  for (int t = 0; t < n; ++t) {
    const auto& s = plan.sharding[static_cast<std::size_t>(t)];
    auto member = [&](int c) {
      if (s.ranks.empty()) return -1;
      const int m = s.ranks[static_cast<std::size_t>(c)];
      const bool block = s.type == ShardingType::kTableRowWise || s.type == ShardingType::kGrid;
      if (m >= group_size || (block && m % host_size != 0)) {
        throw ConfigError(
            plan.file,
            fmt::format("/sparse/tables/{}/ranks/{}",
                        model.tables[static_cast<std::size_t>(t)].name, c),
            block ? fmt::format("expected the first member of a {}-rank block in a group of {}, "
                                "got {}",
                                host_size, group_size, m)
                  : fmt::format("expected a member of the {}-rank model-parallel group, got {}",
                                group_size, m));
      }
      return m;
    };
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
          slices.push_back({t, 1.0 / s.column_shards, s.type == ShardingType::kGrid, member(c)});
        }
        break;
      default:
        break;
    }
  }
  std::stable_sort(slices.begin(), slices.end(), [&](const Slice& a, const Slice& b) {
    if ((a.member >= 0) != (b.member >= 0)) return a.member >= 0;
    if (a.member >= 0) return false;
    return bytes(a.table) * a.col_fraction > bytes(b.table) * b.col_fraction;
  });
  for (const Slice& s : slices) {
    const double size = bytes(s.table) * s.col_fraction;
    if (!s.host_block) {
      const int m = s.member >= 0 ? s.member : least_loaded(load);
      map.member_shards[static_cast<std::size_t>(m)].push_back({s.table, 1.0, s.col_fraction});
      load[static_cast<std::size_t>(m)] += size;
      continue;
    }
    std::vector<double> block_load(static_cast<std::size_t>(blocks), 0.0);
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
  return host_size > 1 && (ty == ShardingType::kTableRowWise || ty == ShardingType::kGrid) &&
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
