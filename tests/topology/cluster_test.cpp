#include "sim/topology/cluster.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::bundled;
using testing_support::inline_cluster;
using testing_support::links_per_class;

constexpr auto kNv = static_cast<std::size_t>(LinkClass::kNvlink);
constexpr auto kPc = static_cast<std::size_t>(LinkClass::kPcie);
constexpr auto kSo = static_cast<std::size_t>(LinkClass::kScaleOut);
constexpr auto kDc = static_cast<std::size_t>(LinkClass::kCrossDc);

std::set<std::string> gpu_types(const Cluster& c) {
  std::set<std::string> types;
  for (const Gpu& g : c.gpus()) types.insert(g.type);
  return types;
}

TEST(Cluster, HgxHostIsEightGpusOnOneNvSwitchAndOneLeaf) {
  // One host, 8 GPUs, 8 NICs, not rail-optimized: 1 NVSwitch, 8 NICs, 1 leaf, no spine.
  // Links (one per direction): NVLink 2*8 = 16, PCIe 2*8 = 16, NIC-leaf 2*8 = 16.
  const Cluster c = Cluster::load(bundled("hgx-h100-8.json"));
  EXPECT_EQ(c.name(), "hgx-h100-8");
  EXPECT_EQ(c.gpu_count(), 8);
  EXPECT_EQ(c.hosts().size(), 1U);
  EXPECT_EQ(c.datacenters().size(), 1U);
  EXPECT_EQ(c.nodes().size(), 1U + 8 + 8 + 1);
  const auto per_class = links_per_class(c);
  EXPECT_EQ(per_class[kNv], 16);
  EXPECT_EQ(per_class[kPc], 16);
  EXPECT_EQ(per_class[kSo], 16);
  EXPECT_EQ(per_class[kDc], 0);
  EXPECT_EQ(gpu_types(c), std::set<std::string>{"H100-SXM"});
  EXPECT_DOUBLE_EQ(c.link(c.out_links(c.gpu(0).node)[0]).bandwidth, 450e9);
}

TEST(Cluster, RailOptimized1024GpuFatTreeHasTheExpectedCounts) {
  // 128 hosts x 8 GPUs, 8 NICs each, 16 hosts per leaf, rail-optimized, non-blocking:
  // 8 groups x 8 rails = 64 leaves of 16 downlinks, so 16 spines of 400 Gb/s uplinks.
  // Nodes: 128 * (1 NVSwitch + 8 GPUs + 8 NICs) + 64 + 16 = 2,256.
  // Links: NVLink 2,048; PCIe 2,048; scale-out 2*1,024 (NIC-leaf) + 2*64*16 (leaf-spine).
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  EXPECT_EQ(c.gpu_count(), 1024);
  EXPECT_EQ(c.hosts().size(), 128U);
  EXPECT_EQ(c.nodes().size(), 2256U);
  const auto per_class = links_per_class(c);
  EXPECT_EQ(per_class[kNv], 2048);
  EXPECT_EQ(per_class[kPc], 2048);
  EXPECT_EQ(per_class[kSo], 2048 + 2048);
  EXPECT_EQ(per_class[kDc], 0);
  const NodeIndex spine = *c.find_node("dc0/spine15");
  EXPECT_EQ(c.out_links(spine).size(), 64U);
  for (LinkIndex l : c.out_links(spine)) EXPECT_DOUBLE_EQ(c.link(l).bandwidth, 50e9);
}

TEST(Cluster, RailOptimizedHostHasOneNicPerGpu) {
  // In h100-1024-rail every GPU has its own PCIe link to NIC `local_index` (its rail),
  // and that NIC's only uplink goes to the leaf of its rail.
  const Cluster c = Cluster::load(bundled("h100-1024-rail.json"));
  const Host& host = c.hosts()[17];
  std::set<NodeIndex> nics;
  for (int g : host.gpus) {
    const Gpu& gpu = c.gpu(g);
    EXPECT_EQ(gpu.rail, gpu.local_index);
    int pcie_links = 0;
    for (LinkIndex l : c.out_links(gpu.node)) {
      if (c.link(l).link_class != LinkClass::kPcie) continue;
      ++pcie_links;
      const NodeIndex nic = c.link(l).dst;
      nics.insert(nic);
      EXPECT_EQ(c.nodes()[nic].name, "dc0/host17/nic" + std::to_string(gpu.local_index));
      int leaves = 0;
      for (LinkIndex up : c.out_links(nic)) {
        if (c.link(up).link_class != LinkClass::kScaleOut) continue;
        ++leaves;
        EXPECT_EQ(c.nodes()[c.link(up).dst].name,
                  "dc0/rail" + std::to_string(gpu.rail) + "/leaf1");  // hosts 16..31
        EXPECT_DOUBLE_EQ(c.link(up).bandwidth, 50e9);                 // 400 Gb/s
      }
      EXPECT_EQ(leaves, 1);
    }
    EXPECT_EQ(pcie_links, 1);
  }
  EXPECT_EQ(nics.size(), 8U);
}

TEST(Cluster, ScaleAcrossHasThreeDatacentersJoinedByParallelLinks) {
  // 3 datacenters x 32 hosts x 8 H100 = 768 GPUs. Per datacenter 2 groups x 8 rails = 16
  // leaves and 16 spines; a gateway attached to each spine. Cross-datacenter links:
  // 8 + 8 + 4 duplex = 40 directed links. Scale-out: 2*768 NIC-leaf + 3*2*16*16
  // leaf-spine + 3*2*16 spine-gateway = 1,536 + 1,536 + 96.
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  EXPECT_EQ(c.gpu_count(), 768);
  ASSERT_EQ(c.datacenters().size(), 3U);
  EXPECT_EQ(c.datacenters()[1].name, "central");
  EXPECT_EQ(c.datacenters()[2].hosts.size(), 32U);
  const auto per_class = links_per_class(c);
  EXPECT_EQ(per_class[kNv], 1536);
  EXPECT_EQ(per_class[kPc], 1536);
  EXPECT_EQ(per_class[kSo], 1536 + 1536 + 96);
  EXPECT_EQ(per_class[kDc], 40);
  // The east gateway carries east's whole cross-datacenter capacity on each spine link:
  // 8 * 800 Gb/s + 4 * 400 Gb/s = 8 Tb/s = 1,000 GB/s.
  const NodeIndex gw = *c.find_node("east/gw");
  for (LinkIndex l : c.out_links(gw)) {
    if (c.link(l).link_class == LinkClass::kScaleOut) {
      EXPECT_DOUBLE_EQ(c.link(l).bandwidth, 1e12);
    }
  }
  EXPECT_EQ(c.gpu(300).datacenter, 1);
  EXPECT_EQ(c.gpu(300).host, 37);
}

TEST(Cluster, DatacenterOverridesDefaultsKeyByKey) {
  // mixed-h100-a100: the a100 datacenter overrides gpu_type, NVLink bandwidth (300 GB/s),
  // NIC bandwidth (200 Gb/s), PCIe bandwidth and oversubscription (2.0) and keeps the
  // default latencies (NVLink 0.1 us: the wire and switch only, NCCL's per-step cost is in
  // the "nccl" protocols), GPU and NIC counts. Its 16 leaves of 16 x 200 Gb/s downlinks need
  // 16 * 25 GB/s / 2 = 200 GB/s of uplinks: 8 spines of 25 GB/s.
  const Cluster c = Cluster::load(bundled("mixed-h100-a100.json"));
  EXPECT_EQ(c.gpu_count(), 512 + 256);
  EXPECT_EQ(gpu_types(c), (std::set<std::string>{"A100-SXM", "H100-SXM"}));
  const Gpu& a100 = c.gpu(600);
  EXPECT_EQ(a100.type, "A100-SXM");
  EXPECT_EQ(a100.datacenter, 1);
  for (LinkIndex l : c.out_links(a100.node)) {
    const Link& link = c.link(l);
    if (link.link_class == LinkClass::kNvlink) {
      EXPECT_DOUBLE_EQ(link.bandwidth, 300e9);
    } else {
      EXPECT_DOUBLE_EQ(link.bandwidth, 32e9);
    }
    EXPECT_EQ(link.latency,
              link.link_class == LinkClass::kNvlink ? Time::from_us(0.1) : Time::from_us(0.5));
  }
  EXPECT_FALSE(c.find_node("a100/spine8").has_value());
  const NodeIndex spine = *c.find_node("a100/spine7");
  EXPECT_DOUBLE_EQ(c.link(c.out_links(spine)[0]).bandwidth, 25e9);
  EXPECT_EQ(c.gpu(0).type, "H100-SXM");
}

TEST(Cluster, DefaultPcieIsNeverSlowerThanTheNic) {
  // No "pcie" given and an 800 Gb/s (100 GB/s) NIC: PCIe defaults to max(64 GB/s, NIC)
  // = 100 GB/s, with the default 0.5 us latency.
  const Cluster c = testing_support::inline_cluster(R"({
    "name": "t", "datacenters": [{"name": "a", "hosts": 2,
      "host": {"gpus": 2, "gpu_type": "X", "nvlink": {"bandwidth": "100 GB/s"}, "nics": 1,
               "nic": {"bandwidth": "800 Gb/s"}},
      "network": {"hosts_per_leaf": 4}}]})");
  for (const Link& l : c.links()) {
    if (l.link_class != LinkClass::kPcie) continue;
    EXPECT_DOUBLE_EQ(l.bandwidth, 100e9);
    EXPECT_EQ(l.latency, Time::from_us(0.5));
  }
}

TEST(Cluster, NcclSectionOverridesThePublishedDefaultsKeyByKey) {
  // No "nccl": NCCL's ring constants (LL 6.6 us base, 0.6 us per NVLink step, half the
  // bandwidth; Simple 8.4 us, 3.4 us, 14 us across hosts: 12 us beside the 2 us RDMA round
  // trip), 1 us proxy, no NVLS; "none":
  // the bare link model; an override keeps the other keys' defaults.
  const std::string host =
      R"("host": {"gpus": 2, "gpu_type": "X", "nvlink": {"bandwidth": "100 GB/s"},
      "nics": 1, "nic": {"bandwidth": "100 Gb/s"}}, "network": {"hosts_per_leaf": 4})";
  const Cluster plain = testing_support::inline_cluster(
      R"({"name": "t", "datacenters": [{"name": "a", "hosts": 2, )" + host + "}]}");
  const auto& ll = plain.comm().protocols[0];
  EXPECT_DOUBLE_EQ(ll.bandwidth_fraction, 0.5);
  EXPECT_EQ(ll.ring.base_latency, Time::from_us(6.6));
  EXPECT_EQ(ll.ring.nvlink_step_latency, Time::from_us(0.6));
  EXPECT_EQ(plain.comm().protocols[2].ring.net_step_latency + plain.comm().rdma_round_trip,
            Time::from_us(14));
  EXPECT_EQ(plain.comm().rdma_round_trip, Time::from_us(2));
  EXPECT_EQ(plain.comm().proxy_latency, Time::from_us(1));
  EXPECT_FALSE(plain.comm().nvls);
  // Trees: NCCL's tree column (LL baseLat 6.8 us, hwLat NET 5 us = net step + proxy + RDMA),
  // and `auto` keeps hierarchical for ranks across datacenters.
  EXPECT_EQ(ll.tree.base_latency, Time::from_us(6.8));
  EXPECT_EQ(ll.tree.net_step_latency + plain.comm().proxy_latency + plain.comm().rdma_round_trip,
            Time::from_us(5));
  EXPECT_FALSE(plain.comm().hierarchical_in_datacenter);
  // Busbw ceilings: NCCL's llMaxBws (Hopper one host, Intel hosts) and perChMaxNVLSTreeBws.
  EXPECT_DOUBLE_EQ(ll.max_busbw.at(1), 141e9);
  EXPECT_DOUBLE_EQ(ll.max_busbw.at(2), 39e9);
  EXPECT_DOUBLE_EQ(ll.max_busbw.at(5), 20.4e9);
  EXPECT_FALSE(plain.comm().protocols[2].max_busbw.any());
  EXPECT_DOUBLE_EQ(plain.comm().nvls_tree_channel_busbw.at(2), 57.7e9);
  EXPECT_DOUBLE_EQ(plain.comm().nvls_tree_channel_busbw.at(3), 45.5e9);
  EXPECT_DOUBLE_EQ(plain.comm().net_efficiency, 0.94);
  // Channels: 16, each taking maxThreads x NCCL's per-thread threshold before another is
  // launched (LL 512 x 8, LL128 640 x 8, Simple 512 x 64 bytes); NVLS lanes of 8 MiB.
  EXPECT_EQ(plain.comm().channels, 16);
  EXPECT_EQ(ll.channel_bytes, 4096);
  EXPECT_EQ(plain.comm().protocols[1].channel_bytes, 5120);
  EXPECT_EQ(plain.comm().protocols[2].channel_bytes, 32768);
  EXPECT_EQ(plain.comm().nvls_lane_bytes, 8 * kMiB);
  const Cluster none = testing_support::inline_cluster(
      R"({"name": "t", "nccl": "none", "datacenters": [{"name": "a", "hosts": 2, )" + host + "}]}");
  EXPECT_EQ(none.comm().protocols[0].ring.base_latency, Time::zero());
  EXPECT_EQ(none.comm().protocols[0].tree.base_latency, Time::zero());
  EXPECT_TRUE(none.comm().hierarchical_in_datacenter);
  EXPECT_FALSE(none.comm().protocols[0].max_busbw.any());
  EXPECT_DOUBLE_EQ(none.comm().nvlink_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(none.comm().net_efficiency, 1.0);
  EXPECT_EQ(none.comm().channels, 0);
  EXPECT_EQ(none.comm().nvls_lane_bytes, 0);
  const Cluster tuned = testing_support::inline_cluster(
      R"({"name": "t", "nccl": {"nvls": true, "hierarchical_in_datacenter": true,
          "channels": 32, "nvls_lane_bytes": "2 MiB",
          "nvls_tree_channel_busbw": {"two_hosts": "none"},
          "protocols": {"simple": {"base_latency": "5 us", "tree": {"net_step_latency": "9 us"}},
                        "ll": {"max_busbw": {"two_hosts": "400 Gb/s"}, "channel_bytes": 0}}},
          "datacenters": [{"name": "a", "hosts": 2, )" +
      host + "}]}");
  EXPECT_TRUE(tuned.comm().nvls);
  EXPECT_EQ(tuned.comm().protocols[2].ring.base_latency, Time::from_us(5));
  EXPECT_EQ(tuned.comm().protocols[2].ring.nvlink_step_latency, Time::from_us(3.4));
  EXPECT_EQ(tuned.comm().protocols[2].tree.net_step_latency, Time::from_us(9));
  EXPECT_EQ(tuned.comm().protocols[2].tree.base_latency, Time::from_us(8.4));
  EXPECT_TRUE(tuned.comm().hierarchical_in_datacenter);
  EXPECT_FALSE(tuned.comm().nvls_tree_channel_busbw.two_hosts < 1e300);
  EXPECT_DOUBLE_EQ(tuned.comm().nvls_tree_channel_busbw.more_hosts, 45.5e9);
  EXPECT_DOUBLE_EQ(tuned.comm().protocols[0].max_busbw.two_hosts, 50e9);
  EXPECT_DOUBLE_EQ(tuned.comm().protocols[0].max_busbw.one_host, 141e9);
  EXPECT_EQ(tuned.comm().channels, 32);
  EXPECT_EQ(tuned.comm().nvls_lane_bytes, 2 * kMiB);
  EXPECT_EQ(tuned.comm().protocols[0].channel_bytes, 0);
  EXPECT_EQ(tuned.comm().protocols[2].channel_bytes, 32768);
  // A channel count that is not a count names its key.
  try {
    testing_support::inline_cluster(
        R"({"name": "t", "nccl": {"channels": -2}, "datacenters": [{"name": "a", "hosts": 2, )" +
        host + "}]}");
    ADD_FAILURE() << "expected an error";
  } catch (const strait::Error& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
}

TEST(Cluster, OversubscribedLeafGetsFewerSpines) {
  // Not rail-optimized: 4 hosts x 2 NICs of 100 Gb/s per leaf = 8 downlinks, 800 Gb/s.
  // Oversubscription 4 -> 200 Gb/s of uplinks: 2 spines of 100 Gb/s. 8 hosts -> 2 leaves.
  const Cluster c = testing_support::inline_cluster(R"({
    "name": "t", "datacenters": [{"name": "a", "hosts": 8,
      "host": {"gpus": 2, "gpu_type": "X", "nvlink": {"bandwidth": "100 GB/s"}, "nics": 2,
               "nic": {"bandwidth": "100 Gb/s"}, "rail_optimized": false},
      "network": {"hosts_per_leaf": 4, "oversubscription": 4.0}}]})");
  ASSERT_TRUE(c.find_node("a/spine1").has_value());
  EXPECT_FALSE(c.find_node("a/spine2").has_value());
  const NodeIndex leaf = *c.find_node("a/leaf1");
  int uplinks = 0;
  for (LinkIndex l : c.out_links(leaf)) {
    if (c.nodes()[c.link(l).dst].kind != NodeKind::kSwitch) continue;
    ++uplinks;
    EXPECT_DOUBLE_EQ(c.link(l).bandwidth, 12.5e9);
  }
  EXPECT_EQ(uplinks, 2);
  EXPECT_EQ(c.out_links(leaf).size(), 8U + 2U);
}

}  // namespace
}  // namespace strait::sim::topology
