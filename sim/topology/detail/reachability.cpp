#include "sim/topology/detail/reachability.hpp"

#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include "sim/core/error.hpp"
#include "sim/topology/detail/hop_graph.hpp"

namespace strait::sim::topology::detail {
namespace {

// True if all GPUs attach, in and out, to one strongly connected component of the
// non-GPU nodes: then any GPU reaches any other through that component.
bool all_attach_to_one_fabric(const Cluster& cluster) {
  const auto& nodes = cluster.nodes();
  const auto is_gpu = [&](NodeIndex n) { return nodes[n].kind == NodeKind::kGpu; };
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> fabric(nodes.size());
  for (const Link& l : cluster.links()) {
    if (!is_gpu(l.src) && !is_gpu(l.dst)) boost::add_edge(l.src, l.dst, fabric);
  }
  std::vector<int> component(nodes.size());
  boost::strong_components(fabric, component.data());

  // The shared fabric is the component most GPU links enter (a host's NVSwitch is a
  // component of its own that only its GPUs reach).
  constexpr int kNone = -1;
  int shared = kNone;
  std::vector<int> entering(nodes.size(), 0);
  for (const Link& l : cluster.links()) {
    if (is_gpu(l.src) && !is_gpu(l.dst)) {
      const int c = component[l.dst];
      if (shared == kNone ||
          ++entering[static_cast<std::size_t>(c)] > entering[static_cast<std::size_t>(shared)]) {
        shared = c;
      }
    }
  }
  if (shared == kNone) return false;
  std::vector<char> reaches_shared(nodes.size(), 0), reached_from_shared(nodes.size(), 0);
  for (const Link& l : cluster.links()) {
    if (is_gpu(l.src) && !is_gpu(l.dst) && component[l.dst] == shared) reaches_shared[l.src] = 1;
    if (!is_gpu(l.src) && is_gpu(l.dst) && component[l.src] == shared) {
      reached_from_shared[l.dst] = 1;
    }
  }
  for (const Gpu& g : cluster.gpus()) {
    if (!reaches_shared[g.node] || !reached_from_shared[g.node]) return false;
  }
  return true;
}

}  // namespace

std::optional<std::pair<int, int>> find_unreachable_gpu_pair(const Cluster& cluster) {
  if (cluster.gpu_count() < 2 || all_attach_to_one_fabric(cluster)) return std::nullopt;
  HopGraph graph(cluster);
  std::vector<std::uint16_t> dist;
  for (int dst = 0; dst < cluster.gpu_count(); ++dst) {
    graph.distances_to(cluster.gpu(dst).node, dist);
    for (int src = 0; src < cluster.gpu_count(); ++src) {
      if (dist[cluster.gpu(src).node] == kUnreachable) return std::make_pair(src, dst);
    }
  }
  return std::nullopt;
}

void check_all_gpus_connected(const Cluster& cluster, const std::string& file,
                              const std::string& where) {
  if (auto pair = find_unreachable_gpu_pair(cluster)) {
    throw ConfigError(
        file, where,
        fmt::format("GPU \"{}\" cannot reach GPU \"{}\" (every GPU must reach every other GPU)",
                    cluster.nodes()[cluster.gpu(pair->first).node].name,
                    cluster.nodes()[cluster.gpu(pair->second).node].name));
  }
}

}  // namespace strait::sim::topology::detail
