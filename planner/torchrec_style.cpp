#include "planner/torchrec_style.hpp"

#include <algorithm>
#include <limits>

#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner {

using sim::cost::kIdBytes;
using sim::workload::ShardingType;

namespace {

// What TorchRec's planner prices shards by over its sharding group.
struct TorchRecGroup {
  int world = 1;   // ranks of the sharding group
  int cp = 1;      // context parallel degree
  double e = 0;    // bytes per embedding element
  double bw = 0;   // NVLink when the whole world is one host, else the NIC
  double cap = 0;  // weight bytes a rank may hold
};

// A sharding type TorchRec's planner considers for a table, with its summed perf.
struct ShardingOption {
  sim::workload::TableSharding sharding;
  double perf;
  int shards;
  double shard_bytes;
};

// A shard to place on a rank (or a host block: table_row_wise).
struct TorchRecShard {
  int table, index;
  double perf, bytes;
};

// perf of one shard: fwd compute + fwd comm + bwd compute (2x) + bwd comm, summed.
double shard_perf(const TableCosts& costs, const TorchRecGroup& g, int t, double f, double r,
                  bool data_parallel) {
  const auto& tb = costs.model().tables[static_cast<std::size_t>(t)];
  const double e = g.e, bw = g.bw;
  const double w = tb.dim * f;
  const double ids = costs.ids_per_replica(t) / g.cp;
  if (data_parallel) {
    const double compute = ids * (w * e + kIdBytes) / costs.hbm_bandwidth();
    return 3 * compute + 2 * static_cast<double>(tb.rows) * w * e / bw;
  }
  const double group_ids = g.world * ids * r;
  const double compute = group_ids * (w * e + kIdBytes) / costs.hbm_bandwidth();
  const double out = tb.pooling == sim::workload::Pooling::kSequence
                         ? group_ids * w * e
                         : g.world * costs.samples_per_replica() / g.cp * w * e;
  const double comm = (group_ids * kIdBytes + out) / bw;
  return 3 * compute + 2 * comm;
}

// The sharding TorchRec's planner picks for table t: the option of least perf whose shard
// fits under the cap (the least perf when none fits).
ShardingOption torchrec_choice(const TableCosts& costs, const TorchRecGroup& g, int t,
                               int host_size) {
  const int world = g.world;
  const auto& tb = costs.model().tables[static_cast<std::size_t>(t)];
  std::vector<ShardingOption> options;
  options.push_back({{ShardingType::kTableWise, 1, {}},
                     shard_perf(costs, g, t, 1, 1, false),
                     1,
                     costs.slice_bytes(t, 1, 1)});
  options.push_back({{ShardingType::kRowWise, 1, {}},
                     world * shard_perf(costs, g, t, 1, 1.0 / world, false),
                     world,
                     costs.slice_bytes(t, 1, 1.0 / world)});
  const int hs = sim::workload::host_block_size(host_size, world);
  options.push_back({{ShardingType::kTableRowWise, 1, {}},
                     hs * shard_perf(costs, g, t, 1, 1.0 / hs, false),
                     hs,
                     costs.slice_bytes(t, 1, 1.0 / hs)});
  for (int c = 2; c <= 8 && tb.dim % c == 0 && tb.dim / c >= 32; c *= 2) {
    options.push_back({{ShardingType::kColumnWise, c, {}},
                       c * shard_perf(costs, g, t, 1.0 / c, 1, false),
                       c,
                       costs.slice_bytes(t, 1.0 / c, 1)});
  }
  options.push_back({{ShardingType::kDataParallel, 1, {}},
                     world * shard_perf(costs, g, t, 1, 1, true),
                     0,
                     costs.slice_bytes(t, 1, 1)});
  std::stable_sort(
      options.begin(), options.end(),
      [](const ShardingOption& a, const ShardingOption& b) { return a.perf < b.perf; });
  const auto fit = std::find_if(options.begin(), options.end(),
                                [&](const ShardingOption& o) { return o.shard_bytes <= g.cap; });
  return fit != options.end() ? *fit : options.front();
}

// Places the shards, largest perf first, each on the rank (host block for table_row_wise)
// with the smallest perf sum whose bytes stay under the cap (rank 0 when none fits).
void place_shards(sim::workload::ParallelPlan& plan, std::vector<TorchRecShard>& shards,
                  const TorchRecGroup& g, int host_size, std::vector<double>& load,
                  std::vector<double>& bytes) {
  const int world = g.world;
  std::stable_sort(shards.begin(), shards.end(),
                   [](const TorchRecShard& a, const TorchRecShard& b) { return a.perf > b.perf; });
  const int hs = sim::workload::host_block_size(host_size, world);
  for (const auto& sh : shards) {
    const bool block =
        plan.sharding[static_cast<std::size_t>(sh.table)].type == ShardingType::kTableRowWise;
    const int width = block ? hs : 1;
    int best = 0;
    double best_load = std::numeric_limits<double>::infinity();
    for (int m = 0; m + width <= world; m += width) {
      double l = 0;
      for (int j = 0; j < width; ++j) l += load[static_cast<std::size_t>(m + j)];
      if (bytes[static_cast<std::size_t>(m)] + sh.bytes <= g.cap && l < best_load)
        best_load = l, best = m;
    }
    for (int j = 0; j < width; ++j) {
      load[static_cast<std::size_t>(best + j)] += sh.perf / width;
      bytes[static_cast<std::size_t>(best + j)] += sh.bytes;
    }
    plan.sharding[static_cast<std::size_t>(sh.table)].ranks[static_cast<std::size_t>(sh.index)] =
        best;
  }
}

}  // namespace

void torchrec_style_sharding(sim::workload::ParallelPlan& plan, const TableCosts& costs, int world,
                             int host_size, int cp) {
  const auto& model = costs.model();
  TorchRecGroup g;
  g.world = world;
  g.cp = cp;
  g.e = sim::workload::bytes_per_element(model.embedding_dtype);
  // Two bandwidth levels: NVLink when the whole world is one host, else the NIC.
  g.bw = world <= host_size ? costs.nvlink_bandwidth() : costs.nic_bandwidth();
  g.cap = costs.memory_capacity() / 2;
  std::vector<TorchRecShard> shards;
  std::vector<double> load(static_cast<std::size_t>(world), 0.0);
  std::vector<double> bytes(static_cast<std::size_t>(world), 0.0);
  for (int t = 0; t < static_cast<int>(model.tables.size()); ++t) {
    const ShardingOption chosen = torchrec_choice(costs, g, t, host_size);
    plan.sharding[static_cast<std::size_t>(t)] = chosen.sharding;
    auto& s = plan.sharding[static_cast<std::size_t>(t)];
    if (s.type == ShardingType::kRowWise || s.type == ShardingType::kDataParallel) {
      // Spread over every rank: their load counts before the shards are placed.
      for (int m = 0; m < world; ++m) {
        load[static_cast<std::size_t>(m)] += chosen.perf / std::max(1, chosen.shards);
        bytes[static_cast<std::size_t>(m)] += chosen.shard_bytes;
      }
      continue;
    }
    const int k = sim::workload::placed_slices(s);
    s.ranks.assign(static_cast<std::size_t>(k), 0);
    for (int i = 0; i < k; ++i)
      shards.push_back({t, i, chosen.perf / (s.type == ShardingType::kTableRowWise ? 1 : k),
                        chosen.shard_bytes});
  }
  place_shards(plan, shards, g, host_size, load, bytes);
}

}  // namespace strait::planner
