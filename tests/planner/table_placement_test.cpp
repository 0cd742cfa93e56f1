// planner/table_placement.hpp: TableCosts' closed forms, the cost-balancing placement
// (greedy by cost, then local search) and the neighbours placement_moves proposes, each on
// a case small enough to follow by hand.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/table_placement.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ParallelPlan;
using sim::workload::ShardingType;

ParallelPlan with_types(const PlanRequest& req, const std::vector<ShardingType>& types,
                        int column_shards = 1) {
  ParallelPlan plan = req.base.plan;
  for (std::size_t t = 0; t < types.size(); ++t) {
    plan.sharding[t] = {types[t], 1, {}};
    if (types[t] == ShardingType::kColumnWise || types[t] == ShardingType::kGrid)
      plan.sharding[t].column_shards = column_shards;
  }
  return plan;
}

std::vector<std::vector<int>> ranks_of(const ParallelPlan& plan) {
  std::vector<std::vector<int>> out;
  for (const auto& s : plan.sharding) out.push_back(s.ranks);
  return out;
}

// The small DLRM on one HGX H100 host, 1,024 samples per replica: big looks up 20 ids a
// sample (20,480 a replica), mid 5 (5,120); the H100 profile's HBM is 3,350 GB/s, the
// NIC 400 Gb/s = 50 GB/s, NVLink 450 GB/s; usable memory 81,559 MiB - 2 GiB reserved.
TEST(TablePlacement, TableCostsReadTheBatchAndTheHardware) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  EXPECT_EQ(costs.ids_per_replica(0), 20480.0);
  EXPECT_EQ(costs.ids_per_replica(1), 51200.0);
  EXPECT_EQ(costs.ids_per_replica(2), 5120.0);
  EXPECT_EQ(costs.ids_per_replica(3), 1024.0);
  EXPECT_EQ(costs.samples_per_replica(), 1024.0);
  EXPECT_EQ(costs.hbm_bandwidth(), 3350e9);
  EXPECT_EQ(costs.nic_bandwidth(), 50e9);
  EXPECT_EQ(costs.nvlink_bandwidth(), 450e9);
  EXPECT_EQ(costs.memory_capacity(), 81559.0 * kMiB - 2.0 * kGiB);
  EXPECT_EQ(&costs.model(), &req.base.model);
}

// slice_seconds = HBM / 3,350 GB/s + network / 50 GB/s, fp32 (e = 4 B):
//   big whole (f = 1, r = 1) in a group of 8: ids A = 8 x 20,480 = 163,840, w = 64;
//     HBM A (w e + 8) + 3 A w e = 163,840 x 1,032 = 169,082,880 B;
//     network A x 8 + 2 x 8 x 1,024 x 256 = 1,310,720 + 4,194,304 = 5,505,024 B.
//   mid, half its columns (w = 32), a quarter of its rows, group of 4, context parallel 2:
//     A = 4 x 5,120 / 2 x 1/4 = 2,560; HBM 2,560 x (136 + 384) = 1,331,200 B;
//     network 2,560 x 8 + 2 x (4 x 1,024 / 2) x 128 = 20,480 + 524,288 = 544,768 B.
// slice_bytes = rows x r x dim x f x 4: big's half-column quarter-row slice is
// 4,000,000 / 4 x 32 x 4 = 128,000,000 B.
TEST(TablePlacement, SliceSecondsAndBytesFollowTheClosedForm) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  EXPECT_DOUBLE_EQ(costs.slice_seconds(0, 1, 1, 8, 1), 169082880.0 / 3350e9 + 5505024.0 / 50e9);
  EXPECT_DOUBLE_EQ(costs.slice_seconds(2, 0.5, 0.25, 4, 2), 1331200.0 / 3350e9 + 544768.0 / 50e9);
  EXPECT_DOUBLE_EQ(costs.slice_bytes(0, 1, 1), 4000000.0 * 64 * 4);
  EXPECT_DOUBLE_EQ(costs.slice_bytes(0, 0.5, 0.25), 128000000.0);
  EXPECT_DOUBLE_EQ(costs.slice_bytes(3, 1, 1), 1000.0 * 64 * 4);
}

// Four table-wise tables of equal cost on four members: one per member (greedy by cost).
TEST(TablePlacement, SpreadsEqualCostTablesOnePerMember) {
  const char* model = R"({"name": "four", "embedding": {"tables": [
    {"name": "a", "rows": 1000, "dim": 64}, {"name": "b", "rows": 1000, "dim": 64},
    {"name": "c", "rows": 1000, "dim": 64}, {"name": "d", "rows": 1000, "dim": 64}]},
    "dense": {"top_mlp": {"layers": [1]}}})";
  const char* data = R"({"name": "d", "batch_size": {"per_rank": 64}})";
  const auto req = request_of("hgx-h100-8.json", model, data);
  const TableCosts costs(req.base, bundled_cost());
  auto plan = req.base.plan;
  for (auto& s : plan.sharding) s.type = sim::workload::ShardingType::kTableWise;
  place_tables(plan, costs, 4, 8, 1);
  std::vector<int> members;
  for (const auto& s : plan.sharding) members.push_back(s.ranks.at(0));
  std::sort(members.begin(), members.end());
  EXPECT_EQ(members, (std::vector<int>{0, 1, 2, 3}));
}

// Five table-wise tables of one shape with 5, 4, 3, 3, 3 ids a sample on a group of 2:
// each costs c = a p + b (a per id, b the output all-to-all), so in units of a, b:
//   greedy, largest first, each on the least loaded member (ties: the first):
//     p5 -> 0 (5), p4 -> 1 (4), p3a -> 1 (7), p3b -> 0 (8), p3c -> 1 (10): loads 8 | 10;
//   local search off member 1 (10): moving p4 gives max(6, 12); swapping p4 with the
//     cheaper p3b on member 0 gives max(9, 9) < 10: done. No further move lowers 9a + 3b.
// Final: p5, p4 on member 0 (9a + 2b), p3a, p3b, p3c on member 1 (9a + 3b).
TEST(TablePlacement, LocalSearchSwapsWhatGreedyLeftUnbalanced) {
  const auto req = tables_request(
      R"({"name": "p5", "rows": 1000, "dim": 64}, {"name": "p4", "rows": 1000, "dim": 64},
         {"name": "p3a", "rows": 1000, "dim": 64}, {"name": "p3b", "rows": 1000, "dim": 64},
         {"name": "p3c", "rows": 1000, "dim": 64})",
      fixed("p5", 5) + ", " + fixed("p4", 4) + ", " + fixed("p3a", 3) + ", " + fixed("p3b", 3) +
          ", " + fixed("p3c", 3),
      64);
  const TableCosts costs(req.base, bundled_cost());
  // The costs are affine in the pooling factor: c5 - c4 = c4 - c3 = a > 0, b = c3 - 3a > 0.
  const double c5 = costs.slice_seconds(0, 1, 1, 2, 1), c4 = costs.slice_seconds(1, 1, 1, 2, 1);
  const double c3 = costs.slice_seconds(2, 1, 1, 2, 1);
  EXPECT_NEAR(c5 - c4, c4 - c3, 1e-15);
  EXPECT_GT(c3 - 3 * (c4 - c3), 0);
  auto plan = with_types(req, std::vector<ShardingType>(5, ShardingType::kTableWise));
  place_tables(plan, costs, 2, 8, 1);
  EXPECT_EQ(ranks_of(plan), (std::vector<std::vector<int>>{{0}, {0}, {1}, {1}, {1}}));
}

// Two tables on a group of 4 in host blocks of 2: "a" (1,000 x 128, 10 ids a sample)
// column-wise in 2 slices of 64 columns, "b" (4,000 x 64, 100 ids) table-row-wise, one
// slice over a block of 2 members, each holding half its rows. Per 64 samples (units of
// 64 samples, fp32):
//   b: A = 4 x 100 x 1/2 = 200; HBM 200 x 1,032 = 206,400 B; network 200 x 8 +
//      2 x 4 x 256 = 3,648 B -> 6.2e-8 + 7.3e-8 = 1.35e-7 s;
//   a (each slice, w = 64): A = 4 x 10 = 40; HBM 41,280 B; network 320 + 2,048 B
//      -> 1.2e-8 + 4.7e-8 = 6.0e-8 s.
// b goes first, to block 0 (members 0 and 1); a's slices to the least loaded members, 2
// and 3. Each slice holds 256,000 B (a: 1,000 x 64 x 4) and 512,000 B (b: 2,000 x 64 x 4).
TEST(TablePlacement, TwoTablesOnFourMembersLandByHand) {
  const auto req = tables_request(
      R"({"name": "a", "rows": 1000, "dim": 128}, {"name": "b", "rows": 4000, "dim": 64})",
      fixed("a", 10) + ", " + fixed("b", 100), 64);
  const TableCosts costs(req.base, bundled_cost());
  const double a = costs.slice_seconds(0, 0.5, 1, 4, 1), b = costs.slice_seconds(1, 1, 0.5, 4, 1);
  EXPECT_DOUBLE_EQ(b, 64 * (206400.0 / 3350e9 + 3648.0 / 50e9));
  EXPECT_DOUBLE_EQ(a, 64 * (41280.0 / 3350e9 + 2368.0 / 50e9));
  EXPECT_EQ(costs.slice_bytes(0, 0.5, 1), 256000.0);
  EXPECT_EQ(costs.slice_bytes(1, 1, 0.5), 512000.0);
  auto plan = with_types(req, {ShardingType::kColumnWise, ShardingType::kTableRowWise}, 2);
  place_tables(plan, costs, 4, 2, 1);
  EXPECT_EQ(ranks_of(plan), (std::vector<std::vector<int>>{{2, 3}, {0}}));
}

// Ranks a plan already gives are kept and their load counts: "a" (10 ids a sample) kept on
// member 2, "b" (1 id) goes to member 0, the first least loaded. Without the preset, a goes
// to member 0 and b to member 1.
TEST(TablePlacement, SlicesThePlanPlacesStayWhereTheyAre) {
  const auto req = tables_request(
      R"({"name": "a", "rows": 1000, "dim": 64}, {"name": "b", "rows": 1000, "dim": 64})",
      fixed("a", 10) + ", " + fixed("b", 1), 64);
  const TableCosts costs(req.base, bundled_cost());
  auto free = with_types(req, {ShardingType::kTableWise, ShardingType::kTableWise});
  auto preset = free;
  place_tables(free, costs, 4, 8, 1);
  EXPECT_EQ(ranks_of(free), (std::vector<std::vector<int>>{{0}, {1}}));
  preset.sharding[0].ranks = {2};
  place_tables(preset, costs, 4, 8, 1);
  EXPECT_EQ(ranks_of(preset), (std::vector<std::vector<int>>{{2}, {0}}));
}

// Three table-wise tables with 40, 20 and 10 ids a sample on a group of 2, 64 samples a
// replica: each costs c = a p + b, a = 2 x 64 x (1,032 B / 3,350 GB/s + 8 B / 50 GB/s)
// = 6.0e-8 s per id a sample, b = 2 x 2 x 64 x 256 B / 50 GB/s = 1.31e-6 s (b > 20 a).
// t40 and t20 on member 0, t10 on member 1. Member 0 measures 1 s, member 1 nothing, so
// every option keeps member 0 the larger load and is ranked by what it takes off it:
//   move t40 (1 - 40a - b), move t20 (1 - 20a - b), swap t40 for t10 (1 - 30a),
//   swap t20 for t10 (1 - 10a).
// The first three come back, in that order. With member 1 the slowest, t10 can only move
// (nothing on member 0 is cheaper): one plan.
TEST(TablePlacement, PlacementMovesTakeLoadOffTheSlowestMemberBestFirst) {
  const auto req =
      tables_request(R"({"name": "t40", "rows": 1000, "dim": 64},
                                     {"name": "t20", "rows": 1000, "dim": 64},
                                     {"name": "t10", "rows": 1000, "dim": 64})",
                     fixed("t40", 40) + ", " + fixed("t20", 20) + ", " + fixed("t10", 10), 64);
  const TableCosts costs(req.base, bundled_cost());
  const double a = (costs.slice_seconds(0, 1, 1, 2, 1) - costs.slice_seconds(1, 1, 1, 2, 1)) / 20;
  const double b = costs.slice_seconds(2, 1, 1, 2, 1) - 10 * a;
  EXPECT_NEAR(a, 128 * (1032 / 3350e9 + 8 / 50e9), 1e-18);
  EXPECT_NEAR(b, 65536 / 50e9, 1e-15);
  auto plan = with_types(req, std::vector<ShardingType>(3, ShardingType::kTableWise));
  plan.sharding[0].ranks = {0};
  plan.sharding[1].ranks = {0};
  plan.sharding[2].ranks = {1};
  const auto moves = placement_moves(plan, costs, {1.0, 0.0}, 8, 1, 3);
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(ranks_of(moves[0]), (std::vector<std::vector<int>>{{1}, {0}, {1}}));
  EXPECT_EQ(ranks_of(moves[1]), (std::vector<std::vector<int>>{{0}, {1}, {1}}));
  EXPECT_EQ(ranks_of(moves[2]), (std::vector<std::vector<int>>{{1}, {0}, {0}}));
  EXPECT_EQ(placement_moves(plan, costs, {1.0, 0.0}, 8, 1, 10).size(), 4u);

  const auto off_one = placement_moves(plan, costs, {0.0, 1.0}, 8, 1, 10);
  ASSERT_EQ(off_one.size(), 1u);
  EXPECT_EQ(ranks_of(off_one[0]), (std::vector<std::vector<int>>{{0}, {0}, {0}}));
}

}  // namespace
}  // namespace strait::planner
