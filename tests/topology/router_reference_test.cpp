// The Router's hub-table distances against a reference: a plain breadth-first search over
// every node per destination, with the same no-GPU-transit rule and the same equal-cost
// choice (d-mod-k by end-port key, or a splitmix64 hash of the node pair). Every path of
// the Router must equal the reference's, link for link.

#include <algorithm>
#include <deque>
#include <numeric>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sim/topology/router.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::bundled;
using testing_support::inline_cluster;

constexpr int kNone = -1;

class ReferenceRouter {
 public:
  ReferenceRouter(const Cluster& c, EcmpPolicy policy) : c_(c), policy_(policy) {
    key_.resize(c.nodes().size());
    std::iota(key_.begin(), key_.end(), 0U);
    std::vector<int> order(static_cast<std::size_t>(c.gpu_count()));
    std::iota(order.begin(), order.end(), 0);
    auto plane = [&](int g) {
      const Gpu& gpu = c.gpu(g);
      const bool rails = c.hosts()[static_cast<std::size_t>(gpu.host)].rail_optimized;
      return std::make_tuple(gpu.datacenter, rails ? gpu.rail : 0, gpu.host, gpu.local_index, g);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return plane(a) < plane(b); });
    for (std::size_t k = 0; k < order.size(); ++k)
      key_[c.gpu(order[k]).node] = static_cast<std::uint32_t>(k);
    in_.resize(c.nodes().size());
    for (const Link& l : c.links()) in_[l.dst].push_back(l.src);
  }

  // Links from src to dst, or {kNone} when there is no path.
  std::vector<int> path(NodeIndex src, NodeIndex dst) {
    if (src == dst) return {};
    if (dst != dist_of_) {  // breadth-first search backwards from dst over every node
      dist_of_ = dst;
      dist_.assign(c_.nodes().size(), kNone);
      dist_[dst] = 0;
      std::deque<NodeIndex> queue{dst};
      while (!queue.empty()) {
        const NodeIndex v = queue.front();
        queue.pop_front();
        if (v != dst && gpu(v)) continue;
        for (NodeIndex u : in_[v]) {
          if (dist_[u] == kNone) {
            dist_[u] = dist_[v] + 1;
            queue.push_back(u);
          }
        }
      }
    }
    const auto& dist = dist_;
    if (dist[src] == kNone) return {kNone};
    std::vector<int> out;
    for (NodeIndex u = src; u != dst;) {
      std::vector<LinkIndex> next;
      for (LinkIndex l : c_.out_links(u)) {
        const NodeIndex v = c_.link(l).dst;
        if (dist[v] != kNone && dist[v] + 1 == dist[u] && (v == dst || !gpu(v))) next.push_back(l);
      }
      std::sort(next.begin(), next.end());
      const std::uint64_t choice = policy_ == EcmpPolicy::kDestinationModK
                                       ? key_[dst]
                                       : mix((std::uint64_t{src} << 32) | dst);
      const LinkIndex l = next[choice % next.size()];
      out.push_back(static_cast<int>(l));
      u = c_.link(l).dst;
    }
    return out;
  }

 private:
  bool gpu(NodeIndex v) const { return c_.nodes()[v].kind == NodeKind::kGpu; }
  static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  const Cluster& c_;
  EcmpPolicy policy_;
  std::vector<std::uint32_t> key_;
  std::vector<std::vector<NodeIndex>> in_;
  NodeIndex dist_of_ = static_cast<NodeIndex>(-1);
  std::vector<int> dist_;
};

std::vector<int> router_path(Router& r, NodeIndex src, NodeIndex dst) {
  std::vector<LinkIndex> links;
  try {
    r.node_path(src, dst, links);
  } catch (const Error&) {
    return {kNone};
  }
  return {links.begin(), links.end()};
}

// Compares every (src, dst) pair among `nodes` under both policies; returns pairs checked.
int compare(const Cluster& c, const std::vector<NodeIndex>& nodes) {
  int checked = 0;
  for (auto policy : {EcmpPolicy::kDestinationModK, EcmpPolicy::kHash}) {
    Router router(c, policy);
    ReferenceRouter reference(c, policy);
    for (NodeIndex dst : nodes) {
      for (NodeIndex src : nodes) {
        EXPECT_EQ(router_path(router, src, dst), reference.path(src, dst))
            << c.nodes()[src].name << " -> " << c.nodes()[dst].name;
        ++checked;
      }
    }
  }
  return checked;
}

std::vector<NodeIndex> all_nodes(const Cluster& c) {
  std::vector<NodeIndex> v(c.nodes().size());
  std::iota(v.begin(), v.end(), 0U);
  return v;
}

// Every `stride`-th GPU, plus every non-GPU node of one host and the switches listed.
std::vector<NodeIndex> sample(const Cluster& c, int stride) {
  std::vector<NodeIndex> v;
  for (int g = 0; g < c.gpu_count(); g += stride) v.push_back(c.gpu(g).node);
  for (NodeIndex n = 0; n < c.nodes().size(); ++n) {
    const Node& node = c.nodes()[n];
    if (node.kind != NodeKind::kGpu && (node.host == 0 || node.host < 0) && n % 7 == 0)
      v.push_back(n);
  }
  return v;
}

TEST(RouterReference, OneHgxHostEveryNodePair) {
  const Cluster c = Cluster::load(bundled("hgx-h100-8.json"));
  EXPECT_EQ(compare(c, all_nodes(c)), 2 * static_cast<int>(c.nodes().size() * c.nodes().size()));
}

TEST(RouterReference, RailOptimizedFatTree) {
  const Cluster c = Cluster::load(bundled("h100-256-rail.json"));
  EXPECT_GT(compare(c, sample(c, 3)), 10000);
}

TEST(RouterReference, OversubscribedMixedHosts) {
  const Cluster c = Cluster::load(bundled("mixed-h100-a100.json"));
  EXPECT_GT(compare(c, sample(c, 13)), 5000);
}

TEST(RouterReference, ThreeDatacenters) {
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  EXPECT_GT(compare(c, sample(c, 11)), 5000);
}

TEST(RouterReference, GraphFormWithoutSwitches) {
  // Three hosts whose NICs form a ring (no hub at all: every path is found by the local
  // search), and a fourth GPU wired straight to a switch.
  const Cluster c = inline_cluster(R"({
    "name": "nic-ring",
    "nodes": [
      {"name": "g0", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g1", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g2", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h1"},
      {"name": "g3", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h2"},
      {"name": "g4", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h3"},
      {"name": "nv0", "kind": "nvswitch", "host": "h0"},
      {"name": "nic0", "kind": "nic", "host": "h0"},
      {"name": "nic1", "kind": "nic", "host": "h1"},
      {"name": "nic2", "kind": "nic", "host": "h2"},
      {"name": "s0", "kind": "switch"}
    ],
    "links": [
      {"between": ["g0", "nv0"], "bandwidth": "450 GB/s", "class": "nvlink"},
      {"between": ["g1", "nv0"], "bandwidth": "450 GB/s", "class": "nvlink"},
      {"between": ["g0", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g1", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g2", "nic1"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g3", "nic2"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic0", "nic1"], "bandwidth": "400 Gb/s"},
      {"between": ["nic1", "nic2"], "bandwidth": "400 Gb/s"},
      {"between": ["nic2", "nic0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic2", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["g4", "s0"], "bandwidth": "400 Gb/s"}
    ]})");
  EXPECT_EQ(compare(c, all_nodes(c)), 2 * 100);
}

TEST(RouterReference, GraphFormSwitchesJoinedThroughOtherNodes) {
  // Switches joined directly, through one NIC (s0 - x0 - s1) and through two (s0 - x1 - x2
  // - s3): the hub graph's links are 1, 2 and 3 long, and s0 reaches s3 both ways in 3
  // (s0 x0 s1 s3, s0 x1 x2 s3). An NVSwitch (not a hub) joins s2 and s3 too.
  const Cluster c = inline_cluster(R"({
    "name": "bridged-switches",
    "nodes": [
      {"name": "g0", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g1", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h1"},
      {"name": "g2", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h2"},
      {"name": "g3", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h3"},
      {"name": "nic0", "kind": "nic", "host": "h0"},
      {"name": "nic3", "kind": "nic", "host": "h3"},
      {"name": "x0", "kind": "nic"},
      {"name": "x1", "kind": "nic"},
      {"name": "x2", "kind": "nic"},
      {"name": "nv", "kind": "nvswitch"},
      {"name": "s0", "kind": "switch"},
      {"name": "s1", "kind": "switch"},
      {"name": "s2", "kind": "switch"},
      {"name": "s3", "kind": "switch"}
    ],
    "links": [
      {"between": ["g0", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic0", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["g1", "s1"], "bandwidth": "400 Gb/s"},
      {"between": ["g2", "s2"], "bandwidth": "400 Gb/s"},
      {"between": ["g3", "nic3"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic3", "s3"], "bandwidth": "400 Gb/s"},
      {"between": ["s0", "x0"], "bandwidth": "400 Gb/s"},
      {"between": ["x0", "s1"], "bandwidth": "400 Gb/s"},
      {"between": ["s1", "s3"], "bandwidth": "400 Gb/s"},
      {"between": ["s0", "x1"], "bandwidth": "400 Gb/s"},
      {"between": ["x1", "x2"], "bandwidth": "400 Gb/s"},
      {"between": ["x2", "s3"], "bandwidth": "400 Gb/s"},
      {"between": ["s2", "nv"], "bandwidth": "400 Gb/s"},
      {"between": ["nv", "s3"], "bandwidth": "400 Gb/s"}
    ]})");
  const auto nodes = all_nodes(c);
  EXPECT_EQ(compare(c, nodes), 2 * static_cast<int>(nodes.size() * nodes.size()));
  Router router(c, EcmpPolicy::kDestinationModK);
  std::vector<LinkIndex> path;
  router.gpu_path(0, 3, path);  // g0 nic0 s0, then 3 links to s3, nic3 g3
  EXPECT_EQ(path.size(), 7u);
  router.gpu_path(0, 2, path);  // g0 nic0 s0 x0 s1 s3 nv s2 g2
  EXPECT_EQ(path.size(), 8u);
}

}  // namespace
}  // namespace strait::sim::topology
