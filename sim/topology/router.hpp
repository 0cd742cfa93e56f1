#pragma once
// Router: shortest paths (fewest hops) between nodes of a Cluster, with deterministic
// ECMP spreading among equal-cost next hops.
//
// Next-hop tables are built lazily per destination with a breadth-first search over the
// reversed graph (Boost.Graph), so routing n GPUs costs O(n * (V + E)) at most and only
// for destinations actually used. Among equal-cost next hops the choice is made by
// policy:
//   - kDestinationModK (default): next_hops[dst_gpu_or_node % k] at each hop, the
//     "d-mod-k" routing of fat trees, which is free of collisions for shift permutations
//     (ring steps, pairwise all-to-all rounds) on a non-blocking fat tree;
//   - kHash: next_hops[hash(src, dst) % k], like a static 5-tuple hash.
// Explicit routes from a graph-form cluster file override the search for their pairs.
// Routing between nodes with no path throws strait::Error naming both nodes.

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::topology {

enum class EcmpPolicy { kDestinationModK, kHash };

class Router {
 public:
  explicit Router(const Cluster& cluster, EcmpPolicy policy = EcmpPolicy::kDestinationModK);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  /// Links from GPU `src` to GPU `dst`, appended to `out` (cleared first). Empty if src == dst.
  void gpu_path(int src, int dst, std::vector<LinkIndex>& out);
  /// Links from node `src` to node `dst`.
  void node_path(NodeIndex src, NodeIndex dst, std::vector<LinkIndex>& out);
  /// Sum of link latencies along the GPU path.
  Time gpu_path_latency(int src, int dst);
  /// Smallest link bandwidth along the GPU path.
  BytesPerSec gpu_path_bandwidth(int src, int dst);

  const Cluster& cluster() const { return cluster_; }

 private:
  struct Impl;
  const Cluster& cluster_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strait::sim::topology
