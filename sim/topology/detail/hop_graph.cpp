#include "sim/topology/detail/hop_graph.hpp"

#include <utility>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/property_map/property_map.hpp>

namespace strait::sim::topology::detail {
namespace {

// Keeps a reversed edge (original link u -> v, stored as v -> u) only if v may be
// expanded: v is no GPU, or v is the destination itself.
template <typename Graph>
struct NoTransitThroughGpus {
  const Graph* graph = nullptr;
  const std::vector<char>* is_gpu = nullptr;
  NodeIndex destination = 0;

  template <typename Edge>
  bool operator()(const Edge& e) const {
    const NodeIndex v = boost::source(e, *graph);
    return (*is_gpu)[v] == 0 || v == destination;
  }
};

}  // namespace

HopGraph::HopGraph(const Cluster& cluster) {
  std::vector<std::pair<NodeIndex, NodeIndex>> edges;
  edges.reserve(cluster.links().size());
  for (const Link& l : cluster.links()) edges.emplace_back(l.dst, l.src);
  reversed_ = Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                    static_cast<NodeIndex>(cluster.nodes().size()));
  is_gpu_.reserve(cluster.nodes().size());
  for (const Node& n : cluster.nodes()) is_gpu_.push_back(n.kind == NodeKind::kGpu ? 1 : 0);
}

void HopGraph::distances_to(NodeIndex dst, std::vector<std::uint16_t>& dist) const {
  dist.assign(is_gpu_.size(), kUnreachable);
  dist[dst] = 0;
  NoTransitThroughGpus<Graph> keep{&reversed_, &is_gpu_, dst};
  boost::filtered_graph<Graph, NoTransitThroughGpus<Graph>> graph(reversed_, keep);
  auto distance_map =
      boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, reversed_));
  boost::breadth_first_search(graph, dst,
                              boost::visitor(boost::make_bfs_visitor(
                                  boost::record_distances(distance_map, boost::on_tree_edge()))));
}

}  // namespace strait::sim::topology::detail
