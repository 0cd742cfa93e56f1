#include "sim/workload/representative.hpp"

#include <algorithm>
#include <cstdint>

namespace strait::sim::workload {
namespace {

/// The replica whose batch costs most (the first of equals).
int costliest_replica(const std::vector<ReplicaBatch>& batches) {
  const auto heaviest = std::max_element(
      batches.begin(), batches.end(),
      [](const ReplicaBatch& a, const ReplicaBatch& b) { return a.cost < b.cost; });
  return static_cast<int>(heaviest - batches.begin());
}

void sort_unique(std::vector<int>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// Members of `block` that stand for all its `size` members.
std::vector<int> representative_members(const TrainingScenario& scenario,
                                        const std::vector<ReplicaBatch>& batches,
                                        const ShardMap& map, int block, int min_ranks) {
  const Layout& layout = scenario.layout;
  const int size = std::max(1, layout.sparse.size);
  std::vector<int> out;
  if (min_ranks <= 0 || size <= min_ranks) {
    for (int i = 0; i < size; ++i) out.push_back(i);
    return out;
  }
  for (int k = 0; k < min_ranks; ++k)
    out.push_back(static_cast<int>(std::int64_t{k} * size / min_ranks));
  const auto add_rank = [&](int rank) {
    if (rank / size == block) out.push_back(rank % size);
  };
  if (!batches.empty()) {
    const int first = costliest_replica(batches) * layout.cp.size;
    for (int c = 0; c < layout.cp.size; ++c) add_rank(first + c);
  }
  for (const auto& s : scenario.hardware.slow_ranks) add_rank(s.rank);
  // Members whose shards differ: those holding a placed slice (a table-row-wise or grid
  // slice spreads over its host-sized block, whose members all hold part of it).
  for (std::size_t m = 0; m < map.member_shards.size(); ++m) {
    for (const Shard& shard : map.member_shards[m]) {
      const ShardingType type = map.type[static_cast<std::size_t>(shard.table)];
      if (type != ShardingType::kRowWise && type != ShardingType::kDataParallel) {
        out.push_back(static_cast<int>(m));
        break;
      }
    }
  }
  sort_unique(out);
  return out;
}

}  // namespace

std::vector<int> representative_blocks(const TrainingScenario& scenario,
                                       const std::vector<ReplicaBatch>& batches, int min_ranks) {
  const Layout& layout = scenario.layout;
  const int size = std::max(1, layout.sparse.size);
  const int blocks = layout.world / size;
  std::vector<int> out;
  if (min_ranks <= 0 || layout.world <= min_ranks) {
    for (int b = 0; b < blocks; ++b) out.push_back(b);
    return out;
  }
  const int want = std::min(blocks, std::max(1, (min_ranks + size - 1) / size));
  for (int k = 0; k < want; ++k) out.push_back(static_cast<int>(std::int64_t{k} * blocks / want));
  if (!batches.empty()) out.push_back(costliest_replica(batches) * layout.cp.size / size);
  for (const auto& s : scenario.hardware.slow_ranks) {
    if (s.rank >= 0 && s.rank < layout.world) out.push_back(s.rank / size);
  }
  sort_unique(out);
  return out;
}

std::vector<RepresentativeBlock> representative_ranks(const TrainingScenario& scenario,
                                                      const std::vector<ReplicaBatch>& batches,
                                                      const ShardMap& map, int min_ranks) {
  std::vector<RepresentativeBlock> out;
  for (int block : representative_blocks(scenario, batches, min_ranks))
    out.push_back({block, representative_members(scenario, batches, map, block, min_ranks)});
  return out;
}

}  // namespace strait::sim::workload
