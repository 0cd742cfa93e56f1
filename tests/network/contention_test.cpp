// Collectives share links under max-min fairness in flow mode.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "sim/network/flow_network.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::make_cluster;

// Two identical ring all-reduces over the same 16 single-GPU hosts start together: every
// NIC link carries two flows at 25 GB/s, so both finish at twice the time of one alone.
// With priority 0 for the first and 1 for the second, the first runs as if alone and the
// second finishes at the same 2x time (it gets only the leftovers while the first runs).
TEST(FlowNetwork, ConcurrentCollectivesShareLinksAndPrioritiesOrderThem) {
  const auto c = make_cluster(1, 16, 1);
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllReduce;
  spec.algorithm = Algorithm::kRing;
  spec.bytes = 16 * kMiB;
  spec.gpus = all_gpus(c);
  const Time alone = simulate_collective(c, spec, {}).time;

  for (int prioritized = 0; prioritized < 2; ++prioritized) {
    engine::Simulator sim;
    FlowNetwork net(sim, c, {});
    Time first, second;
    CollectiveSpec a = spec, b = spec;
    b.priority = prioritized;
    net.start_collective(a, [&] { first = sim.now(); });
    net.start_collective(b, [&] { second = sim.now(); });
    sim.run();
    if (prioritized) {
      EXPECT_NEAR(first.to_s(), alone.to_s(), 1e-9);
    } else {
      EXPECT_NEAR(first.to_s(), 2 * alone.to_s(), 1e-9);
    }
    EXPECT_NEAR(second.to_s(), 2 * alone.to_s(), 1e-9);
  }
}

// Traffic accounting: a ring all-reduce of S over 16 single-GPU hosts moves 2(n-1)/n S
// per rank; each transfer crosses 2 scale-out links (NIC up, NIC down) and 2 PCIe links.
TEST(FlowNetwork, CountsBytesPerLinkClass) {
  const auto c = make_cluster(1, 16, 1);
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllReduce;
  spec.algorithm = Algorithm::kRing;
  spec.bytes = 16 * kMiB;
  spec.gpus = all_gpus(c);
  const auto r = simulate_collective(c, spec, {});
  const double per_rank = 2.0 * 15 / 16 * 16 * kMiB;
  EXPECT_DOUBLE_EQ(r.traffic.bytes(topology::LinkClass::kScaleOut), 2 * 16 * per_rank);
  EXPECT_DOUBLE_EQ(r.traffic.bytes(topology::LinkClass::kPcie), 2 * 16 * per_rank);
  EXPECT_DOUBLE_EQ(r.traffic.bytes(topology::LinkClass::kNvlink), 0.0);
}

// Calls of one spec share a plan (schedule, bundles, routes) built at the first; the
// traffic tag is the call's own. One after another on an idle network, each takes what it
// takes alone; a different size or rank order is planned afresh.
TEST(FlowNetwork, RepeatedSpecsShareAPlanAndCountTrafficUnderTheirOwnTags) {
  const auto c = make_cluster(2, 8, 1);
  CollectiveSpec big;
  big.op = CollectiveOp::kAllGather;
  big.algorithm = Algorithm::kRing;
  big.bytes = 16 * kMiB;
  big.gpus = all_gpus(c);
  CollectiveSpec small = big;
  small.bytes = 4 * kMiB;
  CollectiveSpec reversed = big;
  std::reverse(reversed.gpus.begin(), reversed.gpus.end());
  const auto alone_big = simulate_collective(c, big, {});
  const auto alone_small = simulate_collective(c, small, {});
  ASSERT_LT(alone_small.time, alone_big.time);

  engine::Simulator sim;
  FlowNetwork net(sim, c, {});
  const CollectiveSpec calls[] = {big, big, small, big, reversed};
  const int tags[] = {0, 1, 1, 0, 2};
  std::vector<Time> took;
  std::size_t next = 0;
  std::function<void()> start_next = [&] {
    if (next == std::size(calls)) return;
    CollectiveSpec spec = calls[next];
    spec.traffic_tag = tags[next++];
    const Time start = sim.now();
    net.start_collective(spec, [&, start] {
      took.push_back(sim.now() - start);
      start_next();
    });
  };
  start_next();
  sim.run();
  ASSERT_EQ(took.size(), 5u);
  EXPECT_EQ(took[0], alone_big.time);
  EXPECT_EQ(took[1], alone_big.time);
  EXPECT_EQ(took[2], alone_small.time);
  EXPECT_EQ(took[3], alone_big.time);
  EXPECT_EQ(net.plans_built(), 3u);  // big, small, reversed
  const auto bytes = [](const TrafficStats& t) { return t.bytes(topology::LinkClass::kScaleOut); };
  EXPECT_DOUBLE_EQ(bytes(net.tagged(0)), 2 * bytes(alone_big.traffic));
  EXPECT_DOUBLE_EQ(bytes(net.tagged(1)), bytes(alone_big.traffic) + bytes(alone_small.traffic));
  EXPECT_DOUBLE_EQ(bytes(net.tagged(2)), bytes(alone_big.traffic));
  EXPECT_GT(bytes(alone_big.traffic), 0.0);
}

}  // namespace
}  // namespace strait::sim::network
