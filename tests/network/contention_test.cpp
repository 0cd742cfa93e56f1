// Collectives share links under max-min fairness in flow mode.

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strait::sim::network
