#include "planner/table_placement.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "planner/cost_model.hpp"
#include "sim/workload/batch.hpp"

namespace strait::planner {
namespace {

using sim::workload::ShardingType;

constexpr double kIdBytes = 8;

struct Slice {
  int table = 0;
  int index = 0;  // column slice
  double cost = 0, bytes = 0;
  bool block = false;
};

bool is_block(ShardingType t) {
  return t == ShardingType::kTableRowWise || t == ShardingType::kGrid;
}

int slices_of(const sim::workload::TableSharding& s) {
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

}  // namespace

TableCosts::TableCosts(const sim::workload::TrainingScenario& base,
                       const sim::cost::CostModel& kernels)
    : model_(&base.model) {
  const auto batches = sim::workload::sample_step(base, 0);
  ids_.assign(base.model.tables.size(), 0.0);
  for (const auto& b : batches) {
    for (std::size_t t = 0; t < ids_.size(); ++t) ids_[t] += b.ids[t];
    samples_ += static_cast<double>(b.samples);
  }
  const double n = std::max<std::size_t>(1, batches.size());
  for (auto& x : ids_) x /= n;
  samples_ /= n;
  const auto& device = kernels.device(base.cluster.gpu(0).type);
  hbm_bw_ = device.hbm_bandwidth;
  capacity_ = planner::memory_capacity(base, kernels);
  double nic = 0, nvl = 0;
  for (const auto& l : base.cluster.links()) {
    if (l.link_class == sim::topology::LinkClass::kScaleOut)
      nic = nic == 0 ? l.bandwidth : std::min(nic, l.bandwidth);
    if (l.link_class == sim::topology::LinkClass::kNvlink)
      nvl = nvl == 0 ? l.bandwidth : std::min(nvl, l.bandwidth);
  }
  nvlink_bw_ = nvl > 0 ? nvl : hbm_bw_;
  nic_bw_ = nic > 0 ? nic : nvlink_bw_;
}

double TableCosts::slice_seconds(int table, double f, double r, int group_size, int cp) const {
  const auto& t = model_->tables[static_cast<std::size_t>(table)];
  const double e = sim::workload::bytes_per_element(model_->embedding_dtype);
  const double w = t.dim * f;
  const double group_ids = group_size * ids_[static_cast<std::size_t>(table)] / cp * r;
  const double hbm = group_ids * (w * e + kIdBytes) + 3 * group_ids * w * e;
  const double out = t.pooling == sim::workload::Pooling::kSequence
                         ? group_ids * w * e
                         : group_size * samples_ / cp * w * e;
  return hbm / hbm_bw_ + (group_ids * kIdBytes + 2 * out) / nic_bw_;
}

double TableCosts::slice_bytes(int table, double f, double r) const {
  const auto& t = model_->tables[static_cast<std::size_t>(table)];
  return static_cast<double>(t.rows) * r * t.dim * f *
         sim::workload::bytes_per_element(model_->embedding_dtype);
}

void place_tables(sim::workload::ParallelPlan& plan, const TableCosts& costs, int group_size,
                  int host_size, int cp) {
  host_size = std::max(1, std::min(host_size, group_size));
  if (group_size % host_size != 0) host_size = 1;
  const int blocks = group_size / host_size;
  std::vector<double> load(static_cast<std::size_t>(group_size), 0.0);
  std::vector<double> bytes(static_cast<std::size_t>(group_size), 0.0);
  std::vector<Slice> slices;
  const int n = static_cast<int>(plan.sharding.size());
  std::vector<int> preset;  // member per slice kept from the plan (-1: to place)
  for (int t = 0; t < n; ++t) {
    auto& s = plan.sharding[static_cast<std::size_t>(t)];
    const int k = slices_of(s);
    const bool keep = k > 0 && static_cast<int>(s.ranks.size()) == k &&
                      std::all_of(s.ranks.begin(), s.ranks.end(), [&](int m) {
                        return m >= 0 && m + (is_block(s.type) ? host_size : 1) <= group_size &&
                               (!is_block(s.type) || m % host_size == 0);
                      });
    const std::vector<int> given = keep ? s.ranks : std::vector<int>{};
    s.ranks.clear();
    if (s.type == ShardingType::kRowWise) {
      const double c = costs.slice_seconds(t, 1, 1.0 / group_size, group_size, cp);
      const double b = costs.slice_bytes(t, 1, 1.0 / group_size);
      for (int m = 0; m < group_size; ++m) {
        load[static_cast<std::size_t>(m)] += c;
        bytes[static_cast<std::size_t>(m)] += b;
      }
    }
    const double f = s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid
                         ? 1.0 / s.column_shards
                         : 1.0;
    const bool block = is_block(s.type);
    const double r = block ? 1.0 / host_size : 1.0;
    for (int i = 0; i < k; ++i) {
      slices.push_back(
          {t, i, costs.slice_seconds(t, f, r, group_size, cp), costs.slice_bytes(t, f, r), block});
      preset.push_back(keep ? given[static_cast<std::size_t>(i)] : -1);
    }
    s.ranks.assign(static_cast<std::size_t>(k), 0);
  }
  std::vector<std::size_t> by_cost(slices.size());
  std::iota(by_cost.begin(), by_cost.end(), std::size_t{0});
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](std::size_t a, std::size_t b) { return slices[a].cost > slices[b].cost; });
  {
    std::vector<Slice> sorted;
    std::vector<int> kept;
    for (auto i : by_cost) sorted.push_back(slices[i]), kept.push_back(preset[i]);
    slices = std::move(sorted);
    preset = std::move(kept);
  }
  const double cap = costs.memory_capacity() / 2;
  std::vector<int> where(slices.size(), 0);  // member (block start for block slices)
  auto add = [&](std::size_t i, int m, double sign) {
    const Slice& s = slices[i];
    const int width = s.block ? host_size : 1;
    for (int j = 0; j < width; ++j) {
      load[static_cast<std::size_t>(m + j)] += sign * s.cost;
      bytes[static_cast<std::size_t>(m + j)] += sign * s.bytes;
    }
  };
  // Slices the plan already places (a neighbour of a found plan) stay and load their members.
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (preset[i] < 0) continue;
    where[i] = preset[i];
    add(i, where[i], 1);
  }
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (preset[i] >= 0) continue;
    const Slice& s = slices[i];
    const int width = s.block ? host_size : 1;
    const int options = s.block ? blocks : group_size;
    int best = -1, fallback = 0;
    double best_load = std::numeric_limits<double>::infinity();
    double least_bytes = std::numeric_limits<double>::infinity();
    for (int o = 0; o < options; ++o) {
      const int m = o * width;
      double l = 0, b = 0;
      for (int j = 0; j < width; ++j) {
        l = std::max(l, load[static_cast<std::size_t>(m + j)]);
        b = std::max(b, bytes[static_cast<std::size_t>(m + j)]);
      }
      if (b < least_bytes) least_bytes = b, fallback = m;
      if (b + s.bytes <= cap && l < best_load) best_load = l, best = m;
    }
    where[i] = best >= 0 ? best : fallback;
    add(i, where[i], 1);
  }
  // Local search: move or swap single-member slices off the most loaded member.
  for (int iter = 0; iter < 4 * static_cast<int>(slices.size()) + 8; ++iter) {
    const int hot = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    bool improved = false;
    for (std::size_t i = 0; i < slices.size() && !improved; ++i) {
      if (slices[i].block || preset[i] >= 0 || where[i] != hot) continue;
      for (int m = 0; m < group_size && !improved; ++m) {
        if (m == hot) continue;
        const double before =
            std::max(load[static_cast<std::size_t>(hot)], load[static_cast<std::size_t>(m)]);
        // Move.
        if (std::max(load[static_cast<std::size_t>(hot)] - slices[i].cost,
                     load[static_cast<std::size_t>(m)] + slices[i].cost) < before - 1e-12 &&
            bytes[static_cast<std::size_t>(m)] + slices[i].bytes <= cap) {
          add(i, hot, -1);
          add(i, m, 1);
          where[i] = m;
          improved = true;
          break;
        }
        // Swap with a cheaper slice on m.
        for (std::size_t j = 0; j < slices.size(); ++j) {
          if (slices[j].block || preset[j] >= 0 || where[j] != m ||
              slices[j].cost >= slices[i].cost)
            continue;
          const double d = slices[i].cost - slices[j].cost;
          if (std::max(load[static_cast<std::size_t>(hot)] - d,
                       load[static_cast<std::size_t>(m)] + d) < before - 1e-12 &&
              bytes[static_cast<std::size_t>(m)] + slices[i].bytes - slices[j].bytes <= cap) {
            add(i, hot, -1);
            add(j, m, -1);
            add(i, m, 1);
            add(j, hot, 1);
            where[i] = m;
            where[j] = hot;
            improved = true;
            break;
          }
        }
      }
    }
    if (!improved) break;
  }
  for (std::size_t i = 0; i < slices.size(); ++i) {
    plan.sharding[static_cast<std::size_t>(slices[i].table)]
        .ranks[static_cast<std::size_t>(slices[i].index)] = where[i];
  }
}

std::vector<sim::workload::ParallelPlan> placement_moves(const sim::workload::ParallelPlan& plan,
                                                         const TableCosts& costs,
                                                         const std::vector<double>& member_seconds,
                                                         int host_size, int cp, int count) {
  const int group_size = static_cast<int>(member_seconds.size());
  host_size = std::max(1, std::min(host_size, group_size));
  if (group_size % host_size != 0) host_size = 1;
  const double cap = costs.memory_capacity() / 2;
  // Weight bytes per member as placed (row-wise shares count alike on every member).
  std::vector<double> bytes(static_cast<std::size_t>(group_size), 0.0);
  struct Placed {
    int table, index, member, width;
    double cost, bytes;
  };
  std::vector<Placed> placed;
  for (int t = 0; t < static_cast<int>(plan.sharding.size()); ++t) {
    const auto& s = plan.sharding[static_cast<std::size_t>(t)];
    const int k = slices_of(s);
    if (static_cast<int>(s.ranks.size()) != k) continue;
    const int width = is_block(s.type) ? host_size : 1;
    const double f = s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid
                         ? 1.0 / s.column_shards
                         : 1.0;
    const double r = width > 1 ? 1.0 / host_size : 1.0;
    for (int i = 0; i < k; ++i) {
      const int m = s.ranks[static_cast<std::size_t>(i)];
      if (m < 0 || m + width > group_size) continue;
      placed.push_back({t, i, m, width, costs.slice_seconds(t, f, r, group_size, cp),
                        costs.slice_bytes(t, f, r)});
      for (int j = 0; j < width; ++j) bytes[static_cast<std::size_t>(m + j)] += placed.back().bytes;
    }
  }
  auto peak = [&](int m, int width) {
    double l = 0;
    for (int j = 0; j < width; ++j)
      l = std::max(l, member_seconds[static_cast<std::size_t>(m + j)]);
    return l;
  };
  const int hot = static_cast<int>(std::max_element(member_seconds.begin(), member_seconds.end()) -
                                   member_seconds.begin());
  const double hot_load = member_seconds[static_cast<std::size_t>(hot)];
  struct Move {
    double peak;  // predicted larger load of the two members afterwards
    std::size_t slice, other;
    int to;
  };
  std::vector<Move> moves;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const auto& a = placed[i];
    if (hot < a.member || hot >= a.member + a.width) continue;
    for (int to = 0; to + a.width <= group_size; to += a.width) {
      if (to == a.member) continue;
      const double dest = peak(to, a.width);
      double after = std::max(hot_load - a.cost, dest + a.cost);
      bool fits = true;
      for (int j = 0; j < a.width; ++j)
        fits = fits && bytes[static_cast<std::size_t>(to + j)] + a.bytes <= cap;
      if (fits && after < hot_load) moves.push_back({after, i, kNone, to});
      for (std::size_t o = 0; o < placed.size(); ++o) {
        const auto& b = placed[o];
        if (b.member != to || b.width != a.width || b.cost >= a.cost) continue;
        after = std::max(hot_load - a.cost + b.cost, dest + a.cost - b.cost);
        bool swap_fits = true;
        for (int j = 0; j < a.width; ++j) {
          swap_fits = swap_fits &&
                      bytes[static_cast<std::size_t>(to + j)] + a.bytes - b.bytes <= cap &&
                      bytes[static_cast<std::size_t>(a.member + j)] + b.bytes - a.bytes <= cap;
        }
        if (swap_fits && after < hot_load) moves.push_back({after, i, o, to});
      }
    }
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& x, const Move& y) { return x.peak < y.peak; });
  std::vector<sim::workload::ParallelPlan> out;
  for (const auto& mv : moves) {
    if (static_cast<int>(out.size()) >= count) break;
    auto p = plan;
    const auto& a = placed[mv.slice];
    p.sharding[static_cast<std::size_t>(a.table)].ranks[static_cast<std::size_t>(a.index)] = mv.to;
    if (mv.other != kNone) {
      const auto& b = placed[mv.other];
      p.sharding[static_cast<std::size_t>(b.table)].ranks[static_cast<std::size_t>(b.index)] =
          a.member;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void torchrec_style_sharding(sim::workload::ParallelPlan& plan, const TableCosts& costs, int world,
                             int host_size, int cp) {
  const auto& model = costs.model();
  const double e = sim::workload::bytes_per_element(model.embedding_dtype);
  // Two bandwidth levels: NVLink when the whole world is one host, else the NIC.
  const double bw = world <= host_size ? costs.nvlink_bandwidth() : costs.nic_bandwidth();
  const double cap = costs.memory_capacity() / 2;
  // perf of one shard: fwd compute + fwd comm + bwd compute (2x) + bwd comm, summed.
  auto shard_perf = [&](int t, double f, double r, bool data_parallel) {
    const auto& tb = model.tables[static_cast<std::size_t>(t)];
    const double w = tb.dim * f;
    const double ids = costs.ids_per_replica(t) / cp;
    if (data_parallel) {
      const double compute = ids * (w * e + kIdBytes) / costs.hbm_bandwidth();
      return 3 * compute + 2 * static_cast<double>(tb.rows) * w * e / bw;
    }
    const double group_ids = world * ids * r;
    const double compute = group_ids * (w * e + kIdBytes) / costs.hbm_bandwidth();
    const double out = tb.pooling == sim::workload::Pooling::kSequence
                           ? group_ids * w * e
                           : world * costs.samples_per_replica() / cp * w * e;
    const double comm = (group_ids * kIdBytes + out) / bw;
    return 3 * compute + 2 * comm;
  };
  struct Option {
    sim::workload::TableSharding sharding;
    double perf;
    int shards;
    double shard_bytes;
  };
  struct Shard {
    int table, index;
    double perf, bytes;
  };
  std::vector<Shard> shards;
  std::vector<double> load(static_cast<std::size_t>(world), 0.0);
  std::vector<double> bytes(static_cast<std::size_t>(world), 0.0);
  for (int t = 0; t < static_cast<int>(model.tables.size()); ++t) {
    const auto& tb = model.tables[static_cast<std::size_t>(t)];
    std::vector<Option> options;
    options.push_back({{ShardingType::kTableWise, 1, {}},
                       shard_perf(t, 1, 1, false),
                       1,
                       costs.slice_bytes(t, 1, 1)});
    options.push_back({{ShardingType::kRowWise, 1, {}},
                       world * shard_perf(t, 1, 1.0 / world, false),
                       world,
                       costs.slice_bytes(t, 1, 1.0 / world)});
    const int hs = std::min(host_size, world);
    options.push_back({{ShardingType::kTableRowWise, 1, {}},
                       hs * shard_perf(t, 1, 1.0 / hs, false),
                       hs,
                       costs.slice_bytes(t, 1, 1.0 / hs)});
    for (int c = 2; c <= 8 && tb.dim % c == 0 && tb.dim / c >= 32; c *= 2) {
      options.push_back({{ShardingType::kColumnWise, c, {}},
                         c * shard_perf(t, 1.0 / c, 1, false),
                         c,
                         costs.slice_bytes(t, 1.0 / c, 1)});
    }
    options.push_back({{ShardingType::kDataParallel, 1, {}},
                       world * shard_perf(t, 1, 1, true),
                       0,
                       costs.slice_bytes(t, 1, 1)});
    std::stable_sort(options.begin(), options.end(),
                     [](const Option& a, const Option& b) { return a.perf < b.perf; });
    const auto fit = std::find_if(options.begin(), options.end(),
                                  [&](const Option& o) { return o.shard_bytes <= cap; });
    const Option& chosen = fit != options.end() ? *fit : options.front();
    plan.sharding[static_cast<std::size_t>(t)] = chosen.sharding;
    auto& s = plan.sharding[static_cast<std::size_t>(t)];
    if (s.type == ShardingType::kRowWise || s.type == ShardingType::kDataParallel) {
      for (int m = 0; m < world; ++m) {
        load[static_cast<std::size_t>(m)] += chosen.perf / std::max(1, chosen.shards);
        bytes[static_cast<std::size_t>(m)] += chosen.shard_bytes;
      }
      continue;
    }
    const int k = slices_of(s);
    s.ranks.assign(static_cast<std::size_t>(k), 0);
    for (int i = 0; i < k; ++i)
      shards.push_back({t, i, chosen.perf / (s.type == ShardingType::kTableRowWise ? 1 : k),
                        chosen.shard_bytes});
  }
  std::stable_sort(shards.begin(), shards.end(),
                   [](const Shard& a, const Shard& b) { return a.perf > b.perf; });
  const int hs = std::max(1, std::min(host_size, world));
  for (const auto& sh : shards) {
    const bool block =
        plan.sharding[static_cast<std::size_t>(sh.table)].type == ShardingType::kTableRowWise;
    const int width = block && world % hs == 0 ? hs : 1;
    int best = 0;
    double best_load = std::numeric_limits<double>::infinity();
    for (int m = 0; m + width <= world; m += width) {
      double l = 0;
      for (int j = 0; j < width; ++j) l += load[static_cast<std::size_t>(m + j)];
      if (bytes[static_cast<std::size_t>(m)] + sh.bytes <= cap && l < best_load)
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

}  // namespace strait::planner
