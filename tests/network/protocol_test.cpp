// NCCL's protocols, per-step and per-message latencies and NVLink SHARP (topology::
// CommParameters), on clusters built in code so every number is worked out by hand.

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/network/detail/schedule_estimator.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/network.hpp"
#include "sim/network/rank_set.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::Fabric;
using testing::make_cluster;
using topology::CommParameters;
using topology::ProtocolParameters;

// LL: half the bandwidth, 5 us base, 1 us per step; Simple: full bandwidth, 10 us base,
// 4 us per step; LL128 made useless (100 us base) so the crossover is LL vs Simple.
// Across hosts a step pays net_step + proxy + RDMA round trip instead. Trees pay the same.
constexpr double kInfinity = std::numeric_limits<double>::infinity();

CommParameters two_protocols() {
  CommParameters c;
  const auto column = [](double base, double nvlink, double net) {
    return topology::StepLatencies{Time::from_us(base), Time::from_us(nvlink), Time::from_us(net)};
  };
  c.protocols[0] = ProtocolParameters{0.5, column(5, 1, 3), column(5, 1, 3), {}};
  c.protocols[1] = ProtocolParameters{0.9, column(100, 1, 3), column(100, 1, 3), {}};
  c.protocols[2] = ProtocolParameters{1.0, column(10, 4, 6), column(10, 4, 6), {}};
  c.proxy_latency = Time::from_us(1);
  c.rdma_round_trip = Time::from_us(2);
  return c;
}

// two_protocols() with NVLink SHARP (25 us per NVLS step) and, when `collnet`, SHARP in
// the scale-out switches.
CommParameters with_nvls(bool collnet) {
  CommParameters c = two_protocols();
  c.nvls = true;
  c.nvls_step_latency = Time::from_us(25);
  c.collnet = collnet;
  return c;
}

// Options whose schedules move in one chunk (no pipelined lanes), for closed forms.
NetworkOptions unpipelined(NetworkMode mode) {
  NetworkOptions o;
  o.mode = mode;
  o.schedule.chunk_bytes = 0;
  return o;
}

// 1 datacenter of `hosts` x 4 GPUs, NVLink `nvlink` B/s, NIC 50 GB/s, with_nvls(collnet).
topology::Cluster nvls_cluster(int hosts, double nvlink, bool collnet) {
  Fabric f;
  f.nvlink = nvlink;
  auto c = make_cluster(1, hosts, 4, f);
  c.set_comm(with_nvls(collnet));
  return c;
}

CollectiveSpec spec_for(const topology::Cluster& c, CollectiveOp op, Algorithm algo, Bytes bytes,
                        Protocol protocol = Protocol::kAuto) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.protocol = protocol;
  s.bytes = bytes;
  s.gpus = all_gpus(c);
  return s;
}

NetworkOptions in_mode(NetworkMode mode) {
  NetworkOptions o;
  o.mode = mode;
  return o;
}

NetworkOptions analytical() { return in_mode(NetworkMode::kAnalytical); }

// Ring all-reduce of S on n = 8 GPUs of one host (NVLink 100 GB/s, no link latency), one
// channel: T_p = base_p + 2(n-1)(step_p + S / (n bw f_p)).
//   S = 8 MiB: LL 5 + 14 (1 + 20.97 us) = 312.6 us; Simple 10 + 14 (4 + 10.49) = 212.8 us.
TEST(Protocols, RingAllReduceTakesBasePlusStepsAtTheProtocolsBandwidth) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 1, 8, f);
  c.set_comm(two_protocols());
  const Bytes s = 8 * kMiB;
  const double x_us = static_cast<double>(s) / 8 / 100e9 * 1e6;
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const auto ll = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s, Protocol::kLL),
        in_mode(mode));
    const auto simple = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s, Protocol::kSimple),
        in_mode(mode));
    EXPECT_NEAR(ll.time.to_us(), 5 + 14 * (1 + x_us / 0.5), 1e-3);
    EXPECT_NEAR(simple.time.to_us(), 10 + 14 * (4 + x_us), 1e-3);
    EXPECT_EQ(ll.protocol, Protocol::kLL);
    // Traffic counts the payload, whatever the protocol's flags cost on the wire.
    EXPECT_NEAR(ll.traffic.bytes(topology::LinkClass::kNvlink),
                simple.traffic.bytes(topology::LinkClass::kNvlink), 1.0);
  }
}

// One host of 8 GPUs (NVLink 1 GB/s) with two_protocols() on 4 channels of 64 bytes
// per thread-group under LL (512 B per channel of a ring on 8 ranks).
topology::Cluster four_channel_host() {
  Fabric f;
  f.nvlink = 1e9;
  auto c = make_cluster(1, 1, 8, f);
  CommParameters comm = two_protocols();
  comm.channels = 4;
  comm.protocols[0].channel_bytes = 64;
  c.set_comm(comm);
  return c;
}

// NCCL launches a channel per channel_bytes of a ring or tree (LL on a ring: per
// channel_bytes x ranks), up to `channels`, and a collective moves at that share of its
// protocol's bandwidth. 8 GPUs, NVLink 1 GB/s, 4 channels, LL's 64 bytes x 8 ranks = 512 B
// per channel: T = 5 + 14 (1 + S / (8 x 1 GB/s x 0.5 x share)).
//   S = 256 B: one channel, share 1/4: x = 32 B / 0.125 GB/s = 0.256 us -> 22.584 us;
//   S = 1 KiB: two, share 1/2: x = 128 B / 0.25 GB/s = 0.512 us -> 26.168 us (the same as
//     at 512 B: the data time stops shrinking with S below all channels);
//   S = 4 KiB: all four: x = 512 B / 0.5 GB/s = 1.024 us -> 33.336 us.
TEST(Protocols, ASmallRingRunsOnTheChannelsNcclLaunchesForItsSize) {
  const auto c = four_channel_host();
  for (auto [bytes, expected, launched] : {std::tuple<Bytes, double, int>{256, 22.584, 1},
                                           {512, 26.168, 1},
                                           {1024, 26.168, 2},
                                           {4096, 33.336, 4}}) {
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto ll = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, bytes, Protocol::kLL),
          in_mode(mode));
      EXPECT_NEAR(ll.time.to_us(), expected, 1e-3) << bytes << " " << to_string(mode);
      EXPECT_EQ(ll.nccl_channels, launched);
      // The wire carries the payload whatever the channels: 2 (7/8) S over the 8 NVLinks
      // out of the GPUs and the 8 into them.
      EXPECT_NEAR(ll.traffic.bytes(topology::LinkClass::kNvlink),
                  2.0 * 7 / 8 * static_cast<double>(bytes) * 8 * 2, 16.0);
    }
  }
  // A tree's LL threshold is not x ranks (1 KiB: 16 channels' worth, all 4); Simple has no
  // channel_bytes here, NVLS and direct all-to-all keep NCCL's other channel rules.
  EXPECT_DOUBLE_EQ(protocol_channel_share(c, Protocol::kLL, Algorithm::kRing, 1024, 8), 0.5);
  EXPECT_DOUBLE_EQ(protocol_channel_share(c, Protocol::kLL, Algorithm::kTree, 1024, 8), 1.0);
  EXPECT_DOUBLE_EQ(protocol_channel_share(c, Protocol::kLL, Algorithm::kTree, 64, 8), 0.25);
  EXPECT_DOUBLE_EQ(protocol_channel_share(c, Protocol::kSimple, Algorithm::kRing, 256, 8), 1.0);
  EXPECT_DOUBLE_EQ(protocol_channel_share(c, Protocol::kLL, Algorithm::kDirect, 256, 8), 1.0);
}

// The time a small ring loses on few channels is its own and loads no link: its
// transfers keep the protocol's bytes (S/8 / 0.5 = 128 B a step at S = 512 B) and the loss
// is each step's fill, 3 x 128 B / 1 GB/s = 0.384 us on one channel of four. (Carried as
// bytes, a small collective would crowd a link it shares, e.g. a WAN, with others.)
TEST(Protocols, ChannelsLeftIdleLoadNoLink) {
  const auto c = four_channel_host();
  Schedule s = build_schedule(
      spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, 512, Protocol::kLL), c, {});
  apply_protocol(s, c, Protocol::kLL);
  ASSERT_FALSE(s.phases.empty());
  for (const Phase& phase : s.phases) {
    for (const Transfer& t : phase.transfers) EXPECT_EQ(t.bytes, 128);
    EXPECT_EQ(phase.fill, Time::from_ns(384));
  }
  // The tuner's view has no fill.
  Schedule tuner = build_schedule(
      spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, 512, Protocol::kLL), c, {});
  apply_protocol(tuner, c, Protocol::kLL, ProtocolView::kTuner);
  for (const Phase& phase : tuner.phases) EXPECT_EQ(phase.fill, Time::zero());
}

// A protocol's busbw ceiling (NCCL's llMaxBws): the ring above with LL capped at 10 GB/s
// of busbw on one host. Its phases alone take 14 (1 + 20.97) = 307.6 us; the ceiling says
// at least 8 MiB x 2 (7/8) / 10 GB/s = 1468.0 us, so T = 5 + 1468.0064 us. A ceiling above
// the links' rate (1 TB/s) changes nothing; one for two hosts does not apply to one host.
TEST(Protocols, AProtocolsBusbwCeilingBoundsItsDataTime) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 1, 8, f);
  const Bytes s = 8 * kMiB;
  const double x_us = static_cast<double>(s) / 8 / 100e9 * 1e6;
  const double capped_us = 5 + static_cast<double>(s) * 1.75 / 10e9 * 1e6;
  for (auto [one_host, two_hosts, expected] :
       {std::tuple{10e9, kInfinity, capped_us},
        std::tuple{1e12, kInfinity, 5 + 14 * (1 + 2 * x_us)},
        std::tuple{kInfinity, 10e9, 5 + 14 * (1 + 2 * x_us)}}) {
    CommParameters comm = two_protocols();
    comm.protocols[0].max_busbw.one_host = one_host;
    comm.protocols[0].max_busbw.two_hosts = two_hosts;
    c.set_comm(comm);
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto ll = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s, Protocol::kLL),
          in_mode(mode));
      EXPECT_NEAR(ll.time.to_us(), expected, 1e-3) << one_host << " " << to_string(mode);
    }
  }
}

// The tuner picks LL while 5 + 14 (1 + 2x) < 10 + 14 (4 + x), i.e. x < 47/14 us with
// x = S / (8 x 100 GB/s): below S* = 47/14 us x 800 GB/s = 2,685,714 B, Simple above.
TEST(Protocols, TunerPicksLowLatencyBelowTheCrossoverAndSimpleAbove) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 1, 8, f);
  c.set_comm(two_protocols());
  const double crossover = 47.0 / 14.0 * 1e-6 * 800e9;
  engine::Simulator sim;
  auto net = make_network(sim, c, analytical());
  const auto below = net->resolve(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing,
                                           static_cast<Bytes>(crossover * 0.95)));
  const auto above = net->resolve(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing,
                                           static_cast<Bytes>(crossover * 1.05)));
  EXPECT_EQ(below.protocol, Protocol::kLL);
  EXPECT_EQ(above.protocol, Protocol::kSimple);
  // All-gather tunes the same way (n-1 steps: x < 47/7 us is the same crossover per step).
  const auto ag = net->resolve(spec_for(c, CollectiveOp::kAllGather, Algorithm::kRing, 64 * kKiB));
  EXPECT_EQ(ag.protocol, Protocol::kLL);
}

// Two hosts of one GPU (NIC 50 GB/s, no link latency): every ring step crosses hosts and
// pays net_step + proxy + RDMA = 6 + 1 + 2 = 9 us with Simple. All-reduce of 1 MiB, n = 2:
// T = 10 + 2 (9 + 524,288 B / 50 GB/s) = 10 + 2 (9 + 10.486) = 48.97 us.
TEST(Protocols, StepsAcrossHostsPayTheProxyAndTheRdmaRoundTrip) {
  auto c = make_cluster(1, 2, 1);
  c.set_comm(two_protocols());
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const auto r = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, kMiB, Protocol::kSimple),
        in_mode(mode));
    EXPECT_NEAR(r.time.to_us(), 10 + 2 * (9 + 524288 / 50e9 * 1e6), 1e-3);
  }
}

// A ring is pipelined: a rank forwards each slice as soon as it has it, so over a ring's
// steps every hop's latency is paid in turn and a step costs the mean hop latency, not the
// slowest hop's (NCCL's tuner: (nsteps - nInterSteps) intraLat + nInterSteps interLat).
// 2 datacenters x 1 host x 4 GPUs, every link 1 us except the cross-DC link (10 us), all
// bandwidths 10^15 B/s (bytes cost ~33 ps a step). A ring of the 8 GPUs has 6 hops inside a
// host (GPU-NVSwitch-GPU: 2 us of links, Simple's 4 us NVLink step: 4 us, the larger) and 2
// across datacenters (NIC, core, core, NIC: 12 us of links against 6 + proxy 1 + RDMA 2 =
// 9 us: 12 us). Per step: (6 x 4 + 2 x 12) / 8 = 6 us.
//   all-reduce, 14 steps: 10 + 14 x 6 = 94 us (the slowest hop each step: 178 us);
//   all-gather, 7 steps: 10 + 7 x 6 = 52 us.
TEST(Protocols, RingStepsPayTheMeanHopLatencyNotTheSlowest) {
  Fabric f;
  f.nvlink = f.nic = f.cross_dc = 1e15;
  f.link_latency = Time::from_us(1);
  f.cross_dc_latency = Time::from_us(10);
  auto c = make_cluster(2, 1, 4, f);
  c.set_comm(two_protocols());
  const Bytes s = kMiB;
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const auto ar = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s, Protocol::kSimple),
        in_mode(mode));
    const auto ag = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllGather, Algorithm::kRing, s, Protocol::kSimple),
        in_mode(mode));
    // Bytes: the busiest link of a step carries at most the step's slices of every
    // channel, under 1 MiB / 10^15 B/s = 1 ns a step.
    EXPECT_NEAR(ar.time.to_us(), 10 + 14 * 6, 14e-3);
    EXPECT_NEAR(ag.time.to_us(), 10 + 7 * 6, 7e-3);
  }
}

// NCCL's tree: a chain inside each host, a binary tree over the hosts' heads. LL (5 us
// base, 1 us per NVLink step, 3 + proxy 1 + RDMA 2 = 6 us per network step), every link
// 1 us (a path in a host or across hosts: 2 us), bandwidths 10^15 B/s, 8 KiB (one chunk).
// A step pays the larger of its path and its protocol latency: 2 us in a host, 6 across.
//   2 hosts x 4 GPUs: chains up 3, tree up 1, down 1, chains down 3:
//     5 + 6 x 2 + 2 x 6 = 29 us;
//   4 hosts x 2 GPUs: chains up 1, tree levels 2 up and 2 down, chains down 1:
//     5 + 2 x 2 + 4 x 6 = 33 us.
// An 8 KiB LL tree all-reduce on `hosts` x `gpus` (links of 1 us, 10^15 B/s), per mode.
std::vector<double> tree_times_us(int hosts, int gpus, const CommParameters& comm) {
  Fabric f;
  f.nvlink = f.nic = 1e15;
  f.link_latency = Time::from_us(1);
  auto c = make_cluster(1, hosts, gpus, f);
  c.set_comm(comm);
  std::vector<double> out;
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    out.push_back(
        simulate_collective(
            c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kTree, 8 * kKiB, Protocol::kLL),
            in_mode(mode))
            .time.to_us());
  }
  return out;
}

TEST(Protocols, TreeChainsInsideHostsAndBranchesAcrossThem) {
  for (auto [hosts, gpus, expected] : {std::tuple{2, 4, 29.0}, std::tuple{4, 2, 33.0}}) {
    for (double t : tree_times_us(hosts, gpus, two_protocols()))
      EXPECT_NEAR(t, expected, 1e-3) << hosts << " hosts";
  }
}

// NCCL's tuner keeps its own latency column for trees: the tree above with the tree's
// LL constants made different from the ring's (7 us base, 2.5 us per NVLink step, 4 us of
// network step, so 4 + proxy 1 + RDMA 2 = 7 us across hosts); a step in a host pays
// max(path 2, 2.5):
//   2 hosts x 4 GPUs: 7 + 6 x 2.5 + 2 x 7 = 36 us; 4 hosts x 2 GPUs: 7 + 2 x 2.5 + 4 x 7 = 40 us.
// A ring keeps the ring's constants: the same with or without the tree column.
TEST(Protocols, TreePaysTheTreeColumnOfTheTunersLatencies) {
  CommParameters comm = two_protocols();
  comm.protocols[0].tree = {Time::from_us(7), Time::from_us(2.5), Time::from_us(4)};
  for (auto [hosts, gpus, expected] : {std::tuple{2, 4, 36.0}, std::tuple{4, 2, 40.0}}) {
    for (double t : tree_times_us(hosts, gpus, comm))
      EXPECT_NEAR(t, expected, 1e-3) << hosts << " hosts";
    auto c = make_cluster(1, hosts, gpus);
    const auto ring = [&](const CommParameters& p) {
      c.set_comm(p);
      return simulate_collective(
                 c,
                 spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, 8 * kKiB, Protocol::kLL),
                 analytical())
          .time;
    };
    EXPECT_EQ(ring(comm), ring(two_protocols()));
  }
}

// LL flags every line, so a tree's levels stream through each other instead of storing
// and forwarding the whole message at every level. 2 hosts x 2 GPUs (NVLink 100 GB/s, NICs
// 50 GB/s, no link latency), two_protocols()' LL (half the bandwidth; 5 us base, 1 us per
// NVLink step, 6 us per network step), 1 MiB: chains up (1 us), tree up and down (6 us
// each), chains down (1 us), then the bytes of all four phases at once. Every link carries
// 2 MiB in each direction over the four (the head's NIC: its child's reduction in, the
// broadcast out), the NIC is the slowest: 2 MiB / 50 GB/s = 41.943 us.
//   T = 5 + 14 + 41.943 = 60.943 us (store and forward: 5 + 14 + 2 (20.972 + 41.943)
//   = 144.830 us).
// Under a busbw ceiling of 10 GB/s on two hosts the bytes take no less than
// 1 MiB x 2 (3/4) / 10 GB/s = 157.286 us, after the latencies: T = 5 + 14 + 157.286.
TEST(Protocols, LowLatencyTreeLevelsStreamThroughEachOther) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 2, 2, f);
  for (auto [ceiling, expected] :
       {std::pair{kInfinity, 60.943}, std::pair{10e9, 19 + 1.5 * kMiB / 10e9 * 1e6}}) {
    CommParameters comm = two_protocols();
    comm.protocols[0].max_busbw.two_hosts = ceiling;
    c.set_comm(comm);
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto r = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kTree, kMiB, Protocol::kLL),
          unpipelined(mode));
      EXPECT_NEAR(r.time.to_us(), expected, 1e-3) << ceiling << " " << to_string(mode);
    }
    // The same schedule routed link by link (the estimator of graph-form clusters).
    Schedule schedule = build_schedule(
        spec_for(c, CollectiveOp::kAllReduce, Algorithm::kTree, kMiB, Protocol::kLL), c, {});
    apply_protocol(schedule, c, Protocol::kLL);
    topology::Router router(c, topology::EcmpPolicy::kDestinationModK);
    detail::ScheduleEstimator routed(c, router);
    EXPECT_NEAR((schedule.start_latency + routed.estimate(schedule, nullptr)).to_us(), expected,
                1e-3)
        << ceiling;
  }
  // Simple still stores and forwards each chunk.
  c.set_comm(two_protocols());
  const auto simple = simulate_collective(
      c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kTree, kMiB, Protocol::kSimple),
      unpipelined(NetworkMode::kAnalytical));
  EXPECT_NEAR(simple.time.to_us(), 10 + 2 * 4 + 2 * 9 + 2 * (10.486 + 20.972), 1e-2);
}

// A streaming tree over enough ranks that its merged phases make a coflow of 4,096
// transfers or more (counted per link, not routed one by one: 2 (n - 1) = 4,398 for 25
// hosts of 88 GPUs) still pays the sum of its phases' latencies before its bytes in flow
// mode, as the estimate does: 87 chain steps up and down in each host (2 us of links
// against LL's 1 us step), 4 tree levels up and down (6 us), 5 us base = 401 us, then
// 1 MiB at LL's half rate (2 MiB a transfer) over the busiest link: the NIC of a head with
// two children and a parent sends 3 x 2 MiB at 50 GB/s = 125.829 us.
TEST(Protocols, ABigStreamingTreePaysItsPhasesLatenciesInFlowMode) {
  Fabric f;
  f.nvlink = 100e9;
  f.link_latency = Time::from_us(1);
  auto c = make_cluster(1, 25, 88, f);
  c.set_comm(two_protocols());
  const auto spec = spec_for(c, CollectiveOp::kAllReduce, Algorithm::kTree, kMiB, Protocol::kLL);
  for (auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
    EXPECT_NEAR(simulate_collective(c, spec, unpipelined(mode)).time.to_us(), 401 + 125.829, 1e-2)
        << to_string(mode);
  }
}

// Scale-out links run at net_efficiency of their line rate (RDMA reaches ~47 of a 400 Gb/s
// NIC's 50 GB/s), NVLink at nvlink_efficiency: 8 MiB sent to another host over a 50 GB/s NIC
// at 0.5 takes 8 MiB / 25 GB/s = 335.544 us (no latency); to a GPU of its own host over
// 100 GB/s NVLink at 0.8, 8 MiB / 80 GB/s = 104.858 us. Traffic counts the payload on both
// links of the path (NIC up and down; GPU to NVSwitch and on).
TEST(Protocols, LinksRunAtTheLibrarysShareOfTheirLineRate) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 2, 2, f);
  CommParameters comm;
  comm.net_efficiency = 0.5;
  comm.nvlink_efficiency = 0.8;
  c.set_comm(comm);
  for (auto [peer, expected] : {std::pair{2, 335.544}, std::pair{1, 104.858}}) {
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      CollectiveSpec s;
      s.op = CollectiveOp::kSendRecv;
      s.algorithm = Algorithm::kDirect;
      s.bytes = 8 * kMiB;
      s.gpus = {0, peer};
      s.root = 0;
      s.peer = 1;
      const auto r = simulate_collective(c, s, in_mode(mode));
      EXPECT_NEAR(r.time.to_us(), expected, 1e-3) << peer << " " << to_string(mode);
      EXPECT_DOUBLE_EQ(r.traffic.bytes(peer == 2 ? topology::LinkClass::kScaleOut
                                                 : topology::LinkClass::kNvlink),
                       2.0 * 8 * kMiB);
    }
  }
}

// NCCL has no hierarchical all-reduce. On 2 hosts x 4 GPUs (NVLink 100 GB/s, NIC 50 GB/s)
// hierarchical is the fastest all-reduce at some sizes from 64 KiB to 64 MiB when `auto`
// may weigh it; a cluster that runs NCCL (hierarchical_in_datacenter false) never gets it
// inside one datacenter, and still gets it for ranks across two datacenters.
TEST(Protocols, AutoKeepsHierarchicalForRanksAcrossDatacentersUnderNccl) {
  const auto picks_hierarchical = [](const topology::Cluster& c) {
    int count = 0;
    for (Bytes bytes = 64 * kKiB; bytes <= 64 * kMiB; bytes *= 4) {
      const auto r = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kAuto, bytes), analytical());
      count += r.algorithm == Algorithm::kHierarchical ? 1 : 0;
    }
    return count;
  };
  CommParameters comm = two_protocols();
  Fabric f;
  f.nvlink = 100e9;
  f.nic = 50e9;
  auto one_dc = make_cluster(1, 2, 4, f);
  auto two_dcs = make_cluster(2, 1, 4, f);
  comm.hierarchical_in_datacenter = true;
  one_dc.set_comm(comm);
  EXPECT_GT(picks_hierarchical(one_dc), 0);
  comm.hierarchical_in_datacenter = false;
  one_dc.set_comm(comm);
  two_dcs.set_comm(comm);
  EXPECT_EQ(picks_hierarchical(one_dc), 0);
  EXPECT_GT(picks_hierarchical(two_dcs), 0);
}

// NCCL runs NVLS tree across NVLS hosts where a Simple or LL128 ring or tree would win
// strait's estimate (CommParameters::nvls_tree_first). The bundled rail cluster's first 4
// hosts (NCCL's defaults, NVLS), 8 GiB: the ring estimates 373.4 GB/s busbw, NVLS tree at
// its per-channel ceiling 45.5 x 8 NICs = 364.0. With the preference `auto` runs NVLS tree
// and takes NVLS tree's time; without, the ring. Small messages keep tree/LL either way.
TEST(Protocols, AutoRunsNvlsTreeWhereNcclsTunerWould) {
  auto c = topology::Cluster::load(std::string(STRAIT_SOURCE_DIR) +
                                   "/configs/clusters/h100-256-rail.json");
  ASSERT_TRUE(c.comm().nvls_tree_first);
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllReduce;
  spec.algorithm = Algorithm::kAuto;
  spec.gpus = parse_rank_set("first:32", c);
  spec.bytes = 8 * kGiB;
  const auto busbw = [&](const CollectiveResult& r) {
    return 8.0 * kGiB * 2 * 31 / 32 / r.time.to_s() / 1e9;
  };
  const auto preferred = simulate_collective(c, spec, analytical());
  EXPECT_EQ(preferred.algorithm, Algorithm::kNvlsTree);
  EXPECT_NEAR(busbw(preferred), 364.0, 0.05);
  CommParameters comm = c.comm();
  comm.nvls_tree_first = false;
  c.set_comm(comm);
  const auto estimated = simulate_collective(c, spec, analytical());
  EXPECT_EQ(estimated.algorithm, Algorithm::kRing);
  EXPECT_GT(busbw(estimated), 370.0);
  spec.bytes = 4 * kKiB;
  for (bool first : {true, false}) {
    comm.nvls_tree_first = first;
    c.set_comm(comm);
    EXPECT_EQ(simulate_collective(c, spec, analytical()).algorithm, Algorithm::kTree) << first;
  }
}

// Direct all-to-all of S per rank on n GPUs of one host (NVLink 100 GB/s) with 0.5 us per
// peer message and no other latency: T = (n-1) S/n / bw + (n-1) 0.5 us.
//   n = 4, S = 4 MiB: 31.457 + 1.5 us; n = 8: 36.700 + 3.5 us.
TEST(Protocols, DirectAllToAllPaysAPerPeerOverheadPerMessage) {
  Fabric f;
  f.nvlink = 100e9;
  for (int n : {4, 8}) {
    auto c = make_cluster(1, 1, n, f);
    CommParameters comm;
    comm.per_peer_latency = Time::from_ns(500);
    c.set_comm(comm);
    const Bytes s = 4 * kMiB;
    const double expected = (n - 1) * static_cast<double>(s / n) / 100e9 * 1e6 + (n - 1) * 0.5;
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto r = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllToAll, Algorithm::kDirect, s), in_mode(mode));
      EXPECT_NEAR(r.time.to_us(), expected, 1e-3) << n;
    }
  }
}

// NVLS on 8 GPUs (NVLink 100 GB/s, NVLS at 0.8 of it, 25 us per NVLS step): one phase of
// S/8 to every other GPU, T = 25 + (7/8) S / 80 GB/s; busbw = 2 (7/8) S / T -> 160 GB/s,
// against ring's 100 GB/s. The tuner keeps the ring for 8 B (LL: 5 + 14 x 1 = 19 us < 25),
// NVLS for 64 MiB.
// One host of 8 GPUs (NVLink 100 GB/s) whose NVLS runs at 0.8 of it, 25 us per step, in
// lanes of `lane` bytes (0: its stages overlap entirely).
topology::Cluster nvls_host(Bytes lane) {
  Fabric f;
  f.nvlink = 100e9;
  auto c = make_cluster(1, 1, 8, f);
  CommParameters comm = two_protocols();
  comm.nvls = true;
  comm.nvls_bandwidth_fraction = 0.8;
  comm.nvls_step_latency = Time::from_us(25);
  comm.nvls_lane_bytes = lane;
  c.set_comm(comm);
  return c;
}

TEST(Protocols, NvlsAllReduceSendsEachSliceOnceAndWinsForLargeMessages) {
  auto c = nvls_host(0);
  const Bytes s = 64 * kMiB;
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const auto r = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvls, s), in_mode(mode));
    EXPECT_NEAR(r.time.to_us(), 25 + 7.0 / 8 * static_cast<double>(s) / 80e9 * 1e6, 1e-3);
  }
  engine::Simulator sim;
  auto net = make_network(sim, c, analytical());
  EXPECT_EQ(net->resolve(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kAuto, s)).algorithm,
            Algorithm::kNvls);
  EXPECT_NE(net->resolve(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kAuto, 8)).algorithm,
            Algorithm::kNvls);
  // Without "nvls" in the cluster, asking for it is an error naming the key.
  c.set_comm(two_protocols());
  EXPECT_THROW(
      simulate_collective(c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvls, s), {}),
      strait::Error);
}

// NVLS moves its message in lanes: the switch reduces a lane, then multicasts it while it
// reduces the next, so the stages overlap but for one lane. The cluster above with 8 MiB
// lanes: T = 25 + (7/8) (S + min(S, 8 MiB)) / 80 GB/s.
//   S = 64 MiB: 25 + 0.875 x 72 MiB / 80 GB/s = 25 + 825.7536 us = 850.7536 us;
//   S = 4 MiB (one lane, the stages in turn): 25 + 0.875 x 8 MiB / 80 GB/s = 116.7504 us.
// Traffic stays the payload: (7/8) S out of each GPU and into each.
TEST(Protocols, NvlsStagesOverlapButForOneLane) {
  const auto c = nvls_host(8 * kMiB);
  for (auto [bytes, expected] :
       {std::pair<Bytes, double>{64 * kMiB, 850.7536}, {4 * kMiB, 116.7504}}) {
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto r = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvls, bytes), in_mode(mode));
      EXPECT_NEAR(r.time.to_us(), expected, 1e-3) << bytes << " " << to_string(mode);
      EXPECT_NEAR(r.traffic.bytes(topology::LinkClass::kNvlink),
                  7.0 / 8 * static_cast<double>(bytes) * 8 * 2, 64.0);
    }
  }
}

// `auto` picks as NCCL's tuner does, at full channels and with NVLS's stages overlapped,
// and then pays both: the published defaults on an 8 x H100 host (NVLink 450 GB/s) at
// 8 MiB run NVLS (as NCCL does from 2 MiB on one host, nccl-tests issue 309), taking
// 25 + (7/8) x 16 MiB / (370 GB/s x 480/740) = 86.166 us, though a ring under LL128 at its
// size's channels would be faster (NCCL's tuner does not see that either).
TEST(Protocols, AutoPicksAsNcclsTunerAtFullChannels) {
  Fabric f;
  f.nvlink = 450e9;
  auto c = make_cluster(1, 1, 8, f);
  CommParameters comm = CommParameters::published_defaults();
  comm.nvls = true;
  c.set_comm(comm);
  const Bytes s = 8 * kMiB;
  const auto picked =
      simulate_collective(c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kAuto, s), {});
  EXPECT_EQ(picked.algorithm, Algorithm::kNvls);
  EXPECT_NEAR(picked.time.to_us(), 25 + 7.0 / 8 * 16 * kMiB / (370e9 * 480 / 740) * 1e6, 1e-3);
  const auto ring = simulate_collective(
      c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s, Protocol::kLL128), {});
  EXPECT_LT(ring.time, picked.time);
}

// NVLS tree pipelines a lane per chunk (512 KiB, at most 64 lanes), not 8. With k lanes
// a schedule takes T_k = C + (U - C) / k: U its time in one lane (every stage in turn), C
// the steady-state cycle of the links its stages share, so the pipeline's fill is
// (U - C) / k. On 8 hosts the 8 stages (NVLS reduce, 3 tree levels up, 3 down, NVLS
// multicast) make U about 3.2 C: 8 lanes left 28% of a 1 GiB all-reduce to the fill
// (T_8 = 1.28 C), 64 lanes leave 3.5%. The test takes U unpipelined, C from T_8, and
// checks that the tuner takes all 64 lanes (16 MiB each, far above a step's latency) and
// T_64 = C + (U - C) / 64.
TEST(Protocols, NvlsTreePipelinesAChunkPerLane) {
  auto c = nvls_cluster(8, 100e9, false);
  const auto spec = spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, kGiB);
  NetworkOptions eight = analytical();
  eight.schedule.max_chunks = 8;
  const double u = simulate_collective(c, spec, unpipelined(NetworkMode::kAnalytical)).time.to_us();
  const auto capped = simulate_collective(c, spec, eight);
  const auto lanes = simulate_collective(c, spec, analytical());
  EXPECT_EQ(capped.chunks, 8);
  EXPECT_EQ(lanes.chunks, 64);
  const double cycle = (8 * capped.time.to_us() - u) / 7;
  EXPECT_GT(u, 3 * cycle);
  EXPECT_NEAR(lanes.time.to_us(), cycle + (u - cycle) / 64, 1e-3 * cycle);
}

// NVLS tree's ceiling is per channel, one channel per NIC (NCCL's perChMaxNVLSTreeBws x
// NVLS heads): 2 hosts x 4 GPUs with 4 NICs each and 20 GB/s per channel cap its busbw at
// 80 GB/s: 64 MiB x 2 (7/8) / 80 GB/s = 1468.0064 us (NVLS tree has no base latency), far
// above what its links take. On 4 hosts the "more hosts" value (10 GB/s) applies: 64 MiB x
// 2 (15/16) / 40 GB/s = 3145.728 us.
TEST(Protocols, NvlsTreeCeilingIsPerChannelAndPerHostCount) {
  for (auto [hosts, expected] : {std::pair{2, 1468.0064}, std::pair{4, 3145.728}}) {
    auto c = topology::Cluster::from_config(
        ConfigNode(Json::parse(R"({"name": "t", "datacenters": [{"name": "a", "hosts": )" +
                               std::to_string(hosts) + R"(, "host": {"gpus": 4, "gpu_type": "X",
                    "nvlink": {"bandwidth": "400 GB/s"}, "nics": 4,
                    "nic": {"bandwidth": "400 Gb/s"}}, "network": {"hosts_per_leaf": 4}}]})"),
                   "cluster.json"));
    ASSERT_EQ(c.hosts().front().nics, 4);
    CommParameters comm = with_nvls(false);
    comm.nvls_bandwidth_fraction = 1.0;
    comm.nvls_tree_channel_busbw.two_hosts = 20e9;
    comm.nvls_tree_channel_busbw.more_hosts = 10e9;
    c.set_comm(comm);
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      const auto r = simulate_collective(
          c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, 64 * kMiB),
          unpipelined(mode));
      EXPECT_NEAR(r.time.to_us(), expected, 1e-3) << hosts << " hosts, " << to_string(mode);
    }
  }
}

// NVLS tree on 2 hosts x 4 GPUs (NVLink 100 GB/s, NIC 50 GB/s, no link latency), Simple
// 9 us per step across hosts (6 + proxy 1 + RDMA 2), NVLS 25 us once (NCCL's tuner charges
// NVLS's latency once: 12.5 us for each of the two in-host stages), NVLS at 0.8 of NVLink:
//   NVLS reduce and multicast, each half of single-host NVLS's phase: every GPU sends S/8
//   to 3 peers at 80 GB/s, 2 x (3S/8 / 80 GB/s + 12.5 us);
//   the double binary tree of the S/4 slices across 2 hosts: both trees are the one edge,
//   each carrying S/8, up then down: 2 x (S/8 / 50 GB/s + 9 us).
// S = 64 MiB: 2 (314.6 + 12.5) + 2 (167.8 + 9) = 1007.7 us, in one chunk (chunk_bytes 0:
// no pipelining; CollNetPipelinesItsStagesChunkByChunk checks the lanes). NVLink traffic
// is the payload: 8 GPUs x 3 peers x S/8 x 2 stages x 2 links (GPU -> NVSwitch -> GPU).
// On 4 hosts (NVLS at 1.0) the trees have 2 levels; a NIC carries at most S/4 per level
// (an inner node's two children, or its two trees): 2 (S/8 + S/4) / 50 GB/s + 4 x 9 us,
// against a ring's 6 steps of S/16 (1006.6 + 36 us; the ring 503.3 + 54: fewer bytes per
// NIC, more steps).
TEST(Protocols, NvlsTreeReducesInHostsAndRunsADoubleBinaryTreeAcrossThem) {
  auto c = nvls_cluster(2, 100e9, false);
  CommParameters comm = c.comm();
  comm.nvls_bandwidth_fraction = 0.8;
  c.set_comm(comm);
  const Bytes s = 64 * kMiB;
  const double bytes = static_cast<double>(s);
  const double expected =
      2 * (0.375 * bytes / 80e9 * 1e6 + 12.5) + 2 * (bytes / 8 / 50e9 * 1e6 + 9);
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const NetworkOptions o = unpipelined(mode);
    const auto r = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, s, Protocol::kSimple), o);
    EXPECT_NEAR(r.time.to_us(), expected, 1e-3);
    EXPECT_NEAR(r.traffic.bytes(topology::LinkClass::kNvlink), 8 * 3 * bytes / 8 * 2 * 2, 1e3);
  }
  auto four = nvls_cluster(4, 100e9, false);
  const auto r = simulate_collective(
      four, spec_for(four, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, s, Protocol::kSimple),
      unpipelined(NetworkMode::kAnalytical));
  EXPECT_NEAR(
      r.time.to_us(),
      2 * (0.375 * bytes / 100e9 * 1e6 + 12.5) + 2 * (bytes / 8 + bytes / 4) / 50e9 * 1e6 + 4 * 9,
      1e-3);
  // One host: NCCL disables NVLS tree; so does strait.
  auto one = nvls_cluster(1, 100e9, false);
  EXPECT_THROW(simulate_collective(
                   one, spec_for(one, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, s), {}),
               strait::Error);
}

// CollNet (SHARP in the switches) on 4 hosts x 4 GPUs with NVLS (NVLink 400 GB/s, NIC
// 50 GB/s, costs as above, NVLS at 1.0 of NVLink): the in-host NVLS reduce and multicast
// as for NVLS tree, 2 x (3S/8 / 400 GB/s + 12.5 us); across hosts each NIC sends its S/4
// slice up once and receives the sum once, S/4 / 50 GB/s + 9 us. NVLS tree's double binary
// tree over 4 hosts moves up to S/4 per NIC on each of its 2 levels, up and down:
//   S = 64 MiB: collnet 150.8 + 335.5 + 9 = 495.4 us; nvls_tree 150.8 + 2 (167.8 + 335.5)
//   + 36 = 1193.5 us; rings (one per rail) about 30 (21 + 9) = 900 us; the tuner picks
//   CollNet.
// All in one chunk here (chunk_bytes 0).
TEST(Protocols, CollNetSendsEachSliceUpAndBackOnceAcrossHosts) {
  auto c = nvls_cluster(4, 400e9, true);
  CommParameters comm = c.comm();
  const Bytes s = 64 * kMiB;
  const double bytes = static_cast<double>(s);
  const double in_hosts = 2 * (0.375 * bytes / 400e9 * 1e6 + 12.5);
  for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
    const NetworkOptions o = unpipelined(mode);
    const auto collnet = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s, Protocol::kSimple), o);
    EXPECT_NEAR(collnet.time.to_us(), in_hosts + (bytes / 4 / 50e9 * 1e6 + 9), 1e-3);
    const auto tree = simulate_collective(
        c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kNvlsTree, s, Protocol::kSimple), o);
    EXPECT_NEAR(tree.time.to_us(), in_hosts + 2 * (bytes / 8 + bytes / 4) / 50e9 * 1e6 + 36, 1e-3);
  }
  engine::Simulator sim;
  auto net = make_network(sim, c, unpipelined(NetworkMode::kAnalytical));
  EXPECT_EQ(net->resolve(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kAuto, s)).algorithm,
            Algorithm::kCollNet);
  // Without NVLS the host steps are rings: 3 steps of S/4 each way, (S/4 / 400 GB/s + 4 us);
  // CollNet has no base latency in NCCL's tuner.
  comm.nvls = false;
  c.set_comm(comm);
  const auto ring_hosts = simulate_collective(
      c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s, Protocol::kSimple),
      unpipelined(NetworkMode::kAnalytical));
  EXPECT_NEAR(ring_hosts.time.to_us(),
              6 * (bytes / 4 / 400e9 * 1e6 + 4) + (bytes / 4 / 50e9 * 1e6 + 9), 1e-3);
  // Without "collnet" in the cluster, or on all-gather, asking for it is an error.
  EXPECT_THROW(simulate_collective(c, spec_for(c, CollectiveOp::kAllGather, Algorithm::kCollNet, s),
                                   analytical()),
               strait::Error);
  comm.collnet = false;
  c.set_comm(comm);
  EXPECT_THROW(simulate_collective(c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s),
                                   analytical()),
               strait::Error);
}

// The same CollNet pipelined: k chunks in flight, each stage a lane of S/k; analytical mode
// pays one lane through all three stages, then k - 1 cycles of the slowest stage (or the
// busiest link over one lane, whichever is longer):
//   k = 4: reduce/broadcast 0.375 (S/4) / 400 GB/s + 12.5 = 28.23 us, SHARP (S/16) /
//   50 GB/s + 9 = 92.89 us (NVLink over a lane 2 x 15.73 = 31.5 us < 92.89): 2 x 28.23 +
//   92.89 + 3 x 92.89 = 428.0 us; k = 8: 2 x 20.36 + 8 x 50.94 = 448.3 us; k = 2: 441.5 us;
//   k = 1: 495.4 us. The tuner takes k = 4 (NCCL sizes its chunks the same way).
TEST(Protocols, CollNetPipelinesItsStagesChunkByChunk) {
  auto c = nvls_cluster(4, 400e9, true);
  const Bytes s = 64 * kMiB;
  const double bytes = static_cast<double>(s);
  auto lanes = [&](int k) {
    const double lane = bytes / k;
    const double host = 0.375 * lane / 400e9 * 1e6 + 12.5;
    const double sharp = lane / 4 / 50e9 * 1e6 + 9;
    const double cycle = std::max({host, sharp, 2 * 0.375 * lane / 400e9 * 1e6});
    return 2 * host + sharp + (k - 1) * cycle;
  };
  EXPECT_NEAR(lanes(4), 428.0, 0.1);
  EXPECT_LT(lanes(4), std::min({lanes(1), lanes(2), lanes(8)}));
  engine::Simulator sim;
  auto net = make_network(sim, c, analytical());
  const auto choice = net->resolve(
      spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s, Protocol::kSimple));
  EXPECT_EQ(choice.chunks, 4);
  const auto r = simulate_collective(
      c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s, Protocol::kSimple),
      analytical());
  EXPECT_EQ(r.chunks, 4);
  EXPECT_NEAR(r.time.to_us(), lanes(4), 1e-3);
  // Flow mode runs the lanes as flows: the stages overlap on different links, so it lands
  // between the pipelined bound and one chunk.
  NetworkOptions flow;
  flow.mode = NetworkMode::kFlow;
  const auto f4 = simulate_collective(
      c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kCollNet, s, Protocol::kSimple), flow);
  EXPECT_EQ(f4.chunks, 4);
  EXPECT_GE(f4.time.to_us(), lanes(4) - 1e-3);
  EXPECT_LT(f4.time.to_us(), lanes(1));
}

// A neutral cluster (every protocol the bare link model) reproduces the model without
// protocols: ring all-reduce T = 2(n-1) S/(n bw) exactly.
TEST(Protocols, NeutralParametersKeepTheBareLinkModel) {
  Fabric f;
  f.nvlink = 100e9;
  const auto c = make_cluster(1, 1, 8, f);
  const Bytes s = 8 * kMiB;
  const auto r = simulate_collective(c, spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, s),
                                     NetworkOptions{});
  EXPECT_NEAR(r.time.to_us(), 14 * static_cast<double>(s) / 8 / 100e9 * 1e6, 1e-3);
  EXPECT_EQ(r.protocol, Protocol::kSimple);
}

}  // namespace
}  // namespace strait::sim::network
