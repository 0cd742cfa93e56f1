// The implicit all-pairs phase of a uniform direct all-to-all (schedule.hpp): built without
// stored transfers, it must cost exactly what the same phase with its n(n-1) transfers
// stored (expand_all_pairs) costs: protocol bytes and step latency, calibration, flow-mode
// time (one coflow whose link shares come from counted paths instead of routed ones),
// traffic per link class, transfer counts and trace records, and analytical time, on
// bundled clusters under both ECMP policies and on a cluster built in code.

#include <gtest/gtest.h>

#include "sim/network/network.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::make_cluster;

CollectiveSpec direct_all_to_all(std::vector<int> gpus, Bytes bytes) {
  CollectiveSpec s;
  s.op = CollectiveOp::kAllToAll;
  s.algorithm = Algorithm::kDirect;
  s.protocol = Protocol::kSimple;
  s.bytes = bytes;
  s.gpus = std::move(gpus);
  return s;
}

Schedule expanded(Schedule s) {
  expand_all_pairs(s);
  return s;
}

// 2 hosts x 4 GPUs, 8 KiB per rank: 1 KiB to each of the 7 others, 56 transfers.
TEST(AllPairs, UniformDirectAllToAllIsOneImplicitPhase) {
  const auto c = make_cluster(1, 2, 4);
  const Schedule s = build_schedule(direct_all_to_all(all_gpus(c), 8 * kKiB), c);
  ASSERT_EQ(s.phases.size(), 1U);
  EXPECT_TRUE(s.phases[0].transfers.empty());
  EXPECT_EQ(s.phases[0].all_pairs, kKiB);
  EXPECT_EQ(s.phases[0].transfer_count(s.ranks()), 56U);
  EXPECT_DOUBLE_EQ(s.total_bytes(), 56.0 * kKiB);
  const Schedule e = expanded(s);
  ASSERT_EQ(e.phases[0].transfers.size(), 56U);
  EXPECT_EQ(e.phases[0].all_pairs, 0);
  EXPECT_EQ(e.phases[0].transfers.front().src, 0);
  EXPECT_EQ(e.phases[0].transfers.front().dst, 1);
  EXPECT_EQ(e.phases[0].transfers.back().src, 7);
  EXPECT_EQ(e.phases[0].transfers.back().dst, 6);
  EXPECT_DOUBLE_EQ(e.total_bytes(), 56.0 * kKiB);

  // Equal per-rank sizes are uniform too; unequal ones keep their transfers.
  auto spec = direct_all_to_all(all_gpus(c), 0);
  spec.send_bytes.assign(8, 16 * kKiB);
  EXPECT_EQ(build_schedule(spec, c).phases[0].all_pairs, 2 * kKiB);
  spec.send_bytes[3] = 8 * kKiB;
  const Schedule uneven = build_schedule(spec, c);
  EXPECT_EQ(uneven.phases[0].all_pairs, 0);
  EXPECT_EQ(uneven.phases[0].transfers.size(), 56U);
  // Nothing to send: no phase.
  EXPECT_TRUE(build_schedule(direct_all_to_all(all_gpus(c), 0), c).phases.empty());
}

// LL at half the bandwidth: each transfer carries 2 KiB; a step crossing hosts pays net
// step 3 + proxy 1 + RDMA round trip 2 + 7 messages x 0.5 us per peer = 9.5 us, one inside
// a host 1 + 3.5 = 4.5 us (the implicit phase crosses hosts, so all its pairs pay 9.5).
TEST(AllPairs, ProtocolAndCalibrationAsTheStoredTransfers) {
  auto c = make_cluster(1, 2, 4);
  topology::CommParameters comm;
  comm.protocols[0] = topology::ProtocolParameters{
      0.5, {Time::from_us(5), Time::from_us(1), Time::from_us(3)}, {}, {}};
  comm.proxy_latency = Time::from_us(1);
  comm.rdma_round_trip = Time::from_us(2);
  comm.per_peer_latency = Time::from_ns(500);
  c.set_comm(comm);
  Schedule implicit = build_schedule(direct_all_to_all(all_gpus(c), 8 * kKiB), c);
  Schedule stored = expanded(implicit);
  apply_protocol(implicit, c, Protocol::kLL);
  apply_protocol(stored, c, Protocol::kLL);
  EXPECT_EQ(implicit.phases[0].all_pairs, 2 * kKiB);
  EXPECT_EQ(implicit.phases[0].step_latency, Time::from_us(9.5));
  EXPECT_EQ(implicit.phases[0].net_step_latency, Time::from_us(9.5));
  EXPECT_EQ(stored.phases[0].net_step_latency, implicit.phases[0].step_latency);
  EXPECT_EQ(stored.phases[0].step_latency, Time::from_us(4.5));
  EXPECT_EQ(implicit.start_latency, stored.start_latency);
  EXPECT_EQ(implicit.payload_fraction, stored.payload_fraction);
  apply_calibration(implicit, 0.75);
  apply_calibration(stored, 0.75);
  EXPECT_EQ(implicit.phases[0].all_pairs, 2731);  // 2048 / 0.75, rounded
  for (const auto& t : stored.phases[0].transfers) EXPECT_EQ(t.bytes, 2731);
  EXPECT_EQ(implicit.payload_fraction, stored.payload_fraction);
}

struct Outcome {
  Time time;
  TrafficStats traffic;
  std::uint64_t records = 0;
};

Outcome run(const topology::Cluster& c, const Schedule& s, NetworkOptions o) {
  engine::Simulator sim;
  Outcome out;
  if (o.mode == NetworkMode::kFlow) o.on_transfer = [&](const TransferRecord&) { ++out.records; };
  auto net = make_network(sim, c, o);
  net->start_schedule(s, 0, 1.0, [&] { out.time = sim.now(); });
  sim.run();
  out.traffic = net->traffic();
  return out;
}

void expect_same(const topology::Cluster& c, const std::vector<int>& gpus, NetworkOptions o,
                 const std::string& what) {
  Schedule implicit = build_schedule(direct_all_to_all(gpus, 64 * kMiB), c);
  apply_protocol(implicit, c, Protocol::kSimple);
  ASSERT_GT(implicit.phases.at(0).all_pairs, 0) << what;
  const Outcome a = run(c, implicit, o);
  const Outcome b = run(c, expanded(implicit), o);
  EXPECT_GT(a.time, Time::zero()) << what;
  EXPECT_EQ(a.time, b.time) << what;
  for (std::size_t k = 0; k < topology::kLinkClassCount; ++k)
    EXPECT_EQ(a.traffic.link_bytes[k], b.traffic.link_bytes[k]) << what << " class " << k;
  const auto n = static_cast<std::uint64_t>(gpus.size());
  EXPECT_EQ(a.traffic.transfers, n * (n - 1)) << what;
  EXPECT_EQ(b.traffic.transfers, n * (n - 1)) << what;
  EXPECT_EQ(a.records, b.records) << what;
}

std::vector<int> every(const topology::Cluster& c, int stride, int offset = 0) {
  std::vector<int> v;
  for (int g = offset; g < c.gpu_count(); g += stride) v.push_back(g);
  return v;
}

TEST(AllPairs, FlowAndAnalyticalEqualTheStoredTransfersOnBundledClusters) {
  struct Case {
    const char* cluster;
    int stride, offset;
  };
  for (const Case& k : {Case{"hgx-h100-8.json", 1, 0}, Case{"h100-256-rail.json", 1, 0},
                        Case{"mixed-h100-a100.json", 1, 0}, Case{"scale-across-3dc.json", 3, 1}}) {
    const auto c =
        topology::Cluster::load(std::string(STRAIT_SOURCE_DIR) + "/configs/clusters/" + k.cluster);
    const auto gpus = every(c, k.stride, k.offset);
    for (auto ecmp : {topology::EcmpPolicy::kDestinationModK, topology::EcmpPolicy::kHash}) {
      for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
        NetworkOptions o;
        o.mode = mode;
        o.ecmp = ecmp;
        expect_same(c, gpus, o,
                    std::string(k.cluster) +
                        (ecmp == topology::EcmpPolicy::kHash ? " hash " : " ") + to_string(mode));
      }
    }
  }
}

// Built in code (hosts without NICs in the hierarchy sense: analytical mode routes every
// path, ScheduleEstimator): 2 datacenters x 2 hosts x 4 GPUs.
TEST(AllPairs, RoutedEstimateAndFlowEqualTheStoredTransfers) {
  const auto c = make_cluster(2, 2, 4);
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    NetworkOptions o;
    o.mode = mode;
    expect_same(c, all_gpus(c), o, to_string(mode));
    expect_same(c, every(c, 2, 1), o, to_string(mode));
  }
}

}  // namespace
}  // namespace strait::sim::network
