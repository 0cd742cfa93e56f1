#pragma once
// HopGraph: the links of a Cluster reversed into a Boost.Graph CSR graph, for
// breadth-first searches of hop distances towards one destination.
//
// GPUs are endpoints, never transit: a path may start at a GPU and end at one, but no
// path passes through a GPU (traffic between hosts goes through NICs and switches, not
// through a third GPU's NVLink and PCIe links). The search enforces this by never
// expanding a GPU other than the destination.

#include <cstdint>
#include <limits>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "sim/topology/cluster.hpp"

namespace strait::sim::topology::detail {

inline constexpr std::uint16_t kUnreachable = std::numeric_limits<std::uint16_t>::max();

class HopGraph {
 public:
  explicit HopGraph(const Cluster& cluster);

  /// dist[n] = fewest links from node n to `dst` (kUnreachable if none); resizes `dist`.
  void distances_to(NodeIndex dst, std::vector<std::uint16_t>& dist) const;

  bool is_gpu(NodeIndex n) const { return is_gpu_[n] != 0; }

 private:
  using Graph =
      boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                         boost::no_property, NodeIndex, LinkIndex>;
  Graph reversed_;
  std::vector<char> is_gpu_;
};

}  // namespace strait::sim::topology::detail
