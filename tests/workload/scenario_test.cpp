// The bundled training scenarios load, build an op graph whose collectives agree across
// the members of each group (same count and kind per group, NCCL's matching rule), and
// report memory for every rank.
#include <gtest/gtest.h>

#include <map>

#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::source;

}  // namespace

/// Per group: the sequence of (op, class) each member issues must be identical.
void expect_matching_collectives(const OpGraph& g) {
  std::map<int, std::vector<std::pair<int, int>>> first;
  for (const auto& ro : g.ranks) {
    std::map<int, std::vector<std::pair<int, int>>> mine;
    for (const auto& op : ro.ops) {
      if (op.kind != OpKind::kCollective) continue;
      mine[op.collective.group].emplace_back(static_cast<int>(op.collective.comm_class), op.step);
    }
    for (auto& [group, seq] : mine) {
      auto it = first.find(group);
      if (it == first.end())
        first.emplace(group, seq);
      else
        ASSERT_EQ(it->second, seq) << "group " << g.groups[static_cast<std::size_t>(group)].name;
    }
  }
}

namespace {

class BundledScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(BundledScenario, LoadsBuildsMatchingCollectivesAndMemory) {
  const auto sc = TrainingScenario::load(source(std::string("configs/scenarios/") + GetParam()));
  const OpGraph g = build_op_graph(sc);
  EXPECT_EQ(static_cast<int>(g.ranks.size()), sc.layout.world);
  for (const auto& ro : g.ranks) {
    ASSERT_FALSE(ro.ops.empty());
    for (std::size_t i = 0; i < ro.ops.size(); ++i) {
      for (auto d : ro.ops[i].deps) ASSERT_LT(static_cast<std::size_t>(d), i);
    }
  }
  expect_matching_collectives(g);
  const auto mem = memory_per_rank(sc);
  EXPECT_EQ(static_cast<int>(mem.ranks.size()), sc.layout.world);
  EXPECT_TRUE(mem.fits(80.0 * kGiB).fits) << mem.fits(80.0 * kGiB).dominant;
}

INSTANTIATE_TEST_SUITE_P(Workload, BundledScenario,
                         ::testing::Values("dlrm-8gpu.json", "hstu-1024.json", "hstu-3dc.json"));

}  // namespace
}  // namespace strait::sim::workload

namespace strait::sim::workload {
namespace {

// 16,384 ranks in analytical mode: the graph builds (a few seconds, ~1 GiB) and fits.
TEST(LargeScenario, SixteenThousandRanksBuild) {
  const auto sc = TrainingScenario::load(source("configs/scenarios/hstu-16k-4dc.json"));
  const OpGraph g = build_op_graph(sc);
  EXPECT_EQ(g.ranks.size(), 16384u);
  expect_matching_collectives(g);
}

}  // namespace
}  // namespace strait::sim::workload
