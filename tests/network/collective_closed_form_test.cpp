// Closed-form checks of collectives in flow mode. Each test states its setup and the
// expected time, worked out by hand from bandwidths and latencies.

#include <gtest/gtest.h>

#include "sim/network/network.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::Fabric;
using testing::make_cluster;

CollectiveResult run(const topology::Cluster& c, CollectiveOp op, Algorithm algo, Bytes bytes,
                     NetworkMode mode = NetworkMode::kFlow) {
  CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = algo;
  spec.bytes = bytes;
  spec.gpus = all_gpus(c);
  NetworkOptions options;
  options.mode = mode;
  return simulate_collective(c, spec, options);
}

// One host, n = 8 GPUs on an NVSwitch, links B = 100 GB/s with latency l = 1 us each.
// A ring step moves S/n over GPU -> switch -> GPU (2 links, each carrying one flow), so it
// takes S/(n B) + 2 l; 2(n-1) steps: T = 2(n-1)/n * S/B + 4(n-1) l.
// S = 256 MiB: 2*7/8 * 268435456 / 1e11 s = 4697.62 us, plus 28 us.
TEST(RingAllReduce, MatchesTheClosedFormOnOneHost) {
  Fabric f;
  f.nvlink = 100e9;
  f.link_latency = Time::from_us(1);
  const auto c = make_cluster(1, 1, 8, f);
  const Bytes s = 256 * kMiB;
  const auto r = run(c, CollectiveOp::kAllReduce, Algorithm::kRing, s);
  const Time step = Time::for_work(static_cast<double>(s / 8), 100e9) + Time::from_us(2);
  EXPECT_EQ(r.time, step * 14);
  EXPECT_NEAR(r.time.to_us(), 2.0 * 7 / 8 * 268435456 / 1e11 * 1e6 + 28, 0.01);
}

// 16 ranks, one per host, NIC B = 50 GB/s, no latency: the ring is bound by the NICs and
// T = 2(n-1)/n * S/B within rounding, for any large S.
TEST(RingAllReduce, AcrossHostsTakesTwoNMinusOneOverNTimesSOverB) {
  const auto c = make_cluster(1, 16, 1);
  const Bytes s = 64 * kMiB;
  const auto r = run(c, CollectiveOp::kAllReduce, Algorithm::kRing, s);
  const double expected_s = 2.0 * 15 / 16 * static_cast<double>(s) / 50e9;
  EXPECT_NEAR(r.time.to_s(), expected_s, expected_s * 1e-6);
}

// 4 hosts x 4 GPUs, NIC 50 GB/s, NVLink 450 GB/s, S = 64 MiB per rank. Each rank sends
// (n - g)/n = 12/16 of S through its own NIC, so no algorithm beats 0.75 S / 50 GB/s =
// 1006.63 us. Direct posts all at once and reaches the bound exactly. Pairwise (MPI-style
// blocking send-receive rounds) and hierarchical cannot do better.
TEST(AllToAll, UniformAcrossHostsIsBoundByTheNicBandwidth) {
  const auto c = make_cluster(1, 4, 4);
  const Bytes s = 64 * kMiB;
  const double bound = 0.75 * static_cast<double>(s) / 50e9;
  const auto direct = run(c, CollectiveOp::kAllToAll, Algorithm::kDirect, s);
  EXPECT_NEAR(direct.time.to_s(), bound, bound * 1e-6);
  const auto pairwise = run(c, CollectiveOp::kAllToAll, Algorithm::kPairwise, s);
  EXPECT_GE(pairwise.time.to_s(), bound * (1 - 1e-9));
  const auto hier = run(c, CollectiveOp::kAllToAll, Algorithm::kHierarchical, s);
  EXPECT_GE(hier.time.to_s(), bound * (1 - 1e-9));
}

// 16 single-GPU hosts: every pairwise round is a shift permutation with one flow per NIC
// direction, so T = 15 rounds * (S/16) / 50 GB/s exactly, the NIC bound.
TEST(AllToAll, PairwiseRoundsOnSingleGpuHostsMeetTheNicBound) {
  const auto c = make_cluster(1, 16, 1);
  const Bytes s = 64 * kMiB;
  const auto pairwise = run(c, CollectiveOp::kAllToAll, Algorithm::kPairwise, s);
  EXPECT_EQ(pairwise.time, Time::for_work(static_cast<double>(s / 16), 50e9) * 15);
}

// 3 datacenters x 2 hosts x 4 GPUs (24 ranks); cross-DC links 5 GB/s each way, NICs
// 50 GB/s, NVLink 450 GB/s, no latency; S = 48 MiB. Hierarchical:
//   reduce-scatter in each host: 3 ring steps of S/4 over NVLink    3 x 12 MiB / 450 GB/s
//   reduce-scatter across the 2 hosts of a datacenter: 1 step of S/8 over the NICs
//   across datacenters, 8 groups of 3 exchange directly: each member sends S/24 to each
//   other member, so each directed cross-DC link carries 8 x S/24 = S/3 per phase, for 2
//   phases (reduce-scatter, all-gather): 2 x 16 MiB / 5 GB/s = 6.71 ms, the bulk;
//   then the two all-gathers mirror the reduce-scatters.
// Cross-DC bytes: 6 directed links x 2 phases x S/3 = 4 S (as a ring's 3 links x 4/3 S).
TEST(HierarchicalAllReduce, AcrossDatacentersIsBoundByTheCrossDatacenterLinks) {
  Fabric f;
  f.cross_dc = 5e9;
  const auto c = make_cluster(3, 2, 4, f);
  const Bytes s = 48 * kMiB;
  const double mib = static_cast<double>(kMiB);
  const double cross = 2 * 16 * mib / 5e9;
  const double expected = 2 * (3 * 12 * mib / 450e9) + 2 * (6 * mib / 50e9) + cross;
  const auto hier = run(c, CollectiveOp::kAllReduce, Algorithm::kHierarchical, s);
  EXPECT_NEAR(hier.time.to_s(), expected, 1e-9);
  EXPECT_GE(hier.time.to_s(), cross);
  EXPECT_NEAR(hier.traffic.bytes(topology::LinkClass::kCrossDc), 4.0 * static_cast<double>(s),
              1024.0);
  // A flat ring puts 2(n-1)/n S = 1.92 S on each of 3 cross-DC links: much slower.
  const auto ring = run(c, CollectiveOp::kAllReduce, Algorithm::kRing, s);
  EXPECT_GT(ring.time.to_s(), 2 * cross);
}

// A broadcast chain over 8 GPUs of one host (NVLink 100 GB/s, no latency) pipelined in
// m = 64 chunks of S/64: T = (n - 1 + m - 1) * (S/m)/B = 70 * 1 MiB / 100 GB/s.
TEST(Broadcast, ChainPipelinesChunks) {
  Fabric f;
  f.nvlink = 100e9;
  const auto c = make_cluster(1, 1, 8, f);
  const auto r = run(c, CollectiveOp::kBroadcast, Algorithm::kRing, 64 * kMiB);
  EXPECT_EQ(r.chunks, 64);
  EXPECT_NEAR(r.time.to_s(), 70.0 * kMiB / 100e9, 1e-9);
}

// A send of 1 GiB between two hosts crosses 2 NIC links at 50 GB/s with 1 us each:
// T = 2^30 / 50e9 s + 2 us = 21474.84 us + 2 us.
TEST(SendRecv, TakesBytesOverBandwidthPlusPathLatency) {
  Fabric f;
  f.link_latency = Time::from_us(1);
  const auto c = make_cluster(1, 2, 1, f);
  const auto r = run(c, CollectiveOp::kSendRecv, Algorithm::kAuto, kGiB);
  EXPECT_NEAR(r.time.to_us(), 1073741824.0 / 50e9 * 1e6 + 2.0, 1e-3);
}

}  // namespace
}  // namespace strait::sim::network
