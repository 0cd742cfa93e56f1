#include "sim/network/detail/rank_layout.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::network::detail {

RankLayout make_rank_layout(const CollectiveSpec& spec, const topology::Cluster& cluster) {
  RankLayout layout;
  layout.n = static_cast<int>(spec.gpus.size());
  if (layout.n == 0) throw Error("collective: the rank set is empty");
  // A mark per cluster GPU, kept between calls and cleared for the GPUs marked: a fresh one
  // per call zeroed O(cluster) bytes for every collective, which at 131,072 GPUs (most
  // collectives context-parallel pairs) was most of the analytical replay's time.
  thread_local std::vector<char> seen;
  if (seen.size() < static_cast<std::size_t>(cluster.gpu_count()))
    seen.resize(static_cast<std::size_t>(cluster.gpu_count()), 0);
  std::size_t marked = 0;
  const auto unmark = [&] {
    for (std::size_t i = 0; i < marked; ++i) seen[static_cast<std::size_t>(spec.gpus[i])] = 0;
  };
  for (int g : spec.gpus) {
    if (g < 0 || g >= cluster.gpu_count()) {
      unmark();
      throw Error(fmt::format("collective: GPU {} does not exist (cluster '{}' has GPUs 0..{})", g,
                              cluster.name(), cluster.gpu_count() - 1));
    }
    if (seen[static_cast<std::size_t>(g)]) {
      unmark();
      throw Error(fmt::format("collective: GPU {} appears twice in the rank set", g));
    }
    seen[static_cast<std::size_t>(g)] = 1;
    ++marked;
  }
  unmark();
  layout.order.resize(static_cast<std::size_t>(layout.n));
  std::iota(layout.order.begin(), layout.order.end(), 0);
  auto key = [&](int r) {
    const auto& g = cluster.gpu(spec.gpus[static_cast<std::size_t>(r)]);
    return std::tuple(g.datacenter, g.host, g.local_index);
  };
  std::stable_sort(layout.order.begin(), layout.order.end(),
                   [&](int a, int b) { return key(a) < key(b); });

  int last_host = -1, last_dc = -1;
  for (int r : layout.order) {
    const auto& g = cluster.gpu(spec.gpus[static_cast<std::size_t>(r)]);
    if (g.datacenter != last_dc) {
      layout.datacenters.emplace_back();
      last_dc = g.datacenter;
      last_host = -1;
    }
    if (g.host != last_host) {
      layout.datacenters.back().push_back(static_cast<int>(layout.hosts.size()));
      layout.hosts.emplace_back();
      last_host = g.host;
    }
    layout.hosts.back().push_back(r);
  }
  for (const auto& h : layout.hosts) {
    layout.uniform_hosts = layout.uniform_hosts && h.size() == layout.hosts.front().size();
  }
  for (const auto& d : layout.datacenters) {
    layout.uniform_datacenters =
        layout.uniform_datacenters && d.size() == layout.datacenters.front().size();
  }
  std::set<int> rails;
  for (int r : layout.hosts.front())
    rails.insert(cluster.gpu(spec.gpus[static_cast<std::size_t>(r)]).rail);
  layout.rails = static_cast<int>(rails.size());
  return layout;
}

}  // namespace strait::sim::network::detail
