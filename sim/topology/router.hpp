#pragma once
// Router: shortest paths (fewest hops) between nodes of a Cluster, with deterministic
// ECMP spreading among equal-cost next hops.
//
// Distances come from hub tables: a breadth-first search over the reversed graph
// (Boost.Graph) per hub (switch or gateway) actually used as a portal, keeping a uint16
// hop count per hub; per non-hub node its "exits", the hubs it reaches without crossing
// a hub or a GPU; and per destination a tiny hub-free search of its own host ("local"
// nodes and the "portal" hubs where hub-free paths to it begin). The fewest links from
// any node to a destination is then min(local hops, min over its exits and the portals
// of exit hops + table + portal hops): exact, because the first hub on a shortest path
// is an exit and the last a portal. Memory grows with portals x hubs, not hubs x nodes:
// at 16,384 GPUs, 1,024 portal tables of 1,092 hubs (2.2 MiB) instead of 35,908 nodes
// (73 MiB). The d-mod-k next hop at a hub is memoized per destination for the hubs its
// paths cross (~15 of 1,092 there), not for every hub. GPUs are
// endpoints, never transit: no path crosses a third GPU. Among equal-cost next hops,
// kept in increasing link index, the choice is made by policy:
//   - kDestinationModK (default): next_hops[key(dst) % k] at each hop, the "d-mod-k"
//     routing of fat trees, which is free of collisions for shift permutations (ring
//     steps, pairwise all-to-all rounds) on a non-blocking fat tree. key(dst) is the
//     destination GPU's end-port number: GPUs ordered by (datacenter, rail, host, local
//     index) in rail-optimized hosts, so each rail plane is numbered like its own fat
//     tree, and by GPU index otherwise; for a non-GPU destination it is the node index.
//   - kHash: next_hops[hash(src, dst) % k], like a static 5-tuple hash (splitmix64 of the
//     node pair; the same on every platform).
// Explicit routes from a graph-form cluster file override the search for their exact
// (src, dst) node pairs.
// Routing between nodes with no path throws strait::Error naming both nodes.
// Not thread-safe (tables fill lazily): use one Router per thread.

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
  /// Links on node_path(src, dst) (0 if src == dst), without building the path.
  std::uint32_t hops(NodeIndex src, NodeIndex dst);
  /// The first link of node_path(src, dst) (src != dst). Under d-mod-k without explicit
  /// routes, node_path(src, dst) is this link followed by node_path(its head, dst): the
  /// paths to one destination form a tree (topology/pair_paths.hpp walks it).
  LinkIndex first_link(NodeIndex src, NodeIndex dst);
  /// Sum of link latencies along the GPU path (zero if src == dst).
  Time gpu_path_latency(int src, int dst);
  /// Smallest link bandwidth along the GPU path, bytes/s (infinity if src == dst).
  BytesPerSec gpu_path_bandwidth(int src, int dst);

  const Cluster& cluster() const { return cluster_; }
  EcmpPolicy policy() const { return policy_; }

 private:
  struct Impl;
  const Cluster& cluster_;
  EcmpPolicy policy_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strait::sim::topology
