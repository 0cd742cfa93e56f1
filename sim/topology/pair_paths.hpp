#pragma once
// Pair paths: how many of the routed paths between every ordered pair of a set of GPUs
// cross each link (the link loads of a uniform all-to-all, whose n(n-1) transfers are
// 268 M at 16,384 GPUs), without walking n^2 paths where routing allows it.
//
// Under d-mod-k routing without explicit routes a node's next hop toward a destination
// depends on the node and the destination only (the choice is the destination's key,
// the candidates its distances), so the paths to one destination form a tree and the path
// from any node on it is the router's path from that node. A GPU that leaves its hub-free
// neighbourhood (NVSwitch, NIC, PCIe switches: no switch or gateway) by a single link into
// a switch, along a single shortest way (every GPU of a hierarchy-form cluster: GPU -> NIC
// -> leaf), reaches every destination outside that neighbourhood through that switch, so
//   count(link) = sum over destinations d of
//                   sum over exit switches h: (members leaving by h, less those near d)
//                                             x [link on path(h, d)]
//                 + the exit prefix of each member, once per destination outside its
//                   neighbourhood;
// pairs inside one neighbourhood (one host), and every pair of a member with several
// exits, are routed one by one. Cost: destinations x exit switches paths (1,024 leaves at
// 16,384 GPUs) instead of destinations x members. Under the hash policy, or with explicit
// routes, every pair is routed (exact, O(n^2)). The counts are the per-pair walk's exactly
// (tests/topology/pair_paths_test.cpp compares them link by link).

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/topology/router.hpp"

namespace strait::sim::topology {

struct PairPathCounts {
  /// Links crossed by at least one path, in increasing link index, with how many paths
  /// (count) or bytes (count_bytes) cross each.
  std::vector<std::pair<LinkIndex, std::uint64_t>> links;
  Time longest_latency;  // the largest sum of link latencies over all the pairs' paths
};

/// A transfer of `bytes` from GPU `src` to GPU `dst`, through GPU `relay` first when it is
/// not -1 (NCCL's PXN: a message to another rail crosses its host to the GPU on that rail).
struct PairBytes {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  int relay = -1;
};

/// Counts pair paths for GPU sets of one cluster, keeping its scratch (sized to the
/// cluster) between calls: a call costs O(set + what it touches) beyond routing, so the
/// small all-to-all groups of a training step (8 ranks on 16,384 GPUs) stay cheap. Not
/// thread-safe, like the Router it uses.
class PairPathCounter {
 public:
  explicit PairPathCounter(Router& router);
  ~PairPathCounter();
  PairPathCounter(const PairPathCounter&) = delete;
  PairPathCounter& operator=(const PairPathCounter&) = delete;

  /// Counts the paths of every ordered pair (src, dst) of distinct GPUs of `gpus`
  /// (distinct GPU indices) per link, as the router routes them.
  PairPathCounts count(std::span<const int> gpus);
  /// Bytes per link of `transfers`, each along its routed path (two legs through a relay),
  /// and the longest path latency: the per-transfer walk's sums exactly, at a cost of
  /// destinations x exit switches routes (the same trees as count()) instead of one route
  /// per transfer. A 512 x 512 all_to_allv, each rank's output dist, is 262,144 transfers.
  PairPathCounts count_bytes(std::span<const PairBytes> transfers);

 private:
  struct Scratch;
  Router& router_;
  std::unique_ptr<Scratch> scratch_;
};

/// The same, once (allocates scratch sized to the cluster).
PairPathCounts count_pair_paths(Router& router, std::span<const int> gpus);

}  // namespace strait::sim::topology
