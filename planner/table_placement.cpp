#include "planner/table_placement.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "planner/cost_model.hpp"
#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/batch.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner {
namespace {

using sim::workload::ShardingType;

using sim::cost::kIdBytes;

struct Slice {
  int table = 0;
  int index = 0;  // column slice
  double cost = 0, bytes = 0;
  bool block = false;
};

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

namespace {

// A group's slices while place_tables places them, and the load they put on its members.
struct Placement {
  int group_size = 1, host_size = 1;
  double cap = 0;                   // weight bytes a member may hold
  std::vector<Slice> slices;        // by cost, largest first (once sorted)
  std::vector<int> preset;          // member per slice kept from the plan (-1: to place)
  std::vector<int> where;           // member per slice (block start for block slices)
  std::vector<double> load, bytes;  // per member: seconds per step, weight bytes

  // Adds (sign 1) or takes away (-1) slice i's load on member m (its block from m on).
  void add(std::size_t i, int m, double sign) {
    const Slice& s = slices[i];
    const int width = s.block ? host_size : 1;
    for (int j = 0; j < width; ++j) {
      load[static_cast<std::size_t>(m + j)] += sign * s.cost;
      bytes[static_cast<std::size_t>(m + j)] += sign * s.bytes;
    }
  }
  // True when the local search may move slice i: one member wide, not kept from the plan.
  bool movable(std::size_t i) const { return !slices[i].block && preset[i] < 0; }
};

// The members table `s` names when they place every slice of it (each in the group, block
// slices on a block start), else none.
std::vector<int> kept_ranks(const sim::workload::TableSharding& s, int group_size, int host_size) {
  const int k = sim::workload::placed_slices(s);
  const bool keep =
      k > 0 && static_cast<int>(s.ranks.size()) == k &&
      std::all_of(s.ranks.begin(), s.ranks.end(), [&](int m) {
        return m >= 0 &&
               m + (sim::workload::spans_host_block(s.type) ? host_size : 1) <= group_size &&
               (!sim::workload::spans_host_block(s.type) || m % host_size == 0);
      });
  return keep ? s.ranks : std::vector<int>{};
}

// Every table's slices with their cost and bytes, those the plan places kept (preset);
// row-wise tables load every member. Resets each table's ranks to one 0 per slice.
void collect_slices(sim::workload::ParallelPlan& plan, const TableCosts& costs, int cp,
                    Placement& p) {
  const int group_size = p.group_size;
  for (int t = 0; t < static_cast<int>(plan.sharding.size()); ++t) {
    auto& s = plan.sharding[static_cast<std::size_t>(t)];
    const int k = sim::workload::placed_slices(s);
    const std::vector<int> given = kept_ranks(s, group_size, p.host_size);
    s.ranks.clear();
    if (s.type == ShardingType::kRowWise) {
      const double c = costs.slice_seconds(t, 1, 1.0 / group_size, group_size, cp);
      const double b = costs.slice_bytes(t, 1, 1.0 / group_size);
      for (int m = 0; m < group_size; ++m) {
        p.load[static_cast<std::size_t>(m)] += c;
        p.bytes[static_cast<std::size_t>(m)] += b;
      }
    }
    const double f = sim::workload::slice_column_fraction(s);
    const bool block = sim::workload::spans_host_block(s.type);
    const double r = block ? 1.0 / p.host_size : 1.0;
    for (int i = 0; i < k; ++i) {
      p.slices.push_back(
          {t, i, costs.slice_seconds(t, f, r, group_size, cp), costs.slice_bytes(t, f, r), block});
      p.preset.push_back(given.empty() ? -1 : given[static_cast<std::size_t>(i)]);
    }
    s.ranks.assign(static_cast<std::size_t>(k), 0);
  }
}

// Orders the slices (and their presets) by cost, largest first, ties in table order.
void sort_by_cost(Placement& p) {
  std::vector<std::size_t> by_cost(p.slices.size());
  std::iota(by_cost.begin(), by_cost.end(), std::size_t{0});
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) {
    return p.slices[a].cost > p.slices[b].cost;
  });
  std::vector<Slice> sorted;
  std::vector<int> kept;
  for (auto i : by_cost) sorted.push_back(p.slices[i]), kept.push_back(p.preset[i]);
  p.slices = std::move(sorted);
  p.preset = std::move(kept);
}

// The member (block start) for slice i: the least loaded whose bytes stay under the cap,
// else the one holding the fewest bytes.
int least_loaded_fit(const Placement& p, std::size_t i) {
  const Slice& s = p.slices[i];
  const int width = s.block ? p.host_size : 1;
  const int options = s.block ? p.group_size / p.host_size : p.group_size;
  int best = -1, fallback = 0;
  double best_load = std::numeric_limits<double>::infinity();
  double least_bytes = std::numeric_limits<double>::infinity();
  for (int o = 0; o < options; ++o) {
    const int m = o * width;
    double l = 0, b = 0;
    for (int j = 0; j < width; ++j) {
      l = std::max(l, p.load[static_cast<std::size_t>(m + j)]);
      b = std::max(b, p.bytes[static_cast<std::size_t>(m + j)]);
    }
    if (b < least_bytes) least_bytes = b, fallback = m;
    if (b + s.bytes <= p.cap && l < best_load) best_load = l, best = m;
  }
  return best >= 0 ? best : fallback;
}

// Moves single-member slice i from `hot` to m when that lowers the larger of the two
// loads (`before`) and m's bytes stay under the cap.
bool try_move(Placement& p, std::size_t i, int hot, int m, double before) {
  const Slice& s = p.slices[i];
  if (std::max(p.load[static_cast<std::size_t>(hot)] - s.cost,
               p.load[static_cast<std::size_t>(m)] + s.cost) < before - 1e-12 &&
      p.bytes[static_cast<std::size_t>(m)] + s.bytes <= p.cap) {
    p.add(i, hot, -1);
    p.add(i, m, 1);
    p.where[i] = m;
    return true;
  }
  return false;
}

// Swaps slice i on `hot` with the first cheaper movable slice on m that lowers the larger
// of the two loads (`before`) and keeps m's bytes under the cap.
bool try_swap(Placement& p, std::size_t i, int hot, int m, double before) {
  const auto& slices = p.slices;
  for (std::size_t j = 0; j < slices.size(); ++j) {
    if (!p.movable(j) || p.where[j] != m || slices[j].cost >= slices[i].cost) continue;
    const double d = slices[i].cost - slices[j].cost;
    if (std::max(p.load[static_cast<std::size_t>(hot)] - d,
                 p.load[static_cast<std::size_t>(m)] + d) < before - 1e-12 &&
        p.bytes[static_cast<std::size_t>(m)] + slices[i].bytes - slices[j].bytes <= p.cap) {
      p.add(i, hot, -1);
      p.add(j, m, -1);
      p.add(i, m, 1);
      p.add(j, hot, 1);
      p.where[i] = m;
      p.where[j] = hot;
      return true;
    }
  }
  return false;
}

// Local search: move or swap single-member slices off the most loaded member while that
// lowers the larger of the two loads.
void unload_hot_member(Placement& p) {
  const auto& load = p.load;
  for (int iter = 0; iter < 4 * static_cast<int>(p.slices.size()) + 8; ++iter) {
    const int hot = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    bool improved = false;
    for (std::size_t i = 0; i < p.slices.size() && !improved; ++i) {
      if (!p.movable(i) || p.where[i] != hot) continue;
      for (int m = 0; m < p.group_size && !improved; ++m) {
        if (m == hot) continue;
        const double before =
            std::max(load[static_cast<std::size_t>(hot)], load[static_cast<std::size_t>(m)]);
        improved = try_move(p, i, hot, m, before) || try_swap(p, i, hot, m, before);
      }
    }
    if (!improved) break;
  }
}

}  // namespace

void place_tables(sim::workload::ParallelPlan& plan, const TableCosts& costs, int group_size,
                  int host_size, int cp) {
  Placement p;
  p.group_size = group_size;
  p.host_size = sim::workload::host_block_size(host_size, group_size);
  p.cap = costs.memory_capacity() / 2;
  p.load.assign(static_cast<std::size_t>(group_size), 0.0);
  p.bytes.assign(static_cast<std::size_t>(group_size), 0.0);
  collect_slices(plan, costs, cp, p);
  sort_by_cost(p);
  p.where.assign(p.slices.size(), 0);
  // Slices the plan already places (a neighbour of a found plan) stay and load their members.
  for (std::size_t i = 0; i < p.slices.size(); ++i) {
    if (p.preset[i] < 0) continue;
    p.where[i] = p.preset[i];
    p.add(i, p.where[i], 1);
  }
  for (std::size_t i = 0; i < p.slices.size(); ++i) {
    if (p.preset[i] >= 0) continue;
    p.where[i] = least_loaded_fit(p, i);
    p.add(i, p.where[i], 1);
  }
  unload_hot_member(p);
  for (std::size_t i = 0; i < p.slices.size(); ++i) {
    plan.sharding[static_cast<std::size_t>(p.slices[i].table)]
        .ranks[static_cast<std::size_t>(p.slices[i].index)] = p.where[i];
  }
}

namespace {

// A slice as a plan places it, for placement_moves.
struct Placed {
  int table, index, member, width;
  double cost, bytes;
};

// A move (other == kNone) or swap placement_moves proposes.
struct Move {
  double peak;  // predicted larger load of the two members afterwards
  std::size_t slice, other;
  int to;
};
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// The slices `plan` places (every member of theirs in the group), with their costs; adds
// their weight bytes to their members' `bytes`.
std::vector<Placed> placed_slices(const sim::workload::ParallelPlan& plan, const TableCosts& costs,
                                  int host_size, int cp, std::vector<double>& bytes) {
  const int group_size = static_cast<int>(bytes.size());
  std::vector<Placed> placed;
  for (int t = 0; t < static_cast<int>(plan.sharding.size()); ++t) {
    const auto& s = plan.sharding[static_cast<std::size_t>(t)];
    const int k = sim::workload::placed_slices(s);
    if (static_cast<int>(s.ranks.size()) != k) continue;
    const int width = sim::workload::spans_host_block(s.type) ? host_size : 1;
    const double f = sim::workload::slice_column_fraction(s);
    const double r = width > 1 ? 1.0 / host_size : 1.0;
    for (int i = 0; i < k; ++i) {
      const int m = s.ranks[static_cast<std::size_t>(i)];
      if (m < 0 || m + width > group_size) continue;
      placed.push_back({t, i, m, width, costs.slice_seconds(t, f, r, group_size, cp),
                        costs.slice_bytes(t, f, r)});
      for (int j = 0; j < width; ++j) bytes[static_cast<std::size_t>(m + j)] += placed.back().bytes;
    }
  }
  return placed;
}

// The largest measured seconds among members m .. m + width - 1.
double peak_seconds(const std::vector<double>& member_seconds, int m, int width) {
  double l = 0;
  for (int j = 0; j < width; ++j) l = std::max(l, member_seconds[static_cast<std::size_t>(m + j)]);
  return l;
}

// Moves and swaps of slice i, which sits on the `hot` member, to every other member or
// block that lower the hot member's load and keep both sides' bytes under `cap`.
void moves_of(const std::vector<Placed>& placed, std::size_t i,
              const std::vector<double>& member_seconds, int hot, const std::vector<double>& bytes,
              double cap, std::vector<Move>& moves) {
  const int group_size = static_cast<int>(member_seconds.size());
  const double hot_load = member_seconds[static_cast<std::size_t>(hot)];
  const auto& a = placed[i];
  for (int to = 0; to + a.width <= group_size; to += a.width) {
    if (to == a.member) continue;
    const double dest = peak_seconds(member_seconds, to, a.width);
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

// Up to `count` copies of `plan`, each with one of `moves` made, in their order.
std::vector<sim::workload::ParallelPlan> plans_of(const sim::workload::ParallelPlan& plan,
                                                  const std::vector<Placed>& placed,
                                                  const std::vector<Move>& moves, int count) {
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

}  // namespace

std::vector<sim::workload::ParallelPlan> placement_moves(const sim::workload::ParallelPlan& plan,
                                                         const TableCosts& costs,
                                                         const std::vector<double>& member_seconds,
                                                         int host_size, int cp, int count) {
  const int group_size = static_cast<int>(member_seconds.size());
  host_size = sim::workload::host_block_size(host_size, group_size);
  const double cap = costs.memory_capacity() / 2;
  // Weight bytes per member as placed (row-wise shares count alike on every member).
  std::vector<double> bytes(static_cast<std::size_t>(group_size), 0.0);
  const std::vector<Placed> placed = placed_slices(plan, costs, host_size, cp, bytes);
  const int hot = static_cast<int>(std::max_element(member_seconds.begin(), member_seconds.end()) -
                                   member_seconds.begin());
  std::vector<Move> moves;
  for (std::size_t i = 0; i < placed.size(); ++i) {
    if (hot < placed[i].member || hot >= placed[i].member + placed[i].width) continue;
    moves_of(placed, i, member_seconds, hot, bytes, cap, moves);
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& x, const Move& y) { return x.peak < y.peak; });
  return plans_of(plan, placed, moves, count);
}

}  // namespace strait::planner
