// Placement of process groups on scale-across-3dc (3 datacenters x 32 hosts x 8 GPUs = 768):
//   - embedding model-parallel groups of 256 placed in "datacenter": 3 groups, each inside one
//     datacenter, so every embedding all-to-all of the op graph stays inside a datacenter;
//     replica groups have 3 ranks, one per datacenter;
//   - a group of 384 cannot be placed in a datacenter of 256: a ConfigError names the plan
//     file, the key and the sizes;
//   - rack = leaf group: 16 hosts x 8 GPUs = 128 ranks per rack.
#include <gtest/gtest.h>

#include <set>

#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::config_error_of;
using testing_support::kSmallHstu;
using testing_support::scenario_of;

const char* kData = R"({"batch_size": {"per_rank": 2}, "max_length": 512,
  "sequence_length": {"distribution": "uniform", "min": 16, "max": 512}})";

TEST(Layout, TwoDimensionalSparseGroupsStayInsideADatacenter) {
  const auto sc = scenario_of("scale-across-3dc.json", kSmallHstu, kData,
                              R"({"sparse": {"group_size": 256, "placement": "datacenter"}})");
  const OpGraph g = build_op_graph(sc);
  int checked = 0;
  std::set<int> groups;
  for (const auto& ro : g.ranks) {
    for (const auto& op : ro.ops) {
      if (op.kind != OpKind::kCollective) continue;
      const auto c = op.collective.comm_class;
      if (c != CommClass::kInputDist && c != CommClass::kOutputDist && c != CommClass::kGradDist)
        continue;
      const auto& members = g.groups[static_cast<std::size_t>(op.collective.group)].ranks;
      ASSERT_EQ(members.size(), 256u);
      std::set<int> dcs;
      for (int r : members) dcs.insert(sc.cluster.gpu(r).datacenter);
      EXPECT_EQ(dcs.size(), 1u);
      groups.insert(op.collective.group);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 768 * 3);
  EXPECT_EQ(groups.size(), 3u);
  const int replica = sc.layout.sparse.replica[5];
  EXPECT_EQ(g.groups[static_cast<std::size_t>(replica)].ranks, (std::vector<int>{5, 261, 517}));
}

TEST(Layout, PlacementTooSmallIsAClearError) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("scale-across-3dc.json", kSmallHstu, kData,
                          R"({"sparse": {"group_size": 384, "placement": "datacenter"}})");
            }),
            "plan.json: /sparse/placement: a group of 384 ranks does not fit in one datacenter: "
            "the largest "
            "datacenter holds 256 of the 768 ranks");
  EXPECT_EQ(
      config_error_of([] {
        scenario_of("scale-across-3dc.json", kSmallHstu, kData,
                    R"({"sparse": {"group_size": 100}})");
      }),
      "plan.json: /sparse/group_size: expected a group size that divides the 768 ranks, got 100");
}

TEST(Layout, RackIsTheLeafGroup) {
  const auto dom = domains(
      topology::Cluster::load(testing_support::source("configs/clusters/scale-across-3dc.json")),
      768, PlacementLevel::kRack);
  EXPECT_EQ(dom[0], dom[127]);
  EXPECT_NE(dom[127], dom[128]);
  EXPECT_EQ(std::set<int>(dom.begin(), dom.end()).size(), 6u);
  EXPECT_EQ(config_error_of([] {
              scenario_of("scale-across-3dc.json", kSmallHstu, kData,
                          R"({"sparse": {"group_size": 256, "placement": "rack"}})");
            }),
            "plan.json: /sparse/placement: a group of 256 ranks does not fit in one rack (leaf "
            "group): the "
            "largest rack holds 128 of the 768 ranks");
}

}  // namespace
}  // namespace strait::sim::workload
