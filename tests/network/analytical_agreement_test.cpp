// Analytical mode must agree with flow mode within 2% wherever nothing else contends.
// Tree all-reduce is the exception that proves the rule: its own reduce and broadcast
// lanes share every inner node's links, which analytical mode folds into a steady-state
// cycle; the pipeline's start-up and drain then differ by a few percent (5% bound).

#include <gtest/gtest.h>

#include <random>
#include <set>

#include <fmt/format.h>

#include "sim/network/analytical_network.hpp"
#include "sim/network/network.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::Fabric;
using testing::make_cluster;

struct Case {
  const char* name;
  CollectiveOp op;
  Algorithm algo;
  int datacenters, hosts, gpus;
  Bytes bytes;
  double tolerance = 0.02;
};

class AnalyticalAgreement : public ::testing::TestWithParam<Case> {};

TEST_P(AnalyticalAgreement, FlowAndAnalyticalAgreeWithinTwoPercent) {
  const Case& k = GetParam();
  Fabric f;
  f.link_latency = Time::from_us(1);
  f.cross_dc_latency = Time::from_ms(2);
  const auto c = make_cluster(k.datacenters, k.hosts, k.gpus, f);
  CollectiveSpec spec;
  spec.op = k.op;
  spec.algorithm = k.algo;
  spec.bytes = k.bytes;
  spec.gpus = all_gpus(c);
  NetworkOptions flow, analytical;
  analytical.mode = NetworkMode::kAnalytical;
  const auto a = simulate_collective(c, spec, flow);
  const auto b = simulate_collective(c, spec, analytical);
  EXPECT_NEAR(b.time.to_s(), a.time.to_s(), k.tolerance * a.time.to_s()) << k.name;
  for (int lc = 0; lc < topology::kLinkClassCount; ++lc) {
    EXPECT_NEAR(b.traffic.link_bytes[static_cast<std::size_t>(lc)],
                a.traffic.link_bytes[static_cast<std::size_t>(lc)],
                1e-9 * a.traffic.link_bytes[static_cast<std::size_t>(lc)] + 1)
        << k.name << " link class " << lc;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, AnalyticalAgreement,
    ::testing::Values(
        Case{"ring_all_reduce_1host", CollectiveOp::kAllReduce, Algorithm::kRing, 1, 1, 8,
             64 * kMiB},
        Case{"ring_all_reduce_4hosts", CollectiveOp::kAllReduce, Algorithm::kRing, 1, 4, 4,
             64 * kMiB},
        Case{"tree_all_reduce", CollectiveOp::kAllReduce, Algorithm::kTree, 1, 4, 2, 16 * kMiB,
             0.05},
        Case{"hier_all_reduce_3dc", CollectiveOp::kAllReduce, Algorithm::kHierarchical, 3, 2, 4,
             48 * kMiB},
        Case{"all_gather", CollectiveOp::kAllGather, Algorithm::kRing, 1, 2, 4, 32 * kMiB},
        Case{"reduce_scatter", CollectiveOp::kReduceScatter, Algorithm::kRing, 1, 2, 4, 32 * kMiB},
        Case{"pairwise_all_to_all", CollectiveOp::kAllToAll, Algorithm::kPairwise, 1, 16, 1,
             64 * kMiB},
        Case{"direct_all_to_all", CollectiveOp::kAllToAll, Algorithm::kDirect, 1, 4, 4, 64 * kMiB},
        Case{"direct_all_to_all_3dc", CollectiveOp::kAllToAll, Algorithm::kDirect, 3, 2, 4,
             48 * kMiB},
        Case{"hier_all_to_all", CollectiveOp::kAllToAll, Algorithm::kHierarchical, 1, 4, 4,
             64 * kMiB},
        Case{"broadcast_chain", CollectiveOp::kBroadcast, Algorithm::kRing, 1, 2, 4, 32 * kMiB},
        Case{"reduce_tree", CollectiveOp::kReduce, Algorithm::kTree, 1, 2, 4, 32 * kMiB}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace strait::sim::network

namespace strait::sim::network {
namespace {

// Uneven all-to-all: rank i of 16 (4 hosts x 4 GPUs) sends (i + 1) MiB in total, 1/16 to
// each rank. The busiest NIC is rank 15's egress: 12/16 of 16 MiB = 12 MiB over 50 GB/s
// = 251.66 us (the fullest ingress, a host-0 rank's, gets 126/16 MiB). Analytical mode's
// per-level bound and flow mode's bundles must agree within 2%.
TEST(AnalyticalAgreementUneven, PerRankSendSizesAgreeWithFlowMode) {
  const auto c = testing::make_cluster(1, 4, 4);
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllToAll;
  spec.algorithm = Algorithm::kDirect;
  spec.gpus = testing::all_gpus(c);
  for (int i = 0; i < 16; ++i) spec.send_bytes.push_back((i + 1) * kMiB);
  NetworkOptions analytical;
  analytical.mode = NetworkMode::kAnalytical;
  const auto flow = simulate_collective(c, spec, {});
  const auto model = simulate_collective(c, spec, analytical);
  const double bound = 12.0 * kMiB / 50e9;
  EXPECT_NEAR(model.time.to_s(), bound, 1e-9);
  EXPECT_GE(flow.time.to_s(), bound);
  EXPECT_NEAR(model.time.to_s(), flow.time.to_s(), 0.02 * flow.time.to_s());
}

// A call repeated with the same spec is timed once (AnalyticalNetwork remembers it); each
// repeat must still take what the call takes alone and add its traffic again. Two hosts
// of 4 GPUs on 50 GB/s NICs, no latency, ring all-gather of 8 MiB over GPUs 0 and 4 (one
// per host): one ring step of 4 MiB over a NIC, 4 MiB / 50 GB/s = 83.886 us; GPUs 0 and 1
// (one host, 450 GB/s NVLink): 4 MiB / 450 GB/s, 9.3207 us; started back to back.
TEST(AnalyticalRepeats, ARepeatedCallTakesWhatItTookAloneAndCountsItsTrafficAgain) {
  const auto c = testing::make_cluster(1, 2, 4);
  engine::Simulator sim;
  NetworkOptions analytical;
  analytical.mode = NetworkMode::kAnalytical;
  auto net = make_network(sim, c, analytical);
  CollectiveSpec across;
  across.op = CollectiveOp::kAllGather;
  across.algorithm = Algorithm::kRing;
  across.protocol = Protocol::kSimple;
  across.bytes = 8 * kMiB;
  across.gpus = {0, 4};
  CollectiveSpec inside = across;
  inside.gpus = {0, 1};
  std::vector<Time> ends;
  net->start_collective(across, [&] {
    ends.push_back(sim.now());
    net->start_collective(across, [&] { ends.push_back(sim.now()); });
  });
  sim.run();
  net->start_collective(inside, [&] { ends.push_back(sim.now()); });
  sim.run();
  ASSERT_EQ(ends.size(), 3u);
  const double across_s = 4.0 * kMiB / 50e9, inside_s = 4.0 * kMiB / 450e9;
  EXPECT_NEAR(ends[0].to_s(), across_s, 1e-11);
  EXPECT_EQ(ends[1] - ends[0], ends[0]);
  EXPECT_EQ(ends[0], simulate_collective(c, across, analytical).time);
  EXPECT_NEAR((ends[2] - ends[1]).to_s(), inside_s, 1e-11);
  EXPECT_EQ(ends[2] - ends[1], simulate_collective(c, inside, analytical).time);
  // Scale-out bytes: 2 calls x 2 GPUs x 4 MiB x 2 links (GPU -> core -> GPU) each way.
  EXPECT_DOUBLE_EQ(net->traffic().bytes(topology::LinkClass::kScaleOut), 2 * 2 * 4.0 * kMiB * 2);
}

// On hierarchy-form clusters a call is remembered by its GPUs' placement (datacenter,
// hosts and leaf switches as met, local indices, host classes), so a group placed like an
// earlier one takes its time. Every call on one network that has seen many groups must
// take what it takes on a fresh network, with the same traffic: 300 random groups of 2-12
// GPUs, random ops and sizes of 1 KiB, 256 KiB or 64 MiB on the bundled mixed H100 / A100 cluster
// (two host kinds, an oversubscribed datacenter), and on 4 hosts of which host 2 has half the
// NVLink bandwidth (the same datacenter: only its class tells it apart).
TEST(AnalyticalRepeats, GroupsPlacedAlikeTakeOneTimeAndHostsThatDifferDoNot) {
  testing::Fabric slow_host;
  slow_host.host_nics = true;
  slow_host.host_nvlink = {450e9, 450e9, 225e9, 450e9};
  slow_host.link_latency = Time::from_us(1);
  const std::vector<topology::Cluster> clusters = {
      topology::Cluster::load(std::string(STRAIT_SOURCE_DIR) +
                              "/configs/clusters/mixed-h100-a100.json"),
      testing::make_cluster(1, 4, 4, slow_host)};
  NetworkOptions analytical;
  analytical.mode = NetworkMode::kAnalytical;
  const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                              CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast};
  for (const auto& c : clusters) {
    SCOPED_TRACE(c.name());
    engine::Simulator sim;
    auto shared = make_network(sim, c, analytical);
    auto& memo = static_cast<AnalyticalNetwork&>(*shared);
    std::mt19937 rng(7);
    const int per_host = static_cast<int>(c.hosts().front().gpus.size());
    const int hosts = static_cast<int>(c.hosts().size());
    for (int call = 0; call < 300; ++call) {
      CollectiveSpec spec;
      spec.op = ops[rng() % 4];
      spec.bytes = Bytes{1} << (10 + 8 * (rng() % 3));  // few sizes, so placements repeat
      // Mostly groups inside one host or on one local index across hosts (the placements
      // that repeat), some anywhere.
      const int kind = static_cast<int>(rng() % 3);
      const int size = 2 + static_cast<int>(rng() % (kind == 2   ? 11
                                                     : kind == 1 ? 3
                                                                 : per_host - 1));
      std::set<int> gpus;
      const int host = static_cast<int>(rng() % static_cast<unsigned>(hosts));
      const int local = static_cast<int>(rng() % static_cast<unsigned>(per_host));
      for (int k = 0; gpus.size() < static_cast<std::size_t>(size) && k < 1000; ++k) {
        const int h = kind == 1 ? static_cast<int>(rng() % static_cast<unsigned>(hosts)) : host;
        const int l = kind == 1 ? local : static_cast<int>(rng() % static_cast<unsigned>(per_host));
        const auto& on = c.hosts()[static_cast<std::size_t>(kind == 2 ? rng() % hosts : h)].gpus;
        gpus.insert(on[static_cast<std::size_t>(kind == 2 ? rng() % on.size() : l)]);
      }
      spec.gpus.assign(gpus.begin(), gpus.end());
      if (spec.gpus.size() < 2) continue;
      SCOPED_TRACE(fmt::format("call {}: {} of {} B on {} GPUs from {}", call, to_string(spec.op),
                               spec.bytes, spec.gpus.size(), spec.gpus.front()));
      const auto before = memo.traffic();
      const auto remembered = memo.time_collective(spec);
      engine::Simulator fresh_sim;
      auto fresh = make_network(fresh_sim, c, analytical);
      const auto alone = static_cast<AnalyticalNetwork&>(*fresh).time_collective(spec);
      EXPECT_EQ(remembered.time, alone.time);
      // The call's bytes, read as the growth of a running sum (to its rounding).
      for (std::size_t k = 0; k < before.link_bytes.size(); ++k) {
        EXPECT_NEAR(memo.traffic().link_bytes[k] - before.link_bytes[k],
                    fresh->traffic().link_bytes[k], 1e-12 * memo.traffic().link_bytes[k]);
      }
    }
  }
  // The slow host's pairs take longer than the same pairs on another host.
  engine::Simulator sim;
  auto net = make_network(sim, clusters[1], analytical);
  CollectiveSpec pair;
  pair.op = CollectiveOp::kAllGather;
  pair.bytes = 64 << 20;
  pair.gpus = {0, 1};
  const Time fast = static_cast<AnalyticalNetwork&>(*net).time_collective(pair).time;
  pair.gpus = {8, 9};
  EXPECT_GT(static_cast<AnalyticalNetwork&>(*net).time_collective(pair).time, fast);
  pair.gpus = {4, 5};
  EXPECT_EQ(static_cast<AnalyticalNetwork&>(*net).time_collective(pair).time, fast);
}

}  // namespace
}  // namespace strait::sim::network
