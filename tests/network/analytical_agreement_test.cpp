// Analytical mode must agree with flow mode within 2% wherever nothing else contends.
// Tree all-reduce is the exception that proves the rule: its own reduce and broadcast
// lanes share every inner node's links, which analytical mode folds into a steady-state
// cycle; the pipeline's start-up and drain then differ by a few percent (5% bound).

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strait::sim::network
