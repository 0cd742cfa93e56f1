// On hierarchy-form clusters analytical mode finds bottlenecks per level instead of by
// routing; it must agree with flow mode where nothing else contends, like the routed one.

#include <gtest/gtest.h>

#include "sim/network/network.hpp"
#include "sim/network/rank_set.hpp"

namespace strait::sim::network {
namespace {

struct LevelCase {
  const char* name;
  const char* cluster;
  const char* ranks;
  CollectiveOp op;
  Algorithm algo;
  Bytes bytes;
};

class LevelAgreement : public ::testing::TestWithParam<LevelCase> {};

TEST_P(LevelAgreement, PerLevelEstimateAgreesWithFlowModeWithinTwoPercent) {
  const auto& k = GetParam();
  const auto cluster =
      topology::Cluster::load(std::string(STRAIT_SOURCE_DIR) + "/configs/clusters/" + k.cluster);
  CollectiveSpec spec;
  spec.op = k.op;
  spec.algorithm = k.algo;
  spec.bytes = k.bytes;
  spec.gpus = parse_rank_set(k.ranks, cluster);
  NetworkOptions analytical;
  analytical.mode = NetworkMode::kAnalytical;
  const auto flow = simulate_collective(cluster, spec, {});
  const auto level = simulate_collective(cluster, spec, analytical);
  EXPECT_NEAR(level.time.to_s(), flow.time.to_s(), 0.02 * flow.time.to_s()) << k.name;
  for (int c = 0; c < topology::kLinkClassCount; ++c) {
    const double f = flow.traffic.link_bytes[static_cast<std::size_t>(c)];
    // Traffic follows one representative path per level: equal for symmetric rank sets.
    EXPECT_NEAR(level.traffic.link_bytes[static_cast<std::size_t>(c)], f, 0.05 * f + 1)
        << k.name << " class " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(
    HierarchyClusters, LevelAgreement,
    ::testing::Values(LevelCase{"ring_64", "h100-1024-rail.json", "first:64",
                                CollectiveOp::kAllReduce, Algorithm::kRing, 64 * kMiB},
                      LevelCase{"hier_256", "h100-1024-rail.json", "first:256",
                                CollectiveOp::kAllReduce, Algorithm::kHierarchical, 64 * kMiB},
                      LevelCase{"a2a_128", "h100-1024-rail.json", "first:128",
                                CollectiveOp::kAllToAll, Algorithm::kDirect, 32 * kMiB},
                      LevelCase{"allgather_64", "h100-1024-rail.json", "first:64",
                                CollectiveOp::kAllGather, Algorithm::kRing, 32 * kMiB},
                      LevelCase{"hier_3dc", "scale-across-3dc.json", "local:0",
                                CollectiveOp::kAllReduce, Algorithm::kHierarchical, 64 * kMiB},
                      LevelCase{"a2a_3dc", "scale-across-3dc.json", "local:0",
                                CollectiveOp::kAllToAll, Algorithm::kDirect, 16 * kMiB},
                      LevelCase{"ring_mixed", "mixed-h100-a100.json", "local:0",
                                CollectiveOp::kAllReduce, Algorithm::kRing, 16 * kMiB}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace strait::sim::network
