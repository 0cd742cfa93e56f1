#include "sim/workload/memory_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"

#include "sim/workload/batch.hpp"
#include "sim/workload/detail/rank_memory.hpp"
#include "sim/workload/representative.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload {

double RankMemory::total() const {
  double t = 0;
  for (const auto& x : terms) t += x.bytes;
  return t;
}

const MemoryTerm& RankMemory::dominant() const {
  return *std::max_element(
      terms.begin(), terms.end(),
      [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes < b.bytes; });
}

double RankMemory::term(std::string_view name) const {
  for (const auto& x : terms) {
    if (x.name == name) return x.bytes;
  }
  return 0;
}

MemoryFit MemoryReport::fits(double capacity) const {
  MemoryFit f;
  if (ranks.empty()) return f;
  const auto worst = std::max_element(
      ranks.begin(), ranks.end(),
      [](const RankMemory& a, const RankMemory& b) { return a.total() < b.total(); });
  f.rank = worst->rank;
  f.total = worst->total();
  f.excess = f.total - capacity;
  f.fits = f.excess <= 0;
  if (worst->terms.empty()) return f;
  f.dominant = worst->dominant().name;
  f.dominant_bytes = worst->dominant().bytes;
  return f;
}

MemoryReport memory_per_rank(const TrainingScenario& sc, int representative_ranks) {
  return memory_per_rank(sc, sample_steps(sc, sc.steps), representative_ranks);
}

MemoryReport memory_per_rank(const TrainingScenario& sc,
                             const std::vector<std::vector<ReplicaBatch>>& batches,
                             int representative_ranks) {
  const Layout& L = sc.layout;
  const int host_size =
      sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
  const detail::DenseStack stack(sc.model, sc.plan);
  const ShardMap map = ShardMap::build(sc.model, sc.plan, L.sparse.size, host_size);
  if (static_cast<int>(batches.size()) < sc.steps)
    throw Error(fmt::format("memory: {} steps' batches for a scenario of {} steps", batches.size(),
                            sc.steps));
  const detail::RankMemoryModel model(sc, stack, map, sc.steps);
  std::vector<detail::LayerWorkMemo> layer_work(static_cast<std::size_t>(sc.steps));
  MemoryReport report;
  report.ranks.resize(static_cast<std::size_t>(L.world));
  const int M = L.sparse.size;
  for (int r = 0; r < L.world; ++r) report.ranks[static_cast<std::size_t>(r)].rank = r;
  for (const auto& [block, members] :
       workload::representative_ranks(sc, batches.front(), map, representative_ranks)) {
    const auto owned = detail::group_traffic(sc, map, batches, sc.steps, block);
    std::vector<const detail::SparseTraffic*> traffic;
    traffic.reserve(owned.size());
    for (const auto& t : owned) traffic.push_back(t.get());
    const auto buffers = model.output_buffers(traffic, members);
    for (const int i : members) {
      const int rank = block * M + i;
      report.ranks[static_cast<std::size_t>(rank)] =
          model.rank(rank, i, buffers[static_cast<std::size_t>(i)], batches, layer_work);
    }
  }
  return report;
}

}  // namespace strait::sim::workload
