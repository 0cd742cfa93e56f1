// count_pair_paths against the plain walk: every ordered pair of the GPUs routed one by
// one (by a Router of its own), its links counted. The counts per link and the longest
// latency must be equal exactly, on the bundled clusters (one HGX host, rails, oversubscribed
// mixed hosts, three datacenters), on GPU subsets (some of a host's GPUs only), on graph
// forms (a NIC ring, a GPU wired to two switches, explicit routes) and under both ECMP
// policies.

#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "sim/topology/pair_paths.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::bundled;
using testing_support::inline_cluster;

PairPathCounts walk_every_pair(const Cluster& c, EcmpPolicy policy, const std::vector<int>& gpus) {
  Router router(c, policy);
  std::map<LinkIndex, std::uint64_t> count;
  Time longest = Time::zero();
  std::vector<LinkIndex> path;
  for (int src : gpus) {
    for (int dst : gpus) {
      if (src == dst) continue;
      router.gpu_path(src, dst, path);
      Time latency = Time::zero();
      for (LinkIndex l : path) {
        ++count[l];
        latency += c.link(l).latency;
      }
      longest = std::max(longest, latency);
    }
  }
  PairPathCounts out;
  out.links.assign(count.begin(), count.end());
  out.longest_latency = longest;
  return out;
}

// Compares under both policies; returns the paths counted (under the last policy).
std::uint64_t compare(const Cluster& c, const std::vector<int>& gpus) {
  std::uint64_t paths = 0;
  for (auto policy : {EcmpPolicy::kDestinationModK, EcmpPolicy::kHash}) {
    Router router(c, policy);
    const PairPathCounts counted = count_pair_paths(router, gpus);
    const PairPathCounts walked = walk_every_pair(c, policy, gpus);
    EXPECT_EQ(counted.links, walked.links) << c.name();
    EXPECT_EQ(counted.longest_latency, walked.longest_latency) << c.name();
    // Every path leaves its source GPU by exactly one link.
    std::uint64_t leaving = 0;
    for (const auto& [link, n] : counted.links) {
      if (c.nodes()[c.link(link).src].kind == NodeKind::kGpu) leaving += n;
    }
    EXPECT_EQ(leaving, gpus.size() * (gpus.size() - 1)) << c.name();
    paths = leaving;
  }
  return paths;
}

std::vector<int> every(const Cluster& c, int stride, int offset = 0) {
  std::vector<int> v;
  for (int g = offset; g < c.gpu_count(); g += stride) v.push_back(g);
  return v;
}

TEST(PairPaths, OneHgxHost) {
  const Cluster c = Cluster::load(bundled("hgx-h100-8.json"));
  EXPECT_EQ(compare(c, every(c, 1)), 56U);
  EXPECT_EQ(compare(c, every(c, 3)), 6U);
}

TEST(PairPaths, RailOptimizedFatTree) {
  const Cluster c = Cluster::load(bundled("h100-256-rail.json"));
  EXPECT_EQ(compare(c, every(c, 1)), 256U * 255U);
  // Three GPUs of most hosts, on different rails: near pairs and exits of part of a host.
  EXPECT_GT(compare(c, every(c, 3, 1)), 7000U);
}

TEST(PairPaths, OneCounterServesManySets) {
  // The counter keeps its scratch between calls: each set must count as if alone.
  const Cluster c = Cluster::load(bundled("h100-256-rail.json"));
  Router router(c, EcmpPolicy::kDestinationModK);
  PairPathCounter counter(router);
  for (const auto& gpus : {every(c, 1), every(c, 3, 1), every(c, 32), std::vector<int>{5, 9, 13},
                           std::vector<int>{7}, every(c, 5, 2)}) {
    const PairPathCounts counted = counter.count(gpus);
    const PairPathCounts walked = walk_every_pair(c, EcmpPolicy::kDestinationModK, gpus);
    EXPECT_EQ(counted.links, walked.links) << gpus.size() << " GPUs";
    EXPECT_EQ(counted.longest_latency, walked.longest_latency) << gpus.size() << " GPUs";
  }
}

TEST(PairPaths, OversubscribedMixedHosts) {
  const Cluster c = Cluster::load(bundled("mixed-h100-a100.json"));
  EXPECT_GT(compare(c, every(c, 1)), 1000U);
  EXPECT_GT(compare(c, every(c, 5, 2)), 100U);
}

TEST(PairPaths, ThreeDatacenters) {
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  EXPECT_EQ(compare(c, every(c, 1)), 768U * 767U);
}

TEST(PairPaths, SubsetOfADatacenterPair) {
  const Cluster c = Cluster::load(bundled("scale-across-3dc.json"));
  std::vector<int> gpus = every(c, 7);
  gpus.resize(60);
  EXPECT_EQ(compare(c, gpus), 60U * 59U);
}

// count_bytes against the walk of every transfer (two legs when relayed), with irregular
// sizes, empty entries and PXN-like relays (the GPU of the sender's host on the
// receiver's rail, where it is another), one counter for several sets, both policies: the
// bytes per link and the longest latency exactly.
TEST(PairPaths, BytesOfRelayedTransfersEqualTheWalk) {
  for (const char* name : {"h100-256-rail.json", "scale-across-3dc.json", "mixed-h100-a100.json"}) {
    const Cluster c = Cluster::load(bundled(name));
    for (auto policy : {EcmpPolicy::kDestinationModK, EcmpPolicy::kHash}) {
      Router router(c, policy);
      PairPathCounter counter(router);
      for (const auto& gpus : {every(c, 2), every(c, 3, 1)}) {
        std::vector<PairBytes> transfers;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          for (std::size_t j = 0; j < gpus.size(); ++j) {
            const int s = gpus[i], d = gpus[j];
            const auto k = static_cast<std::uint64_t>(i * 31 + j * 17);
            if (i == j || k % 5 == 0) continue;
            PairBytes t{s, d, (k % 13 + 1) * 1000003ULL, -1};
            const auto& host = c.hosts()[static_cast<std::size_t>(c.gpu(s).host)];
            if (c.gpu(s).host != c.gpu(d).host && k % 3 != 0) {
              for (int g : host.gpus) {
                if (c.gpu(g).rail == c.gpu(d).rail && g != s) t.relay = g;
              }
            }
            transfers.push_back(t);
          }
        }
        std::map<LinkIndex, std::uint64_t> bytes;
        Time longest = Time::zero();
        std::vector<LinkIndex> path;
        for (const auto& t : transfers) {
          Time latency = Time::zero();
          const auto leg = [&](int a, int b) {
            router.gpu_path(a, b, path);
            for (LinkIndex l : path) {
              bytes[l] += t.bytes;
              latency += c.link(l).latency;
            }
          };
          if (t.relay >= 0) {
            leg(t.src, t.relay);
            leg(t.relay, t.dst);
          } else {
            leg(t.src, t.dst);
          }
          longest = std::max(longest, latency);
        }
        const PairPathCounts counted = counter.count_bytes(transfers);
        const std::vector<std::pair<LinkIndex, std::uint64_t>> walked(bytes.begin(), bytes.end());
        EXPECT_EQ(counted.links, walked) << name << " " << gpus.size() << " GPUs";
        EXPECT_EQ(counted.longest_latency, longest) << name << " " << gpus.size() << " GPUs";
      }
    }
  }
}

TEST(PairPaths, GraphFormNicRingAndSwitchedGpu) {
  // g0..g3 reach each other without a switch (their NICs form a ring); only nic2 leads to
  // the switch, which g4 is wired to: g0..g3 leave by nic2 -> s0, g4 by its own link.
  const Cluster c = inline_cluster(R"({
    "name": "nic-ring",
    "nodes": [
      {"name": "g0", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g1", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g2", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h1"},
      {"name": "g3", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h2"},
      {"name": "g4", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h3"},
      {"name": "g5", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h4"},
      {"name": "nv0", "kind": "nvswitch", "host": "h0"},
      {"name": "nic0", "kind": "nic", "host": "h0"},
      {"name": "nic1", "kind": "nic", "host": "h1"},
      {"name": "nic2", "kind": "nic", "host": "h2"},
      {"name": "s0", "kind": "switch"},
      {"name": "s1", "kind": "switch"}
    ],
    "links": [
      {"between": ["g0", "nv0"], "bandwidth": "450 GB/s", "class": "nvlink"},
      {"between": ["g1", "nv0"], "bandwidth": "450 GB/s", "class": "nvlink"},
      {"between": ["g0", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g1", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g2", "nic1"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g3", "nic2"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic0", "nic1"], "bandwidth": "400 Gb/s", "latency": "2 us"},
      {"between": ["nic1", "nic2"], "bandwidth": "400 Gb/s", "latency": "1 us"},
      {"between": ["nic2", "nic0"], "bandwidth": "400 Gb/s", "latency": "3 us"},
      {"between": ["nic2", "s0"], "bandwidth": "400 Gb/s", "latency": "1 us"},
      {"between": ["g4", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["g5", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["g5", "s1"], "bandwidth": "400 Gb/s"},
      {"between": ["s0", "s1"], "bandwidth": "400 Gb/s"}
    ]})");
  // g5 has two links into switches: its pairs are routed one by one.
  EXPECT_EQ(compare(c, every(c, 1)), 30U);
  EXPECT_EQ(compare(c, {0, 2, 4, 5}), 12U);
}

TEST(PairPaths, ExplicitRoutesAreRoutedPairByPair) {
  const Cluster c = inline_cluster(R"({
    "name": "two-paths",
    "nodes": [
      {"name": "g0", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g1", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h1"},
      {"name": "g2", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h2"},
      {"name": "nic0", "kind": "nic", "host": "h0"},
      {"name": "nic1", "kind": "nic", "host": "h1"},
      {"name": "nic2", "kind": "nic", "host": "h2"},
      {"name": "s0", "kind": "switch"},
      {"name": "s1", "kind": "switch"}
    ],
    "links": [
      {"between": ["g0", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g1", "nic1"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g2", "nic2"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic0", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic1", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic2", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic0", "s1"], "bandwidth": "400 Gb/s", "latency": "5 us"},
      {"between": ["nic2", "s1"], "bandwidth": "400 Gb/s", "latency": "5 us"}
    ],
    "routes": [{"from": "g0", "to": "g2", "via": ["nic0", "s1", "nic2"]}]})");
  EXPECT_EQ(compare(c, every(c, 1)), 6U);
}

}  // namespace
}  // namespace strait::sim::topology
