#pragma once
// The algorithm builders behind build_schedule: ring and chain, tree, hierarchical,
// all-to-all. Each appends phases to ctx.schedule.

#include "sim/network/detail/rank_layout.hpp"
#include "sim/network/schedule.hpp"

namespace strait::sim::network::detail {

struct BuildContext {
  const CollectiveSpec& spec;
  const RankLayout& layout;
  const ScheduleOptions& options;
  Schedule& schedule;
  const topology::Cluster& cluster;
};

/// Dispatches on (op, algorithm); throws strait::Error for combinations that do not exist.
void build_phases(BuildContext& ctx);

void build_ring(BuildContext& ctx);
void build_tree(BuildContext& ctx);
void build_hierarchical(BuildContext& ctx);
void build_all_to_all(BuildContext& ctx);
void build_nvls(BuildContext& ctx);
void build_nvls_tree(BuildContext& ctx);

/// Rings over `layout` for `channels` channels: host blocks visited in order; inside a
/// host the order alternates direction on an even number of hosts so each channel leaves
/// and enters hosts on the same rail, and rotates by the channel otherwise.
std::vector<std::vector<int>> channel_rings(const RankLayout& layout, int channels);
/// Adds one step of every ring (ring[i] -> ring[i+1], wrapping) to `phase`.
void add_ring_step(Phase& phase, const std::vector<std::vector<int>>& rings, Bytes bytes);
/// Lanes for a message of `bytes` per transfer: ceil(bytes / chunk_bytes), capped.
int chunk_count(Bytes bytes, const ScheduleOptions& options);

}  // namespace strait::sim::network::detail
