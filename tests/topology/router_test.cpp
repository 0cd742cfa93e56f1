#include "sim/topology/router.hpp"

#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::bundled;

std::vector<LinkClass> classes(const Cluster& c, const std::vector<LinkIndex>& path) {
  std::vector<LinkClass> out;
  for (LinkIndex l : path) out.push_back(c.link(l).link_class);
  return out;
}

// A path is connected, goes from src to dst, and passes through no third GPU.
void expect_valid_path(const Cluster& c, int src, int dst, const std::vector<LinkIndex>& path) {
  ASSERT_FALSE(path.empty());
  NodeIndex at = c.gpu(src).node;
  for (LinkIndex l : path) {
    ASSERT_EQ(c.link(l).src, at);
    at = c.link(l).dst;
    if (at != c.gpu(dst).node) {
      ASSERT_NE(c.nodes()[at].kind, NodeKind::kGpu);
    }
  }
  EXPECT_EQ(at, c.gpu(dst).node);
}

TEST(Router, SameHostGpusTalkOverTwoNvlinkHops) {
  // GPU 3 -> NVSwitch -> GPU 5 on one HGX H100 host: 2 links of 450 GB/s, 0.1 us each.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  router.gpu_path(3, 5, path);
  EXPECT_EQ(classes(c, path), (std::vector{LinkClass::kNvlink, LinkClass::kNvlink}));
  expect_valid_path(c, 3, 5, path);
  EXPECT_EQ(router.gpu_path_latency(3, 5), Time::from_us(0.2));
  EXPECT_DOUBLE_EQ(router.gpu_path_bandwidth(3, 5), 450e9);
}

TEST(Router, PathToItselfIsEmpty) {
  // GPU 2 -> GPU 2: no links, zero latency, unbounded bandwidth; `out` is cleared first.
  const Cluster c = Cluster::load(bundled("hgx-h100-8.json"));
  Router router(c);
  std::vector<LinkIndex> path{7};
  router.gpu_path(2, 2, path);
  EXPECT_TRUE(path.empty());
  EXPECT_EQ(router.gpu_path_latency(2, 2), Time::zero());
  EXPECT_EQ(router.gpu_path_bandwidth(2, 2), std::numeric_limits<double>::infinity());
}

TEST(Router, HostsUnderOneLeafGoThroughNicsAndTheLeaf) {
  // GPU 2 of host 0 -> GPU 2 of host 5 (same rail-2 leaf): PCIe, NIC->leaf, leaf->NIC,
  // PCIe. Latency 0.5 + 1 + 1 + 0.5 = 3 us; bottleneck the 400 Gb/s NIC = 50 GB/s.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  router.gpu_path(2, 5 * 8 + 2, path);
  EXPECT_EQ(classes(c, path), (std::vector{LinkClass::kPcie, LinkClass::kScaleOut,
                                           LinkClass::kScaleOut, LinkClass::kPcie}));
  expect_valid_path(c, 2, 42, path);
  EXPECT_EQ(c.nodes()[c.link(path[1]).dst].name, "dc0/rail2/leaf0");
  EXPECT_EQ(router.gpu_path_latency(2, 42), Time::from_us(3));
  EXPECT_DOUBLE_EQ(router.gpu_path_bandwidth(2, 42), 50e9);
}

TEST(Router, HostsUnderDifferentLeavesCrossOneSpine) {
  // GPU 0 (host 0) -> GPU 8*100 (host 100, leaf group 6): PCIe, NIC->leaf, leaf->spine,
  // spine->leaf, leaf->NIC, PCIe: 6 links, 0.5 + 4 * 1 + 0.5 = 5 us. Cross-rail traffic
  // (GPU 0 -> GPU 801) also stays in the network rather than crossing another GPU.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  router.gpu_path(0, 800, path);
  EXPECT_EQ(path.size(), 6U);
  EXPECT_EQ(c.nodes()[c.link(path[2]).dst].name.substr(0, 9), "dc0/spine");
  EXPECT_EQ(router.gpu_path_latency(0, 800), Time::from_us(5));
  router.gpu_path(0, 801, path);
  EXPECT_EQ(path.size(), 6U);
  expect_valid_path(c, 0, 801, path);
}

TEST(Router, CrossDatacenterPathsUseExactlyOneCrossDcLink) {
  // scale-across-3dc: east -> central goes GPU..spine -> east/gw => central/gw -> spine..GPU;
  // latency 0.5 + 1 + 1 + 1 (spine-gw) + 5,000 + 1 + 1 + 1 + 0.5 us; bottleneck 50 GB/s.
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  for (int src : {0, 17, 255}) {
    for (int dst : {256, 300, 600, 767}) {
      router.gpu_path(src, dst, path);
      expect_valid_path(c, src, dst, path);
      int cross = 0;
      for (LinkIndex l : path) cross += c.link(l).link_class == LinkClass::kCrossDc;
      EXPECT_EQ(cross, 1) << src << " -> " << dst;
    }
  }
  EXPECT_EQ(router.gpu_path_latency(0, 256), Time::from_us(5007));
  EXPECT_EQ(router.gpu_path_latency(0, 600), Time::from_us(20007));
  EXPECT_DOUBLE_EQ(router.gpu_path_bandwidth(0, 256), 50e9);
}

TEST(Router, CrossDatacenterTrafficSpreadsOverAllParallelLinks) {
  // east -> central has 8 parallel links; 256 destination GPUs under d-mod-k use each.
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  for (EcmpPolicy policy : {EcmpPolicy::kDestinationModK, EcmpPolicy::kHash}) {
    Router router(c, policy);
    std::set<LinkIndex> used;
    std::vector<LinkIndex> path;
    for (int dst = 256; dst < 512; ++dst) {
      router.gpu_path(dst % 256, dst, path);
      for (LinkIndex l : path) {
        if (c.link(l).link_class == LinkClass::kCrossDc) used.insert(l);
      }
    }
    EXPECT_EQ(used.size(), 8U);
  }
}

TEST(Router, DestinationModKMakesShiftPermutationsCollisionFree) {
  // h100-1024-rail is a non-blocking rail-optimized fat tree. For every shift
  // i -> (i + 8k) mod 1,024, k = 1..127 (one flow per GPU, same rail), each directed
  // scale-out link (NIC-leaf, leaf-spine) carries at most one path.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  std::vector<int> users(c.links().size());
  int collisions = 0;
  for (int k = 1; k < 128; ++k) {
    std::fill(users.begin(), users.end(), 0);
    for (int i = 0; i < 1024; ++i) {
      router.gpu_path(i, (i + 8 * k) % 1024, path);
      for (LinkIndex l : path) {
        if (c.link(l).link_class == LinkClass::kScaleOut && ++users[l] > 1) ++collisions;
      }
    }
  }
  EXPECT_EQ(collisions, 0);
}

TEST(Router, HashPolicyGivesValidDeterministicPaths) {
  // kHash picks among the same equal-cost next hops; two routers agree on every path.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router a(c, EcmpPolicy::kHash), b(c, EcmpPolicy::kHash);
  std::vector<LinkIndex> pa, pb;
  std::set<NodeIndex> spines;
  for (int src = 0; src < 1024; src += 37) {
    const int dst = (src * 7 + 500) % 1024;
    if (src == dst) continue;
    a.gpu_path(src, dst, pa);
    b.gpu_path(src, dst, pb);
    EXPECT_EQ(pa, pb);
    expect_valid_path(c, src, dst, pa);
    if (pa.size() == 6) spines.insert(c.link(pa[2]).dst);
  }
  EXPECT_GT(spines.size(), 4U);
}

TEST(Router, ManyQueriesGiveConsistentPaths) {
  // 100,000 (src, dst) queries on 1,024 GPUs, each path valid and as long as the same
  // query asked again.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  Router router(c);
  std::vector<LinkIndex> path, again;
  std::uint64_t state = 1;
  for (int q = 0; q < 100000; ++q) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int src = static_cast<int>((state >> 33) % 1024);
    const int dst = static_cast<int>((state >> 13) % 1024);
    router.gpu_path(src, dst, path);
    if (q % 1000 == 0 && src != dst) {
      expect_valid_path(c, src, dst, path);
      router.gpu_path(src, dst, again);
      EXPECT_EQ(path, again);
    }
  }
}

TEST(Router, UnreachableNodesThrowNamingBoth) {
  // Node paths may start or end at any node; NVSwitch -> leaf has no path because it
  // would cross a GPU.
  const Cluster c = Cluster::load(bundled("hgx-h100-8.json"));
  Router router(c);
  std::vector<LinkIndex> path;
  try {
    router.node_path(*c.find_node("dc0/host0/nvswitch"), *c.find_node("dc0/leaf0"), path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no path from node \"dc0/host0/nvswitch\" to node \"dc0/leaf0\"");
  }
}

}  // namespace
}  // namespace strait::sim::topology
