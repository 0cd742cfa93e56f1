// planner/torchrec_style.hpp: the sharding TorchRec's planner would propose, on cases small
// enough to follow by hand.

#include <gtest/gtest.h>

#include <vector>

#include "planner/torchrec_style.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ShardingType;

// TorchRec's proposer on one 8-GPU host (NVLink 450 GB/s), 1,024 samples a replica:
//   "huge", 200,000,000 x 64 (51.2 GB, more than half the usable 83.4 GB: neither
//   table-wise nor data-parallel fits), 20 ids a sample. Summed perf (3 x compute +
//   2 x comm): row-wise 8 x 1.49e-5 = 1.19e-4 s (table-row-wise over the one host the
//   same), column-wise x2 2 x 3.04e-5 = 6.09e-5 s (x4 would leave 16 < 32 columns):
//   column-wise x2, its 25.6 GB slices on ranks 0 and 1 (rank 0 cannot hold both).
//   "tiny", 100 x 64, 1 id a sample: data-parallel 8 x (3 x 8.1e-8 + 2 x 25,600 B /
//   450 GB/s) = 2.8e-6 s against table-wise 1.2e-5 s: data-parallel.
TEST(TorchRecStyle, ShardsAHugeTableByColumnsAndATinyOneDataParallel) {
  const auto req = tables_request(
      R"({"name": "huge", "rows": 200000000, "dim": 64}, {"name": "tiny", "rows": 100, "dim": 64})",
      fixed("huge", 20) + ", " + fixed("tiny", 1), 1024);
  const TableCosts costs(req.base, bundled_cost());
  EXPECT_GT(costs.slice_bytes(0, 1, 1), costs.memory_capacity() / 2);
  EXPECT_LE(costs.slice_bytes(0, 0.5, 1), costs.memory_capacity() / 2);
  auto plan = req.base.plan;
  torchrec_style_sharding(plan, costs, 8, 8, 1);
  EXPECT_EQ(plan.sharding[0].type, ShardingType::kColumnWise);
  EXPECT_EQ(plan.sharding[0].column_shards, 2);
  EXPECT_EQ(plan.sharding[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.sharding[1].type, ShardingType::kDataParallel);
  EXPECT_TRUE(plan.sharding[1].ranks.empty());
}

// Two tables of one shape, 100,000 x 64, 50 ids a sample (51,200 a replica), on one 8-GPU
// host: summed perf table-wise 3 x 3.23e-5 + 2 x 1.19e-5 = 1.21e-4 s, column-wise x2
// 1.38e-4 s, row-wise 1.86e-4 s, data-parallel 1.0e-3 s: both table-wise, the first on
// rank 0, the second on the least loaded rank after it, rank 1.
TEST(TorchRecStyle, PutsEqualTablesOnDifferentRanks) {
  const auto req = tables_request(
      R"({"name": "a", "rows": 100000, "dim": 64}, {"name": "b", "rows": 100000, "dim": 64})",
      fixed("a", 50) + ", " + fixed("b", 50), 1024);
  const TableCosts costs(req.base, bundled_cost());
  auto plan = req.base.plan;
  torchrec_style_sharding(plan, costs, 8, 8, 1);
  EXPECT_EQ(plan.sharding[0].type, ShardingType::kTableWise);
  EXPECT_EQ(plan.sharding[1].type, ShardingType::kTableWise);
  EXPECT_EQ(plan.sharding[0].ranks, (std::vector<int>{0}));
  EXPECT_EQ(plan.sharding[1].ranks, (std::vector<int>{1}));
}

}  // namespace
}  // namespace strait::planner
